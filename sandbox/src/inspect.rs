//! A read-only view of everything the sandbox stores, for tests, examples and the dashboard.
//!
//! [`crate::Sandbox::inspect`] (or [`crate::state::AppState::inspect`]) takes the sandbox's
//! lock and returns an [`Inspect`] guard; its methods copy what they answer into plain view
//! types, so nothing read through it can change the sandbox or outlive the guard. Drop the
//! guard quickly: while it lives, every request waits. Never hold it across an await.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let sandbox = storefront_sandbox::Sandbox::start().await?;
//! let wallet = sandbox.inspect().wallet(storefront_sandbox::seed::USER_ALICE);
//! assert_eq!(wallet, Some(storefront_sandbox::seed::ALICE_WALLET));
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::sync::MutexGuard;

use time::OffsetDateTime;

use crate::clock::Clock;
use crate::db::Db;
use crate::limits::Bucket;
pub use crate::merchant_payments::fees::Funds;
pub use crate::merchant_payments::store::{Status as PaymentStatus, StatusStep};
pub use crate::notifications::store::{Attempt, DeliveryStatus, LoggedAttempt};

/// The read-only view; holds the sandbox's lock until dropped.
pub struct Inspect<'a> {
    clock: &'a Clock,
    db: MutexGuard<'a, Db>,
}

impl std::fmt::Debug for Inspect<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspect").finish_non_exhaustive()
    }
}

/// The merchant-center default notification setting of a merchant (its secret is never shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyDefaultView {
    /// Default notification address.
    pub url: String,
    /// Whether the default is enabled.
    pub enabled: bool,
}

/// A catalog order as stored (not brought up to date with the clock: reading changes nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogOrderView {
    /// Order number.
    pub order_no: String,
    /// Merchant of the order.
    pub merchant_no: String,
    /// Buyer who placed it.
    pub user_id: String,
    /// Product.
    pub gd_no: String,
    /// Product title.
    pub title: String,
    /// Units ordered.
    pub quantity: i64,
    /// Order status code of the contract (0 awaiting payment, 1 paid, 2 cancelled, 3 completed).
    pub status: u8,
    /// Payment status code of the contract (0 awaiting, 1 paid, 2 cancelled).
    pub payment_status: u8,
    /// Amount to pay in the payment currency (eight-decimal fixed point).
    pub payment_pay_amount: i64,
    /// Payment currency.
    pub payment_currency: String,
    /// Channel of the order.
    pub payment_no: String,
    /// `card-provider` or `platform-coin`.
    pub provider: String,
    /// The order's input fields (`other_ipu`).
    pub inputs: BTreeMap<String, String>,
    /// The payment session, once started.
    pub trade: Option<CatalogTradeView>,
    /// When it was paid.
    pub paid_at: Option<OffsetDateTime>,
    /// When it was placed.
    pub created_at: OffsetDateTime,
}

/// A catalog payment session (trade).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogTradeView {
    /// Trade number.
    pub trade_no: String,
    /// Order it pays.
    pub order_no: String,
    /// When the session stops being payable.
    pub expires_at: OffsetDateTime,
}

/// The channel session a buyer started on a merchant payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionView {
    /// Channel of the session.
    pub payment_no: String,
    /// Logged-in buyer who started it, if any.
    pub user: Option<String>,
    /// When it started.
    pub started_at: OffsetDateTime,
    /// Whether the channel is a test channel.
    pub test_mode: bool,
    /// Whether the channel's response was unclear.
    pub unclear: bool,
    /// Whether the channel confirmed that the session expired unpaid.
    pub channel_expired: bool,
}

/// A merchant payment with its status timeline (no checkout token, no secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentView {
    /// Creation order (larger is newer).
    pub seq: u64,
    /// Payment number.
    pub order_no: String,
    /// Owning merchant.
    pub merchant_no: String,
    /// Merchant's business reference.
    pub external_reference: String,
    /// Amount in minor units.
    pub amount_minor: i64,
    /// Currency.
    pub currency: String,
    /// Precision of `currency`.
    pub currency_decimals: u32,
    /// Description shown to the buyer.
    pub description: Option<String>,
    /// Current status.
    pub status: PaymentStatus,
    /// Current `status_version`.
    pub status_version: u64,
    /// Every status change, oldest first.
    pub timeline: Vec<StatusStep>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Payment deadline.
    pub expires_at: OffsetDateTime,
    /// Payment event number, once paid.
    pub event_id: Option<String>,
    /// Payment confirmation time.
    pub occurred_at: Option<OffsetDateTime>,
    /// Channel transaction number, once known.
    pub provider_trade_no: Option<String>,
    /// Settlement in platform coin (eight-decimal fixed point).
    pub settlement_coin: Option<i64>,
    /// Channels offered on its checkout.
    pub methods: Vec<MethodView>,
    /// The channel session, once started.
    pub session: Option<SessionView>,
    /// Notification address fixed at creation, if notifications apply.
    pub notify_url: Option<String>,
}

