//! Merchant profile, products, userinfo, catalog orders and catalog payments (contract:
//! "GET /openapi/v1/merchant", "GET /openapi/v1/products", "POST /openapi/v1/orders" and the
//! order and payment endpoints after it, and "GET /oauth/userinfo").
//!
//! Every handler authorizes first (token subject, scope, active merchant; see
//! [`crate::auth::Caller::authorize`]) and then reads the body, so a caller without rights
//! learns nothing from validation errors. Orders are visible only to the user who placed them
//! through a client of the same merchant; any other order answers exactly like a missing one.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{FromRequest, Path, RawQuery, Request, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::auth::{Accepts, Caller};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::ids::random_hex;
use crate::seed;
use crate::state::{Shared, World};

pub mod orders;
pub mod products;

use orders::{Amounts, NewOrder, Order, Trade, status, unmet};
use products::{Product, ProductQuery};

/// Path (under the origin) of the page a catalog payment `redirect` points to; the redirect is
/// relative, as the contract allows, and resolves against the sandbox origin.
pub const PAY_PAGE_PREFIX: &str = "/catalog-pay";

/// Catalogue products, catalog orders and catalog payment sessions.
#[derive(Debug, Default)]
pub struct CatalogStore {
    /// Products of every merchant, in catalogue order.
    pub products: Vec<Product>,
    /// Orders by order number.
    pub orders: BTreeMap<String, Order>,
    /// Order number of each payment session.
    pub trades: BTreeMap<String, String>,
    next_order: u64,
}

impl CatalogStore {
    /// The seeded catalogue (see [`products::seeded`]) and no orders.
    pub fn seeded() -> Self {
        CatalogStore {
            products: products::seeded(),
            ..CatalogStore::default()
        }
    }

    /// The order, brought up to date with the clock (cancelled after its payment window,
    /// completed after fulfilment). Stock of a cancelled order goes back to the product.
    pub fn order_mut(&mut self, order_no: &str, now: OffsetDateTime) -> Option<&mut Order> {
        let order = self.orders.get_mut(order_no)?;
        if let Some(units) = order.advance(now)
            && let Some(product) = self.products.iter_mut().find(|p| p.gd_no == order.gd_no)
        {
            product.in_stock += units;
        }
        self.orders.get_mut(order_no)
    }

    /// Brings every order up to date with the clock.
    pub fn advance_all(&mut self, now: OffsetDateTime) {
        let numbers: Vec<String> = self.orders.keys().cloned().collect();
        for number in numbers {
            self.order_mut(&number, now);
        }
    }

    fn next_order_no(&mut self, now: OffsetDateTime) -> String {
        self.next_order += 1;
        format!(
            "CO{:04}{:02}{:02}{:06}",
            now.year(),
            u8::from(now.month()),
            now.day(),
            self.next_order
        )
    }
}

/// Routes under the API prefix.
pub fn routes() -> Router<Arc<Shared>> {
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
pub fn root_routes() -> Router<Arc<Shared>> {
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
pub fn control_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/catalog/trades/{trade_no}/pay", post(control_pay))
        .route("/catalog/trades/{trade_no}/cancel", post(control_cancel))
}

/// GET {userinfo_endpoint}: user token with `openid`. Returns `sub` (the user id), `name`,
/// `preferred_username` and `merchant_no` (the fields are not shown by the contract).
async fn userinfo(State(shared): State<Arc<Shared>>, caller: Caller) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::User, "openid")?;
    let user = user_of(&caller)?;
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

/// The user of a user-endpoint caller (client tokens never carry user-only scopes, so this is
/// reached only defensively).
fn user_of(caller: &Caller) -> ApiResult<&str> {
    caller.user().ok_or_else(|| {
        ApiError::new(StatusCode::FORBIDDEN, "insufficient_scope")
            .describe("a user-authorized token is required")
    })
}

