//! Rules over the merchant-payment store that touch more than one payment or more than one
//! store: building a new payment, the background sweep and the verification of payments under
//! review. They take only the stores they touch and return the status changes for the
//! notifications domain to record.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use time::{Duration, OffsetDateTime};

use super::fees;
use super::machine::{self, StatusEvent, Trigger, channel_expiry};
use super::store::{CheckoutMethod, MerchantPayment, PaymentStore, Secret, Status};
use super::validation::CreateParams;
use super::{COIN_DECIMALS, settlement};
use crate::directory::rules::coin_rate;
use crate::directory::store::{Channel, DirectoryStore};
use crate::error::{ApiError, ApiResult};
use crate::ids::random_hex;
use crate::notifications::config;

/// What one sweep did.
#[derive(Debug, Default)]
pub struct Swept {
    /// How many payments changed status.
    pub changed: usize,
    /// Their status changes, for the notifications domain.
    pub events: Vec<StatusEvent>,
}

/// The background sweep over every payment: pending payments whose `expires_at` is reached turn
/// expired (no channel session was started) or review (one was); then the background
/// verification of payments under review ([`verify_channel_expiry`]).
pub fn sweep(
    payments: &mut PaymentStore,
    channels: &BTreeMap<String, Channel>,
    now: OffsetDateTime,
) -> Swept {
    let events: Vec<StatusEvent> = payments
        .payments
        .values_mut()
        .filter(|p| p.status == Status::Pending && now >= p.expires_at)
        .filter_map(|p| machine::fire(p, Trigger::Sweep, now))
        .collect();
    verify_channel_expiry(payments, channels, now);
    Swept {
        changed: events.len(),
        events,
    }
}

