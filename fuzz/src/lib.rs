//! Fuzz harness of the storefront SDK: one `run(data)` per cargo-fuzz target.
//!
//! The functions panic (so libFuzzer reports a crash) only when the SDK breaks one of its
//! promises: a panic inside it, a panic caught at the C boundary, a round trip that changes a
//! value, a signed body failing on its signature, a C result string that is not JSON. The root
//! crate's `tests/fuzz_regressions.rs` includes these same files and replays the checked-in seed
//! corpora and every input under `tests/fuzz_regressions/` through them in `cargo test`.

pub mod capi_json;
pub mod money;
pub mod reader;
pub mod response_decoders;
pub mod webhook_verify;
