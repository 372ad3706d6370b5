//! Rate limits of the contract ("Limits"): per client per minute for merchant collection, per
//! IP per minute for the public checkout.
//!
//! # How handlers use it
//!
//! After authorizing the caller (so the client id is known) and before doing anything else:
//!
//! ```ignore
//! // Not holding the world lock:
//! limits::check(&shared, Bucket::MerchantCreate, &caller.client_id)?;
//! // Already holding it (`let mut world = shared.world();`): never call `check` then, the
//! // world mutex is not reentrant.
//! world.limits.hit(Bucket::MerchantRead, &caller.client_id, shared.clock.now())?;
//! // Per-IP checkout limits key on the peer address (`ConnectInfo<SocketAddr>`):
//! limits::check(&shared, Bucket::CheckoutRead, &peer.ip().to_string())?;
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
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::delete;
use axum::{Json, Router};
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::error::{ApiError, ApiResult};
use crate::state::Shared;

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

/// The use of one rate-limit window (see [`RateLimiter::windows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowUse {
    /// The budget.
    pub bucket: Bucket,
    /// Client id or peer IP.
    pub key: String,
    /// Requests counted in the window.
    pub used: usize,
    /// When the oldest counted request leaves the window (sandbox clock).
    pub oldest_leaves_at: OffsetDateTime,
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

    /// Every window with requests counted in the last window length before `now`: bucket,
    /// key (client id or peer IP), requests counted and when the oldest of them leaves the
    /// window. Read-only (expired entries are not pruned here).
    pub fn windows(&self, now: OffsetDateTime) -> Vec<WindowUse> {
        let mut windows: Vec<WindowUse> = self
            .hits
            .iter()
            .filter_map(|((bucket, key), times)| {
                let live: Vec<_> = times.iter().filter(|t| **t + self.window > now).collect();
                Some(WindowUse {
                    bucket: *bucket,
                    key: key.clone(),
                    used: live.len(),
                    oldest_leaves_at: **live.first()? + self.window,
                })
            })
            .collect();
        windows.sort_by(|a, b| (a.bucket.name(), &a.key).cmp(&(b.bucket.name(), &b.key)));
        windows
    }

    /// Forgets every counted request.
    pub fn reset(&mut self) {
        self.hits.clear();
    }
}

/// Counts one request of `key` in `bucket` on the sandbox clock (takes the world lock; do not
/// call while holding it, use [`RateLimiter::hit`] then).
pub fn check(shared: &Shared, bucket: Bucket, key: &str) -> ApiResult<()> {
    let now = shared.clock.now();
    shared.world().limits.hit(bucket, key, now)
}

/// Control routes: `DELETE /_sandbox/limits` resets every window.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/limits", delete(reset))
}

async fn reset(State(shared): State<Arc<Shared>>) -> Json<Value> {
    shared.world().limits.reset();
    Json(json!({ "reset": true }))
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
