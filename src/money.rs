//! Exact money types: integers end to end, never floating point.
//!
//! Contract rules: merchant-payment amounts are `amount_minor`, "a positive integer equal to the
//! amount multiplied by 10 to the power of the currency precision"; catalog amounts "are integers
//! in eight-decimal fixed point (value multiplied by 10^8)"; "use integer or decimal arithmetic,
//! never floating-point rounding".
//!
//! ```
//! use storefront::{FixedPoint8, MinorAmount};
//! let usd = MinorAmount::parse_decimal("12.50", 2)?;      // currency_decimals 2
//! assert_eq!(usd.get(), 1250);
//! assert_eq!(usd.to_decimal_string(2), "12.50");
//! assert!(MinorAmount::parse_decimal("12.505", 2).is_err()); // no silent rounding
//! let price: FixedPoint8 = "12.5".parse()?;                 // catalog: value x 10^8
//! assert_eq!(price.raw(), 1_250_000_000);
//! # Ok::<(), storefront::MoneyError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a decimal string or integer is not a valid amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    /// The text is not a plain decimal number (`123`, `12.50`, `-0.5` where allowed).
    #[error("not a decimal number")]
    Syntax,
    /// The text has more fractional digits than the scale allows (no rounding is done).
    #[error("more than {scale} fractional digits")]
    TooManyDecimals {
        /// Scale that was requested.
        scale: u32,
    },
    /// The value does not fit the type's range.
    #[error("amount out of range")]
    OutOfRange,
    /// A merchant-payment amount must be positive.
    #[error("amount must be positive")]
    NotPositive,
    /// The scale (currency precision) is larger than [`MAX_SCALE`] (18), or larger than 8 where
    /// an eight-decimal catalog amount is formatted.
    #[error("unsupported scale {0}")]
    UnsupportedScale(u32),
}

/// Largest `amount_minor` the contract allows (2^53 - 1).
pub const MAX_AMOUNT_MINOR: u64 = 9_007_199_254_740_991;

/// Largest scale (`currency_decimals`, display precision) the SDK accepts: 18 decimals. A larger
/// `currency_decimals` in an answer is a decode error, and formatting or parsing at a larger
/// scale is [`MoneyError::UnsupportedScale`], so a hostile precision cannot make the SDK build
/// a huge string. (The platform coin has 8 decimals; common fiat currencies 0 to 3.)
pub const MAX_SCALE: u32 = 18;

/// Checks a scale (`currency_decimals`) against [`MAX_SCALE`].
pub fn check_scale(scale: u32) -> Result<u32, MoneyError> {
    if scale > MAX_SCALE {
        Err(MoneyError::UnsupportedScale(scale))
    } else {
        Ok(scale)
    }
}

/// Splits a decimal string into (negative, integer digits, fraction digits), checking syntax.
fn split_decimal(text: &str) -> Result<(bool, &str, &str), MoneyError> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty()
        || !digits_ok(int)
        || !digits_ok(frac)
        || (body.contains('.') && frac.is_empty())
    {
        return Err(MoneyError::Syntax);
    }
    Ok((negative, int, frac))
}

/// Parses `text` into an integer scaled by 10^scale, exactly (no rounding), as i128.
fn parse_scaled(text: &str, scale: u32) -> Result<i128, MoneyError> {
    check_scale(scale)?;
    let (negative, int, frac) = split_decimal(text)?;
    let frac_trimmed = frac.trim_end_matches('0');
    if frac_trimmed.len() > scale as usize {
        return Err(MoneyError::TooManyDecimals { scale });
    }
    let int = int.trim_start_matches('0');
    if int.len() > 20 {
        return Err(MoneyError::OutOfRange);
    }
    let mut value: i128 = 0;
    for b in int.bytes() {
        value = value * 10 + i128::from(b - b'0');
    }
    for i in 0..scale as usize {
        let digit = frac_trimmed.as_bytes().get(i).map_or(0, |b| b - b'0');
        value = value * 10 + i128::from(digit);
    }
    Ok(if negative { -value } else { value })
}

