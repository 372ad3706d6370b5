//! The webhook inbox (`crate::inbox`) for JVM servers: store each notification before
//! acknowledging it, hand each payment's state changes to the app once and in order, book each
//! paid payment event once, across workers and hosts (SQLite for one host, PostgreSQL for many).
//!
//! A server thing: the backends exist only where the core's inbox is (a store backend feature,
//! the server library `capi,uniffi`: the JVM jar). The mobile library (`uniffi` alone) links no
//! backend, yet exports the same `Inbox` surface, whose constructor throws
//! `InboxError.Config`: the Kotlin and Swift bindings are generated once, from the server
//! library, and load every symbol they name at start (JNA registration, Swift's checksum
//! calls), so a symbol missing from the mobile library would break every Android and iOS app.
//!
//! Contract rules: "store the notification reliably before returning" (`receive` answers 200
//! only once committed, 503 when the store cannot commit, 400 when verification fails);
//! "deduplicate by notification `id`"; "book payments idempotently by `data.event_id`" (`book`
//! is true once per payment event); "a lower version must not overwrite a higher one".

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::collection::{MerchantPayment, MerchantPaymentStatus};

#[cfg(not(any(feature = "store-sqlite", feature = "store-postgres")))]
use mobile::Backend;
#[cfg(any(feature = "store-sqlite", feature = "store-postgres"))]
use server::Backend;

/// Failures of the inbox's own operations (Kotlin `InboxException.LeaseLost`, ...). A delivery
/// that fails verification is not an error: `receive` answers it with a `Receipt`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum InboxError {
    /// The configuration is wrong (URL, secrets, a negative number).
    #[error("inbox configuration: {detail}")]
    Config {
        /// What is wrong.
        detail: String,
    },
    /// The database failed (unreachable, locked past the timeout, a constraint).
    #[error("inbox store: {detail}")]
    Store {
        /// What failed.
        detail: String,
    },
    /// The event's lease ran out and another worker claimed it: do not book it here (roll back
    /// what the handler did).
    #[error("the lease of inbox event {id} ran out and another worker holds it")]
    LeaseLost {
        /// The event id.
        id: String,
    },
    /// No such event.
    #[error("no inbox event {id}")]
    NotFound {
        /// The event id.
        id: String,
    },
}

type Result<T> = std::result::Result<T, InboxError>;

fn config(field: &str, why: impl std::fmt::Display) -> InboxError {
    InboxError::Config {
        detail: format!("{field}: {why}"),
    }
}

fn non_negative(field: &str, value: i64) -> Result<u64> {
    u64::try_from(value).map_err(|_| config(field, "must not be negative"))
}

/// What one delivery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum ReceiptOutcome {
    /// Verified and stored; a worker decides its order (handed out, or kept as stale).
    Stored,
    /// This notification `id` was stored before: acknowledged, stored once.
    Duplicate,
    /// Verification failed (signature, timestamp, headers, body), or the body is above the
    /// inbox's 1 MiB limit (413 `body_too_large`): counted, not stored.
    Rejected,
    /// Verified, but it breaks the contract (`paid` without `event_id`, an `event_id` of
    /// another payment, a `status_version` above 2^63 - 1): answered 422
    /// `contract_violation`, counted, logged, not stored.
    ContractViolation,
    /// The store could not commit: not acknowledged (503), the service delivers again.
    StoreFailed,
}

/// What `receive` did, with the HTTP answer to give the service: answer `status` (and `body`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Receipt {
    /// The HTTP status to answer: 200 when stored (or already stored), 400 for a delivery that
    /// failed verification, 503 when the store could not commit.
    pub status: i32,
    /// What happened.
    pub outcome: ReceiptOutcome,
    /// The notification `id`, once verified.
    pub id: Option<String>,
    /// The reason of a refusal (the webhook error code, e.g. `signature_mismatch`) or of a
    /// store failure.
    pub reason: Option<String>,
    /// The answer body (small JSON; the service ignores it).
    pub body: String,
}

