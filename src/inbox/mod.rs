//! The webhook inbox: store each notification before acknowledging it, hand each payment's
//! state changes to the app once and in order, book each paid payment event once, across
//! workers and hosts (SQLite for one host, PostgreSQL for many).
//!
//! Contract rules ("Events"): verify the signature (constant time, several secrets during a
//! rotation) and the timestamp over the raw body; "store the notification reliably before
//! returning" (any 2xx acknowledges, so nothing is acknowledged that was not committed: a store
//! that cannot commit answers 503 and the service delivers again); "deduplicate by notification
//! `id`"; "book payments idempotently by `data.event_id`"; "a lower version must not overwrite a
//! higher one" (per payment `status_version`, which "may be 0 for historical never-changed
//! records": 0 is a real version, lower than any other); "notifications complement, not replace,
//! interval-bounded queries and periodic reconciliation" (a payment found paid by the reconciler
//! enters the same flow).
//!
//! The flow:
//! 1. [`Inbox::receive`] verifies, then stores the notification keyed by its `id` in one
//!    statement, and only then answers 2xx: the least a correct receiver does before it
//!    acknowledges. A duplicate `id` is acknowledged and stored once. Before that, a body
//!    above [`MAX_BODY_BYTES`] is answered 413 (one limit for every binding) and a verified
//!    notification that breaks what booking relies on ([`ContractViolation`]: `paid` without
//!    `event_id`, an `event_id` another payment carries, a version beyond 2^63 - 1) is answered
//!    422 and counted, so no paid payment sits in the inbox unbookable.
//! 2. Workers [`Inbox::claim`] events under a lease, and the claim decides the order: each
//!    payment has a watermark, the highest `status_version` handed to the app; an event at or
//!    below it (or equal under another id), or below another waiting event of the payment, is
//!    kept as `stale` and never handed out, so the app only ever moves a payment forward. At
//!    most one event per payment is out at a time, oldest first. An event whose lease ran out
//!    (worker killed) is claimed again. A `paid` event whose `event_id` is already booked is
//!    completed as a `duplicate` without being handed out, so the booking reaches the app once
//!    even under several notification ids (or a reconciliation's) and again after a refund.
//! 3. The app handles the event and [`Inbox::complete`]s it (which records the booking of a
//!    `paid` event) — or completes it inside its own transaction on the same database with
//!    [`Inbox::completion_sql`], so that its booking and the completion commit together.
//!
//! Operations: [`Inbox::status`] (counts per state, rejections, the oldest pending event's
//! age), [`Inbox::purge`] (retention of finished rows, default 30 days), [`Inbox::replay`]
//! (hand one event, or the events received in a time range, to the handler again).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::collection::model::{MerchantPayment, MerchantPaymentStatus};
use crate::money::MinorAmount;
use crate::reconcile::LocalRecord;
#[cfg(feature = "store-postgres")]
use crate::secret::Secret;
use crate::webhook::{NotificationData, WebhookError, WebhookVerifier};

#[cfg(test)]
mod conformance;
#[cfg(feature = "store-postgres")]
mod postgres;
#[cfg(feature = "store-sqlite")]
mod sqlite;

/// How long rows of finished events (completed, stale, duplicate) are kept by default.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// The default lease of a claimed event: a worker killed while handling it blocks the event's
/// payment at most this long.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The largest notification body the inbox accepts, in bytes (1 MiB), the one limit of every
/// binding (Rust, C, Python, PHP, Kotlin): a larger delivery is refused before verification
/// with [`STATUS_BODY_TOO_LARGE`] and reason [`REASON_BODY_TOO_LARGE`], counted in
/// [`InboxStatus::rejected`] and never stored or handed to the app. The contract states no
/// notification size; its notification object is a few small fields (`external_reference` at
/// most 191 bytes, ids, an amount), well under 4 KiB, so this is far above any genuine one and
/// equal to the C ABI's input limit.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// The deepest nesting of JSON arrays and objects a notification body may have (the contract's
/// notification object has two levels: the envelope and `data`). A verified body nested deeper
/// is refused as `invalid_body` (400, counted), never stored or handed to the app, whose own
/// JSON decoder might fail on it or exhaust its stack (serde_json skips unknown fields without
/// a depth limit, so the verifier alone would accept it).
pub const MAX_BODY_DEPTH: usize = 32;
/// The HTTP status answered for a body above [`MAX_BODY_BYTES`] (413 Content Too Large).
pub const STATUS_BODY_TOO_LARGE: u16 = 413;
/// The reason code of a body above [`MAX_BODY_BYTES`] (in [`Receipt::reason`] and as the key
/// counted in [`InboxStatus::rejected`]).
pub const REASON_BODY_TOO_LARGE: &str = "body_too_large";
/// The HTTP status answered for a verified notification that breaks the contract
/// ([`ContractViolation`]): 422, a 4xx, so the service's delivery record shows the failure
/// ("4xx ... count as failures") and retries it; it is never acknowledged and never stored.
pub const STATUS_CONTRACT_VIOLATION: u16 = 422;
/// The reason code of a [`ContractViolation`] in [`Receipt::reason`].
pub const REASON_CONTRACT_VIOLATION: &str = "contract_violation";