/// GET /openapi/v1/merchant: the bound merchant's profile (user or client token).
async fn merchant_profile(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::UserOrClient, "merchant.profile.read")?;
    let world = shared.world();
    let merchant = world
        .merchants
        .get(&merchant_no)
        .ok_or_else(|| ApiError::new(StatusCode::FORBIDDEN, "merchant_inactive"))?;
    Ok(Json(merchant.profile.clone()))
}

/// GET /openapi/v1/products: enabled products of the bound merchant, with the contract's
/// fallbacks for `page` and `limit` (see [`ProductQuery::parse`]).
async fn list_products(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::UserOrClient, "products.read")?;
    let query = ProductQuery::parse(raw.as_deref());
    let now = shared.clock.now();
    let mut world = shared.world();
    // Stock of orders that lapsed unpaid is back on the shelf.
    world.catalog.advance_all(now);
    let (page, total) = products::list(&world.catalog.products, &merchant_no, &query);
    Ok(Json(json!({
        "list": page.iter().map(|p| p.to_json()).collect::<Vec<_>>(),
        "total": total,
        "page": query.page,
        "limit": query.limit,
    })))
}

/// POST /openapi/v1/orders: user token only. 400 for format errors, 422 for an unknown or
/// disabled product, an unusable channel, stock or purchase limit. Reserves stock.
async fn create_order(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    request: Request,
) -> ApiResult<impl IntoResponse> {
    let merchant_no = caller.authorize(&shared, Accepts::User, "orders.create")?;
    let user = user_of(&caller)?.to_owned();
    let JsonBody(body) = JsonBody::<Value>::from_request(request, &()).await?;
    let new = NewOrder::parse(&body)?;
    let now = shared.clock.now();
    let mut world = shared.world();
    world.catalog.advance_all(now);
    let order = place_order(&mut world, &merchant_no, &user, new, now)?;
    let order_no = order.order_no.clone();
    world.catalog.orders.insert(order_no.clone(), order);
    Ok((StatusCode::CREATED, Json(json!({ "order_no": order_no }))))
}

fn place_order(
    world: &mut World,
    merchant_no: &str,
    user: &str,
    new: NewOrder,
    now: OffsetDateTime,
) -> ApiResult<Order> {
    let product = world
        .catalog
        .products
        .iter()
        .find(|p| p.gd_no == new.gd_no && p.merchant_no == merchant_no && p.enabled)
        .cloned()
        .ok_or_else(|| {
            unmet(
                "product_unavailable",
                "no enabled product with this gd_no for the bound merchant",
            )
        })?;
    orders::check_inputs(&product, &new.other_ipu)?;
    let channel = world
        .channels
        .get(&new.payment_no)
        .filter(|c| orders::channel_allows(c, &product, user))
        .cloned()
        .ok_or_else(|| {
            unmet(
                "channel_unavailable",
                "payment_no is not a channel usable for this product",
            )
        })?;
    if product.buy_limit_num > 0 && new.quantity > product.buy_limit_num {
        return Err(unmet(
            "purchase_limit_exceeded",
            format!("at most {} per order", product.buy_limit_num),
        ));
    }
    if new.quantity > product.in_stock {
        return Err(unmet("insufficient_stock", "not enough units in stock"));
    }
    let amounts = Amounts::compute(&product, new.quantity, &channel)?;
    let payment_decimals = world
        .currencies
        .get(&channel.currency)
        .copied()
        .unwrap_or(2);
    let order_no = world.catalog.next_order_no(now);
    if let Some(stock) = world
        .catalog
        .products
        .iter_mut()
        .find(|p| p.gd_no == product.gd_no)
    {
        stock.in_stock -= new.quantity;
    }
    Ok(Order {
        order_no,
        merchant_no: merchant_no.to_owned(),
        user_id: user.to_owned(),
        gd_no: product.gd_no.clone(),
        title: product.gd_name.clone(),
        quantity: new.quantity,
        status: status::AWAITING_PAYMENT,
        currency: product.currency.clone(),
        currency_decimals: product.currency_decimals,
        total_amount: amounts.total,
        discount_amount: amounts.discount,
        handling_amount: amounts.handling,
        pay_amount: amounts.total - amounts.discount + amounts.handling,
        payment_currency: channel.currency.clone(),
        payment_currency_decimals: payment_decimals,
        payment_subtotal: amounts.payment_subtotal,
        payment_handling_amount: amounts.payment_handling,
        payment_pay_amount: amounts.payment_subtotal + amounts.payment_handling,
        payment_no: channel.payment_no.clone(),
        payment_name: channel.name.clone(),
        provider: channel.provider.clone(),
        other_ipu: new.other_ipu,
        trade: None,
        paid_at: None,
        created_at: now,
        updated_at: now,
    })
}

