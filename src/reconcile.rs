//! Reconciliation of the shop's own booking records against the service's merchant payments.
//!
//! Contract rules: "Notifications complement, not replace, interval-bounded queries and periodic
//! reconciliation"; "Exhausted delivery does not mean payment failed"; `external_reference` is
//! "not a dedupe key"; "Only `paid` confirms payment; `review` and `expired` are not proof of
//! payment"; "Unknown future statuses are treated as needing verification and never as paid";
//! on `paid`, "check reference, amount, currency; record once per event_id"; after verifying a
//! notification, "check reference, amount, currency and `test_mode`"; `test_mode` is "False
//! until a channel is chosen"; refund and chargeback keep the "original payment event".
//!
//! A [`Reconciler`] walks a list of [`LocalRecord`]s and yields one [`ReconcileReport`] per
//! record, in order, as a [`Stream`]. Each lookup uses the read budget (300 per client per minute,
//! shared): `GET /openapi/v1/merchant-payments/{order_no}` when the record knows its payment
//! number, else the filtered list by `external_reference`. The client's rate limiter paces the
//! calls within each call's deadline; the reconciler adds no waiting of its own. A lookup that
//! fails is reported as [`ReconcileFinding::LookupFailed`] and the run goes on with the next
//! record. Every report carries the [`ReconcileCursor`] to resume after it, so a run can stop
//! anywhere and continue later; a run changes nothing at the service except the optional
//! re-queue of failed notification deliveries, so it is safe to repeat every few minutes.
//!
//! # Findings, in the order they are decided
//!
//! | Finding | When | Rule |
//! |---|---|---|
//! | [`LookupFailed`](ReconcileFinding::LookupFailed) | the query or list failed (after the client's retries) | one failure does not end the run |
//! | [`MissingAtService`](ReconcileFinding::MissingAtService) | 404 `payment_not_found` for the order number, or no list item for the reference (within the time window) | "An unknown number or one of another merchant gives 404" |
//! | [`Ambiguous`](ReconcileFinding::Ambiguous) | no local order number and several payments carry the reference | `external_reference` is "not a dedupe key" |
//! | [`Mismatch`](ReconcileFinding::Mismatch) | reference, amount, currency, `test_mode` (only once a channel is chosen and when the record states one) differ; the booked `status_version` is above the service's; or a `paid` payment has another `event_id` than the booked one (or none) | "check reference, amount, currency and `test_mode`"; "a lower version must not overwrite a higher one"; "record once per event_id" |
//! | [`UnknownStatus`](ReconcileFinding::UnknownStatus) | a status the contract does not list | "treated as needing verification and never as paid" |
//! | [`PaidNotBooked`](ReconcileFinding::PaidNotBooked) | `paid` at the service, no booked `event_id` here | "Only `paid` confirms payment"; book by `event_id` |
//! | [`BookedNotPaid`](ReconcileFinding::BookedNotPaid) | booked here (a booked `event_id`), status not `paid`: `refunded` / `chargeback` (reversed, "original payment event retained"), `review`, `expired`, `pending` | only `paid` is payment |
//! | [`UnderReview`](ReconcileFinding::UnderReview) | `review`, nothing booked | "needs verification", "not to be treated as failed"; never paid |
//! | [`NeedsAttention`](ReconcileFinding::NeedsAttention) | only from [`crate::inbox::Inbox::reconcile`]: the payment breaks the contract (no `event_id` when paid, an `event_id` of another payment, a version above 2^63 - 1) or entering it failed | "stable unique payment event number"; never booked automatically |
//! | [`InAgreement`](ReconcileFinding::InAgreement) | `paid` and booked with the same `event_id`; or `pending`, `expired`, `refunded`, `chargeback` with nothing booked | `pending` is undecided ("do not judge failure from a local timer"); expired, refunded and chargeback owe nothing |
//!
//! A mismatch is decided before the status: the contract says to check reference, amount and
//! currency before booking, so a `paid` payment that does not match is not offered for booking.
//!
//! # Re-queue
//!
//! With [`ReconcileOptions::requeue_failed`], for every [`PaidNotBooked`](ReconcileFinding::PaidNotBooked)
//! payment the reconciler lists its delivery records (read budget) and re-queues each `failed`
//! one (`POST .../notifications/{event_id}/retry`, re-queue budget of 30 per minute), so that
//! the shop's receiver gets the lost notification. The count is in
//! [`ReconcileReport::requeued`]; a failure there is reported in
//! [`ReconcileReport::requeue_error`] and does not change the finding.

