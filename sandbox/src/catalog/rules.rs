//! Rules of catalog orders and their payment sessions. Each function takes only the stores it
//! touches; the handlers in [`super::http`] take the lock and call them.

use axum::http::StatusCode;
use time::OffsetDateTime;

use super::orders::{self, Amounts, NewOrder, Order, Trade, status, unmet};
use super::store::CatalogStore;
use crate::directory::rules::{DebitError, debit_wallet};
use crate::directory::store::DirectoryStore;
use crate::error::{ApiError, ApiResult};
use crate::ids::random_hex;

/// Checks a new order against the catalogue and the channel directory, reserves its stock and
/// returns it (not yet stored).
pub fn place_order(
    catalog: &mut CatalogStore,
    directory: &DirectoryStore,
    merchant_no: &str,
    user: &str,
    new: NewOrder,
    now: OffsetDateTime,
) -> ApiResult<Order> {
    let product = catalog
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
    let channel = directory
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
    let payment_decimals = directory
        .currencies
        .get(&channel.currency)
        .copied()
        .unwrap_or(2);
    let order_no = catalog.next_order_no(now);
    if let Some(stock) = catalog
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
pub fn order_not_found() -> ApiError {
    ApiError::not_found("order_not_found").describe("no such order")
}

/// The caller's own order, up to date with the clock.
pub fn own_order<'w>(
    catalog: &'w mut CatalogStore,
    order_no: &str,
    merchant_no: &str,
    user: &str,
    now: OffsetDateTime,
) -> ApiResult<&'w mut Order> {
    catalog
        .order_mut(order_no, now)
        .filter(|o| o.user_id == user && o.merchant_no == merchant_no)
        .ok_or_else(order_not_found)
}

/// Starts (or continues) the payment session of the caller's own order through `payment_no`
/// (which must be the order's channel and still available). The platform-coin channel debits
/// the buyer's wallet ([`debit_wallet`]) and pays the order at once (422
/// `insufficient_balance` when it cannot); a card payment is completed later. Returns the
/// session.
pub fn start_payment(
    catalog: &mut CatalogStore,
    directory: &mut DirectoryStore,
    order_no: &str,
    merchant_no: &str,
    user: &str,
    payment_no: &str,
    now: OffsetDateTime,
) -> ApiResult<Trade> {
    let order = own_order(catalog, order_no, merchant_no, user, now)?.clone();
    if order.status != status::AWAITING_PAYMENT {
        return Err(unmet(
            "order_not_payable",
            "the order is not awaiting payment",
        ));
    }
    let channel_usable = directory.channels.get(payment_no).is_some_and(|c| {
        c.payment_no == order.payment_no
            && c.available_to_merchant(merchant_no)
            && c.payable_by(Some(user))
    });
    if !channel_usable {
        return Err(unmet(
            "channel_unavailable",
            "payment_no must be the order's channel and still available",
        ));
    }
    if let Some(trade) = &order.trade {
        return Ok(trade.clone());
    }
    if order.provider == "platform-coin" {
        debit_wallet(&mut directory.users, user, order.payment_pay_amount).map_err(
            |e| match e {
                DebitError::NoWallet => unmet("insufficient_balance", "no wallet"),
                DebitError::Insufficient { .. } => unmet(
                    "insufficient_balance",
                    "the platform-coin wallet cannot pay this order",
                ),
            },
        )?;
    }
    let trade = Trade {
        trade_no: random_hex("CT", 10),
        expires_at: order.payment_deadline(),
    };
    catalog
        .trades
        .insert(trade.trade_no.clone(), order.order_no.clone());
    let stored = catalog
        .orders
        .get_mut(&order.order_no)
        .ok_or_else(order_not_found)?;
    stored.trade = Some(trade.clone());
    stored.updated_at = now;
    if order.provider == "platform-coin" {
        stored.mark_paid(now);
    }
    Ok(trade)
}

fn trade_not_found() -> ApiError {
    ApiError::not_found("trade_not_found").describe("no such catalog payment session")
}

/// The order of a payment session, up to date with the clock.
pub fn trade_order<'w>(
    catalog: &'w mut CatalogStore,
    trade_no: &str,
    now: OffsetDateTime,
) -> ApiResult<&'w mut Order> {
    let order_no = catalog
        .trades
        .get(trade_no)
        .cloned()
        .ok_or_else(trade_not_found)?;
    catalog
        .order_mut(&order_no, now)
        .ok_or_else(trade_not_found)
}

/// The buyer completes the card payment of a session. Paying an already paid session is a
/// no-op; a cancelled or expired one gives 409 `trade_not_payable`. Returns the order.
pub fn pay_trade<'c>(
    catalog: &'c mut CatalogStore,
    trade_no: &str,
    now: OffsetDateTime,
) -> ApiResult<&'c Order> {
    let order = trade_order(catalog, trade_no, now)?;
    if order.status == status::AWAITING_PAYMENT {
        order.mark_paid(now);
    } else if order.status == status::CANCELLED {
        return Err(ApiError::new(StatusCode::CONFLICT, "trade_not_payable")
            .describe("the payment session was cancelled or expired"));
    }
    Ok(order)
}

/// The buyer cancels a session: the order is cancelled and its stock released (cancelling a
/// cancelled order changes nothing); a paid order gives 409 `trade_not_cancellable`. Returns
/// the order as it is after.
pub fn cancel_trade(
    catalog: &mut CatalogStore,
    trade_no: &str,
    now: OffsetDateTime,
) -> ApiResult<Order> {
    let order = trade_order(catalog, trade_no, now)?;
    match order.status {
        status::AWAITING_PAYMENT => {
            order.status = status::CANCELLED;
            order.updated_at = now;
            let (gd_no, units) = (order.gd_no.clone(), order.quantity);
            let after = order.clone();
            if let Some(product) = catalog.products.iter_mut().find(|p| p.gd_no == gd_no) {
                product.in_stock += units;
            }
            Ok(after)
        }
        status::CANCELLED => Ok(order.clone()),
        _ => Err(ApiError::new(StatusCode::CONFLICT, "trade_not_cancellable")
            .describe("the order is already paid")),
    }
}
