//! The merchant-payment state machine of the contract ("States and transitions").
//!
//! Every status change goes through [`change_status`], which increments `status_version`, notes
//! the change in the payment's timeline (when and why) and stores the change's notification
//! event in the same critical section (the caller holds the world lock), so a change and its
//! event are never seen apart.

use time::OffsetDateTime;

use super::model::{MerchantPayment, Status, StatusChange};
use crate::notifications::NotificationStore;

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
    /// Why `payment` moves to `to` on this trigger, in words (the timeline's "why"); called
    /// before the change, so `payment` still has its previous status.
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

/// Applies `trigger` if the contract allows it; returns the new status when it changed.
pub fn fire(
    payment: &mut MerchantPayment,
    notifications: &mut NotificationStore,
    trigger: Trigger,
    now: OffsetDateTime,
) -> Option<Status> {
    let due = now >= payment.expires_at;
    let to = next_status(payment.status, trigger, payment.session.is_some(), due)?;
    let why = trigger.reason(payment, to);
    change_status(payment, notifications, to, now, why);
    Some(to)
}

/// Moves a payment to `to`: increments `status_version`, notes the change (when, `why`) in its
/// timeline and stores the notification event (when notifications apply to this payment).
pub fn change_status(
    payment: &mut MerchantPayment,
    notifications: &mut NotificationStore,
    to: Status,
    now: OffsetDateTime,
    why: String,
) {
    payment.status = to;
    payment.status_version += 1;
    payment.timeline.push(StatusChange {
        status_version: payment.status_version,
        status: to,
        at: now,
        why,
    });
    notifications.record_event(payment, now);
}

/// The read rule: a pending payment whose `expires_at` is reached and on which no channel
/// session was ever started turns expired when it is read.
pub fn expire_on_read(
    payment: &mut MerchantPayment,
    notifications: &mut NotificationStore,
    now: OffsetDateTime,
) {
    fire(payment, notifications, Trigger::ReadExpiry, now);
}

/// The background sweep over every payment: pending payments whose `expires_at` is reached turn
/// expired (no channel session was started) or review (one was); then the background
/// verification of payments under review ([`verify_channel_expiry`]). Returns how many
/// payments changed status.
pub fn sweep(world: &mut crate::state::World, now: OffsetDateTime) -> usize {
    let crate::state::World {
        payments,
        notifications,
        ..
    } = world;
    let changed = payments
        .payments
        .values_mut()
        .filter(|p| p.status == Status::Pending && now >= p.expires_at)
        .filter_map(|p| fire(p, notifications, Trigger::Sweep, now))
        .count();
    verify_channel_expiry(world, now);
    changed
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

/// Background verification of payments under review (contract: pending → review on sweep,
/// "unpaid card-provider sessions are closed; reserved fee and credit are released once, only
/// after the channel is confirmed expired"). A session whose channel response is unclear is
/// never confirmed (review persists, nothing released). Once the channel's session lifetime is
/// over, the channel confirms it expired unpaid: the session is marked `channel_expired` and a
/// reserved fee is released, exactly once (the reservation is taken off the payment). The
/// status stays `review` (the state after that is "not shown"). Returns how many fees were
/// released.
pub fn verify_channel_expiry(world: &mut crate::state::World, now: OffsetDateTime) -> usize {
    let crate::state::World {
        payments, channels, ..
    } = world;
    let super::PaymentStore { payments, fees, .. } = payments;
    let mut released = 0;
    for payment in payments.values_mut() {
        if payment.status != Status::Review {
            continue;
        }
        let Some(session) = payment.session.as_ref() else {
            continue;
        };
        if session.unclear || session.channel_expired {
            continue;
        }
        let card = channels
            .get(&session.payment_no)
            .is_some_and(|c| c.provider == "card-provider");
        if channel_expiry(payment, card).is_none_or(|at| now < at) {
            continue;
        }
        if let Some(session) = payment.session.as_mut() {
            session.channel_expired = true;
        }
        if payment.fee_reserved > 0 {
            fees.release(
                &payment.merchant_no,
                std::mem::take(&mut payment.fee_reserved),
            );
            released += 1;
        }
    }
    released
}