use futures_core::Stream;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;
use crate::collection::model::{
    DeliveryStatus, ListMerchantPaymentsQuery, MerchantPayment, MerchantPaymentStatus,
};
use crate::error::{Error, ErrorCode, ErrorKind};
use crate::money::MinorAmount;

/// The shop's own record of one business order, as booked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalRecord {
    /// The business order reference sent as `external_reference`.
    pub external_reference: String,
    /// The service's payment number, when the shop stored it (the most precise lookup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_no: Option<String>,
    /// The amount the shop expects, in minor units of `currency`.
    pub expected_amount: MinorAmount,
    /// The currency the shop expects (uppercase code).
    pub currency: String,
    /// The `test_mode` the shop expects, when it has one (compared once a channel is chosen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_mode: Option<bool>,
    /// The last `status_version` the shop booked, if any (a service version below it is a
    /// mismatch: versions only increase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booked_status_version: Option<u64>,
    /// The payment `event_id` the shop booked the payment under; `Some` means "booked as paid".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booked_event_id: Option<String>,
}

/// The field a [`ReconcileFinding::Mismatch`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchField {
    /// The payment found by order number carries another `external_reference`.
    ExternalReference,
    /// `amount_minor` differs from the expected amount.
    Amount,
    /// `currency` differs.
    Currency,
    /// `test_mode` differs (compared only once a channel is chosen).
    TestMode,
    /// The booked `status_version` is higher than the service's (versions only increase).
    StatusVersion,
    /// The payment is `paid` under another `event_id` than the one booked.
    EventId,
}

/// Why a lookup failed: the stable parts of the [`Error`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookupError {
    /// The error's category.
    pub kind: ErrorKind,
    /// The service's `error` code, when it answered with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The HTTP status, when the service answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The error's message (never holds secrets).
    pub message: String,
}

impl From<&Error> for LookupError {
    fn from(e: &Error) -> Self {
        LookupError {
            kind: e.kind(),
            code: e.code().map(|c| c.as_str().to_owned()),
            http_status: e.status(),
            message: e.to_string(),
        }
    }
}

/// What the reconciler found for one record. Serialized with a `finding` tag in snake_case
/// (`{"finding": "paid_not_booked", ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum ReconcileFinding {
    /// The shop's record and the service agree; nothing to do.
    InAgreement,
    /// Paid at the service, not booked here: book it once, under `event_id`.
    PaidNotBooked {
        /// The stable payment event number to book by.
        event_id: String,
        /// The payment's `status_version` (`None` if the answer lacked it).
        status_version: Option<u64>,
        /// Payment confirmation time.
        #[serde(
            default,
            with = "time::serde::rfc3339::option",
            skip_serializing_if = "Option::is_none"
        )]
        occurred_at: Option<OffsetDateTime>,
        /// The payment as queried.
        payment: Box<MerchantPayment>,
    },
    /// Booked here as paid, but the service says it is not (any more) paid: `refunded` or
    /// `chargeback` (reversed; the original event is kept), `review`, `expired` or `pending`.
    BookedNotPaid {
        /// The service's status.
        status: MerchantPaymentStatus,
        /// The payment as queried.
        payment: Box<MerchantPayment>,
    },
    /// A field of the payment differs from the shop's record; do not book, investigate.
    Mismatch {
        /// Which field.
        field: MismatchField,
        /// The shop's value.
        expected: String,
        /// The service's value.
        actual: String,
        /// The payment as queried.
        payment: Box<MerchantPayment>,
    },
    /// `review` at the service, nothing booked: needs verification by the platform; never paid,
    /// never failed. Do not create another payment for it.
    UnderReview {
        /// The payment as queried.
        payment: Box<MerchantPayment>,
    },
    /// A status the contract does not list: needs verification, never paid.
    UnknownStatus {
        /// The status as sent.
        status: String,
        /// The payment as queried.
        payment: Box<MerchantPayment>,
    },
    /// The service has no payment for this record (or none within the time window).
    MissingAtService,
    /// No order number here and several payments carry the reference (newest first).
    Ambiguous {
        /// Their payment numbers.
        order_nos: Vec<String>,
    },
    /// The lookup itself failed; the record is unreconciled this run.
    LookupFailed {
        /// The failure.
        error: LookupError,
    },
    /// Reported by [`crate::inbox::Inbox::reconcile`] only: the payment (or a notification of
    /// it) breaks a rule of the contract, so the inbox cannot book it by itself — `paid`
    /// without `event_id` ("omitted until payment is confirmed"), an `event_id` another payment
    /// carries ("stable unique payment event number"), a `status_version` above 2^63 - 1 — or
    /// entering it into the inbox failed. Never booked automatically; an operator decides.
    NeedsAttention {
        /// Why, a stable code: a [`crate::inbox::ContractViolation::code`]
        /// (`missing_event_id`, `event_id_reused`, `status_version_out_of_range`), or
        /// `inbox_<error code>` (such as `inbox_store`) when entering it failed (tried again
        /// next run).
        reason: String,
        /// The payment as queried.
        payment: Box<MerchantPayment>,
    },
}

