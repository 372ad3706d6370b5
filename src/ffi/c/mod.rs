//! The C ABI (feature `capi`), described by `include/storefront.h`.
//!
//! Conventions (after rustls-ffi):
//! - names are `sf_<object>_<verb>`;
//! - every fallible function returns [`sf_result`](result::sf_result) and takes a last
//!   `sf_error **error_out` (may be NULL) that receives the failure's detail, owned by the
//!   caller and released with `sf_error_free`;
//! - out-parameters are written only on success;
//! - payloads cross as UTF-8 JSON in the service's own shapes; every string handed out is
//!   released with `sf_string_free`, every handle with its own `_free`, and every `_free`
//!   accepts NULL;
//! - every exported body runs inside the panic boundary of [`boundary`];
//! - NULL, invalid UTF-8, invalid JSON and oversized input each have their own result code;
//! - request and configuration JSON is strict ([`strict`]): an unknown key or a number out of
//!   range is `SF_RESULT_VALIDATION` naming the key path; the service's own answers handed
//!   back (a product, a payment) ignore unknown keys like every response.
//!
//! How hosts live with the library (cancellation, fork, persistent clients, logs) is the
//! contract of `docs/c-abi-hosts.md`.
//!
//! This layer holds no logic of the contract: it converts, calls the core on the runtime the
//! client handle owns, and converts back.
//!
//! `include/storefront.h` is generated from these sources by `.ci/regen-header` (pinned
//! cbindgen, `cbindgen.toml`), which also rewrites cbindgen's C23 `#if` alternatives for the
//! `#[repr(u32)]` enums into one portable form, so that PHP's `FFI::cdef` reads the very header
//! C compilers use. `tests::header_declares_every_export` and the C suite keep it current.

mod boundary;
mod cancel;
mod catalog;
mod client;
mod collection;
mod convert;
mod error;
mod idempotency;
mod inbox;
mod io;
mod log;
mod money;
mod other_ipu;
mod reconcile;
mod result;
mod strict;
mod webhook;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_abi;
#[cfg(test)]
mod tests_flow;
#[cfg(test)]
mod tests_helpers;
#[cfg(test)]
mod tests_host;
