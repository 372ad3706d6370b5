//! The only place the dashboard reads sandbox state: one pass through [`crate::inspect`] under
//! the sandbox's lock, keeping the plain read-only views the pages show. The dashboard has no
//! snapshot model of its own: it shows the [`crate::inspect::Inspect`] views, which have no field for a secret
//! (no checkout token nor checkout URL, no notification secret, access token or client
//! secret), so the pages cannot print one.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use crate::inspect::{
    CatalogOrderView, CatalogTradeView, DeliveryView, FaultView, LoggedAttempt, PaymentView,
    RateWindowView,
};
use crate::state::AppState;

/// Everything the dashboard pages show, read at one instant.
#[derive(Debug, Clone)]
pub struct DashboardView {
    /// Sandbox clock now.
    pub now: OffsetDateTime,
    /// Seconds the sandbox clock is ahead of real time.
    pub clock_offset_seconds: i64,
    /// Whether the notification delivery worker is paused.
    pub worker_paused: bool,
    /// Whether the automatic expiry sweep is paused.
    pub sweep_paused: bool,
    /// Merchant payments, newest first (only the requested one on a payment page).
    pub payments: Vec<PaymentView>,
    /// Notification delivery records of those payments (by payment, then creation order).
    pub deliveries: Vec<DeliveryView>,
    /// Notification attempts, newest first (the latest [`ATTEMPTS_SHOWN`] on the overview;
    /// every logged attempt of the payment on a payment page).
    pub attempts: Vec<LoggedAttempt>,
    /// Catalog orders as they stand now, newest first.
    pub catalog_orders: Vec<CatalogOrderView>,
    /// Catalog payment sessions.
    pub trades: Vec<CatalogTradeView>,
    /// Faults still pending, in the order they apply.
    pub faults: Vec<FaultView>,
    /// Rate-limit windows with requests counted, by budget name then key.
    pub limits: Vec<RateWindowView>,
    /// Length of the rate-limit windows, seconds.
    pub limit_window_seconds: i64,
    /// Seeded buyers' platform-coin wallets, by user id.
    pub wallets: BTreeMap<String, i64>,
    /// The dashboard token every form carries in a hidden field (form rule of
    /// [`crate::guard`]). The pages' only secret: it lets this sandbox's own pages change it.
    pub form_token: String,
}

/// Attempts listed on the overview.
pub const ATTEMPTS_SHOWN: usize = 50;

impl DashboardView {
    /// Reads the state the pages show; with `order_no`, only that payment and its attempts.
    pub fn capture(shared: &AppState, order_no: Option<&str>) -> DashboardView {
        let inspect = shared.inspect();
        let (payments, deliveries, attempts) = match order_no {
            Some(order_no) => (
                inspect.payment(order_no).into_iter().collect(),
                inspect.deliveries(order_no),
                inspect.attempt_log(Some(order_no), usize::MAX),
            ),
            None => (
                inspect.payments(),
                inspect.all_deliveries(),
                inspect.attempt_log(None, ATTEMPTS_SHOWN),
            ),
        };
        let mut catalog_orders = inspect.catalog_orders_now();
        catalog_orders.reverse();
        let (mut limits, limit_window_seconds) = inspect.rate_limit_windows();
        limits.sort_by(|a, b| (a.bucket.name(), &a.key).cmp(&(b.bucket.name(), &b.key)));
        DashboardView {
            now: inspect.now(),
            clock_offset_seconds: inspect.clock_offset_seconds(),
            worker_paused: inspect.delivery_paused(),
            sweep_paused: inspect.sweep_paused(),
            payments,
            deliveries,
            attempts,
            catalog_orders,
            trades: inspect.catalog_trades(),
            faults: inspect.pending_faults(),
            limits,
            limit_window_seconds,
            wallets: inspect.wallets(),
            form_token: shared.guard.token.value().to_owned(),
        }
    }

    /// The delivery records of one payment, oldest first.
    pub fn records_of<'v>(&'v self, order_no: &'v str) -> impl Iterator<Item = &'v DeliveryView> {
        self.deliveries
            .iter()
            .filter(move |r| r.order_no == order_no)
    }

    /// Payment status code of a catalog order (0 awaiting, 1 paid, 2 cancelled; 0 when the
    /// order is not shown).
    pub fn catalog_payment_status(&self, order_no: &str) -> u8 {
        let order = self.catalog_orders.iter().find(|o| o.order_no == order_no);
        order.map_or(0, |o| o.payment_status)
    }
}

/// A fault's effect in words.
pub fn fault_effect(f: &FaultView) -> String {
    let mut parts = Vec::new();
    if f.latency_ms > 0 {
        parts.push(format!("wait {} ms", f.latency_ms));
    }
    if f.drop_connection {
        parts.push("drop the connection".to_owned());
    }
    if let Some(status) = f.status {
        parts.push(format!("answer {status}"));
    }
    if f.malformed_body {
        parts.push("malformed body".to_owned());
    }
    if let Some(bytes) = f.oversized_body {
        parts.push(format!("{bytes}-byte body"));
    }
    if f.custom_body {
        parts.push("custom body".to_owned());
    }
    if !f.header_names.is_empty() {
        parts.push(format!("headers {}", f.header_names.join(", ")));
    }
    if f.after_handler {
        parts.push("after the handler ran".to_owned());
    }
    if parts.is_empty() {
        "no effect".to_owned()
    } else {
        parts.join(", ")
    }
}

/// The status and `status_version` a logged attempt's event reports (from its raw body).
pub fn event_status(attempt: &LoggedAttempt) -> (String, Option<u64>) {
    let body: serde_json::Value =
        serde_json::from_str(&attempt.body).unwrap_or(serde_json::Value::Null);
    let data = &body["data"];
    let status = data["status"].as_str().unwrap_or("").to_owned();
    (status, data["status_version"].as_u64())
}