impl ReconcileFinding {
    /// Stable snake_case name of the finding (the serde tag).
    pub fn name(&self) -> &'static str {
        match self {
            ReconcileFinding::InAgreement => "in_agreement",
            ReconcileFinding::PaidNotBooked { .. } => "paid_not_booked",
            ReconcileFinding::BookedNotPaid { .. } => "booked_not_paid",
            ReconcileFinding::Mismatch { .. } => "mismatch",
            ReconcileFinding::UnderReview { .. } => "under_review",
            ReconcileFinding::UnknownStatus { .. } => "unknown_status",
            ReconcileFinding::MissingAtService => "missing_at_service",
            ReconcileFinding::Ambiguous { .. } => "ambiguous",
            ReconcileFinding::LookupFailed { .. } => "lookup_failed",
            ReconcileFinding::NeedsAttention { .. } => "needs_attention",
        }
    }
}

/// Where a run stopped: resume with it to continue after the last finished record.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReconcileCursor {
    /// How many records of the list are finished (the index of the next one).
    pub next_index: u64,
    /// The `external_reference` of the last finished record (checked on resume).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reference: Option<String>,
}

/// The result for one record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconcileReport {
    /// The record's `external_reference`.
    pub record: String,
    /// The record's position in the list given to [`Reconciler::reconcile`].
    pub index: u64,
    /// The payment number the finding is about, when one payment was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_no: Option<String>,
    /// What was found.
    pub finding: ReconcileFinding,
    /// The service's `status_version` of that payment, when one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_status_version: Option<u64>,
    /// Failed notification deliveries re-queued for this payment (re-queue option only).
    pub requeued: u32,
    /// Why listing or re-queuing deliveries failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_error: Option<LookupError>,
    /// The cursor to resume after this record.
    pub cursor: ReconcileCursor,
}

/// A window on `expires_at` (fixed at creation: creation time plus `expires_in`) that the
/// filtered-list lookup keeps; the contract's list has no time filter, so it applies to the
/// items returned. Both ends inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconcileWindow {
    /// Earliest `expires_at` kept.
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub from: Option<OffsetDateTime>,
    /// Latest `expires_at` kept.
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub to: Option<OffsetDateTime>,
}

impl ReconcileWindow {
    /// Whether the payment is inside the window.
    pub fn contains(&self, p: &MerchantPayment) -> bool {
        self.from.is_none_or(|f| p.expires_at >= f) && self.to.is_none_or(|t| p.expires_at <= t)
    }
}

/// Options of a [`Reconciler`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconcileOptions {
    /// Re-queue `failed` notification deliveries of payments found paid but not booked.
    #[serde(default)]
    pub requeue_failed: bool,
    /// Keep only payments whose `expires_at` is in this window (filtered-list lookups only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<ReconcileWindow>,
    /// `limit` of the filtered list and of the delivery-record list: 1 to 100 (default 100).
    #[serde(default = "default_limit")]
    pub limit: u32,
}

fn default_limit() -> u32 {
    100
}

impl Default for ReconcileOptions {
    fn default() -> Self {
        ReconcileOptions {
            requeue_failed: false,
            window: None,
            limit: default_limit(),
        }
    }
}

/// Walks local records against the service. See the [module documentation](self).
#[derive(Clone)]
pub struct Reconciler {
    client: Client,
    options: ReconcileOptions,
}

