//! Rules of what a buyer does on a payment's checkout, shared by the HTML page and the JSON
//! controls (each function takes only the stores it touches):
//! start a channel session (which chooses and locks the method), pay, and the platform-side
//! confirmations (late payment, unclear channel response).

use axum::http::StatusCode;
use time::OffsetDateTime;

use crate::directory::rules::{DebitError, debit_wallet};
use crate::directory::store::DirectoryStore;
use crate::error::{ApiError, ApiResult};
use crate::ids::random_hex;
use crate::merchant_payments::machine::{self, Trigger};
use crate::merchant_payments::store::PaymentStore;
use crate::merchant_payments::store::{ChannelSession, MerchantPayment, Status};
use crate::merchant_payments::{PLATFORM_COIN_TRADE_MARKER, fees, settlement};
use crate::notifications::store::NotificationStore;

/// Which method the buyer picked.
#[derive(Debug, Clone, Copy)]
pub enum MethodChoice<'a> {
    /// A real channel identifier (JSON controls).
    Channel(&'a str),
    /// The per-order method identifier shown on the checkout page.
    MethodId(&'a str),
    /// The method of the existing session, or the only method offered.
    Implicit,
}

/// Result of starting (or continuing) a channel session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStarted {
    /// The channel of the session.
    pub payment_no: String,
    /// False when an earlier session of the same method was continued.
    pub created: bool,
}

fn conflict(description: &str) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, "payment_conflict").describe(description)
}

fn payment_mut<'w>(
    payments: &'w mut PaymentStore,
    order_no: &str,
) -> ApiResult<&'w mut MerchantPayment> {
    payments
        .payments
        .get_mut(order_no)
        .ok_or_else(|| ApiError::not_found("payment_not_found").describe("no such payment"))
}

/// The checkout read: applies the read-time expiry rule and returns the payment.
pub fn read<'w>(
    payments: &'w mut PaymentStore,
    notifications: &mut NotificationStore,
    order_no: &str,
    now: OffsetDateTime,
) -> ApiResult<&'w MerchantPayment> {
    let payment = payments
        .payments
        .get_mut(order_no)
        .ok_or_else(|| ApiError::not_found("payment_not_found").describe("no such payment"))?;
    if let Some(event) = machine::expire_on_read(payment, now) {
        notifications.record_event(event);
    }
    Ok(payment)
}

/// Starts the channel session of `choice` for `user`, or continues the existing one.
/// After the first session the method is locked; a different method gives 409
/// `payment_conflict`, and while the channel response is unclear the same method gives 202
/// `provider_result_pending`. Login and debug payer rules are checked on every start and
/// re-fetch; an expired payment gives 410 `payment_expired`.
pub fn start_session(
    payments: &mut PaymentStore,
    directory: &DirectoryStore,
    notifications: &mut NotificationStore,
    order_no: &str,
    choice: MethodChoice<'_>,
    user: Option<&str>,
    now: OffsetDateTime,
) -> ApiResult<SessionStarted> {
    let payment = read(payments, notifications, order_no, now)?;
    match payment.status {
        Status::Pending => {}
        Status::Expired => {
            return Err(ApiError::new(StatusCode::GONE, "payment_expired")
                .describe("the payment can no longer be started; query the original payment"));
        }
        Status::Paid => return Err(conflict("the payment is already paid")),
        Status::Review | Status::Refunded | Status::Chargeback => {
            return Err(conflict("the payment can no longer be started"));
        }
    }
    let chosen = match choice {
        MethodChoice::Channel(payment_no) => payment
            .methods
            .iter()
            .find(|m| m.payment_no == payment_no)
            .map(|m| m.payment_no.clone()),
        MethodChoice::MethodId(id) => payment
            .methods
            .iter()
            .find(|m| m.method_id == id)
            .map(|m| m.payment_no.clone()),
        MethodChoice::Implicit => match (&payment.session, payment.methods.as_slice()) {
            (Some(session), _) => Some(session.payment_no.clone()),
            (None, [only]) => Some(only.payment_no.clone()),
            (None, _) => {
                return Err(
                    ApiError::invalid_request("choose a payment method first").field("payment_no")
                );
            }
        },
    }
    .ok_or_else(|| {
        ApiError::unprocessable(
            "channel_unavailable",
            "this method is not offered for this payment",
        )
        .field("payment_no")
    })?;
    if let Some(session) = &payment.session
        && session.payment_no != chosen
    {
        return Err(conflict(
            "a channel payment was already started with another method",
        ));
    }
    let merchant_no = payment.merchant_no.clone();
    let existing = payment.session.clone();

    let channel = directory.channels.get(&chosen).cloned().ok_or_else(|| {
        ApiError::unprocessable("channel_unavailable", "the channel no longer exists")
    })?;
    let merchant = directory
        .merchants
        .get(&merchant_no)
        .cloned()
        .ok_or_else(|| ApiError::unprocessable("channel_unavailable", "unknown merchant"))?;
    if !channel.available_to_merchant(&merchant_no) {
        return Err(if channel.test_mode {
            ApiError::new(StatusCode::FORBIDDEN, "payment_debug_access_denied")
                .describe("the test channel is no longer assigned to this merchant")
        } else {
            ApiError::unprocessable("channel_unavailable", "the channel is not usable")
        });
    }
    if user.is_none() && channel.login_required(&merchant) {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "login_required")
            .describe("this method requires the buyer to log in"));
    }
    if !channel.payable_by(user) {
        return Err(
            ApiError::new(StatusCode::FORBIDDEN, "payment_debug_access_denied")
                .describe("this test channel is not assigned to the logged-in buyer"),
        );
    }
    if let Some(session) = existing {
        if session.unclear {
            return Err(
                ApiError::new(StatusCode::ACCEPTED, "provider_result_pending").describe(
                    "the channel result is unclear; the original payment is kept and checked",
                ),
            );
        }
        return Ok(SessionStarted {
            payment_no: session.payment_no,
            created: false,
        });
    }
    // Merchant-own channels: the fee is checked again and reserved before the link is issued.
    let fee = if channel.owner == "merchant" {
        let payment = payment_mut(payments, order_no)?;
        let fee = payment
            .coin_rate
            .and_then(|rate| settlement(payment.amount_minor, payment.currency_decimals, rate))
            .map(fees::fee_of)
            .ok_or_else(|| {
                ApiError::unprocessable("currency_rate_unavailable", "no platform rate")
            })?;
        payments.fees.reserve(&merchant_no, fee)?;
        fee
    } else {
        0
    };
    let payment = payment_mut(payments, order_no)?;
    payment.fee_reserved = fee;
    payment.session = Some(ChannelSession {
        payment_no: chosen.clone(),
        user: user.map(str::to_owned),
        started_at: now,
        unclear: false,
        channel_expired: false,
        trade_no: if channel.provider == "platform-coin" {
            format!("{PLATFORM_COIN_TRADE_MARKER}:{}", payment.order_no)
        } else {
            random_hex("ctr_", 12)
        },
        test_mode: channel.test_mode,
    });
    Ok(SessionStarted {
        payment_no: chosen,
        created: true,
    })
}