/// 404 for an order that is missing or not of this user and merchant (indistinguishable).
fn order_not_found() -> ApiError {
    ApiError::not_found("order_not_found").describe("no such order")
}

/// The caller's own order, up to date with the clock.
fn own_order<'w>(
    world: &'w mut World,
    order_no: &str,
    merchant_no: &str,
    user: &str,
    now: OffsetDateTime,
) -> ApiResult<&'w mut Order> {
    world
        .catalog
        .order_mut(order_no, now)
        .filter(|o| o.user_id == user && o.merchant_no == merchant_no)
        .ok_or_else(order_not_found)
}

/// GET /openapi/v1/orders/{order_no}: the order object, for its own user and merchant only.
async fn read_order(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::User, "orders.read")?;
    let user = user_of(&caller)?;
    let now = shared.clock.now();
    let mut world = shared.world();
    let order = own_order(&mut world, &order_no, &merchant_no, user, now)?;
    Ok(Json(order.to_json()))
}

/// POST /openapi/v1/orders/{order_no}/payment: starts (or continues) the payment session.
/// The platform-coin channel debits the buyer's wallet in this request (422
/// `insufficient_balance` when it cannot); card payments are completed through the pay page or
/// the trade controls. Returns `trade_no`, a relative `redirect` and `expire_time` (Unix s).
async fn start_payment(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(order_no): Path<String>,
    request: Request,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::User, "payments.create")?;
    let user = user_of(&caller)?.to_owned();
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
    let mut world = shared.world();
    let order = own_order(&mut world, &order_no, &merchant_no, &user, now)?.clone();
    if order.status != status::AWAITING_PAYMENT {
        return Err(unmet(
            "order_not_payable",
            "the order is not awaiting payment",
        ));
    }
    let channel_usable = world.channels.get(&payment_no).is_some_and(|c| {
        c.payment_no == order.payment_no
            && c.available_to_merchant(&merchant_no)
            && c.payable_by(Some(&user))
    });
    if !channel_usable {
        return Err(unmet(
            "channel_unavailable",
            "payment_no must be the order's channel and still available",
        ));
    }
    if let Some(trade) = &order.trade {
        return Ok(Json(trade_json(trade)));
    }
    if order.provider == "platform-coin" {
        let wallet = world
            .users
            .get_mut(&user)
            .ok_or_else(|| unmet("insufficient_balance", "no wallet"))?;
        if wallet.wallet < order.payment_pay_amount {
            return Err(unmet(
                "insufficient_balance",
                "the platform-coin wallet cannot pay this order",
            ));
        }
        wallet.wallet -= order.payment_pay_amount;
    }
    let trade = Trade {
        trade_no: random_hex("CT", 10),
        expires_at: order.payment_deadline(),
    };
    world
        .catalog
        .trades
        .insert(trade.trade_no.clone(), order.order_no.clone());
    let stored = world
        .catalog
        .orders
        .get_mut(&order.order_no)
        .ok_or_else(order_not_found)?;
    stored.trade = Some(trade.clone());
    stored.updated_at = now;
    if order.provider == "platform-coin" {
        stored.mark_paid(now);
    }
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
async fn payment_status(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::User, "payments.read")?;
    let user = user_of(&caller)?;
    let now = shared.clock.now();
    let mut world = shared.world();
    let order = own_order(&mut world, &order_no, &merchant_no, user, now)?;
    Ok(Json(json!({ "status": order.payment_status() })))
}