/// Formats `value / 10^scale` with exactly `scale` fractional digits. Callers check the scale
/// (at most [`MAX_SCALE`]), so the text stays short.
fn format_scaled(value: i128, scale: u32) -> String {
    let negative = value < 0;
    let digits = value.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if negative { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// A merchant-payment amount in minor units (`amount_minor`): positive, at most
/// [`MAX_AMOUNT_MINOR`]; its scale is the currency's `currency_decimals`.
///
/// Serialized as the bare JSON integer the service uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MinorAmount(u64);

impl MinorAmount {
    /// Checks the contract's range: positive and at most 9007199254740991.
    pub fn new(minor: u64) -> Result<Self, MoneyError> {
        match minor {
            0 => Err(MoneyError::NotPositive),
            m if m > MAX_AMOUNT_MINOR => Err(MoneyError::OutOfRange),
            m => Ok(MinorAmount(m)),
        }
    }

    /// Parses a decimal amount (`"12.50"`) at the currency precision `decimals` into minor
    /// units, exactly: more significant fractional digits than `decimals` is an error.
    pub fn parse_decimal(text: &str, decimals: u32) -> Result<Self, MoneyError> {
        let value = parse_scaled(text, decimals)?;
        if value <= 0 {
            return Err(MoneyError::NotPositive);
        }
        let value = u64::try_from(value).map_err(|_| MoneyError::OutOfRange)?;
        MinorAmount::new(value)
    }

    /// The amount in minor units.
    pub fn get(self) -> u64 {
        self.0
    }

    /// Formats the amount as a decimal string with `decimals` fractional digits (`1250`, 2 →
    /// `"12.50"`).
    ///
    /// `decimals` above [`MAX_SCALE`] is never a currency precision the SDK accepts from the
    /// service; rather than building a string of that many digits it gives the exact value in
    /// exponent form (`1250`, 4294967295 → `"1250e-4294967295"`). Use
    /// [`MinorAmount::try_to_decimal_string`] to get an error instead.
    pub fn to_decimal_string(self, decimals: u32) -> String {
        self.try_to_decimal_string(decimals)
            .unwrap_or_else(|_| format!("{}e-{decimals}", self.0))
    }

    /// Formats like [`MinorAmount::to_decimal_string`], but a scale above [`MAX_SCALE`] is
    /// [`MoneyError::UnsupportedScale`].
    pub fn try_to_decimal_string(self, decimals: u32) -> Result<String, MoneyError> {
        Ok(format_scaled(i128::from(self.0), check_scale(decimals)?))
    }
}

impl fmt::Display for MinorAmount {
    /// Displays the raw integer with its unit, `1999 minor units`, so it is never mistaken for
    /// a human amount (the value does not know its currency's scale). For `19.99 USD` use
    /// [`MinorAmount::with_currency`] (or [`Money`]); for the wire integer use
    /// [`MinorAmount::get`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} minor units", self.0)
    }
}

impl MinorAmount {
    /// The amount with its currency and the currency's precision (`currency_decimals`), for
    /// display as `19.99 USD`. A precision above [`MAX_SCALE`] is
    /// [`MoneyError::UnsupportedScale`].
    pub fn with_currency(
        self,
        currency: impl Into<String>,
        decimals: u32,
    ) -> Result<Money, MoneyError> {
        Money::new(self, currency, decimals)
    }
}

/// An amount a person reads: minor units, the currency code and the currency's precision.
/// Displays as `19.99 USD` (exact decimal text, never floating point).
///
/// Contract rule: `amount_minor` is amount × 10^`currency_decimals`; the merchant payment
/// carries all three (see [`crate::MerchantPayment::money`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Money {
    amount: MinorAmount,
    currency: String,
    decimals: u32,
}

impl Money {
    /// Checks the precision (0 to [`MAX_SCALE`]) and builds the value.
    pub fn new(
        amount: MinorAmount,
        currency: impl Into<String>,
        decimals: u32,
    ) -> Result<Self, MoneyError> {
        Ok(Money {
            amount,
            currency: currency.into(),
            decimals: check_scale(decimals)?,
        })
    }