/// A rule of the contract that a verified notification (or a payment found by reconciliation)
/// breaks, so that the inbox cannot book it correctly: it is refused (answered
/// [`STATUS_CONTRACT_VIOLATION`] with reason [`REASON_CONTRACT_VIOLATION`]), counted per rule in
/// [`InboxStatus::contract_violations`], logged at error level, and [`Inbox::reconcile`]
/// reports the payment as [`crate::ReconcileFinding::NeedsAttention`] with the rule's code,
/// never as an endless `paid_not_booked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContractViolation {
    /// A `paid` payment without `event_id`: the contract's `event_id` is "omitted until payment
    /// is confirmed" and set on the move to `paid` ("event_id and occurred_at set"), and
    /// payments are booked "idempotently by `data.event_id`".
    MissingEventId,
    /// An `event_id` that another payment already carries: it is a "stable unique payment
    /// event number", one per payment.
    EventIdReused,
    /// A `status_version` above 2^63 - 1, which the inbox's stores (signed 64-bit integers)
    /// cannot hold exactly, so "a lower version must not overwrite a higher one" could not be
    /// kept (never clamped).
    StatusVersionOutOfRange,
}

impl ContractViolation {
    /// Stable snake_case code of the rule (`missing_event_id`, `event_id_reused`,
    /// `status_version_out_of_range`).
    pub fn code(self) -> &'static str {
        match self {
            ContractViolation::MissingEventId => "missing_event_id",
            ContractViolation::EventIdReused => "event_id_reused",
            ContractViolation::StatusVersionOutOfRange => "status_version_out_of_range",
        }
    }

    /// The rule a payment state breaks before any store is asked: `paid` without `event_id`,
    /// or a `status_version` the stores cannot hold exactly.
    fn of(status: &str, status_version: u64, event_id: Option<&str>) -> Option<ContractViolation> {
        if i64::try_from(status_version).is_err() {
            Some(ContractViolation::StatusVersionOutOfRange)
        } else if status == "paid" && event_id.is_none() {
            Some(ContractViolation::MissingEventId)
        } else {
            None
        }
    }
}

/// Where an event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventSource {
    /// A verified status notification.
    Notification,
    /// A payment the reconciler found paid at the service but not booked here.
    Reconciliation,
}

impl EventSource {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventSource::Notification => "notification",
            EventSource::Reconciliation => "reconciliation",
        }
    }

    pub(crate) fn parse(text: &str) -> EventSource {
        if text == "reconciliation" {
            EventSource::Reconciliation
        } else {
            EventSource::Notification
        }
    }
}

/// A state change handed to the app by [`Inbox::claim`]. Complete it with [`Inbox::complete`]
/// (or [`Inbox::completion_sql`]) before its lease runs out.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxEvent {
    /// The notification `id` (`reconciled:{order_no}:{status_version}` for a reconciliation).
    pub id: String,
    /// This claim's token: completing needs it, so a worker whose lease ran out and whose
    /// event another worker took cannot complete it too.
    pub claim: String,
    /// The payment number.
    pub order_no: String,
    /// The merchant's business reference.
    pub external_reference: String,
    /// The payment's status at this event (only `paid` confirms payment).
    pub status: MerchantPaymentStatus,
    /// The payment's `status_version` at this event.
    pub status_version: u64,
    /// The payment event number (present once paid; kept through refund and chargeback).
    #[serde(default)]
    pub event_id: Option<String>,
    /// Amount in minor units of `currency`.
    pub amount_minor: MinorAmount,
    /// Currency (uppercase code).
    pub currency: String,
    /// Whether the channel is a test channel.
    pub test_mode: bool,
    /// `true` exactly once per payment event: the first event handed out that carries a
    /// not-yet-booked `event_id` — normally the `paid` one; `refunded` or `chargeback` when the
    /// service moved on before a worker took the `paid` event (book the payment, then apply the
    /// reversal). Completing the event records the booking.
    pub book: bool,
    /// Where the event came from.
    pub source: EventSource,
    /// Whether it was handed out again by [`Inbox::replay`].
    pub replayed: bool,
    /// How many times it was claimed before (a worker died or released it).
    pub attempts: u32,
    /// The notification body exactly as received (or the queried payment, as JSON, for a
    /// reconciliation).
    pub body: String,
}