/// Where an event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum EventSource {
    /// A verified status notification.
    Notification,
    /// A payment the reconciler found and `enterReconciled` entered.
    Reconciliation,
}

/// A state change handed to the app by `claim`. Complete it (`complete`, or `completionSql`
/// inside the app's own transaction) before its lease runs out.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct InboxEvent {
    /// The notification `id` (`reconciled:{orderNo}:{statusVersion}` for a reconciliation).
    pub id: String,
    /// This claim's token: completing needs it, so a worker whose lease ran out and whose event
    /// another worker took cannot complete it too.
    pub claim: String,
    /// The payment number.
    pub order_no: String,
    /// The merchant's business reference.
    pub external_reference: String,
    /// The payment's status at this event (only `Paid` confirms payment).
    pub status: MerchantPaymentStatus,
    /// The payment's `status_version` at this event.
    pub status_version: i64,
    /// The payment event number (present once paid; kept through refund and chargeback).
    pub event_id: Option<String>,
    /// Amount in minor units of `currency`.
    pub amount_minor: i64,
    /// Currency (uppercase code).
    pub currency: String,
    /// Whether the channel is a test channel.
    pub test_mode: bool,
    /// True exactly once per payment event: a `Paid` event whose `eventId` is not booked yet.
    /// Book the payment now; completing the event records the booking.
    pub book: bool,
    /// Where the event came from.
    pub source: EventSource,
    /// Whether it was handed out again by a replay.
    pub replayed: bool,
    /// How many times it was claimed before (a worker died or released it).
    pub attempts: i32,
    /// The notification body exactly as received (the queried payment as JSON for a
    /// reconciliation).
    pub body: String,
}

/// Counts of the inbox (for dashboards and operators).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct InboxStatus {
    /// Events waiting for a worker.
    pub pending: i64,
    /// Events claimed, lease still running.
    pub claimed: i64,
    /// Events handled.
    pub completed: i64,
    /// Events kept but never handed out (a version not above the watermark, or superseded).
    pub stale: i64,
    /// `Paid` events whose `eventId` was already booked (completed without being handed out).
    pub duplicate: i64,
    /// Deliveries refused by verification or for their size (`body_too_large`), per reason
    /// code.
    pub rejected: HashMap<String, i64>,
    /// Verified deliveries refused because they break the contract (422
    /// `contract_violation`), per rule: `missing_event_id`, `event_id_reused`,
    /// `status_version_out_of_range`.
    pub contract_violations: HashMap<String, i64>,
    /// Age in milliseconds of the oldest pending (or lease-expired) event.
    pub oldest_pending_ms: Option<i64>,
    /// Payment events booked so far.
    pub booked: i64,
}

/// A payment's watermark as the inbox holds it (the shop's local record for the reconciler).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Watermark {
    /// Payment number.
    pub order_no: String,
    /// Business reference.
    pub external_reference: String,
    /// The highest `status_version` received.
    pub status_version: i64,
    /// The status at that version.
    pub status: MerchantPaymentStatus,
    /// Amount in minor units.
    pub amount_minor: i64,
    /// Currency.
    pub currency: String,
    /// The payment event booked for it, if any.
    pub booked_event_id: Option<String>,
}

/// The inbox of the server library: conversions to and from the core's types.
#[cfg(any(feature = "store-sqlite", feature = "store-postgres"))]
mod server {
    use std::time::Duration;

    use crate::collection::model::MerchantPayment as CoreMerchantPayment;
    use crate::inbox as core;
    use crate::money::{FixedPoint8, MinorAmount};
    use crate::webhook::WebhookVerifier as CoreVerifier;

    use super::super::collection::MerchantPayment;
    use super::super::ints::{int, long};
    use super::{
        EventSource, InboxError, InboxEvent, InboxStatus, Receipt, ReceiptOutcome, Result,
        Watermark, config, non_negative,
    };