    /// The amount in minor units.
    pub fn amount(&self) -> MinorAmount {
        self.amount
    }

    /// The currency code.
    pub fn currency(&self) -> &str {
        &self.currency
    }

    /// The currency's precision (`currency_decimals`).
    pub fn decimals(&self) -> u32 {
        self.decimals
    }

    /// The decimal text without the currency (`19.99`).
    pub fn to_decimal_string(&self) -> String {
        self.amount.to_decimal_string(self.decimals)
    }
}

impl fmt::Display for Money {
    /// `19.99 USD`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.to_decimal_string(), self.currency)
    }
}

impl TryFrom<u64> for MinorAmount {
    type Error = MoneyError;
    fn try_from(value: u64) -> Result<Self, MoneyError> {
        MinorAmount::new(value)
    }
}

impl Serialize for MinorAmount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for MinorAmount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = u64::deserialize(deserializer)?;
        MinorAmount::new(raw).map_err(serde::de::Error::custom)
    }
}

/// A catalog amount in eight-decimal fixed point (value × 10^8), as products and orders carry it.
///
/// `currency_decimals` of a catalog record is display precision only and does not change this
/// scaling. Serialized as the bare JSON integer the service uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FixedPoint8(i64);

impl FixedPoint8 {
    /// Number of fractional digits.
    pub const SCALE: u32 = 8;
    /// 10^8, the raw value of one whole unit.
    pub const ONE: i64 = 100_000_000;

    /// Wraps a raw eight-decimal integer (as found in JSON).
    pub const fn from_raw(raw: i64) -> Self {
        FixedPoint8(raw)
    }

    /// The raw eight-decimal integer.
    pub const fn raw(self) -> i64 {
        self.0
    }

    /// Formats with exactly `decimals` fractional digits (at most 8), truncating nothing: an
    /// error if significant digits would be cut off.
    pub fn to_decimal_string(self, decimals: u32) -> Result<String, MoneyError> {
        if decimals > Self::SCALE {
            return Err(MoneyError::UnsupportedScale(decimals));
        }
        let divisor = 10i64.pow(Self::SCALE - decimals);
        if self.0 % divisor != 0 {
            return Err(MoneyError::TooManyDecimals { scale: decimals });
        }
        Ok(format_scaled(i128::from(self.0 / divisor), decimals))
    }

    /// Multiplies by an integer quantity, failing on overflow.
    pub fn checked_mul(self, quantity: i64) -> Option<Self> {
        self.0.checked_mul(quantity).map(FixedPoint8)
    }
}

impl FromStr for FixedPoint8 {
    type Err = MoneyError;
    /// Parses a decimal string with at most eight significant fractional digits.
    fn from_str(text: &str) -> Result<Self, MoneyError> {
        let value = parse_scaled(text, Self::SCALE)?;
        i64::try_from(value)
            .map(FixedPoint8)
            .map_err(|_| MoneyError::OutOfRange)
    }
}

impl fmt::Display for FixedPoint8 {
    /// Canonical form with all eight fractional digits (`12.50000000`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_scaled(i128::from(self.0), Self::SCALE))
    }
}

impl Serialize for FixedPoint8 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.0)
    }
}

impl<'de> Deserialize<'de> for FixedPoint8 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        i64::deserialize(deserializer).map(FixedPoint8)
    }
}

/// Decode-time bounds of the service's answers (`#[serde(deserialize_with = ...)]`): a value
/// outside them fails decoding, which the SDK reports as [`crate::Error::Decode`].
pub(crate) mod bounds {
    use serde::{Deserialize, Deserializer, de::Error as _};

    use super::{FixedPoint8, check_scale};