impl fmt::Debug for InboxEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InboxEvent")
            .field("id", &self.id)
            .field("order_no", &self.order_no)
            .field("status", &self.status)
            .field("status_version", &self.status_version)
            .field("event_id", &self.event_id)
            .field("book", &self.book)
            .field("source", &self.source)
            .field("replayed", &self.replayed)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

/// What [`Inbox::receive`] did, with the HTTP answer to give the service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The HTTP status to answer: 200 when stored (or already stored), 400 for a delivery
    /// that failed verification, 413 for a body above [`MAX_BODY_BYTES`], 422 for a verified
    /// notification that breaks the contract ([`ContractViolation`]), 503 when the store could
    /// not commit (the service delivers again).
    pub status: u16,
    /// What happened.
    pub outcome: ReceiptOutcome,
    /// The notification `id`, once verified.
    #[serde(default)]
    pub id: Option<String>,
    /// The reason of a refusal (a [`WebhookError::code`], [`REASON_BODY_TOO_LARGE`] or
    /// [`REASON_CONTRACT_VIOLATION`]) or of a store failure.
    #[serde(default)]
    pub reason: Option<String>,
}

impl Receipt {
    /// The answer body (small JSON; the service ignores it).
    pub fn body(&self) -> String {
        serde_json::json!({ "outcome": self.outcome, "id": self.id, "reason": self.reason })
            .to_string()
    }
}

/// The outcome of one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptOutcome {
    /// Verified and stored; a worker decides its order: handed out, or kept as stale when the
    /// payment has moved past its version.
    Stored,
    /// This notification `id` was stored before: acknowledged, stored once.
    Duplicate,
    /// Verification failed (signature, timestamp, headers, body), or the body is above
    /// [`MAX_BODY_BYTES`]: counted, not stored.
    Rejected,
    /// Verified, but it breaks the contract ([`ContractViolation`]): answered 422, counted,
    /// logged, not stored (for [`Inbox::enter_reconciled`]: not entered).
    ContractViolation,
    /// The store could not commit: not acknowledged.
    StoreFailed,
}

/// Counts of the inbox (for dashboards and operators).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxStatus {
    /// Events waiting for a worker.
    pub pending: u64,
    /// Events claimed, lease still running.
    pub claimed: u64,
    /// Events handled.
    pub completed: u64,
    /// Events kept but never handed out (a version not above the watermark, or superseded).
    pub stale: u64,
    /// `paid` events whose `event_id` was already booked (completed without being handed out).
    pub duplicate: u64,
    /// Deliveries refused by verification or for their size ([`REASON_BODY_TOO_LARGE`]), per
    /// reason code.
    pub rejected: std::collections::BTreeMap<String, u64>,
    /// Verified deliveries refused because they break the contract, per
    /// [`ContractViolation::code`] (answered 422, never stored).
    #[serde(default)]
    pub contract_violations: std::collections::BTreeMap<String, u64>,
    /// Age in milliseconds of the oldest pending (or lease-expired) event.
    #[serde(default)]
    pub oldest_pending_ms: Option<u64>,
    /// Payment events booked so far.
    pub booked: u64,
}

/// A payment's watermark as the inbox holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watermark {
    /// Payment number.
    pub order_no: String,
    /// Business reference.
    pub external_reference: String,
    /// The highest `status_version` received.
    pub status_version: u64,
    /// The status at that version.
    pub status: MerchantPaymentStatus,
    /// Amount in minor units.
    pub amount_minor: MinorAmount,
    /// Currency.
    pub currency: String,
    /// The payment event booked for it, if any.
    #[serde(default)]
    pub booked_event_id: Option<String>,
}

impl Watermark {
    /// The shop's record of this payment, for the reconciler.
    pub fn local_record(&self) -> LocalRecord {
        LocalRecord {
            external_reference: self.external_reference.clone(),
            order_no: Some(self.order_no.clone()),
            expected_amount: self.amount_minor,
            currency: self.currency.clone(),
            test_mode: None,
            booked_status_version: Some(self.status_version),
            booked_event_id: self.booked_event_id.clone(),
        }
    }
}

/// Which events [`Inbox::replay`] hands out again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replay {
    /// One event by its id.
    Event(String),
    /// The events received between these Unix milliseconds (inclusive start, exclusive end).
    Received {
        /// Start, Unix milliseconds.
        from_ms: i64,
        /// End, Unix milliseconds.
        to_ms: i64,
    },
}

