//! `money`: the exact amount types. Parsing any text at any scale never panics; whatever parses
//! formats back to text that parses to the same value (parse(format(x)) == x); every valid value
//! built from raw integers round-trips through its decimal text and its JSON.

use storefront::money::MAX_SCALE;
use storefront::{FixedPoint8, MinorAmount, MoneyError};

use crate::reader::Reader;

/// Input: 4 bytes scale (any u32), 8 bytes raw integer, then the text (lossy UTF-8; the raw
/// bytes are also tried as text when they are valid UTF-8).
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let scale_raw = r.u32();
    let raw = r.u64();
    let text_bytes = r.rest();
    let text = String::from_utf8_lossy(text_bytes);

    // Scales: the fuzzed one as is, and folded into the accepted range.
    for scale in [scale_raw, scale_raw % (MAX_SCALE + 1)] {
        minor_text(&text, scale);
        minor_raw(raw, scale);
        fixed_decimals(FixedPoint8::from_raw(raw as i64), scale);
    }
    fixed_text(&text);
    fixed_raw(raw as i64);
    json(text_bytes);
}

/// `MinorAmount::parse_decimal(text, scale)`, then format and parse again.
fn minor_text(text: &str, scale: u32) {
    match MinorAmount::parse_decimal(text, scale) {
        Ok(amount) => {
            assert!(scale <= MAX_SCALE, "parsed at unsupported scale {scale}");
            let formatted = amount
                .try_to_decimal_string(scale)
                .expect("a parsed amount formats at its scale");
            assert_eq!(formatted, amount.to_decimal_string(scale));
            assert_eq!(
                MinorAmount::parse_decimal(&formatted, scale),
                Ok(amount),
                "{text:?} at scale {scale} -> {formatted:?} does not parse back"
            );
        }
        Err(MoneyError::UnsupportedScale(s)) => assert!(s == scale && scale > MAX_SCALE),
        Err(_) => {}
    }
}

/// `MinorAmount::new(raw)`, then format at `scale` and parse back.
fn minor_raw(raw: u64, scale: u32) {
    let Ok(amount) = MinorAmount::new(raw) else {
        assert!(raw == 0 || raw > storefront::MAX_AMOUNT_MINOR);
        return;
    };
    let infallible = amount.to_decimal_string(scale);
    match amount.try_to_decimal_string(scale) {
        Ok(formatted) => {
            assert_eq!(formatted, infallible);
            assert_eq!(
                MinorAmount::parse_decimal(&formatted, scale),
                Ok(amount),
                "{raw} at scale {scale} -> {formatted:?} does not parse back"
            );
        }
        Err(e) => {
            assert_eq!(e, MoneyError::UnsupportedScale(scale));
            assert_eq!(infallible, format!("{raw}e-{scale}"));
        }
    }
    let json = serde_json::to_string(&amount).expect("serializes");
    assert_eq!(
        serde_json::from_str::<MinorAmount>(&json).ok(),
        Some(amount)
    );
}

/// `FixedPoint8::from_str(text)`, then `Display` and every `to_decimal_string` parse back.
fn fixed_text(text: &str) {
    if let Ok(value) = text.parse::<FixedPoint8>() {
        fixed_raw(value.raw());
    }
}

/// A raw eight-decimal value formats and parses back, in canonical form and as JSON.
fn fixed_raw(raw: i64) {
    let value = FixedPoint8::from_raw(raw);
    let canonical = value.to_string();
    assert_eq!(
        canonical.parse::<FixedPoint8>(),
        Ok(value),
        "{raw} -> {canonical:?} does not parse back"
    );
    for decimals in 0..=FixedPoint8::SCALE {
        fixed_decimals(value, decimals);
    }
    let json = serde_json::to_string(&value).expect("serializes");
    assert_eq!(serde_json::from_str::<FixedPoint8>(&json).ok(), Some(value));
    let _ = value.checked_mul(raw);
}

/// `FixedPoint8::to_decimal_string(decimals)` for any `decimals`: either exact text that parses
/// back, or a typed refusal.
fn fixed_decimals(value: FixedPoint8, decimals: u32) {
    match value.to_decimal_string(decimals) {
        Ok(text) => {
            assert!(decimals <= FixedPoint8::SCALE);
            assert_eq!(
                text.parse::<FixedPoint8>(),
                Ok(value),
                "{} at {decimals} decimals -> {text:?} does not parse back",
                value.raw()
            );
        }
        Err(MoneyError::UnsupportedScale(d)) => assert!(d == decimals && d > FixedPoint8::SCALE),
        Err(MoneyError::TooManyDecimals { scale }) => assert_eq!(scale, decimals),
        Err(e) => panic!("unexpected error {e:?} formatting {}", value.raw()),
    }
}

/// The JSON forms: whatever decodes encodes to the same value.
fn json(bytes: &[u8]) {
    if let Ok(amount) = serde_json::from_slice::<MinorAmount>(bytes) {
        assert!(amount.get() > 0 && amount.get() <= storefront::MAX_AMOUNT_MINOR);
        let back = serde_json::to_vec(&amount).expect("serializes");
        assert_eq!(
            serde_json::from_slice::<MinorAmount>(&back).ok(),
            Some(amount)
        );
    }
    if let Ok(value) = serde_json::from_slice::<FixedPoint8>(bytes) {
        let back = serde_json::to_vec(&value).expect("serializes");
        assert_eq!(
            serde_json::from_slice::<FixedPoint8>(&back).ok(),
            Some(value)
        );
    }
}
