//! HTTP side of merchant collection: the business endpoints (the channel directory, create,
//! query and the filtered list) and the routes of the domain, business and control.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::idempotency::{self, IdempotencyRecord, Replay};
use super::machine::{self, expire_on_read};
use super::rules::build_payment;
use super::store::{MerchantPayment, Status};
use super::validation::validate_create;
use super::views::{create_view, query_view};
use crate::auth::Caller;
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::limits::Bucket;
use crate::notifications::config::NotifyInput;
use crate::state::AppState;

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
    State(shared): State<Arc<AppState>>,
    caller: Caller,
) -> ApiResult<Json<Value>> {
    let merchant_no =
        caller.authorize_client(&shared, "merchant_payments.read", Bucket::MerchantRead)?;
    let db = shared.db();
    let merchant = db
        .directory
        .merchants
        .get(&merchant_no)
        .ok_or_else(payment_not_found)?;
    let items: Vec<Value> = db
        .directory
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
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody<Value>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let merchant_no =
        caller.authorize_client(&shared, "merchant_payments.create", Bucket::MerchantCreate)?;
    let request = validate_create(&body, shared.allow_loopback_notify)?;
    let now = shared.clock.now();
    let mut db = shared.db();
    if let NotifyInput::Explicit(target) = &request.params.notify {
        let is_client_secret = db
            .directory
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
        idempotency::check(db.payments.idempotency.get(&key), &request.params)?
    {
        let payment = db
            .payments
            .payments
            .get(&order_no)
            .ok_or_else(payment_not_found)?;
        return Ok((
            StatusCode::CREATED,
            Json(create_view(&shared.origin, payment)),
        ));
    }
    let db = &mut *db;
    let mut payment = build_payment(
        &db.directory,
        &mut db.payments,
        &merchant_no,
        &request.params,
        now,
    )?;
    let event = machine::change_status(
        &mut payment,
        Status::Pending,
        now,
        "created by the merchant".to_owned(),
    );
    db.notifications.record_event(event);
    let payments = &mut db.payments;
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

/// GET /openapi/v1/merchant-payments/{order_no}: the payment with its confirmation fields.
/// Reading a pending payment past its expiry with no channel session turns it expired.
pub async fn get_payment(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let merchant_no =
        caller.authorize_client(&shared, "merchant_payments.read", Bucket::MerchantRead)?;
    let now = shared.clock.now();
    let mut db = shared.db();
    let Db {
        payments,
        notifications,
        ..
    } = &mut *db;
    let payment = payments
        .owned_mut(&merchant_no, &order_no)
        .ok_or_else(payment_not_found)?;
    if let Some(event) = expire_on_read(payment, now) {
        notifications.record_event(event);
    }
    Ok(Json(query_view(&shared.origin, payment)))
}

/// GET /openapi/v1/merchant-payments: filter by `external_reference` and/or `order_no` (both
/// must match when both are given), `limit` with fallback to 20, newest first.
pub async fn list_payments(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult<Json<Value>> {
    let merchant_no =
        caller.authorize_client(&shared, "merchant_payments.read", Bucket::MerchantRead)?;
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
    let mut db = shared.db();
    let Db {
        payments,
        notifications,
        ..
    } = &mut *db;
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
            if let Some(event) = expire_on_read(payment, now) {
                notifications.record_event(event);
            }
            query_view(&shared.origin, payment)
        })
        .collect();
    Ok(Json(json!({ "items": items })))
}

/// Business routes under the API prefix.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/openapi/v1/merchant-payment-channels", get(list_channels))
        .route(
            "/openapi/v1/merchant-payments",
            post(create).get(list_payments),
        )
        .route("/openapi/v1/merchant-payments/{order_no}", get(get_payment))
}

/// Routes outside the API prefix: the hosted checkout pages.
pub fn root_routes() -> Router<Arc<AppState>> {
    crate::checkout::http::routes()
}

/// Sandbox controls under the control prefix (see the crate README).
pub fn control_routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/merchant-payments/{order_no}/checkout/pay",
            post(super::control::pay),
        )
        .route(
            "/merchant-payments/{order_no}/checkout/session",
            post(super::control::session),
        )
        .route(
            "/merchant-payments/{order_no}/checkout/unclear",
            post(super::control::unclear),
        )
        .route(
            "/merchant-payments/{order_no}/force",
            post(super::control::force),
        )
        .route(
            "/merchant-payments/{order_no}/expire",
            post(super::control::expire),
        )
        .route(
            "/merchants/{merchant_no}/notification-default",
            put(super::control::notification_default),
        )
        .route(
            "/merchants/{merchant_no}/anonymous-purchase",
            put(super::control::anonymous_purchase),
        )
        .route(
            "/merchants/{merchant_no}/funds",
            get(super::control::get_funds).put(super::control::set_funds),
        )
        .route(
            "/sweep",
            post(super::control::run_sweep).put(super::control::set_sweep),
        )
        .route("/rates", get(super::control::get_rates))
        .route("/rates/{currency}", put(super::control::set_rate))
        .route(
            "/channels/{payment_no}",
            put(super::control::update_channel),
        )
        .merge(crate::notifications::http::control_routes())
}
