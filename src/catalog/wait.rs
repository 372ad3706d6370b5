//! The payment wait (`wait_for_payment` on [`UserSession`]).
//!
//! Contract rule: "Poll with an interval and an overall timeout, stopping at status 1 or 2. After
//! 1, read the order to see whether delivery is still processing."
//!
//! How the SDK reads it:
//! - The overall timeout bounds every poll, including the one in flight: a status request that
//!   stalls is abandoned at the deadline and the wait gives the outcome
//!   [`PaymentWaitOutcome::StillPending`] (not an error: "still pending after N s" is what the
//!   app shows; the contract's poll has "an overall timeout", after which the payment is simply
//!   still open).
//! - Only a definite answer ends the wait early: status 1 or 2 (then the order is read), or a
//!   client error that asking again cannot change (any 4xx except 408 and 429, such as 401
//!   `invalid_token` after the SDK's one token refresh, 403 `insufficient_scope`, 404), a
//!   response that cannot be decoded, or a local failure (token provider, configuration).
//! - A failed poll that may heal (transport failure, the request's own deadline, 408, 429, 5xx,
//!   202 `provider_result_pending`) does not end it: polling goes on at the interval (after a
//!   429, after its `Retry-After`, capped by the retry policy's `max_retry_after`) until the
//!   deadline, which then gives [`PaymentWaitOutcome::StillPending`] with the last status seen
//!   and `last_poll_failed` set.
//! - The interval is at least [`MIN_POLL_INTERVAL`] (a shorter one is raised to it); a zero
//!   interval is a validation error. A timeout above [`MAX_WAIT_TIMEOUT`] is treated as that
//!   maximum, so `Duration::MAX` for either cannot overflow the clock.
//! - The order read after a final status is not cut by the wait's timeout (the payment is
//!   decided by then); it has the client's own per-call deadline.

use std::time::Duration;

use tokio::time::Instant;

use crate::client::UserSession;
use crate::error::{Error, Result};
use crate::params::require_id;

use super::model::{PaymentStatus, PaymentWaitOutcome};

/// Shortest interval between two status polls; a shorter `interval` is raised to it.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Default poll interval of a payment wait: 2 s (README "Defaults"). A buyer who just paid sees
/// the result within about two seconds; 30 status reads a minute stay light for the service.
pub const DEFAULT_WAIT_INTERVAL: Duration = Duration::from_secs(2);

/// Default overall timeout of a payment wait: 60 s (README "Defaults"), about as long as an app
/// keeps a "confirming payment" screen; then the wait reports
/// [`PaymentWaitOutcome::StillPending`] and the app checks again later.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest overall timeout of a wait (30 days); a longer one (up to `Duration::MAX`) is treated
/// as this.
pub const MAX_WAIT_TIMEOUT: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// What a failed poll means for the wait.
#[derive(Debug, PartialEq, Eq)]
enum Failed {
    /// Asking again cannot change the answer: end the wait with the error.
    Definite,
    /// It may heal: poll again after this pause (at least the interval).
    Transient(Duration),
}

/// Classifies a failed status poll (see the module documentation).
fn classify(e: &Error, interval: Duration, retry_after_cap: Duration) -> Failed {
    match e {
        Error::Transport { .. } | Error::DeadlineExceeded { .. } => Failed::Transient(interval),
        Error::ProviderResultPending { .. } => Failed::Transient(interval),
        Error::Api(api) if api.status == 429 => Failed::Transient(
            api.retry_after
                .map_or(interval, |ra| ra.min(retry_after_cap).max(interval)),
        ),
        Error::Api(api) if api.status == 408 || api.status >= 500 => Failed::Transient(interval),
        _ => Failed::Definite,
    }
}

