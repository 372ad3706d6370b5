//! `cargo +nightly fuzz run webhook_verify`: see docs/fuzzing.md. The logic lives in
//! `storefront_fuzz::webhook_verify` (fuzz/src/webhook_verify.rs), which tests/fuzz_regressions.rs replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storefront_fuzz::webhook_verify::run(data));