/// Confirms the channel payment of the started session: debits the buyer's wallet for the
/// platform coin (when `debit_buyer`, through
/// [`debit_wallet`]), sets `event_id`, `occurred_at`, `provider_trade_no` and
/// `settlement_coin`, and moves the payment to `paid` (from pending, review or expired).
/// Confirming a paid payment again changes nothing.
pub fn confirm_payment(
    payments: &mut PaymentStore,
    directory: &mut DirectoryStore,
    notifications: &mut NotificationStore,
    order_no: &str,
    debit_buyer: bool,
    now: OffsetDateTime,
) -> ApiResult<()> {
    let payment = payment_mut(payments, order_no)?;
    match payment.status {
        Status::Paid => return Ok(()),
        Status::Refunded | Status::Chargeback => {
            return Err(conflict("the payment was already refunded or charged back"));
        }
        Status::Pending | Status::Review | Status::Expired => {}
    }
    let session = payment
        .session
        .clone()
        .ok_or_else(|| conflict("no channel payment was started"))?;
    let coin = payment
        .coin_rate
        .and_then(|rate| settlement(payment.amount_minor, payment.currency_decimals, rate));
    let (provider, owner) = directory
        .channels
        .get(&session.payment_no)
        .map(|c| (c.provider.clone(), c.owner.clone()))
        .unwrap_or_default();
    if provider == "platform-coin" && debit_buyer {
        let amount = coin.ok_or_else(|| {
            ApiError::unprocessable("currency_rate_unavailable", "no platform rate")
        })?;
        let user = session
            .user
            .as_deref()
            .ok_or_else(|| ApiError::new(StatusCode::FORBIDDEN, "login_required"))?;
        debit_wallet(&mut directory.users, user, amount).map_err(|e| match e {
            DebitError::NoWallet => ApiError::new(StatusCode::FORBIDDEN, "login_required"),
            DebitError::Insufficient { .. } => ApiError::unprocessable(
                "insufficient_balance",
                "the buyer's platform-coin wallet does not cover the amount",
            ),
        })?;
    }
    let Some(payment) = payments.payments.get_mut(order_no) else {
        return Err(conflict("the payment disappeared"));
    };
    if payment.fee_reserved > 0 {
        payments.fees.charge(
            &payment.merchant_no,
            std::mem::take(&mut payment.fee_reserved),
        );
    }
    payment.event_id = Some(random_hex("pe_", 12));
    payment.occurred_at = Some(now);
    payment.provider_trade_no = Some(session.trade_no.clone());
    payment.settlement_coin = if owner == "platform" { coin } else { None };
    let event = machine::fire(payment, Trigger::PaymentConfirmed, now)
        .ok_or_else(|| conflict("the payment cannot be confirmed in its state"))?;
    notifications.record_event(event);
    Ok(())
}

/// Marks the channel session's response as unclear (the payment stays pending, is kept, and
/// goes to review at expiry).
pub fn mark_unclear(payments: &mut PaymentStore, order_no: &str) -> ApiResult<()> {
    let payment = payment_mut(payments, order_no)?;
    if payment.status != Status::Pending {
        return Err(conflict(
            "only a pending payment has an open channel session",
        ));
    }
    let session = payment
        .session
        .as_mut()
        .ok_or_else(|| conflict("no channel payment was started"))?;
    session.unclear = true;
    Ok(())
}
