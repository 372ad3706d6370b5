//! Notification events and their delivery records: one event per status change (stored with
//! the change), the retry schedule, the latest 20 attempts, and re-queueing.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::ids::random_hex;
use crate::merchant_payments::machine::StatusEvent;
use crate::merchant_payments::store::{NotifyTarget, Secret};
use crate::merchant_payments::views::rfc3339;

/// The only event type.
pub const EVENT_TYPE: &str = "merchant_payment.status_changed";
/// `api_version` of notification bodies.
pub const API_VERSION: u32 = 1;
/// Waits after the 1st, 2nd, ... failed automatic attempt: 1 min, 5 min, 15 min, 30 min, 1 h,
/// 2 h, 4 h, 6 h, 8 h.
pub const RETRY_INTERVALS_SECONDS: [i64; 9] =
    [60, 300, 900, 1800, 3600, 7200, 14_400, 21_600, 28_800];
/// At most this many automatic attempts (the first delivery and nine retries).
pub const MAX_AUTOMATIC_ATTEMPTS: u32 = 10;
/// Attempts kept in a delivery record.
pub const ATTEMPTS_KEPT: usize = 20;
/// Attempts kept in the sandbox-wide attempt log.
pub const LOG_KEPT: usize = 10_000;

/// `delivery_status` of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Waiting for its next attempt (or in flight).
    Pending,
    /// A 2xx acknowledged it.
    Delivered,
    /// Automatic attempts exhausted (or a re-queued attempt failed).
    Failed,
}

impl DeliveryStatus {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }
}

/// One delivery attempt.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// 1-based attempt number within the record.
    pub number: u32,
    /// When the attempt started.
    pub started_at: OffsetDateTime,
    /// When it finished; `None` while in flight.
    pub finished_at: Option<OffsetDateTime>,
    /// HTTP status of the answer, if one came.
    pub http_status: Option<u16>,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// The delivery record of one notification event.
#[derive(Debug, Clone)]
pub struct DeliveryRecord {
    /// Notification event number (body `id`, header `X-Service-Event-ID`).
    pub event_id: String,
    /// Payment the event belongs to.
    pub order_no: String,
    /// `status_version` of the snapshot.
    pub status_version: u64,
    /// Raw body, serialized once: every attempt sends the same bytes.
    pub body: String,
    /// Address and secret fixed at the payment's creation.
    pub target: NotifyTarget,
    /// Current delivery status.
    pub status: DeliveryStatus,
    /// Attempts made, cumulative.
    pub attempts: u32,
    /// Automatic attempts made (at most [`MAX_AUTOMATIC_ATTEMPTS`]).
    pub automatic_attempts: u32,
    /// When the next attempt is due.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// Whether the next attempt is a manual re-queue.
    pub requeued: bool,
    /// Whether an attempt is running.
    pub in_flight: bool,
    /// HTTP status of the last answer.
    pub last_http_status: Option<u16>,
    /// Error of the last failed attempt.
    pub last_error: Option<String>,
    /// The latest attempts (at most [`ATTEMPTS_KEPT`]), oldest first.
    pub history: VecDeque<Attempt>,
}

/// One attempt as the control endpoint reports it: target, headers, raw body and result.
#[derive(Debug, Clone)]
pub struct LoggedAttempt {
    /// Payment.
    pub order_no: String,
    /// Notification event number.
    pub event_id: String,
    /// Attempt number.
    pub number: u32,
    /// Target address.
    pub url: String,
    /// `X-Service-Timestamp` sent.
    pub timestamp: i64,
    /// `X-Service-Signature` sent.
    pub signature: String,
    /// Raw body sent.
    pub body: String,
    /// Start and end of the attempt.
    pub started_at: OffsetDateTime,
    /// End of the attempt.
    pub finished_at: OffsetDateTime,
    /// Answer status.
    pub http_status: Option<u16>,
    /// Failure.
    pub error: Option<String>,
}

/// A delivery claimed by the worker: everything needed to send it without the db lock.
#[derive(Debug, Clone)]
pub struct DeliveryJob {
    /// Payment.
    pub order_no: String,
    /// Notification event number.
    pub event_id: String,
    /// Attempt number.
    pub number: u32,
    /// Target address.
    pub url: String,
    /// Signing secret.
    pub secret: Secret,
    /// Raw body.
    pub body: String,
    /// When the attempt started.
    pub started_at: OffsetDateTime,
}