    /// `currency_decimals` (or any precision): 0 to [`super::MAX_SCALE`].
    pub fn decimals<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let raw = u32::deserialize(d)?;
        check_scale(raw).map_err(|e| D::Error::custom(format!("currency_decimals: {e}")))
    }

    /// A catalog amount (price, order amount): a non-negative eight-decimal integer.
    pub fn amount<'de, D: Deserializer<'de>>(d: D) -> Result<FixedPoint8, D::Error> {
        let raw = i64::deserialize(d)?;
        if raw < 0 {
            return Err(D::Error::custom(format!(
                "amount must not be negative: {raw}"
            )));
        }
        Ok(FixedPoint8::from_raw(raw))
    }

    /// A count (stock): a non-negative integer.
    pub fn count<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let raw = i64::deserialize(d)?;
        if raw < 0 {
            return Err(D::Error::custom(format!(
                "count must not be negative: {raw}"
            )));
        }
        Ok(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12 item 3: the raw `Display` is unambiguous and `Money` displays a human amount.
    #[test]
    fn minor_amount_and_money_display() {
        let amount = MinorAmount::new(1999).unwrap();
        assert_eq!(amount.to_string(), "1999 minor units");
        assert_eq!(
            amount.with_currency("USD", 2).unwrap().to_string(),
            "19.99 USD"
        );
        assert_eq!(
            amount.with_currency("JPY", 0).unwrap().to_string(),
            "1999 JPY"
        );
        let tiny = MinorAmount::new(5)
            .unwrap()
            .with_currency("PLC", 8)
            .unwrap();
        assert_eq!(tiny.to_string(), "0.00000005 PLC");
        assert_eq!(tiny.decimals(), 8);
        assert_eq!(
            amount.with_currency("USD", MAX_SCALE + 1),
            Err(MoneyError::UnsupportedScale(MAX_SCALE + 1))
        );
    }

    #[test]
    fn minor_amount_parses_exactly_at_currency_precision() {
        assert_eq!(MinorAmount::parse_decimal("12.50", 2).unwrap().get(), 1250);
        assert_eq!(MinorAmount::parse_decimal("12.5", 2).unwrap().get(), 1250);
        assert_eq!(MinorAmount::parse_decimal("1200", 0).unwrap().get(), 1200);
        assert_eq!(
            MinorAmount::parse_decimal("0.00000001", 8).unwrap().get(),
            1
        );
        assert_eq!(MinorAmount::parse_decimal("0.1", 2).unwrap().get(), 10);
        // 0.1 + 0.2 is exact here, unlike with floats.
        assert_eq!(
            MinorAmount::parse_decimal("0.30", 2).unwrap().get(),
            MinorAmount::parse_decimal("0.1", 2).unwrap().get() + 20
        );
    }

    #[test]
    fn minor_amount_rejects_what_the_contract_forbids() {
        assert_eq!(
            MinorAmount::parse_decimal("12.505", 2),
            Err(MoneyError::TooManyDecimals { scale: 2 })
        );
        assert_eq!(
            MinorAmount::parse_decimal("0", 2),
            Err(MoneyError::NotPositive)
        );
        assert_eq!(
            MinorAmount::parse_decimal("-1", 2),
            Err(MoneyError::NotPositive)
        );
        assert_eq!(MinorAmount::new(0), Err(MoneyError::NotPositive));
        assert_eq!(
            MinorAmount::new(MAX_AMOUNT_MINOR).unwrap().get(),
            MAX_AMOUNT_MINOR
        );
        assert_eq!(
            MinorAmount::new(MAX_AMOUNT_MINOR + 1),
            Err(MoneyError::OutOfRange)
        );
        for bad in ["", ".", "1.", ".5", "1e3", "1,5", "NaN", " 1", "1 ", "--1"] {
            assert_eq!(
                MinorAmount::parse_decimal(bad, 2),
                Err(MoneyError::Syntax),
                "{bad:?}"
            );
        }
        assert!(MinorAmount::parse_decimal("999999999999999999999999", 2).is_err());
    }

    #[test]
    fn minor_amount_formats_with_currency_precision() {
        let a = MinorAmount::new(1250).unwrap();
        assert_eq!(a.to_decimal_string(2), "12.50");
        assert_eq!(a.to_decimal_string(0), "1250");
        assert_eq!(MinorAmount::new(5).unwrap().to_decimal_string(3), "0.005");
        assert_eq!(serde_json::to_string(&a).unwrap(), "1250");
        assert_eq!(serde_json::from_str::<MinorAmount>("1250").unwrap(), a);
        assert!(serde_json::from_str::<MinorAmount>("0").is_err());
        assert!(serde_json::from_str::<MinorAmount>("12.5").is_err());
    }

    /// Issue 10 item 5: formatting or parsing at a scale of 4294967295 used to build a string
    /// of that many digits; scales above 18 are refused (or, for the infallible formatter, given
    /// in short exponent form).
    #[test]
    fn scale_beyond_the_bound_is_refused_not_expanded() {
        let a = MinorAmount::new(1250).unwrap();
        assert_eq!(
            a.try_to_decimal_string(u32::MAX),
            Err(MoneyError::UnsupportedScale(u32::MAX))
        );
        assert_eq!(
            a.try_to_decimal_string(19),
            Err(MoneyError::UnsupportedScale(19))
        );
        assert_eq!(a.try_to_decimal_string(18).unwrap(), "0.000000000000001250");
        assert_eq!(a.to_decimal_string(u32::MAX), "1250e-4294967295");
        assert_eq!(
            MinorAmount::parse_decimal("1", u32::MAX),
            Err(MoneyError::UnsupportedScale(u32::MAX))
        );
        assert_eq!(
            FixedPoint8::from_raw(1).to_decimal_string(u32::MAX),
            Err(MoneyError::UnsupportedScale(u32::MAX))
        );
    }

    #[derive(Debug, serde::Deserialize)]
    struct Bounded {
        #[serde(deserialize_with = "bounds::decimals")]
        decimals: u32,
        #[serde(deserialize_with = "bounds::amount")]
        price: FixedPoint8,
        #[serde(deserialize_with = "bounds::count")]
        stock: i64,
    }

    /// Issue 10 item 5: `currency_decimals` 4294967295, negative prices and negative stock were
    /// accepted; they fail decoding now.
    #[test]
    fn decode_bounds_refuse_huge_precision_and_negative_amounts() {
        let ok: Bounded = serde_json::from_str(r#"{"decimals":18,"price":0,"stock":0}"#).unwrap();
        assert_eq!((ok.decimals, ok.price.raw(), ok.stock), (18, 0, 0));
        for bad in [
            r#"{"decimals":4294967295,"price":1,"stock":1}"#,
            r#"{"decimals":19,"price":1,"stock":1}"#,
            r#"{"decimals":2,"price":-1,"stock":1}"#,
            r#"{"decimals":2,"price":1,"stock":-1}"#,
        ] {
            assert!(serde_json::from_str::<Bounded>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fixed_point8_round_trips_decimal_strings() {
        let v: FixedPoint8 = "12.5".parse().unwrap();
        assert_eq!(v.raw(), 1_250_000_000);
        assert_eq!(v.to_string(), "12.50000000");
        assert_eq!(v.to_decimal_string(2).unwrap(), "12.50");
        assert_eq!(
            v.to_decimal_string(0),
            Err(MoneyError::TooManyDecimals { scale: 0 })
        );
        assert_eq!("-0.00000001".parse::<FixedPoint8>().unwrap().raw(), -1);
        assert_eq!(FixedPoint8::from_raw(-1).to_string(), "-0.00000001");
        assert_eq!(
            "0.000000001".parse::<FixedPoint8>(),
            Err(MoneyError::TooManyDecimals { scale: 8 })
        );
        assert_eq!(
            "0.100000000".parse::<FixedPoint8>().unwrap().raw(),
            10_000_000
        );
        assert_eq!(
            "92233720368.54775808".parse::<FixedPoint8>(),
            Err(MoneyError::OutOfRange)
        );
        assert_eq!(
            "92233720368.54775807".parse::<FixedPoint8>().unwrap().raw(),
            i64::MAX
        );
        assert_eq!(serde_json::to_string(&v).unwrap(), "1250000000");
    }
}
