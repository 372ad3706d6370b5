//! The payment wait (`wait_for_payment` on [`UserSession`]).

use std::time::Duration;

use crate::client::UserSession;
use crate::error::{Error, Result};
use crate::params::require_id;

use super::model::{PaymentStatus, PaymentWaitOutcome};

impl UserSession {
    /// Polls the payment status every `interval` until 1 paid or 2 cancelled, then reads the
    /// order. A 429 waits for its `Retry-After` (capped by the retry policy) before the next
    /// poll. Gives [`Error::WaitTimeout`] after `timeout`. Dropping the future cancels it.
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
        let give_up = tokio::time::Instant::now() + timeout;
        let cap = self.client.inner.config.retry.max_retry_after;
        let mut last = PaymentStatus::AwaitingPayment;
        loop {
            let pause = match self.payment_status(order_no).await {
                Ok(s) if s.is_final() => {
                    let order = self.get_order(order_no).await?;
                    return Ok(PaymentWaitOutcome {
                        payment_status: s,
                        order,
                    });
                }
                Ok(s) => {
                    last = s;
                    interval
                }
                Err(e) if e.status() == Some(429) => e
                    .retry_after()
                    .map_or(interval, |ra| ra.min(cap).max(interval)),
                Err(e) => return Err(e),
            };
            if tokio::time::Instant::now() + pause > give_up {
                return Err(Error::WaitTimeout {
                    last_status: last.code(),
                });
            }
            tokio::time::sleep(pause).await;
        }
    }
}
