//! Exact conversions between integer amounts and decimal text (no floating point anywhere).
//!
//! Contract rules: `amount_minor` is a positive integer, amount × 10^`currency_decimals`, at most
//! 9007199254740991; catalog amounts are eight-decimal fixed point; "use integer or decimal
//! arithmetic, never floating-point rounding".

use crate::money::{FixedPoint8, MinorAmount};

use super::error::{Result, invalid};
use super::ints::{long, unsigned};

/// Checks an `amount_minor` from the host language against the contract's range.
pub(crate) fn minor(field: &str, amount_minor: i64) -> Result<MinorAmount> {
    let raw = u64::try_from(amount_minor).map_err(|_| invalid(field, "must be positive"))?;
    MinorAmount::new(raw).map_err(|e| invalid(field, e.to_string()))
}

/// Parses a decimal amount (`"12.50"`) at the currency precision into `amount_minor` (`1250`),
/// exactly: more fractional digits than `currency_decimals`, zero, negative or above
/// 9007199254740991 is a `Validation` error.
#[uniffi::export]
pub fn parse_amount_minor(text: String, currency_decimals: i32) -> Result<i64> {
    let decimals = unsigned("currency_decimals", currency_decimals)?;
    let amount = MinorAmount::parse_decimal(&text, decimals)
        .map_err(|e| invalid("amount_minor", e.to_string()))?;
    Ok(long(amount.get()))
}

/// Formats `amount_minor` as decimal text with `currency_decimals` fractional digits
/// (`1250`, 2 → `"12.50"`).
#[uniffi::export]
pub fn format_amount_minor(amount_minor: i64, currency_decimals: i32) -> Result<String> {
    let decimals = unsigned("currency_decimals", currency_decimals)?;
    Ok(minor("amount_minor", amount_minor)?.to_decimal_string(decimals))
}

/// Parses decimal text into an eight-decimal fixed-point catalog amount (`"12.5"` →
/// `1250000000`), exactly.
#[uniffi::export]
pub fn parse_fixed_point8(text: String) -> Result<i64> {
    text.parse::<FixedPoint8>()
        .map(FixedPoint8::raw)
        .map_err(|e| invalid("amount", e.to_string()))
}

/// Formats an eight-decimal fixed-point catalog amount with `decimals` fractional digits (at
/// most 8); an error rather than rounding when significant digits would be cut off.
#[uniffi::export]
pub fn format_fixed_point8(raw: i64, decimals: i32) -> Result<String> {
    FixedPoint8::from_raw(raw)
        .to_decimal_string(unsigned("decimals", decimals)?)
        .map_err(|e| invalid("amount", e.to_string()))
}

/// Formats `amount_minor` for a person: decimal text at `currency_decimals` and the currency,
/// `1999`, `"USD"`, 2 → `"19.99 USD"` (the core's `Money` display; exact, no floating point).
#[uniffi::export]
pub fn format_money(amount_minor: i64, currency: String, currency_decimals: i32) -> Result<String> {
    let decimals = unsigned("currency_decimals", currency_decimals)?;
    minor("amount_minor", amount_minor)?
        .with_currency(currency, decimals)
        .map(|m| m.to_string())
        .map_err(|e| invalid("currency_decimals", e.to_string()))
}
