//! HTTP side of the catalog: every handler (userinfo, merchant profile, products, orders and
//! their payment, the pay page and the trade controls) and the routes. The only catalog file
//! that sees the application state; the rules are in [`super::rules`].
//!
//! Every handler authorizes first and reads the body after, so a caller without rights learns
//! nothing from validation errors. An order is visible only to the user who placed it through a
//! client of the same merchant; any other order answers exactly like a missing one.

use std::sync::Arc;

use axum::extract::{FromRequest, Path, RawQuery, Request, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::PAY_PAGE_PREFIX;
use super::orders::{self, NewOrder, Order, Trade, status};
use super::products::{self, ProductQuery};
use super::rules::{self, cancel_trade, own_order, pay_trade, place_order, trade_order};
use crate::auth::{Accepts, Caller};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::seed;
use crate::state::AppState;

/// Routes under the API prefix.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/openapi/v1/merchant", get(merchant_profile))
        .route("/openapi/v1/products", get(list_products))
        .route("/openapi/v1/orders", post(create_order))
        .route("/openapi/v1/orders/{order_no}", get(read_order))
        .route(
            "/openapi/v1/orders/{order_no}/payment",
            post(start_payment).get(payment_status),
        )
}

/// Routes outside the API prefix: userinfo and the catalog payment page.
pub fn root_routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(seed::USERINFO_PATH, get(userinfo))
        .route(&format!("{PAY_PAGE_PREFIX}/{{trade_no}}"), get(pay_page))
        .route(
            &format!("{PAY_PAGE_PREFIX}/{{trade_no}}/pay"),
            post(page_pay),
        )
        .route(
            &format!("{PAY_PAGE_PREFIX}/{{trade_no}}/cancel"),
            post(page_cancel),
        )
}

/// Sandbox control routes for catalog payments (mounted under the control prefix).
pub fn control_routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/catalog/trades/{trade_no}/pay", post(control_pay))
        .route("/catalog/trades/{trade_no}/cancel", post(control_cancel))
}

/// The set-up of a buyer endpoint: [`Caller::authorize`] for a user token with `scope`, then
/// the caller's user (client tokens never carry user-only scopes, so a missing user is reached
/// only defensively). Returns the bound merchant's number and the user.
fn authorize_buyer<'c>(
    caller: &'c Caller,
    shared: &AppState,
    scope: &str,
) -> ApiResult<(String, &'c str)> {
    let merchant_no = caller.authorize(shared, Accepts::User, scope)?;
    let user = caller.user().ok_or_else(|| {
        ApiError::new(StatusCode::FORBIDDEN, "insufficient_scope")
            .describe("a user-authorized token is required")
    })?;
    Ok((merchant_no, user))
}

/// GET {userinfo_endpoint}: user token with `openid`. Returns `sub` (the user id), `name`,
/// `preferred_username` and `merchant_no` (the fields are not shown by the contract).
pub async fn userinfo(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
) -> ApiResult<Json<Value>> {
    let (merchant_no, user) = authorize_buyer(&caller, &shared, "openid")?;
    let mut name = user.to_owned();
    if let Some(first) = name.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    Ok(Json(json!({
        "sub": user,
        "name": name,
        "preferred_username": user,
        "merchant_no": merchant_no,
    })))
}

/// GET /openapi/v1/merchant: the bound merchant's profile (user or client token).
pub async fn merchant_profile(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::UserOrClient, "merchant.profile.read")?;
    let db = shared.db();
    let merchant = db
        .directory
        .merchants
        .get(&merchant_no)
        .ok_or_else(|| ApiError::new(StatusCode::FORBIDDEN, "merchant_inactive"))?;
    Ok(Json(merchant.profile.clone()))
}