    impl From<core::InboxError> for InboxError {
        fn from(e: core::InboxError) -> Self {
            match e {
                core::InboxError::Config(detail) => InboxError::Config { detail },
                core::InboxError::Store(detail) => InboxError::Store { detail },
                core::InboxError::LeaseLost(id) => InboxError::LeaseLost { id },
                core::InboxError::NotFound(id) => InboxError::NotFound { id },
            }
        }
    }

    impl From<core::ReceiptOutcome> for ReceiptOutcome {
        fn from(o: core::ReceiptOutcome) -> Self {
            match o {
                core::ReceiptOutcome::Stored => ReceiptOutcome::Stored,
                core::ReceiptOutcome::Duplicate => ReceiptOutcome::Duplicate,
                core::ReceiptOutcome::Rejected => ReceiptOutcome::Rejected,
                core::ReceiptOutcome::ContractViolation => ReceiptOutcome::ContractViolation,
                core::ReceiptOutcome::StoreFailed => ReceiptOutcome::StoreFailed,
            }
        }
    }

    impl From<core::Receipt> for Receipt {
        fn from(r: core::Receipt) -> Self {
            Receipt {
                status: i32::from(r.status),
                outcome: r.outcome.into(),
                body: r.body(),
                id: r.id,
                reason: r.reason,
            }
        }
    }

    impl From<core::EventSource> for EventSource {
        fn from(s: core::EventSource) -> Self {
            match s {
                core::EventSource::Notification => EventSource::Notification,
                core::EventSource::Reconciliation => EventSource::Reconciliation,
            }
        }
    }

    impl From<EventSource> for core::EventSource {
        fn from(s: EventSource) -> Self {
            match s {
                EventSource::Notification => core::EventSource::Notification,
                EventSource::Reconciliation => core::EventSource::Reconciliation,
            }
        }
    }

    impl From<core::InboxEvent> for InboxEvent {
        fn from(e: core::InboxEvent) -> Self {
            InboxEvent {
                id: e.id,
                claim: e.claim,
                order_no: e.order_no,
                external_reference: e.external_reference,
                status: e.status.into(),
                status_version: long(e.status_version),
                event_id: e.event_id,
                amount_minor: long(e.amount_minor.get()),
                currency: e.currency,
                test_mode: e.test_mode,
                book: e.book,
                source: e.source.into(),
                replayed: e.replayed,
                attempts: int(e.attempts),
                body: e.body,
            }
        }
    }

    impl InboxEvent {
        /// The core event (completion and release read its `id` and `claim`).
        fn to_core(&self) -> core::InboxEvent {
            core::InboxEvent {
                id: self.id.clone(),
                claim: self.claim.clone(),
                order_no: self.order_no.clone(),
                external_reference: self.external_reference.clone(),
                status: crate::collection::model::MerchantPaymentStatus::parse(
                    &self.status.to_string(),
                ),
                status_version: u64::try_from(self.status_version).unwrap_or(0),
                event_id: self.event_id.clone(),
                amount_minor: u64::try_from(self.amount_minor)
                    .ok()
                    .and_then(|m| MinorAmount::new(m).ok())
                    .unwrap_or_else(|| MinorAmount::new(1).expect("1 is a valid amount")),
                currency: self.currency.clone(),
                test_mode: self.test_mode,
                book: self.book,
                source: self.source.into(),
                replayed: self.replayed,
                attempts: u32::try_from(self.attempts).unwrap_or(0),
                body: self.body.clone(),
            }
        }
    }

    impl From<core::InboxStatus> for InboxStatus {
        fn from(s: core::InboxStatus) -> Self {
            InboxStatus {
                pending: long(s.pending),
                claimed: long(s.claimed),
                completed: long(s.completed),
                stale: long(s.stale),
                duplicate: long(s.duplicate),
                rejected: s
                    .rejected
                    .into_iter()
                    .map(|(reason, n)| (reason, long(n)))
                    .collect(),
                contract_violations: s
                    .contract_violations
                    .into_iter()
                    .map(|(rule, n)| (rule, long(n)))
                    .collect(),
                oldest_pending_ms: s.oldest_pending_ms.map(long),
                booked: long(s.booked),
            }
        }
    }