impl Reconciler {
    /// A reconciler on this client (sharing its connection pool, token and rate budgets).
    pub fn new(client: &Client, options: ReconcileOptions) -> Reconciler {
        Reconciler {
            client: client.clone(),
            options,
        }
    }

    /// The options.
    pub fn options(&self) -> &ReconcileOptions {
        &self.options
    }

    /// Streams one report per record, in order, starting after `cursor` when given.
    ///
    /// Fails only on bad input: a `limit` outside 1 to 100, or a cursor that does not fit the
    /// list (past its end, or `last_reference` not the reference of the record before
    /// `next_index`).
    pub fn reconcile(
        &self,
        records: impl IntoIterator<Item = LocalRecord>,
        cursor: Option<ReconcileCursor>,
    ) -> crate::Result<impl Stream<Item = ReconcileReport> + Send + 'static> {
        if !(1..=100).contains(&self.options.limit) {
            return Err(Error::validation("limit", "must be 1 to 100"));
        }
        let records: Vec<LocalRecord> = records.into_iter().collect();
        let start = match &cursor {
            None => 0,
            Some(c) => {
                let start = usize::try_from(c.next_index)
                    .ok()
                    .filter(|&n| n <= records.len())
                    .ok_or_else(|| {
                        Error::validation("cursor", "next_index is past the end of the records")
                    })?;
                if let Some(reference) = &c.last_reference {
                    let fits = start
                        .checked_sub(1)
                        .is_some_and(|i| records[i].external_reference == *reference);
                    if !fits {
                        return Err(Error::validation(
                            "cursor",
                            "last_reference is not the record before next_index",
                        ));
                    }
                }
                start
            }
        };
        let this = self.clone();
        let items = records.into_iter().enumerate().skip(start);
        Ok(futures_util::stream::unfold(
            (this, items),
            |(this, mut items)| async move {
                let (index, record) = items.next()?;
                let report = this.reconcile_one(index as u64, record).await;
                Some((report, (this, items)))
            },
        ))
    }

    /// Looks up and classifies one record (and re-queues, when asked).
    pub async fn reconcile_one(&self, index: u64, record: LocalRecord) -> ReconcileReport {
        let found = self.lookup(&record).await;
        let (finding, payment) = match found {
            Err(e) => (
                ReconcileFinding::LookupFailed {
                    error: LookupError::from(&e),
                },
                None,
            ),
            Ok(Found::None) => (ReconcileFinding::MissingAtService, None),
            Ok(Found::Several(order_nos)) => (ReconcileFinding::Ambiguous { order_nos }, None),
            Ok(Found::One(p)) => (classify(&record, &p), Some(p)),
        };
        let mut report = ReconcileReport {
            index,
            order_no: payment.as_ref().map(|p| p.order_no.clone()),
            service_status_version: payment.as_ref().and_then(|p| p.status_version),
            finding,
            requeued: 0,
            requeue_error: None,
            cursor: ReconcileCursor {
                next_index: index + 1,
                last_reference: Some(record.external_reference.clone()),
            },
            record: record.external_reference,
        };
        if self.options.requeue_failed
            && let ReconcileFinding::PaidNotBooked { payment, .. } = &report.finding
        {
            let order_no = payment.order_no.clone();
            self.requeue(&order_no, &mut report).await;
        }
        report
    }

    async fn lookup(&self, record: &LocalRecord) -> crate::Result<Found> {
        if let Some(order_no) = &record.order_no {
            return match self.client.get_merchant_payment(order_no).await {
                Ok(p) => Ok(Found::One(Box::new(p))),
                Err(e) if e.is_code(&ErrorCode::PaymentNotFound) => Ok(Found::None),
                Err(e) => Err(e),
            };
        }
        let query = ListMerchantPaymentsQuery {
            limit: Some(self.options.limit),
            ..ListMerchantPaymentsQuery::by_external_reference(record.external_reference.clone())
        };
        let mut items: Vec<MerchantPayment> = self
            .client
            .list_merchant_payments(&query)
            .await?
            .into_iter()
            // The list filter must hold; an item for another reference is not this record's.
            .filter(|p| p.external_reference == record.external_reference)
            .filter(|p| self.options.window.is_none_or(|w| w.contains(p)))
            .collect();
        Ok(match items.len() {
            0 => Found::None,
            1 => Found::One(Box::new(items.remove(0))),
            _ => Found::Several(items.into_iter().map(|p| p.order_no).collect()),
        })
    }

    async fn requeue(&self, order_no: &str, report: &mut ReconcileReport) {
        let records = match self
            .client
            .list_notification_records(order_no, Some(self.options.limit))
            .await
        {
            Ok(r) => r,
            Err(e) => {
                report.requeue_error = Some(LookupError::from(&e));
                return;
            }
        };
        for r in records
            .iter()
            .filter(|r| r.delivery_status == DeliveryStatus::Failed)
        {
            match self.client.retry_notification(order_no, &r.event_id).await {
                Ok(a) if a.accepted => report.requeued += 1,
                Ok(_) => {}
                Err(e) => {
                    report.requeue_error = Some(LookupError::from(&e));
                    return;
                }
            }
        }
    }
}