/// Failures of the inbox's own operations (not of a delivery: [`Inbox::receive`] answers
/// those with a [`Receipt`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InboxError {
    /// The configuration is wrong (URL, secrets).
    #[error("inbox configuration: {0}")]
    Config(String),
    /// The database failed (unreachable, locked past the timeout, a constraint).
    #[error("inbox store: {0}")]
    Store(String),
    /// The event's lease ran out and another worker claimed it: do not book it here (roll back
    /// what the handler did, if it can).
    #[error("the lease of inbox event {0} ran out and another worker holds it")]
    LeaseLost(String),
    /// No such event.
    #[error("no inbox event {0}")]
    NotFound(String),
}

impl InboxError {
    /// Stable snake_case name.
    pub fn code(&self) -> &'static str {
        match self {
            InboxError::Config(_) => "config",
            InboxError::Store(_) => "store",
            InboxError::LeaseLost(_) => "lease_lost",
            InboxError::NotFound(_) => "not_found",
        }
    }
}

/// Result of an inbox operation.
pub type InboxResult<T> = std::result::Result<T, InboxError>;

pub(crate) type InboxFuture<'a, T> = Pin<Box<dyn Future<Output = InboxResult<T>> + Send + 'a>>;

/// A verified notification reduced to what the inbox stores.
#[derive(Debug, Clone)]
pub(crate) struct Incoming {
    pub id: String,
    pub source: EventSource,
    pub order_no: String,
    pub external_reference: String,
    pub status: String,
    pub status_version: u64,
    pub event_id: Option<String>,
    pub amount_minor: u64,
    pub currency: String,
    pub test_mode: bool,
    pub body: String,
}

impl Incoming {
    fn from_data(id: &str, source: EventSource, data: &NotificationData, body: String) -> Self {
        Incoming {
            id: id.to_owned(),
            source,
            order_no: data.order_no.clone(),
            external_reference: data.external_reference.clone(),
            status: data.status.as_str().to_owned(),
            status_version: data.status_version,
            event_id: data.event_id.clone(),
            amount_minor: data.amount_minor.get(),
            currency: data.currency.clone(),
            test_mode: data.test_mode,
            body,
        }
    }
}

/// What storing an incoming event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inserted {
    Stored,
    Duplicate,
    /// Nothing stored: the `event_id` belongs to another payment.
    EventIdTaken,
}

/// One inbox database. Every method is one short transaction.
pub(crate) trait InboxStore: Send + Sync {
    fn insert<'a>(&'a self, event: &'a Incoming) -> InboxFuture<'a, Inserted>;
    fn reject<'a>(&'a self, reason: &'a str) -> InboxFuture<'a, ()>;
    /// Counts a delivery refused for breaking the contract, per rule.
    fn violation<'a>(&'a self, rule: &'a str) -> InboxFuture<'a, ()>;
    fn claim<'a>(
        &'a self,
        n: u32,
        lease_ms: u64,
        claim: &'a str,
    ) -> InboxFuture<'a, Vec<InboxEvent>>;
    fn complete<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()>;
    fn release<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()>;
    fn status(&self) -> InboxFuture<'_, InboxStatus>;
    fn purge(&self, older_than_ms: u64) -> InboxFuture<'_, u64>;
    fn replay<'a>(&'a self, which: &'a Replay) -> InboxFuture<'a, u64>;
    fn watermarks(&self) -> InboxFuture<'_, Vec<Watermark>>;
    fn completion_sql(&self) -> &'static str;
}

/// The inbox. Cheap to share (`Arc`); every method may be called from many tasks, processes
/// and hosts at once.
pub struct Inbox {
    store: Box<dyn InboxStore>,
    verifier: WebhookVerifier,
    /// Shown in `Debug`: the backend, never the URL.
    backend: &'static str,
    /// How long finished rows are kept ([`DEFAULT_RETENTION`]).
    retention: Duration,
    /// When this inbox object last purged (claims purge at most once per [`PURGE_INTERVAL`]).
    last_purge: std::sync::Mutex<Option<std::time::Instant>>,
}

/// The configuration error of an inbox URL with a `namespace` (see [`Inbox::open`]).
const NAMESPACE_REFUSED: &str = "inbox URL: `namespace` is not supported (the inbox's tables are not namespaced): give each shop its own SQLite file or PostgreSQL database";

