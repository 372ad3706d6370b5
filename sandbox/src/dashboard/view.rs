//! The only place the dashboard reads sandbox state: one read-only pass over the database under
//! its lock that copies what the pages show into plain owned snapshot structs. Secrets are never copied: there is no field
//! for a checkout token (nor a checkout URL), a notification secret, an access token or a client
//! secret, so the pages cannot print one.

use serde_json::Value;
use time::OffsetDateTime;

use crate::state::AppState;

/// Everything the dashboard pages show, copied at one instant.
#[derive(Debug, Clone)]
pub struct DashboardView {
    /// Sandbox clock.
    pub clock: ClockRow,
    /// Whether the notification delivery worker is paused.
    pub worker_paused: bool,
    /// Whether the automatic expiry sweep is paused.
    pub sweep_paused: bool,
    /// Merchant payments, newest first (only the requested one on a payment page).
    pub payments: Vec<PaymentRow>,
    /// Notification attempts, newest first (the latest [`ATTEMPTS_SHOWN`] on the overview;
    /// every kept attempt of the payment on a payment page).
    pub attempts: Vec<AttemptRow>,
    /// Catalog orders, newest first.
    pub catalog_orders: Vec<CatalogOrderRow>,
    /// Catalog payment sessions.
    pub trades: Vec<TradeRow>,
    /// Faults still pending, in the order they apply.
    pub faults: Vec<FaultRow>,
    /// Rate-limit windows with requests counted.
    pub limits: Vec<LimitRow>,
    /// Length of the rate-limit windows, seconds.
    pub limit_window_seconds: i64,
    /// Seeded buyers and their platform-coin wallets.
    pub users: Vec<UserRow>,
}

/// Attempts listed on the overview.
pub const ATTEMPTS_SHOWN: usize = 50;

/// The sandbox clock.
#[derive(Debug, Clone)]
pub struct ClockRow {
    /// Now.
    pub now: OffsetDateTime,
    /// Seconds ahead of real time.
    pub offset_seconds: i64,
}

/// One merchant payment.
#[derive(Debug, Clone)]
pub struct PaymentRow {
    /// Payment number.
    pub order_no: String,
    /// Owning merchant.
    pub merchant_no: String,
    /// Merchant's reference.
    pub external_reference: String,
    /// Amount in minor units.
    pub amount_minor: i64,
    /// Currency.
    pub currency: String,
    /// Its decimals.
    pub currency_decimals: u32,
    /// Description.
    pub description: Option<String>,
    /// Status (wire name).
    pub status: String,
    /// Current `status_version`.
    pub status_version: u64,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Deadline.
    pub expires_at: OffsetDateTime,
    /// Channels offered on its checkout.
    pub methods: Vec<MethodRow>,
    /// The channel session, once started.
    pub session: Option<SessionRow>,
    /// Payment event number, once paid.
    pub event_id: Option<String>,
    /// Channel transaction number.
    pub provider_trade_no: Option<String>,
    /// When payment was confirmed.
    pub occurred_at: Option<OffsetDateTime>,
    /// Notification address (the secret is not copied).
    pub notify_url: Option<String>,
    /// Status changes, oldest first.
    pub timeline: Vec<TimelineRow>,
    /// Notification delivery records, oldest first.
    pub records: Vec<RecordRow>,
}

/// A channel offered for a payment.
#[derive(Debug, Clone)]
pub struct MethodRow {
    /// Channel identifier.
    pub payment_no: String,
    /// Channel name.
    pub name: String,
    /// `card-provider` or `platform-coin`.
    pub provider: String,
}

/// A started channel session.
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// Channel.
    pub payment_no: String,
    /// Logged-in buyer.
    pub user: Option<String>,
    /// Start.
    pub started_at: OffsetDateTime,
    /// The channel's answer was unclear.
    pub unclear: bool,
    /// The channel confirmed it expired unpaid.
    pub channel_expired: bool,
}

/// One status change.
#[derive(Debug, Clone)]
pub struct TimelineRow {
    /// Version it made.
    pub status_version: u64,
    /// Status after it.
    pub status: String,
    /// When (sandbox clock).
    pub at: OffsetDateTime,
    /// Why.
    pub why: String,
}

/// A notification delivery record.
#[derive(Debug, Clone)]
pub struct RecordRow {
    /// Event number.
    pub event_id: String,
    /// Version of its snapshot.
    pub status_version: u64,
    /// `pending`, `delivered` or `failed`.
    pub delivery_status: String,
    /// Attempts made.
    pub attempts: u32,
    /// Next attempt due.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// An attempt is running.
    pub in_flight: bool,
    /// Last answer status.
    pub last_http_status: Option<u16>,
    /// Last error.
    pub last_error: Option<String>,
}

