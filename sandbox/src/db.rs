//! Everything the sandbox stores, one store per domain, behind the one lock of
//! [`crate::state::AppState`].
//!
//! Handlers take the lock, do their whole change and release it before any await, so a request
//! never sees (or leaves) a half-made change. The fields are visible inside the crate only;
//! tests, examples and the dashboard read through [`crate::inspect::Inspect`].

use crate::catalog::store::CatalogStore;
use crate::directory::store::DirectoryStore;
use crate::faults::FaultStore;
use crate::limits::RateLimiter;
use crate::merchant_payments::store::PaymentStore;
use crate::notifications::store::NotificationStore;
use crate::requests::RequestLog;

/// All stored data of the simulated service, by domain, plus the cross-cutting stores (rate
/// limits, injected faults, the request log) so that a reset is one change.
#[derive(Debug)]
pub struct Db {
    /// Merchants, clients, users and wallets, channels, tokens, currencies and rates.
    pub(crate) directory: DirectoryStore,
    /// Catalogue products, catalog orders and catalog payment sessions.
    pub(crate) catalog: CatalogStore,
    /// Merchant payments, idempotency records, checkout tokens, the sweep and fee funds.
    pub(crate) payments: PaymentStore,
    /// Notification events and their delivery records.
    pub(crate) notifications: NotificationStore,
    /// Per-client and per-IP rate limits.
    pub(crate) limits: RateLimiter,
    /// Injected faults.
    pub(crate) faults: FaultStore,
    /// Requests received.
    pub(crate) requests: RequestLog,
}

impl Db {
    /// The data every sandbox starts with (see [`crate::seed`]).
    pub fn seeded() -> Self {
        Db {
            directory: DirectoryStore::seeded(),
            catalog: CatalogStore::seeded(),
            payments: PaymentStore::default(),
            notifications: NotificationStore::default(),
            limits: RateLimiter::default(),
            faults: FaultStore::default(),
            requests: RequestLog::default(),
        }
    }

    /// Everything back to the seed, except the configured rate-limit window length and token
    /// lifetime, which a reset keeps.
    pub fn reset(&mut self) {
        let window = self.limits.window();
        let token_lifetime = self.directory.token_lifetime_seconds;
        *self = Db::seeded();
        self.limits.set_window(window);
        self.directory.token_lifetime_seconds = token_lifetime;
    }
}
