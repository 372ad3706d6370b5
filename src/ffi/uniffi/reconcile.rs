//! The reconciler ([`crate::reconcile`]) for Kotlin and Swift: `Client.reconcileRun(records,
//! options)` gives a [`ReconcileRun`] whose `next()` yields one [`ReconcileReport`] per record;
//! Kotlin wraps it as `Client.reconcile(records, options): Flow<ReconcileReport>`
//! (`Reconcile.kt`).
//!
//! Contract rules (see the core module): notifications complement periodic reconciliation; only
//! `paid` is payment and an unknown status is never paid; check reference, amount, currency and
//! `test_mode`; book once per `event_id`; reads stay within the shared read budget and
//! re-queues within the re-queue budget (the client's rate limiter paces both).
//!
//! Cancellation: `next()` is cancellation-safe. Cancelling the coroutine or task drops the call's
//! future, but the record being looked up stays inside the run's stream and is finished by the
//! next `next()`, so no report is lost or produced twice; a cancelled run that is not called
//! again does nothing more.

use std::pin::Pin;
use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use time::OffsetDateTime;
use tokio::sync::Mutex;

use crate::reconcile as core;

use super::client::Client;
use super::collection::{MerchantPayment, MerchantPaymentStatus};
use super::error::{ErrorCode, Result};
use super::ints::{int, long, unsigned, unsigned_long};
use super::money::minor;

/// The shop's own record of one business order, as booked.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LocalRecord {
    /// The business order reference sent as `external_reference`.
    pub external_reference: String,
    /// The amount the shop expects, in minor units of `currency`.
    pub expected_amount: i64,
    /// The currency the shop expects (uppercase code).
    pub currency: String,
    /// The service's payment number, when stored (the most precise lookup).
    #[uniffi(default = None)]
    pub order_no: Option<String>,
    /// The `test_mode` the shop expects, when it has one (compared once a channel is chosen).
    #[uniffi(default = None)]
    pub test_mode: Option<bool>,
    /// The last `status_version` booked, if any (a lower service version is a mismatch).
    #[uniffi(default = None)]
    pub booked_status_version: Option<i64>,
    /// The payment `event_id` the payment was booked under; set means "booked as paid".
    #[uniffi(default = None)]
    pub booked_event_id: Option<String>,
}

impl LocalRecord {
    fn to_core(&self) -> Result<core::LocalRecord> {
        Ok(core::LocalRecord {
            external_reference: self.external_reference.clone(),
            order_no: self.order_no.clone(),
            expected_amount: minor("expected_amount", self.expected_amount)?,
            currency: self.currency.clone(),
            test_mode: self.test_mode,
            booked_status_version: self
                .booked_status_version
                .map(|v| unsigned_long("booked_status_version", v))
                .transpose()?,
            booked_event_id: self.booked_event_id.clone(),
        })
    }
}

/// Where a run stopped: pass it as `ReconcileOptions.cursor` to continue after that record.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ReconcileCursor {
    /// How many records are finished (the index of the next one).
    pub next_index: i64,
    /// The `external_reference` of the last finished record (checked on resume).
    #[uniffi(default = None)]
    pub last_reference: Option<String>,
}

impl From<core::ReconcileCursor> for ReconcileCursor {
    fn from(c: core::ReconcileCursor) -> Self {
        ReconcileCursor {
            next_index: long(c.next_index),
            last_reference: c.last_reference,
        }
    }
}

/// Bounds on `expires_at` kept by lookups by reference (both ends inclusive).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ReconcileWindow {
    /// Earliest `expires_at` kept.
    #[uniffi(default = None)]
    pub from: Option<OffsetDateTime>,
    /// Latest `expires_at` kept.
    #[uniffi(default = None)]
    pub to: Option<OffsetDateTime>,
}

/// Options of a reconciliation run.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ReconcileOptions {
    /// Re-queue `failed` notification deliveries of payments found paid but not booked
    /// (re-queue budget, 30 per minute).
    #[uniffi(default = false)]
    pub requeue_failed: bool,
    /// Keep only payments whose `expires_at` is in this window (lookups by reference).
    #[uniffi(default = None)]
    pub window: Option<ReconcileWindow>,
    /// `limit` of the filtered list and of the delivery-record list: 1 to 100.
    #[uniffi(default = 100)]
    pub limit: i32,
    /// Resume after the record this cursor names (the `cursor` of the last report received).
    #[uniffi(default = None)]
    pub cursor: Option<ReconcileCursor>,
}