/// A channel offered on a merchant payment's checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodView {
    /// Channel identifier.
    pub payment_no: String,
    /// Channel name (empty when the channel is unknown).
    pub name: String,
    /// `card-provider` or `platform-coin` (empty when the channel is unknown).
    pub provider: String,
}

/// The delivery record of one notification event (no signing secret).
#[derive(Debug, Clone)]
pub struct DeliveryView {
    /// Notification event number.
    pub event_id: String,
    /// Payment the event belongs to.
    pub order_no: String,
    /// `status_version` of the payment snapshot in the event.
    pub status_version: u64,
    /// Target address.
    pub url: String,
    /// Raw body sent at every attempt.
    pub body: String,
    /// Delivery status.
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: u32,
    /// Automatic attempts made.
    pub automatic_attempts: u32,
    /// When the next attempt is due.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// Whether an attempt is running now.
    pub in_flight: bool,
    /// HTTP status of the last answer.
    pub last_http_status: Option<u16>,
    /// Error of the last failed attempt.
    pub last_error: Option<String>,
    /// The latest attempts, oldest first.
    pub history: Vec<Attempt>,
}

/// An injected fault still waiting for matching requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultView {
    /// Fault id.
    pub id: u64,
    /// HTTP method it matches.
    pub method: String,
    /// Exact path it matches.
    pub path: String,
    /// Matching requests left.
    pub remaining: u32,
    /// Injected answer status, if it answers.
    pub status: Option<u16>,
    /// Delay before anything else.
    pub latency_ms: u64,
    /// Whether it drops the connection.
    pub drop_connection: bool,
    /// Whether it answers a truncated JSON body.
    pub malformed_body: bool,
    /// Size of the oversized body it answers, if it does.
    pub oversized_body: Option<usize>,
    /// Whether it answers a body of its own.
    pub custom_body: bool,
    /// Names of the extra headers it answers.
    pub header_names: Vec<String>,
    /// Whether the real handler runs first.
    pub after_handler: bool,
}

/// One rate-limit window: a bucket and key with requests counted in the current window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateWindowView {
    /// The budget.
    pub bucket: Bucket,
    /// Client id or peer IP.
    pub key: String,
    /// Requests admitted per window.
    pub limit: usize,
    /// Requests counted in the window now.
    pub used: usize,
    /// When the oldest counted request leaves the window.
    pub frees_at: Option<OffsetDateTime>,
}

impl<'a> Inspect<'a> {
    pub(crate) fn new(clock: &'a Clock, db: MutexGuard<'a, Db>) -> Self {
        Inspect { clock, db }
    }

    /// The sandbox clock now.
    pub fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    /// How far the sandbox clock was moved ahead of real time, in seconds.
    pub fn clock_offset_seconds(&self) -> i64 {
        self.clock.offset_seconds()
    }

    /// The platform-coin wallet (eight-decimal fixed point) of a buyer.
    pub fn wallet(&self, user_id: &str) -> Option<i64> {
        self.db.directory.users.get(user_id).map(|u| u.wallet)
    }

    /// Every buyer's wallet, by user id.
    pub fn wallets(&self) -> BTreeMap<String, i64> {
        let users = &self.db.directory.users;
        users
            .values()
            .map(|u| (u.user_id.clone(), u.wallet))
            .collect()
    }

    /// A merchant's default notification setting (`None` when unset or the merchant unknown).
    pub fn notify_default(&self, merchant_no: &str) -> Option<NotifyDefaultView> {
        let merchant = self.db.directory.merchants.get(merchant_no)?;
        merchant.notify_default.as_ref().map(|d| NotifyDefaultView {
            url: d.url.clone(),
            enabled: d.enabled,
        })
    }

