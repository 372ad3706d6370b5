//! Catalog order and payment handlers (contract: "POST {base_url}/openapi/v1/orders",
//! "GET .../orders/{order_no}", "POST/GET .../orders/{order_no}/payment").
//!
//! Every handler authorizes first and reads the body after, so a caller without rights learns
//! nothing from validation errors. An order is visible only to the user who placed it through a
//! client of the same merchant; any other order answers exactly like a missing one.

use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::orders::{self, Amounts, NewOrder, Order, Trade, status, unmet};
use super::{PAY_PAGE_PREFIX, user_of};
use crate::auth::{Accepts, Caller};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::ids::random_hex;
use crate::state::{Shared, World};

/// POST /openapi/v1/orders: user token only. 400 for format errors, 422 for an unknown or
/// disabled product, an unusable channel, stock or purchase limit. Reserves stock.
pub async fn create_order(
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
pub async fn read_order(
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
pub async fn start_payment(
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
pub async fn payment_status(
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