/// The field a `Mismatch` finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum MismatchField {
    /// The payment found by order number carries another `external_reference`.
    ExternalReference,
    /// `amount_minor` differs from the expected amount.
    Amount,
    /// `currency` differs.
    Currency,
    /// `test_mode` differs (compared only once a channel is chosen).
    TestMode,
    /// The booked `status_version` is higher than the service's.
    StatusVersion,
    /// The payment is `paid` under another `event_id` than the one booked.
    EventId,
}

impl From<core::MismatchField> for MismatchField {
    fn from(f: core::MismatchField) -> Self {
        use core::MismatchField as C;
        match f {
            C::ExternalReference => MismatchField::ExternalReference,
            C::Amount => MismatchField::Amount,
            C::Currency => MismatchField::Currency,
            C::TestMode => MismatchField::TestMode,
            C::StatusVersion => MismatchField::StatusVersion,
            C::EventId => MismatchField::EventId,
        }
    }
}

/// Why a lookup (or a re-queue) failed: the stable parts of the error.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ReconcileLookupError {
    /// The error's category, snake_case (`api`, `transport`, `deadline_exceeded`, ...).
    pub kind: String,
    /// The service's `error` code, when it answered with one.
    pub code: Option<ErrorCode>,
    /// The HTTP status, when the service answered.
    pub http_status: Option<i32>,
    /// The error's message (display text, never holds secrets: branch on kind, status, code).
    pub message: String,
}

impl From<core::LookupError> for ReconcileLookupError {
    fn from(e: core::LookupError) -> Self {
        ReconcileLookupError {
            kind: e.kind.as_str().to_owned(),
            code: e
                .code
                .map(|c| ErrorCode::from(&crate::error::ErrorCode::parse(&c))),
            http_status: e.http_status.map(i32::from),
            message: e.message,
        }
    }
}

/// What the reconciler found for one record.
#[derive(Debug, Clone, uniffi::Enum)]
pub enum ReconcileFinding {
    /// The shop's record and the service agree; nothing to do.
    InAgreement,
    /// Paid at the service, not booked here: book it once, under `event_id`.
    PaidNotBooked {
        /// The stable payment event number to book by.
        event_id: String,
        /// The payment's `status_version` (null if the answer lacked it).
        status_version: Option<i64>,
        /// Payment confirmation time.
        occurred_at: Option<OffsetDateTime>,
        /// The payment as queried.
        payment: MerchantPayment,
    },
    /// Booked here as paid, but not (any more) paid at the service: `refunded` or `chargeback`
    /// (reversed), `review`, `expired` or `pending`.
    BookedNotPaid {
        /// The service's status.
        status: MerchantPaymentStatus,
        /// The payment as queried.
        payment: MerchantPayment,
    },
    /// A field differs from the shop's record; do not book, investigate.
    Mismatch {
        /// Which field.
        field: MismatchField,
        /// The shop's value, as text.
        expected: String,
        /// The service's value, as text.
        actual: String,
        /// The payment as queried.
        payment: MerchantPayment,
    },
    /// `review`, nothing booked: needs verification by the platform; never paid, never failed.
    UnderReview {
        /// The payment as queried.
        payment: MerchantPayment,
    },
    /// A status the contract does not list: needs verification, never paid.
    UnknownStatus {
        /// The status as sent.
        status: String,
        /// The payment as queried.
        payment: MerchantPayment,
    },
    /// The service has no payment for this record (or none within the window).
    MissingAtService,
    /// No order number here and several payments carry the reference (newest first).
    Ambiguous {
        /// Their payment numbers.
        order_nos: Vec<String>,
    },
    /// The lookup failed; the record is unreconciled this run.
    LookupFailed {
        /// The failure.
        error: ReconcileLookupError,
    },
    /// From the inbox's reconciliation only: the payment breaks the contract (`paid` without
    /// `event_id`, an `event_id` of another payment, a `status_version` above 2^63 - 1) or
    /// entering it failed; never booked automatically, an operator decides.
    NeedsAttention {
        /// `missing_event_id`, `event_id_reused`, `status_version_out_of_range`, or
        /// `inbox_<error code>` when entering it failed.
        reason: String,
        /// The payment as queried.
        payment: MerchantPayment,
    },
}

