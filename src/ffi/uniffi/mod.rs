//! uniffi exports of the core for Kotlin and Swift (feature `uniffi`).
//!
//! No logic of its own: each submodule converts core types into uniffi records, enums and
//! objects and calls the core. Every async export names the tokio runtime
//! (`#[uniffi::export(async_runtime = "tokio")]`) because reqwest needs a tokio reactor; the
//! test in `lint` fails when one does not. Money crosses as integers (`Long`), never floating
//! point; secrets cross as `Secret` objects whose `toString()` is redacted.

mod android;
mod catalog;
mod client;
mod collection;
mod config;
mod cursor;
mod error;
mod helpers;
mod inbox;
mod ints;
#[cfg(test)]
mod lint;
mod logging;
mod money;
mod operation;
mod reconcile;
mod secret;
mod token;
mod types;
mod webhook;

/// Version of the native library (the `storefront` crate version), for support reports.
#[uniffi::export]
pub fn sdk_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
