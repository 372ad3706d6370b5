//! Exact money parse/format cost (see BENCHMARKS.md).
//!
//! `cargo bench --bench money`

use divan::black_box;
use storefront::{FixedPoint8, MinorAmount};

fn main() {
    divan::main();
}

/// Decimal text to minor units at 2 decimals.
#[divan::bench]
fn minor_parse_2dp() -> MinorAmount {
    MinorAmount::parse_decimal(black_box("1234567.89"), black_box(2)).unwrap()
}

/// Minor units to decimal text at 2 decimals.
#[divan::bench]
fn minor_format_2dp() -> String {
    black_box(MinorAmount::new(123_456_789).unwrap()).to_decimal_string(black_box(2))
}

/// Eight-decimal text to fixed point.
#[divan::bench]
fn fixed8_parse() -> FixedPoint8 {
    black_box("1234567.12345678").parse().unwrap()
}

/// Fixed point to canonical eight-decimal text.
#[divan::bench]
fn fixed8_format() -> String {
    black_box(FixedPoint8::from_raw(123_456_712_345_678)).to_string()
}

/// Baseline: std's integer parse of the same digits (no scaling, no checks).
#[divan::bench]
fn baseline_u64_parse() -> u64 {
    black_box("123456789").parse().unwrap()
}

/// Baseline: std's integer formatting.
#[divan::bench]
fn baseline_u64_format() -> String {
    black_box(123_456_789u64).to_string()
}