/// How often a claiming inbox deletes finished rows past their retention.
pub const PURGE_INTERVAL: Duration = Duration::from_secs(60 * 60);

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Inbox {
    /// Opens the inbox at `url` (`sqlite:///var/lib/shop/inbox.db`, or `postgres://…`),
    /// verifying deliveries with `verifier` (its secrets, tolerance and clock). Tables are
    /// created on first use; nothing connects here. The SQLite file is created mode 0600
    /// (notification bodies are the shop's data).
    ///
    /// One inbox is one shop: its tables are not namespaced, so a `namespace` query parameter
    /// (which the shared-state URL takes) is refused with [`InboxError::Config`] on every
    /// backend — give each shop its own SQLite file or PostgreSQL database. A SQLite URL takes
    /// no query parameter at all (refused the same way, never ignored).
    pub fn open(url: &str, verifier: WebhookVerifier) -> InboxResult<Inbox> {
        let bad = |why: String| InboxError::Config(why);
        let parsed = url::Url::parse(url.trim()).map_err(|e| bad(format!("inbox URL: {e}")))?;
        // One rule for every backend: the inbox's tables are not namespaced (unlike the
        // shared state's keys), so a `namespace` would not keep two shops apart. Refused.
        if parsed.query_pairs().any(|(key, _)| key == "namespace") {
            return Err(bad(NAMESPACE_REFUSED.into()));
        }
        match parsed.scheme() {
            #[cfg(feature = "store-sqlite")]
            "sqlite" => {
                if parsed.query().is_some_and(|q| !q.is_empty()) {
                    return Err(bad(
                        "a sqlite inbox URL takes no query parameters: sqlite:///absolute/path.db"
                            .into(),
                    ));
                }
                if parsed.host_str().is_some_and(|h| !h.is_empty()) {
                    return Err(bad(
                        "a sqlite inbox URL names a local file: sqlite:///absolute/path.db".into(),
                    ));
                }
                let path = parsed
                    .to_file_path()
                    .map_err(|_| bad("a sqlite inbox URL needs an absolute file path".into()))?;
                Ok(Inbox::with_store(
                    Box::new(sqlite::SqliteInbox::new(path)?),
                    verifier,
                    "sqlite",
                ))
            }
            #[cfg(feature = "store-postgres")]
            "postgres" | "postgresql" => Ok(Inbox::with_store(
                Box::new(postgres::PostgresInbox::new(&Secret::new(url.trim()))?),
                verifier,
                "postgres",
            )),
            other => Err(bad(format!(
                "inbox URL scheme {other} is not supported by this build (sqlite://, postgres://)"
            ))),
        }
    }

    #[allow(dead_code)] // without a backend feature nothing opens one
    fn with_store(
        store: Box<dyn InboxStore>,
        verifier: WebhookVerifier,
        backend: &'static str,
    ) -> Inbox {
        Inbox {
            store,
            verifier,
            backend,
            retention: DEFAULT_RETENTION,
            last_purge: std::sync::Mutex::new(None),
        }
    }

    /// Keeps finished rows (completed, stale, duplicate) for `retention` instead of
    /// [`DEFAULT_RETENTION`] (30 days): a claiming inbox deletes older ones at most once per
    /// [`PURGE_INTERVAL`] (watermarks and bookings are kept).
    pub fn with_retention(mut self, retention: Duration) -> Inbox {
        self.retention = retention;
        self
    }

    /// The backend's name (`sqlite`, `postgres`).
    pub fn backend(&self) -> &'static str {
        self.backend
    }

    /// Receives one delivery: verifies it (the three `X-Service-*` header values, `None` when
    /// absent, and the raw body exactly as received), stores it, and says what to answer. Never
    /// acknowledges (2xx) what was not committed. A body above [`MAX_BODY_BYTES`] is refused
    /// first (413 `body_too_large`, counted, nothing verified or stored); a verified
    /// notification that breaks the contract is refused with 422 `contract_violation`
    /// ([`ContractViolation`]).
    pub async fn receive(
        &self,
        event_id: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Receipt {
        if body.len() > MAX_BODY_BYTES {
            return self.too_large(body.len()).await;
        }
        let verified = self
            .verifier
            .verify_raw(event_id, timestamp, signature, body);
        self.receive_verified(verified, body).await
    }

    /// [`Inbox::receive`] with the current time given as Unix seconds instead of the verifier's
    /// clock (for hosts with their own time source, such as the bindings and the sandbox's
    /// clock in tests).
    pub async fn receive_at(
        &self,
        now: i64,
        event_id: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Receipt {
        if body.len() > MAX_BODY_BYTES {
            return self.too_large(body.len()).await;
        }
        let verified = self
            .verifier
            .verify_raw_at(now, event_id, timestamp, signature, body);
        self.receive_verified(verified, body).await
    }

    async fn receive_verified(
        &self,
        verified: Result<crate::webhook::VerifiedNotification<'_>, WebhookError>,
        body: &[u8],
    ) -> Receipt {
        let verified = verified.and_then(|v| {
            if !nested_within(body, MAX_BODY_DEPTH) {
                return Err(WebhookError::InvalidBody(format!(
                    "nested deeper than {MAX_BODY_DEPTH} levels"
                )));
            }
            Ok((v.id().to_owned(), v.data()?))
        });
        let (id, data) = match verified {
            Ok(v) => v,
            Err(e) => return self.rejected(&e).await,
        };
        let text = match std::str::from_utf8(body) {
            Ok(t) => t.to_owned(),
            Err(_) => {
                return self
                    .rejected(&WebhookError::InvalidBody("not UTF-8".into()))
                    .await;
            }
        };
        if let Some(rule) = ContractViolation::of(
            data.status.as_str(),
            data.status_version,
            data.event_id.as_deref(),
        ) {
            return self.violated(rule, &id, &data.order_no).await;
        }
        let incoming = Incoming::from_data(&id, EventSource::Notification, &data, text);
        self.store_incoming(incoming).await
    }

    /// [`Inbox::receive`] with the headers read from an HTTP header map (axum and hyper).
    pub async fn receive_headers(
        &self,
        headers: &reqwest::header::HeaderMap,
        body: &[u8],
    ) -> Receipt {
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        self.receive(
            get(crate::webhook::HEADER_EVENT_ID),
            get(crate::webhook::HEADER_TIMESTAMP),
            get(crate::webhook::HEADER_SIGNATURE),
            body,
        )
        .await
    }

    async fn rejected(&self, e: &WebhookError) -> Receipt {
        tracing::debug!(reason = e.code(), "inbox: delivery refused");
        self.refused(400, e.code()).await
    }

    /// A body above [`MAX_BODY_BYTES`]: 413 `body_too_large`, counted, nothing read.
    async fn too_large(&self, len: usize) -> Receipt {
        tracing::warn!(
            bytes = len,
            limit = MAX_BODY_BYTES,
            "inbox: delivery refused, body above the limit"
        );
        self.refused(STATUS_BODY_TOO_LARGE, REASON_BODY_TOO_LARGE)
            .await
    }

    /// Counts a refusal per reason and answers `status`.
    async fn refused(&self, status: u16, reason: &str) -> Receipt {
        // Counting is best effort: a refusal is answered whether or not the count commits.
        if let Err(store) = self.store.reject(reason).await {
            tracing::warn!(error = %store, "inbox: could not count a rejected delivery");
        }
        Receipt {
            status,
            outcome: ReceiptOutcome::Rejected,
            id: None,
            reason: Some(reason.to_owned()),
        }
    }

    /// A verified notification that breaks the contract: logged at error level (the rule, the
    /// notification and payment numbers; never the body or a secret), counted per rule, and
    /// answered 422 `contract_violation`, so the service records a failed delivery.
    async fn violated(&self, rule: ContractViolation, id: &str, order_no: &str) -> Receipt {
        tracing::error!(
            rule = rule.code(),
            id = %id,
            order_no = %order_no,
            "inbox: a verified notification breaks the contract; refused with 422 contract_violation, not stored"
        );
        if let Err(store) = self.store.violation(rule.code()).await {
            tracing::warn!(error = %store, "inbox: could not count a contract violation");
        }
        Receipt {
            status: STATUS_CONTRACT_VIOLATION,
            outcome: ReceiptOutcome::ContractViolation,
            id: Some(id.to_owned()),
            reason: Some(REASON_CONTRACT_VIOLATION.to_owned()),
        }
    }

    async fn store_incoming(&self, incoming: Incoming) -> Receipt {
        let id = Some(incoming.id.clone());
        match self.store.insert(&incoming).await {
            Ok(Inserted::EventIdTaken) => {
                self.violated(
                    ContractViolation::EventIdReused,
                    &incoming.id,
                    &incoming.order_no,
                )
                .await
            }
            Ok(inserted) => Receipt {
                status: 200,
                outcome: match inserted {
                    Inserted::Duplicate => ReceiptOutcome::Duplicate,
                    _ => ReceiptOutcome::Stored,
                },
                id,
                reason: None,
            },
            Err(e) => {
                tracing::warn!(error = %e, "inbox: could not store a delivery; answered 503 so it is delivered again");
                Receipt {
                    status: 503,
                    outcome: ReceiptOutcome::StoreFailed,
                    id,
                    reason: Some(e.code().to_owned()),
                }
            }
        }
    }

    /// Claims up to `n` events for `lease`: the oldest waiting ones, at most one per payment,
    /// none of a payment whose previous event is still out. An empty list means nothing waits.
    pub async fn claim(&self, n: u32, lease: Duration) -> InboxResult<Vec<InboxEvent>> {
        let claim = crate::random::hex::<16>()
            .map_err(|e| InboxError::Store(format!("no claim token: {e}")))?;
        let lease_ms = lease.as_millis().clamp(1, u64::MAX as u128) as u64;
        self.purge_when_due().await;
        self.store.claim(n.max(1), lease_ms, &claim).await
    }

    /// Retention by default: the first claim, then one claim per [`PURGE_INTERVAL`], deletes
    /// finished rows past the retention. A failure is logged and tried again next interval.
    async fn purge_when_due(&self) {
        let now = std::time::Instant::now();
        {
            let Ok(mut last) = self.last_purge.lock() else {
                return;
            };
            if last.is_some_and(|at| now.duration_since(at) < PURGE_INTERVAL) {
                return;
            }
            *last = Some(now);
        }
        if let Err(e) = self.purge(self.retention).await {
            tracing::warn!(error = %e, "inbox: could not delete finished rows past their retention");
        }
    }

    /// Marks `event` handled (and, for a `book` event, its payment event booked). Fails with
    /// [`InboxError::LeaseLost`] when its lease ran out and another worker claimed it.
    pub async fn complete(&self, event: &InboxEvent) -> InboxResult<()> {
        self.store.complete(&event.id, &event.claim).await
    }

    /// Gives `event` back (the handler failed): it waits for a worker again at once.
    pub async fn release(&self, event: &InboxEvent) -> InboxResult<()> {
        self.store.release(&event.id, &event.claim).await
    }

    /// The statements that complete an event inside the app's own transaction on the same
    /// database, with the app's own driver: bind `:id` and `:claim` (SQLite) or `$1` and `$2`
    /// (PostgreSQL), run them in order, and roll back unless the first changed exactly one row
    /// (the lease was lost). See the README's "Book inside your own transaction". (On
    /// PostgreSQL an event id holding U+0000 — only a reconciliation of a payment number
    /// holding it — cannot be bound as `text` by any driver: complete such an event with
    /// [`Inbox::complete`].)
    pub fn completion_sql(&self) -> &'static str {
        self.store.completion_sql()
    }

    /// Enters a payment the reconciler found (paid at the service, not booked here, or any
    /// newer state) into the same flow, marked [`EventSource::Reconciliation`]: the one handler
    /// books it once. A version the payment has moved past is kept as stale when a worker
    /// claims, as for a notification.
    ///
    /// A payment that breaks the contract ([`ContractViolation`]: `paid` without `event_id`, an
    /// `event_id` another payment carries, a `status_version` above 2^63 - 1) is not entered:
    /// the answer is [`ReceiptOutcome::ContractViolation`] (logged at error level).
    pub async fn enter_reconciled(&self, payment: &MerchantPayment) -> InboxResult<ReceiptOutcome> {
        Ok(match self.enter(payment).await? {
            Ok(outcome) => outcome,
            Err(_) => ReceiptOutcome::ContractViolation,
        })
    }

    /// [`Inbox::enter_reconciled`], naming the rule a payment breaks.
    async fn enter(
        &self,
        payment: &MerchantPayment,
    ) -> InboxResult<Result<ReceiptOutcome, ContractViolation>> {
        let version = payment.status_version.unwrap_or(0);
        let broken = ContractViolation::of(
            payment.status.as_str(),
            version,
            payment.event_id.as_deref(),
        );
        if let Some(rule) = broken {
            tracing::error!(
                rule = rule.code(),
                order_no = %payment.order_no,
                "inbox: a payment found by reconciliation breaks the contract; not entered"
            );
            return Ok(Err(rule));
        }
        let body = serde_json::to_string(payment).map_err(|e| InboxError::Store(e.to_string()))?;
        let incoming = Incoming {
            id: format!("reconciled:{}:{version}", payment.order_no),
            source: EventSource::Reconciliation,
            order_no: payment.order_no.clone(),
            external_reference: payment.external_reference.clone(),
            status: payment.status.as_str().to_owned(),
            status_version: version,
            event_id: payment.event_id.clone(),
            amount_minor: payment.amount_minor.get(),
            currency: payment.currency.clone(),
            test_mode: payment.test_mode,
            body,
        };
        Ok(match self.store.insert(&incoming).await? {
            Inserted::Stored => Ok(ReceiptOutcome::Stored),
            Inserted::Duplicate => Ok(ReceiptOutcome::Duplicate),
            Inserted::EventIdTaken => {
                tracing::error!(
                    rule = ContractViolation::EventIdReused.code(),
                    order_no = %payment.order_no,
                    "inbox: a payment found by reconciliation breaks the contract; not entered"
                );
                Err(ContractViolation::EventIdReused)
            }
        })
    }

    /// Reconciliation joins the inbox ("notifications complement, not replace, interval-bounded
    /// queries and periodic reconciliation"): runs `reconciler` over the payments the inbox
    /// knows (their watermark and booking are the shop's record) and the app's own `records`
    /// (orders whose notifications may never have arrived; an app record of a payment the
    /// inbox knows takes the inbox's booking), and enters every payment found paid at the
    /// service but not booked here, or in a newer state than the inbox has, into the same flow
    /// ([`Inbox::enter_reconciled`]): the one handler books it once. Returns every report.
    ///
    /// Per payment: one that breaks the contract ([`ContractViolation`]) is reported as
    /// [`crate::ReconcileFinding::NeedsAttention`] with the rule's code instead of entering (an
    /// operator decides; never an endless `paid_not_booked`), and one whose entering fails is
    /// reported as `NeedsAttention` with reason `inbox_store` (tried again next run); neither
    /// stops the others from entering.
    pub async fn reconcile(
        &self,
        reconciler: &crate::Reconciler,
        records: Vec<LocalRecord>,
    ) -> InboxResult<Vec<crate::ReconcileReport>> {
        use futures_util::StreamExt;
        let marks = self.watermarks().await?;
        let mut merged: Vec<LocalRecord> = Vec::with_capacity(records.len() + marks.len());
        let mut known = std::collections::HashSet::new();
        for mark in &marks {
            known.insert(mark.order_no.clone());
        }
        for record in records {
            let inbox_knows = record.order_no.as_ref().is_some_and(|o| known.contains(o))
                || marks
                    .iter()
                    .any(|m| m.external_reference == record.external_reference);
            if !inbox_knows {
                merged.push(record);
            }
        }
        merged.extend(marks.iter().map(Watermark::local_record));
        let stream = reconciler
            .reconcile(merged, None)
            .map_err(|e| InboxError::Config(e.to_string()))?;
        let mut reports: Vec<crate::ReconcileReport> = stream.collect().await;
        for report in &mut reports {
            self.settle(report).await;
        }
        Ok(reports)
    }

    /// Enters one report's payment into the flow when it needs it (paid and not booked here,
    /// or in a newer state than the inbox has), per payment: a payment that breaks the contract
    /// (`paid` without `event_id` — which the reconciler reports as an `event_id` mismatch —,
    /// an `event_id` another payment carries, a version above 2^63 - 1) or whose entering failed
    /// becomes [`crate::ReconcileFinding::NeedsAttention`] with the rule's code (or
    /// `inbox_store`), and the other payments still enter.
    async fn settle(&self, report: &mut crate::ReconcileReport) {
        use crate::ReconcileFinding as F;
        let payment = match &report.finding {
            F::PaidNotBooked { payment, .. } | F::BookedNotPaid { payment, .. } => payment,
            F::Mismatch {
                field: crate::reconcile::MismatchField::EventId,
                payment,
                ..
            } if payment.status == MerchantPaymentStatus::Paid && payment.event_id.is_none() => {
                payment
            }
            _ => return,
        };
        let reason = match self.enter(payment).await {
            Ok(Ok(_)) => return,
            Ok(Err(rule)) => rule.code().to_owned(),
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    order_no = %payment.order_no,
                    "inbox: could not enter a reconciled payment; the others go on"
                );
                format!("inbox_{}", e.code())
            }
        };
        report.finding = F::NeedsAttention {
            reason,
            payment: payment.clone(),
        };
    }

    /// Every payment the inbox knows, with its watermark and booking: the shop's local records
    /// for the [`crate::Reconciler`] ([`Watermark::local_record`]).
    pub async fn watermarks(&self) -> InboxResult<Vec<Watermark>> {
        self.store.watermarks().await
    }

    /// Counts per state, rejections per reason, the oldest waiting event's age.
    pub async fn status(&self) -> InboxResult<InboxStatus> {
        self.store.status().await
    }

    /// Deletes finished rows (completed, stale, duplicate) older than `retention`
    /// ([`DEFAULT_RETENTION`] is 30 days). Watermarks, bookings and which payment owns each
    /// `event_id` are kept: they are what makes a very late duplicate stale, a booking once and
    /// a reused `event_id` a contract violation. Returns the rows deleted.
    pub async fn purge(&self, retention: Duration) -> InboxResult<u64> {
        self.store
            .purge(retention.as_millis().min(u64::MAX as u128) as u64)
            .await
    }

    /// Hands finished events to the handler again (`replayed` set; `book` false for a booking
    /// already made). Returns how many.
    pub async fn replay(&self, which: &Replay) -> InboxResult<u64> {
        self.store.replay(which).await
    }
}

/// Whether the JSON text `body` nests arrays and objects at most `max` deep (brackets inside
/// strings do not count). One pass, no recursion.
fn nested_within(body: &[u8], max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

/// Maps a stored status string back to the typed status.
pub(crate) fn status_of(text: &str) -> MerchantPaymentStatus {
    MerchantPaymentStatus::parse(text)
}

/// Reads a stored amount back.
pub(crate) fn amount_of(minor: i64) -> MinorAmount {
    MinorAmount::new(minor.max(1) as u64)
        .unwrap_or_else(|_| MinorAmount::new(1).expect("1 is valid"))
}