    impl From<core::Watermark> for Watermark {
        fn from(w: core::Watermark) -> Self {
            Watermark {
                order_no: w.order_no,
                external_reference: w.external_reference,
                status_version: long(w.status_version),
                status: w.status.into(),
                amount_minor: long(w.amount_minor.get()),
                currency: w.currency,
                booked_event_id: w.booked_event_id,
            }
        }
    }

    /// A queried payment for `enterReconciled` (the checkout address is never stored).
    fn payment_to_core(p: &MerchantPayment) -> Result<CoreMerchantPayment> {
        let amount = u64::try_from(p.amount_minor)
            .map_err(|_| config("amount_minor", "must be positive"))
            .and_then(|m| MinorAmount::new(m).map_err(|e| config("amount_minor", e)))?;
        Ok(CoreMerchantPayment {
            order_no: p.order_no.clone(),
            external_reference: p.external_reference.clone(),
            payment_no: p.payment_no.clone(),
            amount_minor: amount,
            currency: p.currency.clone(),
            currency_decimals: u32::try_from(p.currency_decimals)
                .map_err(|_| config("currency_decimals", "must not be negative"))?,
            status: crate::collection::model::MerchantPaymentStatus::parse(&p.status.to_string()),
            status_version: p
                .status_version
                .map(|v| non_negative("status_version", v))
                .transpose()?,
            test_mode: p.test_mode,
            checkout_url: None,
            return_url: p.return_url.clone(),
            expires_at: p.expires_at,
            event_id: p.event_id.clone(),
            provider_trade_no: p.provider_trade_no.clone(),
            occurred_at: p.occurred_at,
            settlement_coin: p.settlement_coin.map(FixedPoint8::from_raw),
        })
    }

    /// The core inbox behind the exported object.
    pub(super) struct Backend(core::Inbox);

    impl Backend {
        pub(super) fn open(
            url: &str,
            secrets: Vec<String>,
            tolerance: Option<Duration>,
        ) -> Result<Self> {
            let mut verifier = CoreVerifier::new(secrets).map_err(|e| config("secrets", e))?;
            if let Some(tolerance) = tolerance {
                verifier = verifier.with_tolerance(tolerance);
            }
            Ok(Backend(core::Inbox::open(url, verifier)?))
        }

        pub(super) fn backend(&self) -> String {
            self.0.backend().to_owned()
        }

        pub(super) async fn receive(
            &self,
            event_id: Option<String>,
            timestamp: Option<String>,
            signature: Option<String>,
            body: Vec<u8>,
        ) -> Receipt {
            self.0
                .receive(
                    event_id.as_deref(),
                    timestamp.as_deref(),
                    signature.as_deref(),
                    &body,
                )
                .await
                .into()
        }

        pub(super) async fn claim(&self, n: u32, lease: Duration) -> Result<Vec<InboxEvent>> {
            Ok(self
                .0
                .claim(n, lease)
                .await?
                .into_iter()
                .map(Into::into)
                .collect())
        }

        pub(super) async fn complete(&self, event: &InboxEvent) -> Result<()> {
            Ok(self.0.complete(&event.to_core()).await?)
        }

        pub(super) async fn release(&self, event: &InboxEvent) -> Result<()> {
            Ok(self.0.release(&event.to_core()).await?)
        }

        pub(super) fn completion_sql(&self) -> String {
            self.0.completion_sql().to_owned()
        }

        pub(super) async fn enter_reconciled(
            &self,
            payment: &MerchantPayment,
        ) -> Result<ReceiptOutcome> {
            let payment = payment_to_core(payment)?;
            Ok(self.0.enter_reconciled(&payment).await?.into())
        }

        pub(super) async fn watermarks(&self) -> Result<Vec<Watermark>> {
            Ok(self
                .0
                .watermarks()
                .await?
                .into_iter()
                .map(Into::into)
                .collect())
        }

        pub(super) async fn status(&self) -> Result<InboxStatus> {
            Ok(self.0.status().await?.into())
        }

