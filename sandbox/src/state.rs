//! The application state every handler and background worker shares: the clock, the origin,
//! the notification delivery client and its pinned host names, the loopback switch, and the
//! one lock over the database of per-domain stores (`Db`, crate-internal).
//!
//! Only the HTTP side (handlers, middleware, the router, the background worker) sees this
//! type; the domain stores and rules never do.

use std::sync::{Mutex, MutexGuard};

use crate::clock::{Clock, DeliveryTimestamp};
use crate::db::Db;
use crate::error::ApiResult;
use crate::guard::Guard;
use crate::inspect::Inspect;
use crate::limits::Bucket;
use crate::notifications::resolve::DnsOverrides;

/// State shared by every handler and background worker of one sandbox.
#[derive(Debug)]
pub struct AppState {
    /// The sandbox clock.
    pub clock: Clock,
    /// Origin the sandbox is reachable at, e.g. `http://127.0.0.1:8080`.
    pub origin: String,
    /// Whether notification targets on loopback (plain HTTP) are accepted. The real service
    /// accepts public HTTPS only; the sandbox allows loopback receivers for local development.
    pub allow_loopback_notify: bool,
    /// HTTP client used to deliver notifications (8 s timeout, no redirects, resolved
    /// addresses checked).
    pub http: reqwest::Client,
    /// Host names pinned to addresses for notification delivery (`PUT /_sandbox/dns/{host}`).
    pub dns: DnsOverrides,
    /// Which clock stamps `X-Service-Timestamp` on deliveries (real time by default).
    pub delivery_timestamp: DeliveryTimestamp,
    /// The served hosts and the dashboard token ([`crate::guard`]: host, origin and form rules).
    pub guard: Guard,
    db: Mutex<Db>,
}

impl AppState {
    /// Builds the state around freshly seeded data.
    pub fn new(
        origin: String,
        allow_loopback_notify: bool,
        http: reqwest::Client,
        dns: DnsOverrides,
        delivery_timestamp: DeliveryTimestamp,
        guard: Guard,
    ) -> Self {
        AppState {
            clock: Clock::default(),
            origin,
            allow_loopback_notify,
            http,
            dns,
            delivery_timestamp,
            guard,
            db: Mutex::new(Db::seeded()),
        }
    }

    /// Locks the data. A handler that panicked while holding the lock does not poison the
    /// sandbox: every change is validated before it is applied, so the data stays consistent.
    pub(crate) fn db(&self) -> MutexGuard<'_, Db> {
        self.db
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A read-only view of everything the sandbox holds, for tests, examples and the
    /// dashboard. It holds the lock until dropped: keep it short and never across an await.
    pub fn inspect(&self) -> Inspect<'_> {
        Inspect::new(&self.clock, self.db())
    }

    /// Counts one request of `key` in `bucket` on the sandbox clock, or refuses it with 429
    /// `rate_limited`. Takes the lock: never call it while holding [`AppState::db`] (the mutex
    /// is not reentrant); use [`crate::limits::RateLimiter::hit`] then.
    pub(crate) fn check_limit(&self, bucket: Bucket, key: &str) -> ApiResult<()> {
        let now = self.clock.now();
        self.db().limits.hit(bucket, key, now)
    }
}