/// Background verification of payments under review (contract: pending → review on sweep,
/// "unpaid card-provider sessions are closed; reserved fee and credit are released once, only
/// after the channel is confirmed expired"). A session whose channel response is unclear is
/// never confirmed (review persists, nothing released). Once the channel's session lifetime is
/// over, the channel confirms it expired unpaid: the session is marked `channel_expired` and a
/// reserved fee is released, exactly once (the reservation is taken off the payment). The
/// status stays `review` (the state after that is "not shown"). Returns how many fees were
/// released.
pub fn verify_channel_expiry(
    payments: &mut PaymentStore,
    channels: &BTreeMap<String, Channel>,
    now: OffsetDateTime,
) -> usize {
    let PaymentStore { payments, fees, .. } = payments;
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

fn channel_unavailable(description: impl Into<String>) -> ApiError {
    ApiError::unprocessable("channel_unavailable", description)
}

/// The business checks of a new payment (currency, precision, channels, rate, notification
/// configuration) and the payment they produce, not yet stored.
pub fn build_payment(
    directory: &DirectoryStore,
    payments: &mut PaymentStore,
    merchant_no: &str,
    params: &CreateParams,
    now: OffsetDateTime,
) -> ApiResult<MerchantPayment> {
    let decimals = *directory.currencies.get(&params.currency).ok_or_else(|| {
        ApiError::invalid_request(format!("currency {} is not enabled", params.currency))
            .field("currency")
    })?;
    let fits = decimals <= COIN_DECIMALS
        && 10i64
            .checked_pow(COIN_DECIMALS - decimals)
            .and_then(|scale| params.amount_minor.checked_mul(scale))
            .is_some();
    if !fits {
        return Err(ApiError::invalid_request(
            "amount_minor is not representable in the platform's eight-decimal precision",
        )
        .field("amount_minor"));
    }
    // Every payment saves the platform rate of its currency at creation (platform channels
    // settle in coin with it, merchant-own channels compute their fee with it).
    let rate = Some(
        coin_rate(&directory.rates, &params.currency).ok_or_else(|| {
            ApiError::unprocessable(
                "currency_rate_unavailable",
                format!("no platform rate is available for {}", params.currency),
            )
            .field("currency")
        })?,
    );
    if let Some(rate) = rate
        && settlement(params.amount_minor, decimals, rate).is_none()
    {
        return Err(ApiError::invalid_request(
            "amount_minor is too large to settle in platform coin",
        )
        .field("amount_minor"));
    }

    let supports = |channel: &Channel| -> ApiResult<bool> {
        if channel.provider == "platform-coin" {
            if params.currency != channel.currency && rate.is_none() {
                return Err(ApiError::unprocessable(
                    "currency_rate_unavailable",
                    format!("no platform rate for {}", params.currency),
                ));
            }
            return Ok(true);
        }
        if channel.currency != params.currency {
            return Ok(false);
        }
        if channel.owner == "platform" && rate.is_none() {
            return Err(ApiError::unprocessable(
                "currency_rate_unavailable",
                format!("no platform rate for {}", params.currency),
            ));
        }
        Ok(true)
    };

    let channels: Vec<String> = match &params.payment_no {
        Some(payment_no) => {
            let channel = directory
                .channels
                .get(payment_no)
                .filter(|c| c.enabled)
                .filter(|c| c.owner_merchant.as_deref().is_none_or(|o| o == merchant_no))
                .ok_or_else(|| {
                    channel_unavailable(format!("channel {payment_no} is not usable"))
                        .field("payment_no")
                })?;
            if !channel.available_to_merchant(merchant_no) {
                return Err(
                    ApiError::new(StatusCode::FORBIDDEN, "payment_debug_access_denied")
                        .describe("the test channel is not assigned to this merchant")
                        .field("payment_no"),
                );
            }
            if !supports(channel)? {
                return Err(channel_unavailable(format!(
                    "channel {payment_no} does not accept {}",
                    params.currency
                ))
                .field("payment_no"));
            }
            vec![payment_no.clone()]
        }
        None => {
            let mut usable = Vec::new();
            for channel in directory.channels.values() {
                if channel.available_to_merchant(merchant_no) && supports(channel).unwrap_or(false)
                {
                    usable.push(channel.payment_no.clone());
                }
            }
            if usable.is_empty() {
                return Err(channel_unavailable(format!(
                    "no channel available for {}",
                    params.currency
                )));
            }
            usable
        }
    };

    // The platform fee of merchant-own channels must be fundable at creation.
    let fee = rate
        .and_then(|r| settlement(params.amount_minor, decimals, r))
        .map(fees::fee_of);
    let mut unfunded = false;
    let mut fundable = Vec::with_capacity(channels.len());
    for payment_no in channels {
        let merchant_owned = directory
            .channels
            .get(&payment_no)
            .is_some_and(|c| c.owner == "merchant");
        let funded =
            !merchant_owned || fee.is_some_and(|f| payments.fees.check(merchant_no, f).is_ok());
        if funded {
            fundable.push(payment_no);
        } else {
            unfunded = true;
        }
    }
    if fundable.is_empty() && unfunded {
        let error = ApiError::unprocessable(
            "merchant_fee_funding_unavailable",
            "the platform fee cannot be funded from the merchant's available coin and approved credit",
        );
        return Err(if params.payment_no.is_some() {
            error.field("payment_no")
        } else {
            error
        });
    }
    let channels = fundable;

    let default = directory
        .merchants
        .get(merchant_no)
        .and_then(|m| m.notify_default.as_ref());
    let notify = config::resolve(&params.notify, default)?;

    let seq = payments.next_seq();
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day][hour][minute][second]"
        ))
        .unwrap_or_default();
    Ok(MerchantPayment {
        seq,
        // Digits only, as before; the 16 random digits (53 bits from the CSPRNG) make the
        // number unguessable: the control routes act on a payment by its number alone.
        order_no: format!("{stamp}{seq:07}{}", crate::ids::random_digits(16)),
        merchant_no: merchant_no.to_owned(),
        external_reference: params.external_reference.clone(),
        amount_minor: params.amount_minor,
        currency: params.currency.clone(),
        currency_decimals: decimals,
        description: params.description.clone(),
        fixed_payment_no: params.payment_no.clone(),
        status: Status::Pending,
        status_version: 0,
        timeline: Vec::new(),
        checkout_token: Secret(random_hex("ct_", 24)),
        return_url: params.return_url.clone(),
        created_at: now,
        expires_at: now.replace_nanosecond(0).unwrap_or(now) + Duration::seconds(params.expires_in),
        coin_rate: rate,
        methods: channels
            .into_iter()
            .map(|payment_no| CheckoutMethod {
                method_id: random_hex("m_", 6),
                payment_no,
            })
            .collect(),
        session: None,
        checkout_user: None,
        event_id: None,
        provider_trade_no: None,
        occurred_at: None,
        settlement_coin: None,
        notify,
        fee_reserved: 0,
    })
}