/// One notification delivery attempt as sent.
#[derive(Debug, Clone)]
pub struct AttemptRow {
    /// Payment.
    pub order_no: String,
    /// Event number (`X-Service-Event-ID`).
    pub event_id: String,
    /// Status the event reports (from its body).
    pub event_status: String,
    /// Version the event reports (from its body).
    pub status_version: Option<u64>,
    /// Attempt number.
    pub number: u32,
    /// Target address.
    pub url: String,
    /// `X-Service-Timestamp`.
    pub timestamp: i64,
    /// `X-Service-Signature`.
    pub signature: String,
    /// Raw body.
    pub body: String,
    /// Start.
    pub started_at: OffsetDateTime,
    /// End.
    pub finished_at: OffsetDateTime,
    /// The receiver's answer status.
    pub http_status: Option<u16>,
    /// Failure.
    pub error: Option<String>,
}

/// A catalog order, brought up to date with the clock on a copy (nothing stored changes).
#[derive(Debug, Clone)]
pub struct CatalogOrderRow {
    /// Order number.
    pub order_no: String,
    /// Merchant.
    pub merchant_no: String,
    /// Buyer.
    pub user_id: String,
    /// Product.
    pub gd_no: String,
    /// Product name.
    pub title: String,
    /// Units.
    pub quantity: i64,
    /// 0 awaiting payment, 1 paid, 2 cancelled, 3 completed.
    pub status: u8,
    /// Channel.
    pub payment_no: String,
    /// Amount to pay (eight-decimal) in `payment_currency`.
    pub payment_pay_amount: i64,
    /// Payment currency.
    pub payment_currency: String,
    /// Payment session, once started.
    pub trade_no: Option<String>,
    /// Created.
    pub created_at: OffsetDateTime,
    /// Paid.
    pub paid_at: Option<OffsetDateTime>,
}

/// A catalog payment session.
#[derive(Debug, Clone)]
pub struct TradeRow {
    /// Session number.
    pub trade_no: String,
    /// Its order.
    pub order_no: String,
    /// 0 awaiting, 1 paid, 2 cancelled.
    pub payment_status: u8,
    /// Session expiry.
    pub expires_at: Option<OffsetDateTime>,
}

/// A pending fault.
#[derive(Debug, Clone)]
pub struct FaultRow {
    /// Id.
    pub id: u64,
    /// Method matched.
    pub method: String,
    /// Path matched.
    pub path: String,
    /// What it does, in words.
    pub effect: String,
    /// Matching requests left.
    pub remaining: u32,
}

/// A rate-limit window in use.
#[derive(Debug, Clone)]
pub struct LimitRow {
    /// Budget name.
    pub bucket: String,
    /// Client id or peer IP.
    pub key: String,
    /// Counted.
    pub used: usize,
    /// Budget.
    pub limit: usize,
    /// When the oldest counted request leaves the window.
    pub oldest_leaves_at: OffsetDateTime,
}

/// A seeded buyer.
#[derive(Debug, Clone)]
pub struct UserRow {
    /// User id.
    pub user_id: String,
    /// Platform-coin wallet (eight-decimal).
    pub wallet: i64,
}

