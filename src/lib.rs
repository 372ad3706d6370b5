//! storefront: typed async SDK for the merchant collection and catalog order service.

#[cfg(feature = "uniffi")]
uniffi::setup_scaffolding!();

#[cfg(any(feature = "uniffi", feature = "capi"))]
mod ffi;
