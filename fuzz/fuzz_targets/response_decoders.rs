//! `cargo +nightly fuzz run response_decoders`: see docs/fuzzing.md. The logic lives in
//! `storefront_fuzz::response_decoders` (fuzz/src/response_decoders.rs), which tests/fuzz_regressions.rs replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storefront_fuzz::response_decoders::run(data));