impl From<core::ReconcileFinding> for ReconcileFinding {
    fn from(f: core::ReconcileFinding) -> Self {
        use core::ReconcileFinding as C;
        match f {
            C::InAgreement => ReconcileFinding::InAgreement,
            C::PaidNotBooked {
                event_id,
                status_version,
                occurred_at,
                payment,
            } => ReconcileFinding::PaidNotBooked {
                event_id,
                status_version: status_version.map(long),
                occurred_at,
                payment: (*payment).into(),
            },
            C::BookedNotPaid { status, payment } => ReconcileFinding::BookedNotPaid {
                status: status.into(),
                payment: (*payment).into(),
            },
            C::Mismatch {
                field,
                expected,
                actual,
                payment,
            } => ReconcileFinding::Mismatch {
                field: field.into(),
                expected,
                actual,
                payment: (*payment).into(),
            },
            C::UnderReview { payment } => ReconcileFinding::UnderReview {
                payment: (*payment).into(),
            },
            C::UnknownStatus { status, payment } => ReconcileFinding::UnknownStatus {
                status,
                payment: (*payment).into(),
            },
            C::MissingAtService => ReconcileFinding::MissingAtService,
            C::Ambiguous { order_nos } => ReconcileFinding::Ambiguous { order_nos },
            C::LookupFailed { error } => ReconcileFinding::LookupFailed {
                error: error.into(),
            },
            C::NeedsAttention { reason, payment } => ReconcileFinding::NeedsAttention {
                reason,
                payment: (*payment).into(),
            },
        }
    }
}

/// The result for one record.
#[derive(Debug, Clone, uniffi::Record)]
pub struct ReconcileReport {
    /// The record's `external_reference`.
    pub record: String,
    /// The record's position in the list given.
    pub index: i64,
    /// The payment number the finding is about, when one payment was found.
    pub order_no: Option<String>,
    /// What was found.
    pub finding: ReconcileFinding,
    /// The service's `status_version` of that payment, when one was found.
    pub service_status_version: Option<i64>,
    /// Failed notification deliveries re-queued for this payment (`requeue_failed` only).
    pub requeued: i32,
    /// Why listing or re-queuing deliveries failed, if it did.
    pub requeue_error: Option<ReconcileLookupError>,
    /// The cursor to resume after this record.
    pub cursor: ReconcileCursor,
}

impl From<core::ReconcileReport> for ReconcileReport {
    fn from(r: core::ReconcileReport) -> Self {
        ReconcileReport {
            record: r.record,
            index: long(r.index),
            order_no: r.order_no,
            finding: r.finding.into(),
            service_status_version: r.service_status_version.map(long),
            requeued: int(r.requeued),
            requeue_error: r.requeue_error.map(Into::into),
            cursor: r.cursor.into(),
        }
    }
}

type ReportStream = Pin<Box<dyn Stream<Item = core::ReconcileReport> + Send>>;

/// One reconciliation run: `next()` gives the report of the next record, null after the last.
#[derive(uniffi::Object)]
pub struct ReconcileRun {
    stream: Mutex<ReportStream>,
}

#[uniffi::export(async_runtime = "tokio")]
impl ReconcileRun {
    /// The report of the next record (looked up now), or null when every record is done. A
    /// failed lookup is a `LookupFailed` report, not an error. Cancellation-safe (see the
    /// module documentation).
    pub async fn next(&self) -> Option<ReconcileReport> {
        let mut stream = self.stream.lock().await;
        stream.next().await.map(Into::into)
    }
}

#[uniffi::export]
impl Client {
    /// Starts a reconciliation run of `records` (Kotlin: use `client.reconcile(records,
    /// options)`, a `Flow`). Nothing is sent until `next()`. Fails with `Validation` on a
    /// negative amount or version, a `limit` outside 1 to 100, or a cursor that does not fit
    /// the records.
    pub fn reconcile_run(
        &self,
        records: Vec<LocalRecord>,
        options: ReconcileOptions,
    ) -> Result<Arc<ReconcileRun>> {
        let records = records
            .iter()
            .map(LocalRecord::to_core)
            .collect::<Result<Vec<_>>>()?;
        let cursor = options
            .cursor
            .map(|c| {
                Ok::<_, super::error::StorefrontError>(core::ReconcileCursor {
                    next_index: unsigned_long("cursor.next_index", c.next_index)?,
                    last_reference: c.last_reference,
                })
            })
            .transpose()?;
        let core_options = core::ReconcileOptions {
            requeue_failed: options.requeue_failed,
            window: options.window.map(|w| core::ReconcileWindow {
                from: w.from,
                to: w.to,
            }),
            limit: unsigned("limit", options.limit)?,
        };
        let stream = core::Reconciler::new(self.core(), core_options).reconcile(records, cursor)?;
        Ok(Arc::new(ReconcileRun {
            stream: Mutex::new(Box::pin(stream)),
        }))
    }
}