    /// A merchant's fee funds (merchant-own channels).
    pub fn fee_funds(&self, merchant_no: &str) -> Funds {
        self.db.payments.fees.funds(merchant_no)
    }

    /// How many catalog orders are stored.
    pub fn catalog_order_count(&self) -> usize {
        self.db.catalog.orders.len()
    }

    /// Every catalog order, by order number.
    pub fn catalog_orders(&self) -> Vec<CatalogOrderView> {
        self.db.catalog.orders.values().map(order_view).collect()
    }

    /// Every catalog order as it stands on the sandbox clock now, by order number: brought up
    /// to date on a copy (awaiting payment past its deadline reads as cancelled, paid past
    /// fulfilment as completed), so nothing stored changes.
    pub fn catalog_orders_now(&self) -> Vec<CatalogOrderView> {
        let now = self.clock.now();
        let orders = self.db.catalog.orders.values();
        orders
            .map(|order| {
                let mut order = order.clone();
                order.advance(now);
                order_view(&order)
            })
            .collect()
    }

    /// One catalog order.
    pub fn catalog_order(&self, order_no: &str) -> Option<CatalogOrderView> {
        self.db.catalog.orders.get(order_no).map(order_view)
    }

    /// Every catalog payment session, by trade number.
    pub fn catalog_trades(&self) -> Vec<CatalogTradeView> {
        let catalog = &self.db.catalog;
        catalog
            .trades
            .iter()
            .filter_map(|(trade_no, order_no)| {
                let trade = catalog.orders.get(order_no)?.trade.as_ref()?;
                Some(CatalogTradeView {
                    trade_no: trade_no.clone(),
                    order_no: order_no.clone(),
                    expires_at: trade.expires_at,
                })
            })
            .collect()
    }

    /// Every merchant payment, newest first.
    pub fn payments(&self) -> Vec<PaymentView> {
        let mut all: Vec<PaymentView> = self
            .db
            .payments
            .payments
            .values()
            .map(|p| payment_view(&self.db, p))
            .collect();
        all.sort_by_key(|p| std::cmp::Reverse(p.seq));
        all
    }

    /// One merchant payment.
    pub fn payment(&self, order_no: &str) -> Option<PaymentView> {
        let payment = self.db.payments.payments.get(order_no);
        payment.map(|p| payment_view(&self.db, p))
    }

    /// Idempotency keys a merchant used, with the payment each created.
    pub fn idempotency_keys(&self, merchant_no: &str) -> BTreeMap<String, String> {
        self.db
            .payments
            .idempotency
            .iter()
            .filter(|((merchant, _), _)| merchant == merchant_no)
            .map(|((_, key), record)| (key.clone(), record.order_no.clone()))
            .collect()
    }

    /// Whether the background expiry sweep is paused.
    pub fn sweep_paused(&self) -> bool {
        self.db.payments.sweep.paused
    }

    /// The notification events (delivery records) of a payment, in creation order.
    pub fn deliveries(&self, order_no: &str) -> Vec<DeliveryView> {
        let records = self.db.notifications.records.get(order_no);
        records.into_iter().flatten().map(delivery_view).collect()
    }

    /// Every notification event of every payment (by payment number, then creation order).
    pub fn all_deliveries(&self) -> Vec<DeliveryView> {
        let records = self.db.notifications.records.values();
        records.flatten().map(delivery_view).collect()
    }

    /// The latest notification attempts as sent (target, headers, raw body, answer), newest
    /// first, at most `most`; with `order_no`, only that payment's.
    pub fn attempt_log(&self, order_no: Option<&str>, most: usize) -> Vec<LoggedAttempt> {
        let log = self.db.notifications.log.iter().rev();
        log.filter(|a| order_no.is_none_or(|o| o == a.order_no))
            .take(most)
            .cloned()
            .collect()
    }

    /// How many notification events are stored.
    pub fn notification_event_count(&self) -> usize {
        self.db.notifications.records.values().map(Vec::len).sum()
    }

    /// Whether the delivery worker is paused.
    pub fn delivery_paused(&self) -> bool {
        self.db.notifications.paused
    }

