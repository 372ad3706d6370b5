//! `Secret`: a secret string held in Rust memory (zeroized on drop), whose `toString()` /
//! `description` is `[REDACTED]`.
//!
//! Contract rules: the client secret, access tokens, notification secrets and checkout tokens
//! are never logged. Records that carry one (the configuration's client secret, a payment's
//! `checkout_url`) hold a `Secret`, so a data class's `toString()` cannot leak it.

use std::fmt;
use std::sync::Arc;

use crate::secret::Secret as CoreSecret;

/// A secret value; read it with `expose()` only where it must be used.
#[derive(uniffi::Object)]
#[uniffi::export(Display)]
pub struct Secret {
    pub(crate) inner: CoreSecret,
}

#[uniffi::export]
impl Secret {
    /// Wraps a secret value (client secret, user access token, notification secret).
    #[uniffi::constructor]
    pub fn new(value: String) -> Arc<Self> {
        Arc::new(Secret {
            inner: CoreSecret::new(value),
        })
    }

    /// The secret text. Call only where it must be used (an HTTP header, a browser to open).
    pub fn expose(&self) -> String {
        self.inner.expose().to_owned()
    }

    /// Length in bytes (safe to log).
    pub fn byte_len(&self) -> i64 {
        i64::try_from(self.inner.len()).unwrap_or(i64::MAX)
    }
}

impl Secret {
    pub(crate) fn wrap(inner: CoreSecret) -> Arc<Self> {
        Arc::new(Secret { inner })
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}
