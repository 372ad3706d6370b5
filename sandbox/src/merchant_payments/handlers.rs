//! Business endpoints of merchant collection: the channel directory, create, query and the
//! filtered list.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use super::idempotency::{self, IdempotencyRecord, Replay};
use super::machine::{self, expire_on_read};
use super::model::{CheckoutMethod, MerchantPayment, Secret, Status};
use super::validation::{CreateParams, validate_create};
use super::views::{create_view, query_view};
use super::{COIN_DECIMALS, coin_rate, fees};
use crate::auth::{Accepts, Caller};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::ids::random_hex;
use crate::limits::{self, Bucket};
use crate::notifications::config::{self, NotifyInput};
use crate::state::{Shared, World};

/// Default and fallback of every `limit` query parameter.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest `limit`.
pub const MAX_LIMIT: usize = 100;

/// `limit`: default 20, range 1 to 100; invalid or out of range falls back to 20.
pub fn effective_limit(raw: Option<&str>) -> usize {
    raw.and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|n| (1..=MAX_LIMIT).contains(n))
        .unwrap_or(DEFAULT_LIMIT)
}

/// 404 `payment_not_found`: unknown, or another merchant's (indistinguishable).
pub fn payment_not_found() -> ApiError {
    ApiError::not_found("payment_not_found").describe("no such merchant payment")
}

/// GET /openapi/v1/merchant-payment-channels: channels usable by the caller's merchant
/// (ownership, enabled state, merchant part of the debug assignment), with `login_required`
/// and `test_mode` as the contract defines them.
pub async fn list_channels(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::ClientOnly, "merchant_payments.read")?;
    limits::check(&shared, Bucket::MerchantRead, &caller.client_id)?;
    let world = shared.world();
    let merchant = world
        .merchants
        .get(&merchant_no)
        .ok_or_else(payment_not_found)?;
    let items: Vec<Value> = world
        .channels
        .values()
        .filter(|c| c.available_to_merchant(&merchant_no))
        .map(|c| {
            json!({
                "payment_no": c.payment_no,
                "name": c.name,
                "provider": c.provider,
                "owner": c.owner,
                "currency": c.currency,
                "login_required": c.login_required(merchant),
                "test_mode": c.test_mode,
            })
        })
        .collect();
    Ok(Json(json!({ "items": items })))
}

/// POST /openapi/v1/merchant-payments: validates every field, applies idempotency on the
/// normalized parameters, checks currency and channels, fixes the notification configuration,
/// and creates a pending payment (with its `pending` notification when notifications apply).
pub async fn create(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    JsonBody(body): JsonBody<Value>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let merchant_no = caller.authorize(&shared, Accepts::ClientOnly, "merchant_payments.create")?;
    limits::check(&shared, Bucket::MerchantCreate, &caller.client_id)?;
    let request = validate_create(&body, shared.allow_loopback_notify)?;
    let now = shared.clock.now();
    let mut world = shared.world();
    if let NotifyInput::Explicit(target) = &request.params.notify {
        let is_client_secret = world
            .clients
            .get(&caller.client_id)
            .and_then(|c| c.secret.as_deref())
            .is_some_and(|s| s == target.secret.expose());
        if is_client_secret {
            return Err(
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_notify_secret")
                    .describe(
                        "notify_secret must be an independent secret, not the OAuth client secret",
                    )
                    .field("notify_secret"),
            );
        }
    }
    let key = (merchant_no.clone(), request.idempotency_key.clone());
    if let Replay::Same(order_no) =
        idempotency::check(world.payments.idempotency.get(&key), &request.params)?
    {
        let payment = world
            .payments
            .payments
            .get(&order_no)
            .ok_or_else(payment_not_found)?;
        return Ok((
            StatusCode::CREATED,
            Json(create_view(&shared.origin, payment)),
        ));
    }
    let mut payment = build_payment(&mut world, &merchant_no, &request.params, now)?;
    let World {
        payments,
        notifications,
        ..
    } = &mut *world;
    machine::change_status(
        &mut payment,
        notifications,
        Status::Pending,
        now,
        "created by the merchant".to_owned(),
    );
    let view = create_view(&shared.origin, &payment);
    payments.by_token.insert(
        payment.checkout_token.expose().to_owned(),
        payment.order_no.clone(),
    );
    payments.idempotency.insert(
        key,
        IdempotencyRecord {
            order_no: payment.order_no.clone(),
            params: request.params,
        },
    );
    payments.payments.insert(payment.order_no.clone(), payment);
    Ok((StatusCode::CREATED, Json(view)))
}

fn channel_unavailable(description: impl Into<String>) -> ApiError {
    ApiError::unprocessable("channel_unavailable", description)
}