/// What a finished attempt produced.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    /// `X-Service-Timestamp` sent.
    pub timestamp: i64,
    /// `X-Service-Signature` sent.
    pub signature: String,
    /// Answer status.
    pub http_status: Option<u16>,
    /// Failure, `None` on a 2xx.
    pub error: Option<String>,
    /// When it finished.
    pub finished_at: OffsetDateTime,
}

/// Notification events and their delivery records.
#[derive(Debug, Default)]
pub struct NotificationStore {
    /// Delivery records by payment number, in creation order.
    pub records: BTreeMap<String, Vec<DeliveryRecord>>,
    /// Every attempt, for the control endpoint (the latest [`LOG_KEPT`]).
    pub log: VecDeque<LoggedAttempt>,
    /// Set through the control endpoint to stop the delivery worker (an interruption); due
    /// work resumes when it is cleared.
    pub paused: bool,
}

/// The status notification object of a payment: `snapshot` is the payment as it is after the
/// change ([`crate::merchant_payments::views::snapshot`]).
pub fn notification_body(id: &str, snapshot: Value, now: OffsetDateTime) -> Value {
    json!({
        "id": id,
        "type": EVENT_TYPE,
        "api_version": API_VERSION,
        "created_at": rfc3339(now),
        "data": snapshot,
    })
}

impl NotificationStore {
    /// Stores the notification event of a status change (as the payment state machine returned
    /// it), due at once, when notifications apply to the payment. Called inside the critical
    /// section of the status change.
    pub fn record_event(&mut self, event: StatusEvent) {
        let Some((target, snapshot)) = event.notification else {
            return;
        };
        let now = event.at;
        let id = random_hex("evt_", 16);
        let body = notification_body(&id, snapshot, now).to_string();
        self.records
            .entry(event.order_no.clone())
            .or_default()
            .push(DeliveryRecord {
                event_id: id,
                order_no: event.order_no,
                status_version: event.status_version,
                body,
                target,
                status: DeliveryStatus::Pending,
                attempts: 0,
                automatic_attempts: 0,
                next_attempt_at: Some(now),
                requeued: false,
                in_flight: false,
                last_http_status: None,
                last_error: None,
                history: VecDeque::new(),
            });
    }

    /// Records several status changes in order ([`NotificationStore::record_event`]).
    pub fn record_events(&mut self, events: impl IntoIterator<Item = StatusEvent>) {
        for event in events {
            self.record_event(event);
        }
    }

    /// Claims every record whose attempt is due: marks it in flight and opens its attempt.
    /// Nothing while the worker is paused.
    pub fn claim_due(&mut self, now: OffsetDateTime) -> Vec<DeliveryJob> {
        let mut jobs = Vec::new();
        if self.paused {
            return jobs;
        }
        for record in self.records.values_mut().flatten() {
            let due = record.status == DeliveryStatus::Pending
                && !record.in_flight
                && record.next_attempt_at.is_some_and(|at| at <= now);
            if !due {
                continue;
            }
            record.in_flight = true;
            let number = record.attempts + 1;
            push_kept(
                &mut record.history,
                Attempt {
                    number,
                    started_at: now,
                    finished_at: None,
                    http_status: None,
                    error: None,
                },
            );
            jobs.push(DeliveryJob {
                order_no: record.order_no.clone(),
                event_id: record.event_id.clone(),
                number,
                url: record.target.url.clone(),
                secret: record.target.secret.clone(),
                body: record.body.clone(),
                started_at: now,
            });
        }
        jobs
    }

    /// Records the end of an attempt and schedules the next one per the retry schedule.
    pub fn finish(&mut self, job: &DeliveryJob, outcome: AttemptOutcome) {
        if let Some(record) = self
            .records
            .get_mut(&job.order_no)
            .and_then(|list| list.iter_mut().find(|r| r.event_id == job.event_id))
        {
            record.in_flight = false;
            record.attempts += 1;
            record.last_http_status = outcome.http_status;
            record.last_error = outcome.error.clone();
            if let Some(attempt) = record
                .history
                .iter_mut()
                .rev()
                .find(|a| a.number == job.number)
            {
                attempt.finished_at = Some(outcome.finished_at);
                attempt.http_status = outcome.http_status;
                attempt.error = outcome.error.clone();
            }
            let manual = std::mem::take(&mut record.requeued);
            if !manual {
                record.automatic_attempts += 1;
            }
            if outcome.error.is_none() {
                record.status = DeliveryStatus::Delivered;
                record.next_attempt_at = None;
            } else if manual || record.automatic_attempts >= MAX_AUTOMATIC_ATTEMPTS {
                record.status = DeliveryStatus::Failed;
                record.next_attempt_at = None;
            } else {
                let wait = RETRY_INTERVALS_SECONDS[(record.automatic_attempts - 1) as usize];
                record.next_attempt_at = Some(outcome.finished_at + Duration::seconds(wait));
            }
        }
        if self.log.len() >= LOG_KEPT {
            self.log.pop_front();
        }
        self.log.push_back(LoggedAttempt {
            order_no: job.order_no.clone(),
            event_id: job.event_id.clone(),
            number: job.number,
            url: job.url.clone(),
            timestamp: outcome.timestamp,
            signature: outcome.signature,
            body: job.body.clone(),
            started_at: job.started_at,
            finished_at: outcome.finished_at,
            http_status: outcome.http_status,
            error: outcome.error,
        });
    }