/// GET /openapi/v1/products: enabled products of the bound merchant, with the contract's
/// fallbacks for `page` and `limit` (see [`ProductQuery::parse`]).
pub async fn list_products(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::UserOrClient, "products.read")?;
    let query = ProductQuery::parse(raw.as_deref());
    let now = shared.clock.now();
    let mut db = shared.db();
    // Stock of orders that lapsed unpaid is back on the shelf.
    db.catalog.advance_all(now);
    let (page, total) = products::list(&db.catalog.products, &merchant_no, &query);
    Ok(Json(json!({
        "list": page.iter().map(|p| p.to_json()).collect::<Vec<_>>(),
        "total": total,
        "page": query.page,
        "limit": query.limit,
    })))
}

/// POST /openapi/v1/orders: user token only. 400 for format errors, 422 for an unknown or
/// disabled product, an unusable channel, stock or purchase limit. Reserves stock.
pub async fn create_order(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    request: Request,
) -> ApiResult<impl IntoResponse> {
    let (merchant_no, user) = authorize_buyer(&caller, &shared, "orders.create")?;
    let JsonBody(body) = JsonBody::<Value>::from_request(request, &()).await?;
    let new = NewOrder::parse(&body)?;
    let now = shared.clock.now();
    let mut db = shared.db();
    db.catalog.advance_all(now);
    let db = &mut *db;
    let order = place_order(&mut db.catalog, &db.directory, &merchant_no, user, new, now)?;
    let order_no = order.order_no.clone();
    db.catalog.orders.insert(order_no.clone(), order);
    Ok((StatusCode::CREATED, Json(json!({ "order_no": order_no }))))
}

/// GET /openapi/v1/orders/{order_no}: the order object, for its own user and merchant only.
pub async fn read_order(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let (merchant_no, user) = authorize_buyer(&caller, &shared, "orders.read")?;
    let now = shared.clock.now();
    let mut db = shared.db();
    let order = own_order(&mut db.catalog, &order_no, &merchant_no, user, now)?;
    Ok(Json(order.to_json()))
}

/// POST /openapi/v1/orders/{order_no}/payment: starts (or continues) the payment session.
/// The platform-coin channel debits the buyer's wallet in this request (422
/// `insufficient_balance` when it cannot); card payments are completed through the pay page or
/// the trade controls. Returns `trade_no`, a relative `redirect` and `expire_time` (Unix s).
pub async fn start_payment(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    Path(order_no): Path<String>,
    request: Request,
) -> ApiResult<Json<Value>> {
    let (merchant_no, user) = authorize_buyer(&caller, &shared, "payments.create")?;
    let JsonBody(body) = JsonBody::<Value>::from_request(request, &()).await?;
    if !body.is_object() {
        return Err(ApiError::invalid_request("the body must be a JSON object"));
    }
    let payment_no = match body.get("payment_no") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return Err(ApiError::invalid_request("payment_no is required").field("payment_no"));
        }
        Some(_) => {
            return Err(
                ApiError::invalid_request("payment_no must be a string").field("payment_no")
            );
        }
    };
    let now = shared.clock.now();
    let mut db = shared.db();
    let db = &mut *db;
    let trade = rules::start_payment(
        &mut db.catalog,
        &mut db.directory,
        &order_no,
        &merchant_no,
        user,
        &payment_no,
        now,
    )?;
    Ok(Json(trade_json(&trade)))
}

fn trade_json(trade: &Trade) -> Value {
    json!({
        "trade_no": trade.trade_no,
        "redirect": format!("{PAY_PAGE_PREFIX}/{}", trade.trade_no),
        "expire_time": trade.expires_at.unix_timestamp(),
    })
}

/// GET /openapi/v1/orders/{order_no}/payment: `{"status": 0|1|2}`.
pub async fn payment_status(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let (merchant_no, user) = authorize_buyer(&caller, &shared, "payments.read")?;
    let now = shared.clock.now();
    let mut db = shared.db();
    let order = own_order(&mut db.catalog, &order_no, &merchant_no, user, now)?;
    Ok(Json(json!({ "status": order.payment_status() })))
}