        pub(super) async fn purge(&self, retention: Option<Duration>) -> Result<i64> {
            let retention = retention.unwrap_or(core::DEFAULT_RETENTION);
            Ok(long(self.0.purge(retention).await?))
        }

        pub(super) async fn replay_event(&self, id: String) -> Result<i64> {
            Ok(long(self.0.replay(&core::Replay::Event(id)).await?))
        }

        pub(super) async fn replay_received(&self, from_ms: i64, to_ms: i64) -> Result<i64> {
            Ok(long(
                self.0
                    .replay(&core::Replay::Received { from_ms, to_ms })
                    .await?,
            ))
        }
    }
}

/// The mobile library (no store backend): the same surface, and no inbox can be opened.
#[cfg(not(any(feature = "store-sqlite", feature = "store-postgres")))]
mod mobile {
    use std::time::Duration;

    use super::super::collection::MerchantPayment;
    use super::{InboxError, InboxEvent, InboxStatus, Receipt, ReceiptOutcome, Result, Watermark};

    /// Uninhabited: `open` always fails, so no method below can be reached.
    pub(super) enum Backend {}

    impl Backend {
        pub(super) fn open(
            _url: &str,
            _secrets: Vec<String>,
            _tolerance: Option<Duration>,
        ) -> Result<Self> {
            Err(InboxError::Config {
                detail:
                    "the webhook inbox is for servers: this is the mobile library, built without \
                         a store backend (use the server library, the JVM jar)"
                        .into(),
            })
        }

        pub(super) fn backend(&self) -> String {
            match *self {}
        }

        pub(super) async fn receive(
            &self,
            _event_id: Option<String>,
            _timestamp: Option<String>,
            _signature: Option<String>,
            _body: Vec<u8>,
        ) -> Receipt {
            match *self {}
        }

        pub(super) async fn claim(&self, _n: u32, _lease: Duration) -> Result<Vec<InboxEvent>> {
            match *self {}
        }

        pub(super) async fn complete(&self, _event: &InboxEvent) -> Result<()> {
            match *self {}
        }

        pub(super) async fn release(&self, _event: &InboxEvent) -> Result<()> {
            match *self {}
        }

        pub(super) fn completion_sql(&self) -> String {
            match *self {}
        }

        pub(super) async fn enter_reconciled(
            &self,
            _payment: &MerchantPayment,
        ) -> Result<ReceiptOutcome> {
            match *self {}
        }

        pub(super) async fn watermarks(&self) -> Result<Vec<Watermark>> {
            match *self {}
        }

        pub(super) async fn status(&self) -> Result<InboxStatus> {
            match *self {}
        }

        pub(super) async fn purge(&self, _retention: Option<Duration>) -> Result<i64> {
            match *self {}
        }

        pub(super) async fn replay_event(&self, _id: String) -> Result<i64> {
            match *self {}
        }

        pub(super) async fn replay_received(&self, _from_ms: i64, _to_ms: i64) -> Result<i64> {
            match *self {}
        }
    }
}

/// The webhook inbox over SQLite (`sqlite:///var/lib/shop/inbox.db`, one host) or PostgreSQL
/// (`postgres://…`, many hosts), for servers: the mobile library has no backend and its
/// constructor throws `Config`. Share one per process; every method may be called from many
/// coroutines, processes and hosts at once.
#[derive(uniffi::Object)]
pub struct Inbox {
    inner: Backend,
}

#[uniffi::export(async_runtime = "tokio")]
impl Inbox {
    /// Opens the inbox at `url`, verifying deliveries with any of `secrets` (keep old secrets
    /// during a rotation) and the contract's 5-minute timestamp tolerance (or
    /// `tolerance_seconds`). Tables are created on first use; nothing connects here.
    #[uniffi::constructor(default(tolerance_seconds = None))]
    pub fn new(
        url: String,
        secrets: Vec<String>,
        tolerance_seconds: Option<i64>,
    ) -> Result<Arc<Self>> {
        let tolerance = tolerance_seconds
            .map(|secs| non_negative("tolerance_seconds", secs).map(Duration::from_secs))
            .transpose()?;
        Ok(Arc::new(Inbox {
            inner: Backend::open(&url, secrets, tolerance)?,
        }))
    }

