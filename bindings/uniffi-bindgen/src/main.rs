//! uniffi's bindings generator at exactly the uniffi version the `storefront` crate uses.
//!
//! Run it from the workspace (library mode reads the `UNIFFI_META_*` symbols of an unstripped
//! build): `cargo run -p uniffi-bindgen -- generate --library target/debug/libstorefront.so ...`.
//! `.ci/regen-uniffi` is the one script that does this for Kotlin and Swift.

fn main() {
    uniffi::uniffi_bindgen_main()
}
