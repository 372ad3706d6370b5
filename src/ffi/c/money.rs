//! Money exports: decimal text to `amount_minor` and back, with the core's exact rules
//! ([`crate::money::MinorAmount`]), so every wrapper converts amounts with one implementation.
//!
//! Contract rules: `amount_minor` is "a positive integer equal to the amount multiplied by 10 to
//! the power of the currency precision", at most 9007199254740991; "use integer or decimal
//! arithmetic, never floating-point rounding". Nothing is rounded: more significant fractional
//! digits than the precision is an error. Catalog amounts (eight-decimal fixed point, value ×
//! 10^8, [`crate::money::FixedPoint8`]) have their own parse and format exports.

use std::ffi::c_char;

use crate::money::{FixedPoint8, MinorAmount, MoneyError};

use super::boundary;
use super::error::{Failure, sf_error};
use super::io::{Out, OutString, str_arg};
use super::result::sf_result;

/// The failure for a refused amount: `SF_RESULT_VALIDATION`, `field` = `field`, and the reason
/// as the error code (`syntax`, `too_many_decimals`, `out_of_range`, `not_positive`,
/// `unsupported_scale`) so that callers branch on the code, never on the message.
pub(crate) fn money_failure(field: &str, error: &MoneyError) -> Failure {
    let code = match error {
        MoneyError::Syntax => "syntax",
        MoneyError::TooManyDecimals { .. } => "too_many_decimals",
        MoneyError::OutOfRange => "out_of_range",
        MoneyError::NotPositive => "not_positive",
        MoneyError::UnsupportedScale(_) => "unsupported_scale",
    };
    let mut failure =
        Failure::new(sf_result::Validation, format!("`{field}`: {error}")).with_field(field);
    failure.code = Some(code.to_owned());
    failure
}

/// Converts a decimal amount (`"19.99"`) at the currency precision `decimals`
/// (`currency_decimals`, 0 to 18) into `amount_minor` (`1999`), exactly. Refused with
/// `SF_RESULT_VALIDATION`, `field` = `amount` and `sf_error_code` = `syntax` (not a plain
/// decimal: no exponent, spaces or separators), `too_many_decimals` (no rounding is done),
/// `not_positive` (zero or negative), `out_of_range` (above 9007199254740991) or
/// `unsupported_scale` (`decimals` above 18).
///
/// On success `*minor_out` receives the amount in minor units.
///
/// # Safety
/// `amount` NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_money_to_minor(
    amount: *const c_char,
    decimals: u32,
    minor_out: *mut u64,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(minor_out, "minor_out")?;
        // SAFETY: caller contract of this export.
        let text = unsafe { str_arg(amount, "amount") }?;
        let minor =
            MinorAmount::parse_decimal(text, decimals).map_err(|e| money_failure("amount", &e))?;
        out.write(minor.get());
        Ok(())
    })
}

/// Formats `amount_minor` as decimal text with exactly `decimals` fractional digits (`1999`, 2
/// → `"19.99"`; 1200, 0 → `"1200"`). Refused with `SF_RESULT_VALIDATION`, `field` =
/// `amount_minor` and code `not_positive` (0), `out_of_range` (above 9007199254740991) or
/// `unsupported_scale` (`decimals` above 18).
///
/// On success `*amount_out` receives the text, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// Out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_money_from_minor(
    minor: u64,
    decimals: u32,
    amount_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(amount_out, "amount_out")?;
        let text = MinorAmount::new(minor)
            .and_then(|m| m.try_to_decimal_string(decimals))
            .map_err(|e| money_failure("amount_minor", &e))?;
        out.write_string(text)
    })
}

/// Parses decimal text into an eight-decimal fixed-point catalog amount (`"12.5"` →
/// `1250000000`, value × 10^8), exactly, with the core's rules ([`FixedPoint8`]'s `FromStr`):
/// a leading `-` is accepted (catalog amounts are signed; the service's own prices are never
/// negative, which the decoder checks). Refused with `SF_RESULT_VALIDATION`, `field` = `amount`
/// and `sf_error_code` = `syntax` (not a plain decimal: no exponent, spaces or separators),
/// `too_many_decimals` (more than 8 significant fractional digits; no rounding is done) or
/// `out_of_range` (outside a signed 64-bit raw value).
///
/// Contract rule: catalog amounts "are integers in eight-decimal fixed point (value multiplied
/// by 10^8)"; "never floating-point rounding".
///
/// On success `*raw_out` receives the raw eight-decimal integer.
///
/// # Safety
/// `text` NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_fixed_point8_parse(
    text: *const c_char,
    raw_out: *mut i64,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(raw_out, "raw_out")?;
        // SAFETY: caller contract of this export.
        let text = unsafe { str_arg(text, "text") }?;
        let amount = text
            .parse::<FixedPoint8>()
            .map_err(|e| money_failure("amount", &e))?;
        out.write(amount.raw());
        Ok(())
    })
}

/// Formats an eight-decimal fixed-point catalog amount `raw` (value × 10^8) as decimal text
/// with exactly `decimals` fractional digits (`1250000000`, 2 → `"12.50"`; `-1`, 8 →
/// `"-0.00000001"`), with the core's rules ([`FixedPoint8::to_decimal_string`]): nothing is
/// rounded. Refused with `SF_RESULT_VALIDATION`, `field` = `raw` and code `unsupported_scale`
/// (`decimals` above 8) or `too_many_decimals` (significant digits would be cut off at
/// `decimals`).
///
/// On success `*text_out` receives the text, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// Out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_fixed_point8_format(
    raw: i64,
    decimals: u32,
    text_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(text_out, "text_out")?;
        let text = FixedPoint8::from_raw(raw)
            .to_decimal_string(decimals)
            .map_err(|e| money_failure("raw", &e))?;
        out.write_string(text)
    })
}
