//! `cargo +nightly fuzz run money`: see docs/fuzzing.md. The logic lives in
//! `storefront_fuzz::money` (fuzz/src/money.rs), which tests/fuzz_regressions.rs replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storefront_fuzz::money::run(data));
