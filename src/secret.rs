//! Secret values (client secret, access tokens, notification secrets) that never show up in
//! `Debug`, `Display`, logs or error messages and are wiped from memory when dropped.
//!
//! Contract rule: "Client secret and access token are kept only on the merchant server", the
//! notification secret "never appears" in responses, and the checkout token "must not be logged".

use std::fmt;

use serde::{Deserialize, Deserializer};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// A secret string: redacted in `Debug`/`Display`, zeroized on drop, compared in constant time.
///
/// It implements `Deserialize` (so JSON configurations and FFI payloads can carry it) but not
/// `Serialize`: the only places that put a secret on the wire do it explicitly with
/// [`Secret::expose`].
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret text. Call only where the value must go on the wire or into a MAC.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Length of the secret in bytes (safe to log).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the secret is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl PartialEq for Secret {
    /// Constant-time comparison, so comparing tokens leaks nothing through timing.
    fn eq(&self, other: &Self) -> bool {
        ring_constant_time_eq(self.0.as_bytes(), other.0.as_bytes())
    }
}

impl Eq for Secret {}

fn ring_constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // ring's HMAC verify is constant-time; comparing MACs of both values under one random-free
    // fixed key keeps the comparison independent of where the inputs first differ.
    use ring::hmac;
    let key = hmac::Key::new(hmac::HMAC_SHA256, b"storefront-secret-compare");
    let tag = hmac::sign(&key, a);
    hmac::verify(&key, b, tag.as_ref()).is_ok()
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
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

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

/// Serde helper: writes an optional secret's text into a request body (the wire needs it).
pub(crate) fn serialize_exposed_opt<S: serde::Serializer>(
    value: &Option<Secret>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(secret) => serializer.serialize_some(secret.expose()),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_show_the_value() {
        let s = Secret::new("hunter2-very-secret");
        assert!(!format!("{s:?}").contains("hunter2"));
        assert!(!format!("{s}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2-very-secret");
    }

    #[test]
    fn equality_compares_values() {
        assert_eq!(Secret::new("a"), Secret::new("a"));
        assert_ne!(Secret::new("a"), Secret::new("b"));
        assert_ne!(Secret::new("a"), Secret::new("aa"));
    }
}

/// `url` with any user info (`user:password@`) in its authority replaced by `[REDACTED]`, for
/// `Debug` output of addresses a caller supplied: the contract refuses user info in them, but a
/// request may be logged before it is validated. Works on text that does not parse as a URL.
pub(crate) fn without_userinfo(url: &str) -> std::borrow::Cow<'_, str> {
    let Some(scheme_end) = url.find("://") else {
        return url.into();
    };
    let authority_start = scheme_end + 3;
    let rest = &url[authority_start..];
    let authority_len = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    match rest[..authority_len].rfind('@') {
        Some(at) => format!(
            "{}[REDACTED]{}",
            &url[..authority_start],
            &url[authority_start + at..]
        )
        .into(),
        None => url.into(),
    }
}

#[cfg(test)]
mod userinfo_tests {
    use super::without_userinfo;

    #[test]
    fn user_info_is_redacted_and_the_rest_kept() {
        assert_eq!(
            without_userinfo("https://merchant:pw@shop.example/hook?x=1"),
            "https://[REDACTED]@shop.example/hook?x=1"
        );
        assert_eq!(
            without_userinfo("https://shop.example/a@b"),
            "https://shop.example/a@b"
        );
        assert_eq!(without_userinfo("not a url"), "not a url");
        assert_eq!(
            without_userinfo("https://a:b@c@d/"),
            "https://[REDACTED]@d/"
        );
    }
}
