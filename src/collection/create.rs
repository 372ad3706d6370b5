//! The merchant-payment create request, its idempotency key and its client-side validation.
//!
//! Contract rules (POST /openapi/v1/merchant-payments and Limits): `external_reference`
//! non-empty after trimming, max 191 bytes; `idempotency_key` max 128 bytes; `amount_minor`
//! positive, max 9007199254740991; `currency` uppercase; `description` max 500 bytes;
//! `expires_in` 60 to 7200; `notify_url` public HTTPS, max 2048 bytes, no user info, no
//! fragment, no private target, sent together with `notify_secret`; `notify_secret` 32 to 256
//! bytes, no whitespace; `notify_enabled` false must not be combined with address or secret;
//! `return_url` full HTTPS, max 2048 bytes, no user info, backslash, whitespace or control
//! characters. "On a timeout, retry with the original key and parameters; do not use a new key."

use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

use super::public_address::{HostKind, host_kind};
use crate::error::{Error, Result};
use crate::money::MinorAmount;
use crate::secret::{Secret, serialize_exposed_opt, without_userinfo};

/// Generates a fresh idempotency key: 32 random hex characters from the system CSPRNG.
pub fn generate_idempotency_key() -> String {
    let mut bytes = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .expect("system random generator available");
    format!("sf-{}", hex::encode(bytes))
}

/// Body of `POST /openapi/v1/merchant-payments`, in the service's JSON shape.
///
/// [`CreateMerchantPayment::new`] generates the idempotency key at once, so the caller can
/// persist it (see [`CreateMerchantPayment::idempotency_key`]) before sending and reuse it after
/// a crash. JSON without `idempotency_key` also gets a fresh one.
#[derive(Clone, Serialize, Deserialize)]
pub struct CreateMerchantPayment {
    /// Merchant's business order reference.
    pub external_reference: String,
    /// Idempotency key, unique within the merchant.
    #[serde(default = "generate_idempotency_key")]
    pub idempotency_key: String,
    /// Amount in minor units.
    pub amount_minor: MinorAmount,
    /// Uppercase currency code.
    pub currency: String,
    /// Restrict to that channel; `None` lets the buyer choose at checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_no: Option<String>,
    /// Shown to the buyer (max 500 bytes; no internal numbers, keys or sensitive data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Seconds until expiry, 60 to 7200 (default 1800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u32>,
    /// Per-payment notification switch (see the contract's Events section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_enabled: Option<bool>,
    /// Notification address (public HTTPS), together with `notify_secret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_url: Option<String>,
    /// Notification signing secret (redacted in `Debug`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_exposed_opt"
    )]
    pub notify_secret: Option<Secret>,
    /// Return address for the buyer's browser after `paid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_url: Option<String>,
    /// When set, the created payment's `currency_decimals` must equal it (not sent).
    #[serde(default, skip_serializing)]
    pub expected_currency_decimals: Option<u32>,
}

/// User info in the addresses is redacted: the service refuses it, but a request may be logged
/// before it is validated.
impl fmt::Debug for CreateMerchantPayment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreateMerchantPayment")
            .field("external_reference", &self.external_reference)
            .field("idempotency_key", &self.idempotency_key)
            .field("amount_minor", &self.amount_minor)
            .field("currency", &self.currency)
            .field("payment_no", &self.payment_no)
            .field("description", &self.description)
            .field("expires_in", &self.expires_in)
            .field("notify_enabled", &self.notify_enabled)
            .field(
                "notify_url",
                &self.notify_url.as_deref().map(without_userinfo),
            )
            .field("notify_secret", &self.notify_secret)
            .field(
                "return_url",
                &self.return_url.as_deref().map(without_userinfo),
            )
            .finish()
    }
}

impl CreateMerchantPayment {
    /// A request with a freshly generated idempotency key and no optional parameters.
    pub fn new(
        external_reference: impl Into<String>,
        amount_minor: MinorAmount,
        currency: impl Into<String>,
    ) -> Self {
        CreateMerchantPayment {
            external_reference: external_reference.into(),
            idempotency_key: generate_idempotency_key(),
            amount_minor,
            currency: currency.into(),
            payment_no: None,
            description: None,
            expires_in: None,
            notify_enabled: None,
            notify_url: None,
            notify_secret: None,
            return_url: None,
            expected_currency_decimals: None,
        }
    }

    /// The idempotency key (persist it before sending).
    pub fn idempotency_key(&self) -> &str {
        &self.idempotency_key
    }