/// POST /_sandbox/catalog/trades/{trade_no}/pay: the buyer completes the card payment.
/// Paying an already paid session is a no-op; a cancelled or expired one gives 409.
pub async fn control_pay(
    State(shared): State<Arc<AppState>>,
    Path(trade_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let now = shared.clock.now();
    let mut db = shared.db();
    pay_trade(&mut db.catalog, &trade_no, now).map(|order| Json(control_json(order)))
}

/// POST /_sandbox/catalog/trades/{trade_no}/cancel: the buyer cancels; the order is cancelled
/// and its stock released. Cancelling a paid order gives 409.
pub async fn control_cancel(
    State(shared): State<Arc<AppState>>,
    Path(trade_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let now = shared.clock.now();
    let mut db = shared.db();
    cancel_trade(&mut db.catalog, &trade_no, now).map(|order| Json(control_json(&order)))
}

fn control_json(order: &Order) -> Value {
    json!({
        "order_no": order.order_no,
        "trade_no": order.trade.as_ref().map(|t| t.trade_no.clone()),
        "status": order.status,
        "payment_status": order.payment_status(),
    })
}

/// POST /catalog-pay/{trade_no}/pay: the person on the pay page pays; back to the page.
pub async fn page_pay(
    State(shared): State<Arc<AppState>>,
    Path(trade_no): Path<String>,
) -> Response {
    let now = shared.clock.now();
    let outcome = pay_trade(&mut shared.db().catalog, &trade_no, now).map(drop);
    after_page_action(&trade_no, outcome)
}

/// POST /catalog-pay/{trade_no}/cancel: the person on the pay page cancels; back to the page.
pub async fn page_cancel(
    State(shared): State<Arc<AppState>>,
    Path(trade_no): Path<String>,
) -> Response {
    let now = shared.clock.now();
    let outcome = cancel_trade(&mut shared.db().catalog, &trade_no, now).map(drop);
    after_page_action(&trade_no, outcome)
}

fn after_page_action(trade_no: &str, outcome: ApiResult<()>) -> Response {
    match outcome {
        Ok(_) => Redirect::to(&format!("{PAY_PAGE_PREFIX}/{trade_no}")).into_response(),
        Err(error) => error.into_response(),
    }
}

/// GET /catalog-pay/{trade_no}: a plain page where a person completes or cancels a card
/// payment of a catalog order (the target of the relative `redirect`).
pub async fn pay_page(
    State(shared): State<Arc<AppState>>,
    Path(trade_no): Path<String>,
) -> ApiResult<Html<String>> {
    let now = shared.clock.now();
    let mut db = shared.db();
    let order = trade_order(&mut db.catalog, &trade_no, now)?;
    let amount = format_fixed(order.payment_pay_amount, order.payment_currency_decimals);
    let state = match order.payment_status() {
        0 => "Awaiting payment",
        1 => "Paid",
        _ => "Cancelled",
    };
    let expires = order
        .trade
        .as_ref()
        .map(|t| orders::format_time(t.expires_at))
        .unwrap_or_default();
    let actions = if order.status == status::AWAITING_PAYMENT {
        format!(
            "<form method=\"post\" action=\"{p}/{t}/pay\"><button>Pay</button></form>\
             <form method=\"post\" action=\"{p}/{t}/cancel\"><button>Cancel</button></form>",
            p = PAY_PAGE_PREFIX,
            t = html_escape(&trade_no),
        )
    } else {
        String::new()
    };
    Ok(Html(format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Pay order</title></head><body>\
         <h1>{title}</h1><p>Amount: {amount} {currency}</p><p>Channel: {channel}</p>\
         <p>Status: {state}</p><p>Pay before {expires} UTC</p>{actions}</body></html>",
        title = html_escape(&order.title),
        currency = html_escape(&order.payment_currency),
        channel = html_escape(&order.payment_name),
    )))
}

/// Formats an eight-decimal fixed-point amount with `decimals` digits (truncated).
fn format_fixed(amount: i64, decimals: u32) -> String {
    let whole = amount / products::UNIT;
    let frac = (amount % products::UNIT).abs();
    let digits = decimals.min(8) as usize;
    if digits == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:08}");
    format!("{whole}.{}", &frac[..digits])
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