    /// Injected faults still pending, in the order they apply.
    pub fn pending_faults(&self) -> Vec<FaultView> {
        self.db
            .faults
            .faults
            .iter()
            .map(|f| FaultView {
                id: f.id,
                method: f.method.as_str().to_owned(),
                path: f.path.clone(),
                remaining: f.remaining,
                status: f.status.map(|s| s.as_u16()),
                latency_ms: f.latency_ms,
                drop_connection: f.drop_connection,
                malformed_body: f.malformed_body,
                oversized_body: f.oversized_body,
                custom_body: f.body.is_some(),
                header_names: f
                    .headers
                    .iter()
                    .map(|(n, _)| n.as_str().to_owned())
                    .collect(),
                after_handler: f.after_handler,
            })
            .collect()
    }

    /// The rate-limit windows with requests counted now, and the window length in seconds.
    pub fn rate_limit_windows(&self) -> (Vec<RateWindowView>, i64) {
        let now = self.clock.now();
        let limits = &self.db.limits;
        let windows = limits
            .windows(now)
            .map(|(bucket, key, used, frees_at)| RateWindowView {
                bucket,
                key: key.to_owned(),
                limit: bucket.limit(),
                used,
                frees_at,
            })
            .collect();
        (windows, limits.window().whole_seconds())
    }
}

fn order_view(order: &crate::catalog::orders::Order) -> CatalogOrderView {
    CatalogOrderView {
        order_no: order.order_no.clone(),
        merchant_no: order.merchant_no.clone(),
        user_id: order.user_id.clone(),
        gd_no: order.gd_no.clone(),
        title: order.title.clone(),
        quantity: order.quantity,
        status: order.status,
        payment_status: order.payment_status(),
        payment_pay_amount: order.payment_pay_amount,
        payment_currency: order.payment_currency.clone(),
        payment_no: order.payment_no.clone(),
        provider: order.provider.clone(),
        inputs: order.other_ipu.clone(),
        trade: order.trade.as_ref().map(|t| CatalogTradeView {
            trade_no: t.trade_no.clone(),
            order_no: order.order_no.clone(),
            expires_at: t.expires_at,
        }),
        paid_at: order.paid_at,
        created_at: order.created_at,
    }
}

fn payment_view(db: &Db, p: &crate::merchant_payments::store::MerchantPayment) -> PaymentView {
    PaymentView {
        seq: p.seq,
        order_no: p.order_no.clone(),
        merchant_no: p.merchant_no.clone(),
        external_reference: p.external_reference.clone(),
        amount_minor: p.amount_minor,
        currency: p.currency.clone(),
        currency_decimals: p.currency_decimals,
        description: p.description.clone(),
        status: p.status,
        status_version: p.status_version,
        timeline: p.timeline.clone(),
        created_at: p.created_at,
        expires_at: p.expires_at,
        event_id: p.event_id.clone(),
        occurred_at: p.occurred_at,
        provider_trade_no: p.provider_trade_no.clone(),
        settlement_coin: p.settlement_coin,
        methods: p
            .methods
            .iter()
            .map(|m| method_view(db, &m.payment_no))
            .collect(),
        session: p.session.as_ref().map(|s| SessionView {
            payment_no: s.payment_no.clone(),
            user: s.user.clone(),
            started_at: s.started_at,
            test_mode: s.test_mode,
            unclear: s.unclear,
            channel_expired: s.channel_expired,
        }),
        notify_url: p.notify.as_ref().map(|n| n.url.clone()),
    }
}

fn method_view(db: &Db, payment_no: &str) -> MethodView {
    let channel = db.directory.channels.get(payment_no);
    MethodView {
        payment_no: payment_no.to_owned(),
        name: channel.map(|c| c.name.clone()).unwrap_or_default(),
        provider: channel.map(|c| c.provider.clone()).unwrap_or_default(),
    }
}

fn delivery_view(r: &crate::notifications::store::DeliveryRecord) -> DeliveryView {
    DeliveryView {
        event_id: r.event_id.clone(),
        order_no: r.order_no.clone(),
        status_version: r.status_version,
        url: r.target.url.clone(),
        body: r.body.clone(),
        status: r.status,
        attempts: r.attempts,
        automatic_attempts: r.automatic_attempts,
        next_attempt_at: r.next_attempt_at,
        in_flight: r.in_flight,
        last_http_status: r.last_http_status,
        last_error: r.last_error.clone(),
        history: r.history.iter().cloned().collect(),
    }
}