    /// The backend's name (`sqlite`, `postgres`).
    pub fn backend(&self) -> String {
        self.inner.backend()
    }

    /// Receives one delivery: verifies it (the three `X-Service-*` header values, null when
    /// absent, and the raw body bytes exactly as received), stores it, and says what to answer
    /// (`Receipt.status`). Never answers 2xx for what was not committed.
    pub async fn receive(
        &self,
        event_id: Option<String>,
        timestamp: Option<String>,
        signature: Option<String>,
        body: Vec<u8>,
    ) -> Receipt {
        self.inner
            .receive(event_id, timestamp, signature, body)
            .await
    }

    /// Claims up to `n` events for `lease_ms` milliseconds: the oldest waiting ones, at most one
    /// per payment, none of a payment whose previous event is still out. Empty when nothing
    /// waits.
    #[uniffi::method(default(n = 10, lease_ms = 30000))]
    pub async fn claim(&self, n: i32, lease_ms: i64) -> Result<Vec<InboxEvent>> {
        let n = u32::try_from(n).map_err(|_| config("n", "must not be negative"))?;
        let lease = Duration::from_millis(non_negative("lease_ms", lease_ms)?);
        self.inner.claim(n, lease).await
    }

    /// Marks `event` handled (and, for a `book` event, its payment event booked). Throws
    /// `LeaseLost` when its lease ran out and another worker claimed it.
    pub async fn complete(&self, event: InboxEvent) -> Result<()> {
        self.inner.complete(&event).await
    }

    /// Gives `event` back (the handler failed): it waits for a worker again at once.
    pub async fn release(&self, event: InboxEvent) -> Result<()> {
        self.inner.release(&event).await
    }

    /// The statements that complete an event inside the app's own transaction on the same
    /// database, with the app's own driver (JDBC): bind `:id` and `:claim` (SQLite) or `$1` and
    /// `$2` (PostgreSQL), run them in order, and roll back unless the first changed exactly one
    /// row (the lease was lost).
    pub fn completion_sql(&self) -> String {
        self.inner.completion_sql()
    }

    /// Enters a payment the reconciler found (paid at the service, not booked here, or any newer
    /// state) into the same flow: the one handler books it once (a version the payment has
    /// moved past is kept as stale when a worker claims).
    pub async fn enter_reconciled(&self, payment: MerchantPayment) -> Result<ReceiptOutcome> {
        self.inner.enter_reconciled(&payment).await
    }

    /// Every payment the inbox knows, with its watermark and booking (the shop's local records
    /// for the reconciler).
    pub async fn watermarks(&self) -> Result<Vec<Watermark>> {
        self.inner.watermarks().await
    }

    /// Counts per state, rejections per reason, the oldest waiting event's age.
    pub async fn status(&self) -> Result<InboxStatus> {
        self.inner.status().await
    }

    /// Deletes finished rows (completed, stale, duplicate) older than `retention_ms` (default
    /// 30 days). Watermarks and bookings are kept. Returns the rows deleted.
    #[uniffi::method(default(retention_ms = None))]
    pub async fn purge(&self, retention_ms: Option<i64>) -> Result<i64> {
        let retention = retention_ms
            .map(|ms| non_negative("retention_ms", ms).map(Duration::from_millis))
            .transpose()?;
        self.inner.purge(retention).await
    }

    /// Hands the finished event `id` to the handler again (`replayed` set; `book` false for a
    /// booking already made). Returns how many (1), or throws `NotFound`.
    pub async fn replay_event(&self, id: String) -> Result<i64> {
        self.inner.replay_event(id).await
    }

    /// Hands the events received between `from_ms` (inclusive) and `to_ms` (exclusive), Unix
    /// milliseconds, to the handler again. Returns how many.
    pub async fn replay_received(&self, from_ms: i64, to_ms: i64) -> Result<i64> {
        self.inner.replay_received(from_ms, to_ms).await
    }
}
