//! Foreign-function layers over the core: no logic of their own, only conversion.

#[cfg(feature = "capi")]
pub mod c;
#[cfg(feature = "uniffi")]
mod uniffi;
