//! `cargo +nightly fuzz run capi_json`: see docs/fuzzing.md. The logic lives in
//! `storefront_fuzz::capi_json` (fuzz/src/capi_json.rs), which tests/fuzz_regressions.rs replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storefront_fuzz::capi_json::run(data));
