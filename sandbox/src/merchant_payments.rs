//! General merchant collection: the channel directory, creating, reading and listing merchant
//! payments, their state machine, and the sandbox controls that drive it (a buyer paying,
//! platform-side review, refund and chargeback).
//!
//! Layout: [`store`] (the stored payment and the store: data only), [`machine`] (the state
//! machine; it returns the status changes that the notifications domain records), [`rules`]
//! (building a payment, the sweep, the verification under review), [`validation`] (field
//! rules), [`idempotency`], [`fees`] (fee funding of merchant-own channels), [`views`] (JSON
//! shapes), and the HTTP side, the only files that see the application state: [`http`]
//! (business endpoints and the routes) and [`control`] (sandbox controls). The hosted checkout
//! is [`crate::checkout`].

pub mod control;
pub mod fees;
pub mod http;
pub mod idempotency;
pub mod machine;
pub mod rules;
pub mod store;
pub mod validation;
pub mod views;

pub use store::PaymentStore;

/// Marker of platform-coin channel transaction numbers: `provider_trade_no` is this marker,
/// a colon and the `order_no`.
pub const PLATFORM_COIN_TRADE_MARKER: &str = "PLATFORM_COIN";

/// Decimals of the platform coin (settlement amounts are eight-decimal fixed point).
pub const COIN_DECIMALS: u32 = 8;

/// Settlement in platform coin (eight-decimal fixed point) of `amount_minor` at `rate`
/// (eight-decimal coin per whole currency unit): integer arithmetic, rounded down;
/// `None` if it does not fit.
pub fn settlement(amount_minor: i64, currency_decimals: u32, rate: i64) -> Option<i64> {
    let scale = 10i128.checked_pow(currency_decimals)?;
    let coin = i128::from(amount_minor).checked_mul(i128::from(rate))? / scale;
    i64::try_from(coin).ok()
}
