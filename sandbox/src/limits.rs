//! Rate limits of the contract ("Limits"): per client per minute for merchant collection, per
//! IP per minute for the public checkout.
//!
//! # How handlers use it
//!
//! After authorizing the caller (so the client id is known) and before doing anything else:
//!
//! ```ignore
//! // Not holding the lock:
//! shared.check_limit(Bucket::MerchantCreate, &caller.client_id)?;
//! // Already holding it (`let mut db = shared.db();`): never call `check_limit` then, the
//! // mutex is not reentrant.
//! db.limits.hit(Bucket::MerchantRead, &caller.client_id, shared.clock.now())?;
//! // Per-IP checkout limits key on the peer address (`ConnectInfo<SocketAddr>`):
//! shared.check_limit(Bucket::CheckoutRead, &peer.ip().to_string())?;
//! ```
//!
//! | Bucket | Limit per minute | Key | Endpoints |
//! |---|---|---|---|
//! | [`Bucket::MerchantCreate`] | 60 | client id | POST /openapi/v1/merchant-payments |
//! | [`Bucket::MerchantRead`] | 300, shared | client id | GET merchant-payments/{order_no}, GET merchant-payments (list), GET merchant-payment-channels (and, in this sandbox, GET .../notifications) |
//! | [`Bucket::NotificationRetry`] | 30 | client id | POST .../notifications/{event_id}/retry |
//! | [`Bucket::CheckoutRead`] | 180 | peer IP | checkout page and checkout JSON reads |
//! | [`Bucket::CheckoutStart`] | 30 | peer IP | checkout channel payment start |
//!
//! A refused request gets 429 `rate_limited` with `Retry-After` (whole seconds until the oldest
//! counted request leaves the window, at least 1) and is not counted. Windows slide over the
//! last 60 seconds of the sandbox clock, so a test that advances the clock by `Retry-After`
//! seconds is admitted again, and a burst never straddles a reset. Buckets and keys are
//! independent: two clients never share a budget, and the shared read budget is one per client.

use std::collections::{HashMap, VecDeque};

use axum::http::StatusCode;
use time::{Duration, OffsetDateTime};

use crate::error::{ApiError, ApiResult};

pub mod http;

/// Length of a rate-limit window.
pub const WINDOW_SECONDS: i64 = 60;

/// A rate-limited budget of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bucket {
    /// Create merchant payment: 60 per client per minute.
    MerchantCreate,
    /// Query, filtered list and channel directory: 300 per client per minute, shared.
    MerchantRead,
    /// Notification retry endpoint: 30 per client per minute.
    NotificationRetry,
    /// Checkout read: 180 per IP per minute.
    CheckoutRead,
    /// Checkout payment start: 30 per IP per minute.
    CheckoutStart,
}

impl Bucket {
    /// A short name (`merchant_create`, `merchant_read`, `notification_retry`,
    /// `checkout_read`, `checkout_start`).
    pub fn name(self) -> &'static str {
        match self {
            Bucket::MerchantCreate => "merchant_create",
            Bucket::MerchantRead => "merchant_read",
            Bucket::NotificationRetry => "notification_retry",
            Bucket::CheckoutRead => "checkout_read",
            Bucket::CheckoutStart => "checkout_start",
        }
    }

    /// Requests admitted per window.
    pub fn limit(self) -> usize {
        match self {
            Bucket::MerchantCreate => 60,
            Bucket::MerchantRead => 300,
            Bucket::NotificationRetry => 30,
            Bucket::CheckoutRead => 180,
            Bucket::CheckoutStart => 30,
        }
    }
}

/// Admitted request times per bucket and key, within the last window.
#[derive(Debug)]
pub struct RateLimiter {
    hits: HashMap<(Bucket, String), VecDeque<OffsetDateTime>>,
    window: Duration,
}

impl Default for RateLimiter {
    fn default() -> Self {
        RateLimiter {
            hits: HashMap::new(),
            window: Duration::seconds(WINDOW_SECONDS),
        }
    }
}

impl RateLimiter {
    /// Sets the window length (the contract's is one minute, the default; a shorter one lets a
    /// test exercise a client-side limiter's pacing in seconds, with the same budgets).
    pub fn set_window(&mut self, window: Duration) {
        self.window = window.max(Duration::SECOND);
    }

    /// The window length.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Counts one request of `key` in `bucket` at `now`, or refuses it with 429
    /// `rate_limited` and `Retry-After` when the window is full (a refused request is not
    /// counted).
    pub fn hit(&mut self, bucket: Bucket, key: &str, now: OffsetDateTime) -> ApiResult<()> {
        let window = self.window;
        let times = self.hits.entry((bucket, key.to_owned())).or_default();
        while times.front().is_some_and(|t| *t + window <= now) {
            times.pop_front();
        }
        if times.len() >= bucket.limit() {
            let oldest = times.front().copied().unwrap_or(now);
            let wait = (oldest + window - now).as_seconds_f64().ceil() as u64;
            let mut error =
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited").describe(format!(
                    "at most {} requests per {} s; retry after the Retry-After header",
                    bucket.limit(),
                    window.whole_seconds()
                ));
            error.retry_after = Some(wait.max(1));
            return Err(error);
        }
        times.push_back(now);
        Ok(())
    }

    /// The windows with requests counted at `now`: bucket, key, requests counted, and when the
    /// oldest of them leaves the window. Reading changes nothing.
    pub fn windows(
        &self,
        now: OffsetDateTime,
    ) -> impl Iterator<Item = (Bucket, &str, usize, Option<OffsetDateTime>)> + '_ {
        let window = self.window;
        self.hits.iter().filter_map(move |((bucket, key), times)| {
            let live: Vec<_> = times.iter().filter(|t| **t + window > now).collect();
            (!live.is_empty()).then(|| {
                (
                    *bucket,
                    key.as_str(),
                    live.len(),
                    live.first().map(|t| **t + window),
                )
            })
        })
    }

    /// Forgets every counted request.
    pub fn reset(&mut self) {
        self.hits.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_is_not_counted_and_the_window_slides() {
        let mut limiter = RateLimiter::default();
        let start = OffsetDateTime::UNIX_EPOCH;
        for i in 0..30 {
            limiter
                .hit(Bucket::CheckoutStart, "ip", start + Duration::seconds(i))
                .unwrap();
        }
        let refused = limiter
            .hit(Bucket::CheckoutStart, "ip", start + Duration::seconds(30))
            .unwrap_err();
        assert_eq!(refused.retry_after, Some(30));
        assert!(
            limiter
                .hit(Bucket::CheckoutStart, "ip", start + Duration::seconds(60))
                .is_ok()
        );
        assert!(
            limiter
                .hit(
                    Bucket::CheckoutStart,
                    "other",
                    start + Duration::seconds(30)
                )
                .is_ok()
        );
    }
}
