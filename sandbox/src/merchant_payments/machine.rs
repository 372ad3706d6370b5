//! The merchant-payment state machine of the contract ("States and transitions").
//!
//! Every status change goes through [`change_status`], which increments `status_version`,
//! adds the step to the payment's timeline and returns the change as a [`StatusEvent`]. The
//! caller hands the event to the notifications domain
//! ([`crate::notifications::store::NotificationStore::record_event`]) in the same critical
//! section (it holds the lock), so a change and its event are never seen apart. The machine
//! itself knows nothing of notifications.

use serde_json::Value;
use time::OffsetDateTime;

use super::store::{MerchantPayment, NotifyTarget, Status, StatusStep};
use super::views::snapshot;

/// What happens to a payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A read (query, list, checkout read) after `expires_at` with no channel session started.
    ReadExpiry,
    /// The background sweep after `expires_at`.
    Sweep,
    /// The channel payment was confirmed (also late, after review or expiry).
    PaymentConfirmed,
    /// Platform staff put the payment under review (channel result unclear).
    Review,
    /// Platform-confirmed refund.
    Refund,
    /// Platform-confirmed chargeback.
    Chargeback,
}

impl Trigger {
    /// Why the payment moves to `to`, in words, for the timeline (read before the change).
    pub fn reason(self, payment: &MerchantPayment, to: Status) -> String {
        let channel = payment
            .session
            .as_ref()
            .map(|s| s.payment_no.as_str())
            .unwrap_or("the channel");
        match (self, to) {
            (Trigger::ReadExpiry, _) => {
                "read after expires_at with no channel session started".to_owned()
            }
            (Trigger::Sweep, Status::Review) => {
                format!("sweep: expires_at reached while the {channel} session was undecided")
            }
            (Trigger::Sweep, _) => {
                "sweep: expires_at reached with no channel session started".to_owned()
            }
            (Trigger::PaymentConfirmed, _) if payment.status != Status::Pending => format!(
                "{channel} confirmed the payment (late, after {})",
                payment.status.as_str()
            ),
            (Trigger::PaymentConfirmed, _) => format!("{channel} confirmed the payment"),
            (Trigger::Review, _) => "platform put it under review".to_owned(),
            (Trigger::Refund, _) => "platform confirmed a refund".to_owned(),
            (Trigger::Chargeback, _) => "platform confirmed a chargeback".to_owned(),
        }
    }
}

/// The state a trigger leads to, or `None` when the contract has no such transition.
/// `session_started` says whether a channel session was ever started; `due` whether
/// `expires_at` has been reached.
pub fn next_status(
    from: Status,
    trigger: Trigger,
    session_started: bool,
    due: bool,
) -> Option<Status> {
    use Status::*;
    match (from, trigger) {
        (Pending, Trigger::ReadExpiry) if due && !session_started => Some(Expired),
        (Pending, Trigger::Sweep) if due && !session_started => Some(Expired),
        (Pending, Trigger::Sweep) if due && session_started => Some(Review),
        (Pending | Review | Expired, Trigger::PaymentConfirmed) => Some(Paid),
        (Pending, Trigger::Review) => Some(Review),
        (Paid, Trigger::Refund) => Some(Refunded),
        (Paid, Trigger::Chargeback) => Some(Chargeback),
        _ => None,
    }
}

/// One status change of a payment, as the state machine reports it.
#[derive(Debug, Clone)]
pub struct StatusEvent {
    /// The payment.
    pub order_no: String,
    /// The status it moved to.
    pub status: Status,
    /// Its `status_version` after the change.
    pub status_version: u64,
    /// When it changed (sandbox clock).
    pub at: OffsetDateTime,
    /// The notification the change calls for: the target fixed at the payment's creation and
    /// the payment's snapshot after the change; `None` when notifications do not apply.
    pub notification: Option<(NotifyTarget, Value)>,
}

/// Applies `trigger` if the contract allows it; returns the change when the status changed.
pub fn fire(
    payment: &mut MerchantPayment,
    trigger: Trigger,
    now: OffsetDateTime,
) -> Option<StatusEvent> {
    let due = now >= payment.expires_at;
    let to = next_status(payment.status, trigger, payment.session.is_some(), due)?;
    let why = trigger.reason(payment, to);
    Some(change_status(payment, to, now, why))
}

/// Moves a payment to `to`: increments `status_version`, adds the step (with `why`) to the
/// payment's timeline and returns the change (with its notification when notifications apply).
pub fn change_status(
    payment: &mut MerchantPayment,
    to: Status,
    now: OffsetDateTime,
    why: String,
) -> StatusEvent {
    payment.status = to;
    payment.status_version += 1;
    payment.timeline.push(StatusStep {
        status: to,
        status_version: payment.status_version,
        at: now,
        why,
    });
    StatusEvent {
        order_no: payment.order_no.clone(),
        status: to,
        status_version: payment.status_version,
        at: now,
        notification: payment
            .notify
            .clone()
            .map(|target| (target, snapshot(payment))),
    }
}

/// The read rule: a pending payment whose `expires_at` is reached and on which no channel
/// session was ever started turns expired when it is read.
pub fn expire_on_read(payment: &mut MerchantPayment, now: OffsetDateTime) -> Option<StatusEvent> {
    fire(payment, Trigger::ReadExpiry, now)
}

/// Minimum lifetime of a card-provider channel session (contract, Limits: "The card-provider
/// session has its own minimum lifetime of 30 minutes, possibly longer than the payment's
/// expiry; the service closes the session itself").
pub const CARD_SESSION_MIN_SECONDS: i64 = 30 * 60;

/// When the channel can confirm that a payment's session expired unpaid: not before the
/// payment's `expires_at`, and for a card-provider session not before its minimum lifetime.
pub fn channel_expiry(payment: &MerchantPayment, card_provider: bool) -> Option<OffsetDateTime> {
    let session = payment.session.as_ref()?;
    let lifetime = if card_provider {
        CARD_SESSION_MIN_SECONDS
    } else {
        0
    };
    Some((session.started_at + time::Duration::seconds(lifetime)).max(payment.expires_at))
}