fn trade_not_found() -> ApiError {
    ApiError::not_found("trade_not_found").describe("no such catalog payment session")
}

/// The order of a payment session, up to date with the clock.
fn trade_order<'w>(
    world: &'w mut World,
    trade_no: &str,
    now: OffsetDateTime,
) -> ApiResult<&'w mut Order> {
    let order_no = world
        .catalog
        .trades
        .get(trade_no)
        .cloned()
        .ok_or_else(trade_not_found)?;
    world
        .catalog
        .order_mut(&order_no, now)
        .ok_or_else(trade_not_found)
}

/// POST /_sandbox/catalog/trades/{trade_no}/pay: the buyer completes the card payment.
/// Paying an already paid session is a no-op; a cancelled or expired one gives 409.
async fn control_pay(
    State(shared): State<Arc<Shared>>,
    Path(trade_no): Path<String>,
) -> ApiResult<Json<Value>> {
    pay_trade(&shared, &trade_no).map(Json)
}

fn pay_trade(shared: &Shared, trade_no: &str) -> ApiResult<Value> {
    let now = shared.clock.now();
    let mut world = shared.world();
    let order = trade_order(&mut world, trade_no, now)?;
    if order.status == status::AWAITING_PAYMENT {
        order.mark_paid(now);
    } else if order.status == status::CANCELLED {
        return Err(ApiError::new(StatusCode::CONFLICT, "trade_not_payable")
            .describe("the payment session was cancelled or expired"));
    }
    Ok(control_json(order))
}

/// POST /_sandbox/catalog/trades/{trade_no}/cancel: the buyer cancels; the order is cancelled
/// and its stock released. Cancelling a paid order gives 409.
async fn control_cancel(
    State(shared): State<Arc<Shared>>,
    Path(trade_no): Path<String>,
) -> ApiResult<Json<Value>> {
    cancel_trade(&shared, &trade_no).map(Json)
}

fn cancel_trade(shared: &Shared, trade_no: &str) -> ApiResult<Value> {
    let now = shared.clock.now();
    let mut world = shared.world();
    let order = trade_order(&mut world, trade_no, now)?;
    match order.status {
        status::AWAITING_PAYMENT => {
            order.status = status::CANCELLED;
            order.updated_at = now;
            let (gd_no, units) = (order.gd_no.clone(), order.quantity);
            let json = control_json(order);
            if let Some(product) = world.catalog.products.iter_mut().find(|p| p.gd_no == gd_no) {
                product.in_stock += units;
            }
            Ok(json)
        }
        status::CANCELLED => Ok(control_json(order)),
        _ => Err(ApiError::new(StatusCode::CONFLICT, "trade_not_cancellable")
            .describe("the order is already paid")),
    }
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
async fn page_pay(State(shared): State<Arc<Shared>>, Path(trade_no): Path<String>) -> Response {
    let outcome = pay_trade(&shared, &trade_no);
    after_page_action(&trade_no, outcome)
}

/// POST /catalog-pay/{trade_no}/cancel: the person on the pay page cancels; back to the page.
async fn page_cancel(State(shared): State<Arc<Shared>>, Path(trade_no): Path<String>) -> Response {
    let outcome = cancel_trade(&shared, &trade_no);
    after_page_action(&trade_no, outcome)
}

fn after_page_action(trade_no: &str, outcome: ApiResult<Value>) -> Response {
    match outcome {
        Ok(_) => Redirect::to(&format!("{PAY_PAGE_PREFIX}/{trade_no}")).into_response(),
        Err(error) => error.into_response(),
    }
}

/// GET /catalog-pay/{trade_no}: a plain page where a person completes or cancels a card
/// payment of a catalog order (the target of the relative `redirect`).
async fn pay_page(
    State(shared): State<Arc<Shared>>,
    Path(trade_no): Path<String>,
) -> ApiResult<Html<String>> {
    let now = shared.clock.now();
    let mut world = shared.world();
    let order = trade_order(&mut world, &trade_no, now)?;
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