/// The business checks of a new payment (currency, precision, channels, rate, notification
/// configuration) and the payment they produce, not yet stored.
fn build_payment(
    world: &mut World,
    merchant_no: &str,
    params: &CreateParams,
    now: OffsetDateTime,
) -> ApiResult<MerchantPayment> {
    let decimals = *world.currencies.get(&params.currency).ok_or_else(|| {
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
    let rate = Some(coin_rate(world, &params.currency).ok_or_else(|| {
        ApiError::unprocessable(
            "currency_rate_unavailable",
            format!("no platform rate is available for {}", params.currency),
        )
        .field("currency")
    })?);
    if let Some(rate) = rate
        && super::settlement(params.amount_minor, decimals, rate).is_none()
    {
        return Err(ApiError::invalid_request(
            "amount_minor is too large to settle in platform coin",
        )
        .field("amount_minor"));
    }

    let supports = |channel: &crate::state::Channel| -> ApiResult<bool> {
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
            let channel = world
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
            for channel in world.channels.values() {
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
        .and_then(|r| super::settlement(params.amount_minor, decimals, r))
        .map(fees::fee_of);
    let mut unfunded = false;
    let mut fundable = Vec::with_capacity(channels.len());
    for payment_no in channels {
        let merchant_owned = world
            .channels
            .get(&payment_no)
            .is_some_and(|c| c.owner == "merchant");
        let funded = !merchant_owned
            || fee.is_some_and(|f| world.payments.fees.check(merchant_no, f).is_ok());
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

    let default = world
        .merchants
        .get(merchant_no)
        .and_then(|m| m.notify_default.as_ref());
    let notify = config::resolve(&params.notify, default)?;

    let seq = world.payments.next_seq();
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day][hour][minute][second]"
        ))
        .unwrap_or_default();
    Ok(MerchantPayment {
        seq,
        order_no: format!("{stamp}{seq:07}"),
        merchant_no: merchant_no.to_owned(),
        external_reference: params.external_reference.clone(),
        amount_minor: params.amount_minor,
        currency: params.currency.clone(),
        currency_decimals: decimals,
        description: params.description.clone(),
        fixed_payment_no: params.payment_no.clone(),
        status: Status::Pending,
        status_version: 0,
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
        timeline: Vec::new(),
    })
}

/// GET /openapi/v1/merchant-payments/{order_no}: the payment with its confirmation fields.
/// Reading a pending payment past its expiry with no channel session turns it expired.
pub async fn get_payment(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::ClientOnly, "merchant_payments.read")?;
    limits::check(&shared, Bucket::MerchantRead, &caller.client_id)?;
    let now = shared.clock.now();
    let mut world = shared.world();
    let World {
        payments,
        notifications,
        ..
    } = &mut *world;
    let payment = payments
        .owned_mut(&merchant_no, &order_no)
        .ok_or_else(payment_not_found)?;
    expire_on_read(payment, notifications, now);
    Ok(Json(query_view(&shared.origin, payment)))
}

/// GET /openapi/v1/merchant-payments: filter by `external_reference` and/or `order_no` (both
/// must match when both are given), `limit` with fallback to 20, newest first.
pub async fn list_payments(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::ClientOnly, "merchant_payments.read")?;
    limits::check(&shared, Bucket::MerchantRead, &caller.client_id)?;
    let Query(query) =
        query.map_err(|_| ApiError::invalid_request("the query string is malformed"))?;
    let filter = |name: &str| query.get(name).filter(|v| !v.is_empty()).cloned();
    let external_reference = filter("external_reference");
    let order_no = filter("order_no");
    if external_reference.is_none() && order_no.is_none() {
        return Err(ApiError::invalid_request(
            "at least one of external_reference and order_no is required",
        ));
    }
    let limit = effective_limit(query.get("limit").map(String::as_str));
    let now = shared.clock.now();
    let mut world = shared.world();
    let World {
        payments,
        notifications,
        ..
    } = &mut *world;
    let mut matching: Vec<&mut MerchantPayment> = payments
        .payments
        .values_mut()
        .filter(|p| p.merchant_no == merchant_no)
        .filter(|p| order_no.as_ref().is_none_or(|o| *o == p.order_no))
        .filter(|p| {
            external_reference
                .as_ref()
                .is_none_or(|r| *r == p.external_reference)
        })
        .collect();
    matching.sort_by_key(|p| std::cmp::Reverse(p.seq));
    let items: Vec<Value> = matching
        .into_iter()
        .take(limit)
        .map(|payment| {
            expire_on_read(payment, notifications, now);
            query_view(&shared.origin, payment)
        })
        .collect();
    Ok(Json(json!({ "items": items })))
}
