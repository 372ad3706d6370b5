//! General merchant collection: the channel directory, creating, reading and listing merchant
//! payments, their state machine, and the sandbox controls that drive it (a buyer paying,
//! platform-side review, refund and chargeback).
//!
//! Layout: [`validation`] (field rules), [`idempotency`], [`machine`] (state transitions and
//! their notification events), [`fees`] (fee funding of merchant-own channels), [`model`] (stored payment and store), [`views`] (JSON shapes),
//! [`handlers`] (business endpoints), [`control`] (sandbox controls).

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post, put};

use crate::state::Shared;

pub mod control;
pub mod fees;
pub mod handlers;
pub mod idempotency;
pub mod machine;
pub mod model;
pub mod validation;
pub mod views;

pub use model::PaymentStore;

/// Marker of platform-coin channel transaction numbers: `provider_trade_no` is this marker,
/// a colon and the `order_no`.
pub const PLATFORM_COIN_TRADE_MARKER: &str = "PLATFORM_COIN";

/// Decimals of the platform coin (settlement amounts are eight-decimal fixed point).
pub const COIN_DECIMALS: u32 = 8;

/// The platform-coin rate of a currency now (seeded from [`crate::seed::COIN_RATES`], changed by
/// `PUT /_sandbox/rates/{currency}`); a payment saves it at creation.
pub fn coin_rate(world: &crate::state::World, currency: &str) -> Option<i64> {
    world.rates.get(currency).copied()
}

/// Settlement in platform coin (eight-decimal fixed point) of `amount_minor` at `rate`
/// (eight-decimal coin per whole currency unit): integer arithmetic, rounded down;
/// `None` if it does not fit.
pub fn settlement(amount_minor: i64, currency_decimals: u32, rate: i64) -> Option<i64> {
    let scale = 10i128.checked_pow(currency_decimals)?;
    let coin = i128::from(amount_minor).checked_mul(i128::from(rate))? / scale;
    i64::try_from(coin).ok()
}

/// Business routes under the API prefix.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/openapi/v1/merchant-payment-channels",
            get(handlers::list_channels),
        )
        .route(
            "/openapi/v1/merchant-payments",
            post(handlers::create).get(handlers::list_payments),
        )
        .route(
            "/openapi/v1/merchant-payments/{order_no}",
            get(handlers::get_payment),
        )
}

/// Routes outside the API prefix: the hosted checkout pages.
pub fn root_routes() -> Router<Arc<Shared>> {
    crate::checkout::routes()
}

/// Sandbox controls under the control prefix (see the crate README).
pub fn control_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/merchant-payments/{order_no}/checkout/pay",
            post(control::pay),
        )
        .route(
            "/merchant-payments/{order_no}/checkout/session",
            post(control::session),
        )
        .route(
            "/merchant-payments/{order_no}/checkout/unclear",
            post(control::unclear),
        )
        .route("/merchant-payments/{order_no}/force", post(control::force))
        .route(
            "/merchant-payments/{order_no}/expire",
            post(control::expire),
        )
        .route(
            "/merchants/{merchant_no}/notification-default",
            put(control::notification_default),
        )
        .route(
            "/merchants/{merchant_no}/anonymous-purchase",
            put(control::anonymous_purchase),
        )
        .route(
            "/merchants/{merchant_no}/funds",
            get(control::get_funds).put(control::set_funds),
        )
        .route("/sweep", post(control::run_sweep).put(control::set_sweep))
        .route("/rates", get(control::get_rates))
        .route("/rates/{currency}", put(control::set_rate))
        .route("/channels/{payment_no}", put(control::update_channel))
        .merge(crate::notifications::control_routes())
}