    /// Re-queues an exhausted (failed) record for one more attempt, due now. A delivered or
    /// pending record is left as it is. `None` when the payment has no such event.
    pub fn requeue(&mut self, order_no: &str, event_id: &str, now: OffsetDateTime) -> Option<bool> {
        let record = self
            .records
            .get_mut(order_no)?
            .iter_mut()
            .find(|r| r.event_id == event_id)?;
        if record.status != DeliveryStatus::Failed {
            return Some(false);
        }
        record.status = DeliveryStatus::Pending;
        record.requeued = true;
        record.next_attempt_at = Some(now);
        Some(true)
    }
}

/// What [`NotificationStore::redeliver_now`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redelivery {
    /// A pending record's next attempt is due now (it stays on the automatic schedule).
    Advanced,
    /// A delivered or failed record gets one more (manual) attempt, due now.
    Queued,
    /// An attempt is running; nothing changed.
    InFlight,
}

impl NotificationStore {
    /// Sends an event again right away (sandbox control): a pending record's next attempt
    /// becomes due now; a delivered or failed record gets one more attempt due now, counted
    /// like a re-queue (a 2xx makes it `delivered`, anything else `failed`). While an attempt
    /// is in flight nothing changes. `None` when the payment has no such event.
    pub fn redeliver_now(
        &mut self,
        order_no: &str,
        event_id: &str,
        now: OffsetDateTime,
    ) -> Option<Redelivery> {
        let record = self
            .records
            .get_mut(order_no)?
            .iter_mut()
            .find(|r| r.event_id == event_id)?;
        if record.in_flight {
            return Some(Redelivery::InFlight);
        }
        let done = if record.status == DeliveryStatus::Pending {
            Redelivery::Advanced
        } else {
            record.status = DeliveryStatus::Pending;
            record.requeued = true;
            Redelivery::Queued
        };
        record.next_attempt_at = Some(now);
        Some(done)
    }
}

fn push_kept(history: &mut VecDeque<Attempt>, attempt: Attempt) {
    if history.len() >= ATTEMPTS_KEPT {
        history.pop_front();
    }
    history.push_back(attempt);
}

/// A delivery record as the notifications endpoint returns it.
pub fn record_view(record: &DeliveryRecord) -> Value {
    let event: Value = serde_json::from_str(&record.body).unwrap_or(Value::Null);
    let attempts: Vec<Value> = record
        .history
        .iter()
        .map(|a| {
            let mut entry = json!({
                "attempt": a.number,
                "started_at": rfc3339(a.started_at),
                "http_status": a.http_status,
                "error": a.error,
            });
            if let Some(finished) = a.finished_at {
                entry["finished_at"] = json!(rfc3339(finished));
            }
            entry
        })
        .collect();
    json!({
        "event_id": record.event_id,
        "status_version": record.status_version,
        "event": event,
        "delivery_status": record.status.as_str(),
        "attempts": record.attempts,
        "next_attempt_at": record.next_attempt_at.map(rfc3339),
        "last_http_status": record.last_http_status,
        "last_error": record.last_error,
        "delivery_attempts": attempts,
    })
}

/// An attempt as the control endpoint reports it.
pub fn logged_view(entry: &LoggedAttempt) -> Value {
    json!({
        "order_no": entry.order_no,
        "event_id": entry.event_id,
        "attempt": entry.number,
        "url": entry.url,
        "headers": {
            "X-Service-Event-ID": entry.event_id,
            "X-Service-Timestamp": entry.timestamp.to_string(),
            "X-Service-Signature": entry.signature,
        },
        "body": entry.body,
        "started_at": rfc3339(entry.started_at),
        "finished_at": rfc3339(entry.finished_at),
        "http_status": entry.http_status,
        "error": entry.error,
    })
}