impl DashboardView {
    /// Copies the state the pages show; with `order_no`, only that payment and its attempts.
    pub fn capture(shared: &AppState, order_no: Option<&str>) -> DashboardView {
        let now = shared.clock.now();
        let clock = ClockRow {
            now,
            offset_seconds: shared.clock.offset_seconds(),
        };
        let db = shared.db();
        let mut payments: Vec<_> = db
            .payments
            .payments
            .values()
            .filter(|p| order_no.is_none_or(|o| o == p.order_no))
            .collect();
        payments.sort_by_key(|p| std::cmp::Reverse(p.seq));
        let payments = payments
            .into_iter()
            .map(|p| PaymentRow {
                order_no: p.order_no.clone(),
                merchant_no: p.merchant_no.clone(),
                external_reference: p.external_reference.clone(),
                amount_minor: p.amount_minor,
                currency: p.currency.clone(),
                currency_decimals: p.currency_decimals,
                description: p.description.clone(),
                status: p.status.as_str().to_owned(),
                status_version: p.status_version,
                created_at: p.created_at,
                expires_at: p.expires_at,
                methods: p
                    .methods
                    .iter()
                    .map(|m| {
                        let channel = db.directory.channels.get(&m.payment_no);
                        MethodRow {
                            payment_no: m.payment_no.clone(),
                            name: channel.map(|c| c.name.clone()).unwrap_or_default(),
                            provider: channel.map(|c| c.provider.clone()).unwrap_or_default(),
                        }
                    })
                    .collect(),
                session: p.session.as_ref().map(|s| SessionRow {
                    payment_no: s.payment_no.clone(),
                    user: s.user.clone(),
                    started_at: s.started_at,
                    unclear: s.unclear,
                    channel_expired: s.channel_expired,
                }),
                event_id: p.event_id.clone(),
                provider_trade_no: p.provider_trade_no.clone(),
                occurred_at: p.occurred_at,
                notify_url: p.notify.as_ref().map(|n| n.url.clone()),
                timeline: p
                    .timeline
                    .iter()
                    .map(|c| TimelineRow {
                        status_version: c.status_version,
                        status: c.status.as_str().to_owned(),
                        at: c.at,
                        why: c.why.clone(),
                    })
                    .collect(),
                records: db
                    .notifications
                    .records
                    .get(&p.order_no)
                    .into_iter()
                    .flatten()
                    .map(|r| RecordRow {
                        event_id: r.event_id.clone(),
                        status_version: r.status_version,
                        delivery_status: r.status.as_str().to_owned(),
                        attempts: r.attempts,
                        next_attempt_at: r.next_attempt_at,
                        in_flight: r.in_flight,
                        last_http_status: r.last_http_status,
                        last_error: r.last_error.clone(),
                    })
                    .collect(),
            })
            .collect();
        let shown = if order_no.is_some() {
            usize::MAX
        } else {
            ATTEMPTS_SHOWN
        };
        let attempts = db
            .notifications
            .log
            .iter()
            .rev()
            .filter(|a| order_no.is_none_or(|o| o == a.order_no))
            .take(shown)
            .map(|a| {
                let body: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
                AttemptRow {
                    order_no: a.order_no.clone(),
                    event_id: a.event_id.clone(),
                    event_status: body["data"]["status"].as_str().unwrap_or("").to_owned(),
                    status_version: body["data"]["status_version"].as_u64(),
                    number: a.number,
                    url: a.url.clone(),
                    timestamp: a.timestamp,
                    signature: a.signature.clone(),
                    body: a.body.clone(),
                    started_at: a.started_at,
                    finished_at: a.finished_at,
                    http_status: a.http_status,
                    error: a.error.clone(),
                }
            })
            .collect();
        let mut catalog_orders: Vec<CatalogOrderRow> = db
            .catalog
            .orders
            .values()
            .map(|o| {
                let mut o = o.clone();
                o.advance(now);
                CatalogOrderRow {
                    order_no: o.order_no,
                    merchant_no: o.merchant_no,
                    user_id: o.user_id,
                    gd_no: o.gd_no,
                    title: o.title,
                    quantity: o.quantity,
                    status: o.status,
                    payment_no: o.payment_no,
                    payment_pay_amount: o.payment_pay_amount,
                    payment_currency: o.payment_currency,
                    trade_no: o.trade.map(|t| t.trade_no),
                    created_at: o.created_at,
                    paid_at: o.paid_at,
                }
            })
            .collect();
        catalog_orders.sort_by(|a, b| b.order_no.cmp(&a.order_no));
        let trades = db
            .catalog
            .trades
            .iter()
            .map(|(trade_no, order_no)| {
                let order = db.catalog.orders.get(order_no).map(|o| {
                    let mut o = o.clone();
                    o.advance(now);
                    o
                });
                TradeRow {
                    trade_no: trade_no.clone(),
                    order_no: order_no.clone(),
                    payment_status: order.as_ref().map_or(0, |o| o.payment_status()),
                    expires_at: order.and_then(|o| o.trade.map(|t| t.expires_at)),
                }
            })
            .collect();
        let faults = db
            .faults
            .pending()
            .iter()
            .map(|f| FaultRow {
                id: f.id,
                method: f.method.to_string(),
                path: f.path.clone(),
                effect: fault_effect(f),
                remaining: f.remaining,
            })
            .collect();
        let mut limits: Vec<LimitRow> = db
            .limits
            .windows(now)
            .map(|(bucket, key, used, frees_at)| LimitRow {
                bucket: bucket.name().to_owned(),
                key: key.to_owned(),
                used,
                limit: bucket.limit(),
                oldest_leaves_at: frees_at.unwrap_or(now),
            })
            .collect();
        limits.sort_by(|a, b| (&a.bucket, &a.key).cmp(&(&b.bucket, &b.key)));
        DashboardView {
            clock,
            worker_paused: db.notifications.paused,
            sweep_paused: db.payments.sweep.paused,
            payments,
            attempts,
            catalog_orders,
            trades,
            faults,
            limits,
            limit_window_seconds: db.limits.window().whole_seconds(),
            users: db
                .directory
                .users
                .values()
                .map(|u| UserRow {
                    user_id: u.user_id.clone(),
                    wallet: u.wallet,
                })
                .collect(),
        }
    }
}

/// A fault's effect in words.
fn fault_effect(f: &crate::faults::Fault) -> String {
    let mut parts = Vec::new();
    if f.latency_ms > 0 {
        parts.push(format!("wait {} ms", f.latency_ms));
    }
    if f.drop_connection {
        parts.push("drop the connection".to_owned());
    }
    if let Some(status) = f.status {
        parts.push(format!("answer {}", status.as_u16()));
    }
    if f.malformed_body {
        parts.push("malformed body".to_owned());
    }
    if let Some(bytes) = f.oversized_body {
        parts.push(format!("{bytes}-byte body"));
    }
    if f.body.is_some() {
        parts.push("custom body".to_owned());
    }
    if !f.headers.is_empty() {
        let names: Vec<&str> = f.headers.iter().map(|(n, _)| n.as_str()).collect();
        parts.push(format!("headers {}", names.join(", ")));
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