/// What a lookup found.
enum Found {
    None,
    One(Box<MerchantPayment>),
    Several(Vec<String>),
}

/// Classifies one payment against the shop's record (see the module's table). Pure: usable on a
/// payment the caller already holds (from a notification or a query).
pub fn classify(record: &LocalRecord, p: &MerchantPayment) -> ReconcileFinding {
    let boxed = || Box::new(p.clone());
    let mismatch = |field, expected: String, actual: String| ReconcileFinding::Mismatch {
        field,
        expected,
        actual,
        payment: boxed(),
    };
    if p.external_reference != record.external_reference {
        return mismatch(
            MismatchField::ExternalReference,
            record.external_reference.clone(),
            p.external_reference.clone(),
        );
    }
    if p.amount_minor != record.expected_amount {
        return mismatch(
            MismatchField::Amount,
            record.expected_amount.get().to_string(),
            p.amount_minor.get().to_string(),
        );
    }
    if p.currency != record.currency {
        return mismatch(
            MismatchField::Currency,
            record.currency.clone(),
            p.currency.clone(),
        );
    }
    // "False until a channel is chosen": before that it says nothing about the channel.
    if let Some(expected) = record.test_mode
        && !p.payment_no.is_empty()
        && p.test_mode != expected
    {
        return mismatch(
            MismatchField::TestMode,
            expected.to_string(),
            p.test_mode.to_string(),
        );
    }
    if let Some(v) = record.booked_status_version
        && let Some(service) = p.status_version
        && v > service
    {
        return mismatch(
            MismatchField::StatusVersion,
            v.to_string(),
            service.to_string(),
        );
    }
    let booked = record.booked_event_id.as_deref();
    match &p.status {
        MerchantPaymentStatus::Unknown(s) => ReconcileFinding::UnknownStatus {
            status: s.clone(),
            payment: boxed(),
        },
        MerchantPaymentStatus::Paid => match (booked, p.event_id.as_deref()) {
            (None, Some(event_id)) => ReconcileFinding::PaidNotBooked {
                event_id: event_id.to_owned(),
                status_version: p.status_version,
                occurred_at: p.occurred_at,
                payment: boxed(),
            },
            (Some(b), Some(e)) if b == e => ReconcileFinding::InAgreement,
            (b, e) => mismatch(
                MismatchField::EventId,
                b.unwrap_or_default().to_owned(),
                e.unwrap_or_default().to_owned(),
            ),
        },
        status if booked.is_some() => ReconcileFinding::BookedNotPaid {
            status: status.clone(),
            payment: boxed(),
        },
        MerchantPaymentStatus::Review => ReconcileFinding::UnderReview { payment: boxed() },
        // pending (undecided), expired, refunded, chargeback: nothing booked, nothing owed.
        _ => ReconcileFinding::InAgreement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payment(status: &str) -> MerchantPayment {
        serde_json::from_value(serde_json::json!({
            "order_no": "100000000000000000001",
            "external_reference": "ref-1",
            "payment_no": "ch_card_usd",
            "amount_minor": 1250,
            "currency": "USD",
            "currency_decimals": 2,
            "status": status,
            "status_version": 2,
            "test_mode": false,
            "expires_at": "2026-01-01T00:30:00Z",
            "event_id": "pev_1",
            "occurred_at": "2026-01-01T00:10:00+08:00",
        }))
        .unwrap()
    }

    fn record(booked: Option<&str>) -> LocalRecord {
        LocalRecord {
            external_reference: "ref-1".into(),
            order_no: None,
            expected_amount: MinorAmount::new(1250).unwrap(),
            currency: "USD".into(),
            test_mode: Some(false),
            booked_status_version: booked.map(|_| 2),
            booked_event_id: booked.map(str::to_owned),
        }
    }

    fn name(r: &LocalRecord, status: &str) -> &'static str {
        classify(r, &payment(status)).name()
    }

    #[test]
    fn every_status_booked_and_not_booked() {
        let (booked, free) = (record(Some("pev_1")), record(None));
        let table = [
            ("pending", "in_agreement", "booked_not_paid"),
            ("paid", "paid_not_booked", "in_agreement"),
            ("review", "under_review", "booked_not_paid"),
            ("expired", "in_agreement", "booked_not_paid"),
            ("refunded", "in_agreement", "booked_not_paid"),
            ("chargeback", "in_agreement", "booked_not_paid"),
            ("settled_v2", "unknown_status", "unknown_status"),
        ];
        for (status, not_booked, was_booked) in table {
            assert_eq!(name(&free, status), not_booked, "{status} not booked");
            assert_eq!(name(&booked, status), was_booked, "{status} booked");
        }
    }

    #[test]
    fn unknown_status_is_never_paid_and_keeps_its_text() {
        match classify(&record(None), &payment("settled_v2")) {
            ReconcileFinding::UnknownStatus { status, .. } => assert_eq!(status, "settled_v2"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn paid_not_booked_carries_the_event_to_book() {
        match classify(&record(None), &payment("paid")) {
            ReconcileFinding::PaidNotBooked {
                event_id,
                status_version,
                occurred_at,
                ..
            } => {
                assert_eq!(event_id, "pev_1");
                assert_eq!(status_version, Some(2));
                assert!(occurred_at.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn mismatches_come_before_the_status_and_name_their_field() {
        let field = |r: &LocalRecord, p: &MerchantPayment| match classify(r, p) {
            ReconcileFinding::Mismatch { field, .. } => field,
            other => panic!("{other:?}"),
        };
        let p = payment("paid");
        let mut r = record(None);
        r.expected_amount = MinorAmount::new(1).unwrap();
        assert_eq!(field(&r, &p), MismatchField::Amount);
        let mut r = record(None);
        r.currency = "EUR".into();
        assert_eq!(field(&r, &p), MismatchField::Currency);
        let mut r = record(None);
        r.test_mode = Some(true);
        assert_eq!(field(&r, &p), MismatchField::TestMode);
        let mut r = record(None);
        r.external_reference = "ref-2".into();
        assert_eq!(field(&r, &p), MismatchField::ExternalReference);
        assert_eq!(
            field(&record(Some("pev_other")), &p),
            MismatchField::EventId
        );
        let mut r = record(Some("pev_1"));
        r.booked_status_version = Some(3);
        assert_eq!(field(&r, &p), MismatchField::StatusVersion);
        // test_mode says nothing before a channel is chosen.
        let mut pending = payment("pending");
        pending.payment_no.clear();
        let mut r = record(None);
        r.test_mode = Some(true);
        assert_eq!(classify(&r, &pending), ReconcileFinding::InAgreement);
    }

    #[test]
    fn findings_and_records_round_trip_as_tagged_json() {
        let f = classify(&record(None), &payment("paid"));
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["finding"], "paid_not_booked");
        assert_eq!(v["event_id"], "pev_1");
        let back: ReconcileFinding = serde_json::from_value(v).unwrap();
        assert_eq!(back, f);
        let v = serde_json::to_value(ReconcileFinding::MissingAtService).unwrap();
        assert_eq!(v, serde_json::json!({"finding": "missing_at_service"}));
        let r = record(Some("pev_1"));
        let back: LocalRecord = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn window_keeps_payments_by_expiry() {
        let p = payment("pending");
        let at = p.expires_at;
        let w =
            |from: Option<OffsetDateTime>, to: Option<OffsetDateTime>| ReconcileWindow { from, to };
        assert!(w(None, None).contains(&p));
        assert!(w(Some(at), Some(at)).contains(&p));
        assert!(!w(Some(at + time::Duration::SECOND), None).contains(&p));
        assert!(!w(None, Some(at - time::Duration::SECOND)).contains(&p));
    }
}
