//! Catalog payment sessions driven from outside the API: the page the relative payment
//! `redirect` points to (a person pays or cancels there) and the sandbox trade controls that
//! tests use to do the same.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::orders::{self, Order, status};
use super::{PAY_PAGE_PREFIX, products};
use crate::error::{ApiError, ApiResult};
use crate::state::{Shared, World};

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
pub async fn control_pay(
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
pub async fn control_cancel(
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
pub async fn page_pay(State(shared): State<Arc<Shared>>, Path(trade_no): Path<String>) -> Response {
    let outcome = pay_trade(&shared, &trade_no);
    after_page_action(&trade_no, outcome)
}

/// POST /catalog-pay/{trade_no}/cancel: the person on the pay page cancels; back to the page.
pub async fn page_cancel(
    State(shared): State<Arc<Shared>>,
    Path(trade_no): Path<String>,
) -> Response {
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
pub async fn pay_page(
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