impl UserSession {
    /// Polls the payment status every `interval` until 1 paid or 2 cancelled, then reads the
    /// order: [`PaymentWaitOutcome::Final`]. Once `timeout` has passed without a final status
    /// (even when a poll is still in flight) gives [`PaymentWaitOutcome::StillPending`] with the
    /// last status seen and how long it waited: an outcome, not an error. The defaults are
    /// [`DEFAULT_WAIT_INTERVAL`] and [`DEFAULT_WAIT_TIMEOUT`].
    ///
    /// A failed poll that may heal (transport failure, 408, 429, 5xx, 202) does not end the
    /// wait: it polls on until the timeout (after a 429, after its `Retry-After`, capped by the
    /// retry policy). A definite client error (other 4xx, such as 401, 403 or 404) or an
    /// undecodable answer is returned at once as an error. An `interval` below 100 ms is raised
    /// to 100 ms; zero is a validation error; a `timeout` above 30 days (up to `Duration::MAX`)
    /// is treated as 30 days. Dropping the future cancels it.
    pub async fn wait_for_payment(
        &self,
        order_no: &str,
        interval: Duration,
        timeout: Duration,
    ) -> Result<PaymentWaitOutcome> {
        require_id("order_no", order_no)?;
        if interval.is_zero() {
            return Err(Error::validation("interval", "must be positive"));
        }
        let interval = interval.max(MIN_POLL_INTERVAL);
        let started = Instant::now();
        let give_up = started
            .checked_add(timeout.min(MAX_WAIT_TIMEOUT))
            .unwrap_or(started);
        let cap = self.client.inner.config.retry.max_retry_after;
        let mut last = PaymentStatus::AwaitingPayment;
        let mut last_error: Option<Error> = None;
        let pending = |last: PaymentStatus, last_error: Option<Error>| {
            still_pending(last, last_error, started.elapsed())
        };
        loop {
            let polled = tokio::time::timeout_at(give_up, self.payment_status(order_no)).await;
            let pause = match polled {
                Err(_elapsed) => return Ok(pending(last, last_error)),
                Ok(Ok(s)) if s.is_final() => {
                    let order = self.get_order(order_no).await?;
                    return Ok(PaymentWaitOutcome::Final {
                        payment_status: s,
                        order: Box::new(order),
                    });
                }
                Ok(Ok(s)) => {
                    last = s;
                    last_error = None;
                    interval
                }
                Ok(Err(e)) => match classify(&e, interval, cap) {
                    Failed::Definite => return Err(e),
                    Failed::Transient(pause) => {
                        tracing::debug!(order_no, error = %e, "payment status poll failed; polling on");
                        last_error = Some(e);
                        pause
                    }
                },
            };
            match Instant::now().checked_add(pause) {
                Some(next) if next <= give_up => tokio::time::sleep_until(next).await,
                // The next poll would come after the deadline.
                _ => return Ok(pending(last, last_error)),
            }
        }
    }
}

/// The still-pending outcome. The last failed poll, if the last poll failed, is logged (the
/// outcome says only that it failed).
fn still_pending(
    last: PaymentStatus,
    last_error: Option<Error>,
    waited: Duration,
) -> PaymentWaitOutcome {
    if let Some(e) = &last_error {
        tracing::debug!(error = %e, "payment wait timed out after a failed poll");
    }
    PaymentWaitOutcome::StillPending {
        last_status: last,
        waited,
        last_poll_failed: last_error.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ApiError, ErrorCode, TransportKind};

    fn api(status: u16, retry_after: Option<Duration>) -> Error {
        Error::Api(ApiError {
            status,
            error: ErrorCode::Other(String::new()),
            error_description: None,
            field: None,
            retry_after,
        })
    }

    /// Issue 10 item 6: a failed poll that may heal keeps the wait going; a definite client
    /// error ends it.
    #[test]
    fn only_definite_failures_end_the_wait() {
        let i = Duration::from_millis(100);
        let cap = Duration::from_secs(5);
        let transient = [
            Error::Transport {
                kind: TransportKind::Timeout,
                message: "timed out".into(),
            },
            Error::DeadlineExceeded { last: None },
            api(500, None),
            api(503, None),
            api(408, None),
        ];
        for e in &transient {
            assert_eq!(classify(e, i, cap), Failed::Transient(i), "{e:?}");
        }
        assert_eq!(
            classify(&api(429, Some(Duration::from_secs(2))), i, cap),
            Failed::Transient(Duration::from_secs(2))
        );
        assert_eq!(
            classify(&api(429, Some(Duration::MAX)), i, cap),
            Failed::Transient(cap)
        );
        assert_eq!(classify(&api(429, None), i, cap), Failed::Transient(i));
        for status in [400, 401, 403, 404, 409, 410, 422] {
            assert_eq!(classify(&api(status, None), i, cap), Failed::Definite);
        }
        assert_eq!(
            classify(&Error::decode(200, "bad"), i, cap),
            Failed::Definite
        );
    }
}