    /// Uses the caller's own idempotency key (for example one persisted earlier).
    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = key.into();
        self
    }

    /// Restricts the payment to one channel.
    pub fn with_payment_no(mut self, payment_no: impl Into<String>) -> Self {
        self.payment_no = Some(payment_no.into());
        self
    }

    /// Sets the buyer-visible description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets `expires_in` in seconds.
    pub fn with_expires_in(mut self, seconds: u32) -> Self {
        self.expires_in = Some(seconds);
        self
    }

    /// Sends notifications for this payment to `url`, signed with `secret`.
    pub fn with_notification(mut self, url: impl Into<String>, secret: impl Into<Secret>) -> Self {
        self.notify_url = Some(url.into());
        self.notify_secret = Some(secret.into());
        self
    }

    /// Sets `notify_enabled` explicitly.
    pub fn with_notify_enabled(mut self, enabled: bool) -> Self {
        self.notify_enabled = Some(enabled);
        self
    }

    /// Sets the return address.
    pub fn with_return_url(mut self, url: impl Into<String>) -> Self {
        self.return_url = Some(url.into());
        self
    }

    /// Requires the created payment to have this `currency_decimals`.
    pub fn expect_currency_decimals(mut self, decimals: u32) -> Self {
        self.expected_currency_decimals = Some(decimals);
        self
    }

    /// Checks every parameter against the contract's limits. `allow_loopback_notify` accepts
    /// `http(s)://127.0.0.1` / `localhost` receivers (sandbox only).
    pub fn validate(&self, allow_loopback_notify: bool) -> Result<()> {
        let reference = self.external_reference.trim();
        if reference.is_empty() {
            return Err(Error::validation("external_reference", "must not be empty"));
        }
        if self.external_reference.len() > 191 {
            return Err(Error::validation(
                "external_reference",
                "longer than 191 bytes",
            ));
        }
        if self.idempotency_key.is_empty() {
            return Err(Error::validation("idempotency_key", "must not be empty"));
        }
        if self.idempotency_key.len() > 128 {
            return Err(Error::validation(
                "idempotency_key",
                "longer than 128 bytes",
            ));
        }
        let c = &self.currency;
        if c.is_empty()
            || c.len() > 16
            || !c
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        {
            return Err(Error::validation(
                "currency",
                "must be an uppercase currency code",
            ));
        }
        if let Some(p) = &self.payment_no
            && p.trim() != p
        {
            return Err(Error::validation(
                "payment_no",
                "has surrounding whitespace",
            ));
        }
        if let Some(d) = &self.description
            && d.trim().len() > 500
        {
            return Err(Error::validation("description", "longer than 500 bytes"));
        }
        if let Some(e) = self.expires_in
            && !(60..=7200).contains(&e)
        {
            return Err(Error::validation(
                "expires_in",
                "must be 60 to 7200 seconds",
            ));
        }
        match (self.notify_enabled, &self.notify_url, &self.notify_secret) {
            (Some(false), None, None) => {}
            (Some(false), _, _) => {
                return Err(Error::validation(
                    "notify_enabled",
                    "false must not be combined with notify_url or notify_secret",
                ));
            }
            (_, Some(_), None) => {
                return Err(Error::validation(
                    "notify_secret",
                    "required with notify_url",
                ));
            }
            (_, None, Some(_)) => {
                return Err(Error::validation(
                    "notify_url",
                    "required with notify_secret",
                ));
            }
            _ => {}
        }
        if let Some(u) = &self.notify_url {
            validate_notify_url(u, allow_loopback_notify)?;
        }
        if let Some(s) = &self.notify_secret {
            let s = s.expose();
            if !(32..=256).contains(&s.len()) {
                return Err(Error::validation(
                    "notify_secret",
                    "must be 32 to 256 bytes",
                ));
            }
            if s.chars().any(char::is_whitespace) {
                return Err(Error::validation(
                    "notify_secret",
                    "must not contain whitespace",
                ));
            }
        }
        if let Some(r) = &self.return_url {
            validate_return_url(r)?;
        }
        Ok(())
    }
}

/// `notify_url`: public HTTPS, max 2048 bytes, no user info, no fragment, no whitespace,
/// control characters or backslash, no private target (every range the service refuses, see
/// [`super::public_address`]). With `allow_loopback`, `http(s)` loopback receivers are accepted.
fn validate_notify_url(text: &str, allow_loopback: bool) -> Result<()> {
    let field = "notify_url";
    if text.len() > 2048 {
        return Err(Error::validation(field, "longer than 2048 bytes"));
    }
    if text
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return Err(Error::validation(
            field,
            "must not contain whitespace, control characters or backslashes",
        ));
    }
    let url = Url::parse(text).map_err(|e| Error::validation(field, format!("not a URL: {e}")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::validation(field, "must not contain user info"));
    }
    if url.fragment().is_some() {
        return Err(Error::validation(field, "must not contain a fragment"));
    }
    let Some(host) = url.host() else {
        return Err(Error::validation(field, "must name a host"));
    };
    let kind = host_kind(&host);
    if kind == HostKind::Loopback && allow_loopback && matches!(url.scheme(), "http" | "https") {
        return Ok(());
    }
    if url.scheme() != "https" {
        return Err(Error::validation(field, "must be public HTTPS"));
    }
    match kind {
        HostKind::Public => Ok(()),
        HostKind::Loopback => Err(Error::validation(
            field,
            "must not target a loopback address",
        )),
        HostKind::Private(why) => Err(Error::validation(
            field,
            format!("must not target a private network address ({why})"),
        )),
    }
}

/// `return_url`: full HTTPS URL, max 2048 bytes after trimming, no user info, backslash, or
/// unencoded whitespace or control characters. Empty after trimming means none ("When absent
/// or empty … the buyer stays in the checkout flow"), so it is not an error.
fn validate_return_url(text: &str) -> Result<()> {
    let field = "return_url";
    let t = text.trim();
    if t.is_empty() {
        return Ok(());
    }
    if t.len() > 2048 {
        return Err(Error::validation(field, "longer than 2048 bytes"));
    }
    if t.contains('\\') {
        return Err(Error::validation(field, "must not contain a backslash"));
    }
    if t.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::validation(
            field,
            "must not contain unencoded whitespace or control characters",
        ));
    }
    let url = Url::parse(t).map_err(|e| Error::validation(field, format!("not a URL: {e}")))?;
    if url.scheme() != "https" || url.host().is_none() {
        return Err(Error::validation(field, "must be a full HTTPS URL"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::validation(field, "must not contain user info"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> CreateMerchantPayment {
        CreateMerchantPayment::new("order-1", MinorAmount::new(1250).unwrap(), "USD")
    }

    fn field_of(r: CreateMerchantPayment) -> Option<String> {
        r.validate(false)
            .err()
            .and_then(|e| e.field().map(str::to_owned))
    }

    #[test]
    fn generated_keys_are_unique_and_within_limit() {
        let a = req();
        let b = req();
        assert_ne!(a.idempotency_key(), b.idempotency_key());
        assert!(a.idempotency_key().len() <= 128);
        assert!(a.validate(false).is_ok());
    }

    #[test]
    fn each_limit_is_checked_with_its_field_named() {
        let secret = "s".repeat(32);
        let cases: Vec<(CreateMerchantPayment, &str)> = vec![
            (
                CreateMerchantPayment::new("  ", MinorAmount::new(1).unwrap(), "USD"),
                "external_reference",
            ),
            (
                CreateMerchantPayment::new("x".repeat(192), MinorAmount::new(1).unwrap(), "USD"),
                "external_reference",
            ),
            (
                req().with_idempotency_key("k".repeat(129)),
                "idempotency_key",
            ),
            (
                CreateMerchantPayment::new("r", MinorAmount::new(1).unwrap(), "usd"),
                "currency",
            ),
            (req().with_description("d".repeat(501)), "description"),
            (req().with_expires_in(59), "expires_in"),
            (req().with_expires_in(7201), "expires_in"),
            (
                req().with_notification("http://shop.example/hook", secret.clone()),
                "notify_url",
            ),
            (
                req().with_notification("https://10.0.0.5/hook", secret.clone()),
                "notify_url",
            ),
            (
                req().with_notification("https://127.0.0.1/hook", secret.clone()),
                "notify_url",
            ),
            (
                req().with_notification("https://u:p@shop.example/hook", secret.clone()),
                "notify_url",
            ),
            (
                req().with_notification("https://shop.example/hook#x", secret.clone()),
                "notify_url",
            ),
            (
                req().with_notification("https://shop.example/hook", "short"),
                "notify_secret",
            ),
            (
                req().with_notification("https://shop.example/hook", format!("{secret} x")),
                "notify_secret",
            ),
            (
                req()
                    .with_notification("https://shop.example/hook", secret.clone())
                    .with_notify_enabled(false),
                "notify_enabled",
            ),
            (
                req().with_return_url("http://shop.example/back"),
                "return_url",
            ),
            (
                req().with_return_url("https://shop.example/a b"),
                "return_url",
            ),
            (
                req().with_return_url("https://shop.example\\back"),
                "return_url",
            ),
            (
                req().with_return_url(format!("https://shop.example/{}", "a".repeat(2048))),
                "return_url",
            ),
        ];
        for (r, field) in cases {
            let dbg = format!("{r:?}");
            assert_eq!(field_of(r).as_deref(), Some(field), "{dbg}");
        }
        assert!(
            req()
                .with_notification("https://shop.example/hook", secret.clone())
                .with_return_url(" https://shop.example/back?x=1#frag ")
                .with_expires_in(60)
                .validate(false)
                .is_ok()
        );
    }

    #[test]
    fn loopback_receiver_accepted_only_when_allowed() {
        let r = req().with_notification("http://127.0.0.1:9000/hook", "s".repeat(40));
        assert!(r.validate(false).is_err());
        assert!(r.validate(true).is_ok());
    }

    #[test]
    fn notify_secret_is_sent_but_never_debug_printed() {
        let r = req().with_notification("https://shop.example/hook", "n".repeat(40));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["notify_secret"], "n".repeat(40));
        assert!(json.get("expected_currency_decimals").is_none());
        assert!(!format!("{r:?}").contains(&"n".repeat(40)));
    }
}
