//! Choosing the notification configuration of a payment (contract, Events, "Choosing the
//! notification configuration"): the per-payment inputs, their checks
//! (`invalid_notify_config`, `invalid_notify_url`, `invalid_notify_secret`) and the resolution
//! against the merchant default.

use axum::http::StatusCode;
use serde_json::{Map, Value};

use super::address::{Reach, classify_host};
use crate::directory::store::NotifyDefault;
use crate::error::{ApiError, ApiResult};
use crate::merchant_payments::store::{NotifyTarget, Secret};

/// `notify_url` limit in bytes.
pub const MAX_NOTIFY_URL_BYTES: usize = 2048;
/// Smallest `notify_secret`, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;
/// Largest `notify_secret`, in bytes.
pub const MAX_SECRET_BYTES: usize = 256;

/// What the creation request said about notifications (one row of the contract's table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyInput {
    /// No notification parameters: the merchant default if it is enabled, else none.
    Omitted,
    /// `notify_enabled` false: none, even if the default is enabled.
    Disabled,
    /// `notify_enabled` true without a pair: the enabled default, else the creation is refused.
    EnabledDefault,
    /// `notify_url` with `notify_secret`: overrides the default.
    Explicit(NotifyTarget),
}

fn config_error(description: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_notify_config").describe(description)
}

/// Reads `notify_enabled`, `notify_url` and `notify_secret` and checks how they combine, then
/// the address and the secret.
pub fn parse_inputs(body: &Map<String, Value>, allow_loopback: bool) -> ApiResult<NotifyInput> {
    // `null` is present (and of the wrong type), not the member left out.
    let present = |name: &str| body.get(name);
    let enabled = match present("notify_enabled") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            return Err(
                ApiError::invalid_request("notify_enabled must be a boolean")
                    .field("notify_enabled"),
            );
        }
    };
    let url = match present("notify_url") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(url_error("notify_url must be a string")),
    };
    let secret = match present("notify_secret") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(secret_error("notify_secret must be a string")),
    };
    match (enabled, url, secret) {
        (Some(false), None, None) => Ok(NotifyInput::Disabled),
        (Some(false), _, _) => Err(config_error(
            "notify_enabled false must not be combined with notify_url or notify_secret",
        )),
        (_, Some(_), None) | (_, None, Some(_)) => Err(config_error(
            "notify_url and notify_secret must be sent together",
        )),
        (Some(true), None, None) => Ok(NotifyInput::EnabledDefault),
        (None, None, None) => Ok(NotifyInput::Omitted),
        (_, Some(url), Some(secret)) => {
            validate_notify_url(url, allow_loopback)?;
            validate_secret(secret)?;
            Ok(NotifyInput::Explicit(NotifyTarget {
                url: url.to_owned(),
                secret: Secret(secret.to_owned()),
            }))
        }
    }
}

/// The effective configuration at creation: explicit pair, the enabled default, or none.
/// `notify_enabled` true with neither usable refuses the creation (`invalid_notify_config`).
pub fn resolve(
    input: &NotifyInput,
    default: Option<&NotifyDefault>,
) -> ApiResult<Option<NotifyTarget>> {
    let enabled_default = default.filter(|d| d.enabled).map(|d| NotifyTarget {
        url: d.url.clone(),
        secret: Secret(d.secret.clone()),
    });
    match input {
        NotifyInput::Omitted => Ok(enabled_default),
        NotifyInput::Disabled => Ok(None),
        NotifyInput::EnabledDefault => enabled_default.map(Some).ok_or_else(|| {
            config_error(
                "notify_enabled is true but no notify_url and notify_secret were given and the merchant has no enabled default",
            )
        }),
        NotifyInput::Explicit(target) => Ok(Some(target.clone())),
    }
}

fn url_error(description: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_notify_url")
        .describe(description)
        .field("notify_url")
}

fn secret_error(description: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_notify_secret")
        .describe(description)
        .field("notify_secret")
}

/// `notify_url`: public HTTPS only, max 2048 bytes, no user info, no fragment, no
/// private-network target. With `allow_loopback` (sandbox only) plain-HTTP or HTTPS loopback
/// targets are accepted so that local receivers can be tested.
pub fn validate_notify_url(raw: &str, allow_loopback: bool) -> ApiResult<()> {
    if raw.len() > MAX_NOTIFY_URL_BYTES {
        return Err(url_error("notify_url exceeds 2048 bytes"));
    }
    if raw
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return Err(url_error(
            "notify_url must not contain whitespace, control characters or backslashes",
        ));
    }
    let url =
        url::Url::parse(raw).map_err(|_| url_error("notify_url is not a valid absolute URL"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(url_error("notify_url must not contain user info"));
    }
    if url.fragment().is_some() {
        return Err(url_error("notify_url must not contain a fragment"));
    }
    let Some(host) = url.host() else {
        return Err(url_error("notify_url must name a host"));
    };
    let reach = classify_host(&host);
    if reach == Reach::Loopback && allow_loopback && matches!(url.scheme(), "http" | "https") {
        return Ok(());
    }
    if url.scheme() != "https" {
        return Err(url_error("notify_url must be a public https address"));
    }
    if reach != Reach::Public {
        return Err(url_error(&format!(
            "notify_url must not point to a private or loopback network address ({})",
            reach.reason()
        )));
    }
    Ok(())
}

/// `notify_secret`: 32 to 256 bytes, no whitespace.
pub fn validate_secret(secret: &str) -> ApiResult<()> {
    if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&secret.len()) {
        return Err(secret_error("notify_secret must be 32 to 256 bytes"));
    }
    if secret.chars().any(char::is_whitespace) {
        return Err(secret_error("notify_secret must not contain whitespace"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `notify_url` targets: public HTTPS only; loopback only when the sandbox allows it.
    #[test]
    fn notify_url_targets_table() {
        let rows = [
            ("https://hooks.shop.example/n", false, true),
            ("https://203.0.113.9/n", false, false),
            ("https://8.8.8.8/n", false, true),
            ("https://[2606:4700::1]/n", false, true),
            ("https://172.16.0.1/n", false, false),
            ("https://100.64.0.1/n", false, false),
            ("https://[::ffff:10.0.0.1]/n", false, false),
            ("https://[fe80::1]/n", false, false),
            ("https://printer.local/n", false, false),
            ("https://0.0.0.0/n", false, false),
            ("http://127.0.0.1:9/n", false, false),
            ("http://127.0.0.1:9/n", true, true),
            ("http://localhost:9/n", true, true),
            ("http://[::1]:9/n", true, true),
            ("http://10.0.0.1/n", true, false),
            ("ftp://hooks.shop.example/n", false, false),
            ("https://[64:ff9b::a00:1]/n", false, false),
            ("https://[64:ff9b::808:808]/n", false, true),
            ("https://[2002:c0a8:101::1]/n", false, false),
            ("https://[::ffff:127.0.0.1]/n", true, false),
            ("https://[::127.0.0.1]/n", false, false),
            ("https://[fec0::1]/n", false, false),
            ("https://[ff02::1]/n", false, false),
            ("https://[2001:db8::1]/n", false, false),
            ("https://[2001::1]/n", false, false),
            ("https://192.0.0.8/n", false, false),
            ("https://224.0.0.1/n", false, false),
            ("https://240.0.0.1/n", false, false),
            ("https://255.255.255.255/n", false, false),
            ("https://LOCALHOST./n", false, false),
            ("https://LOCALHOST./n", true, true),
            ("https://api.localhost./n", false, false),
            ("https://0x7f000001/n", false, false),
            ("https://2130706433/n", false, false),
            ("http://2130706433:9/n", true, true),
            ("https://nas.home.arpa/n", false, false),
            ("https://db.internal./n", false, false),
        ];
        for (url, loopback, ok) in rows {
            assert_eq!(
                validate_notify_url(url, loopback).is_ok(),
                ok,
                "{url} (loopback {loopback})"
            );
        }
    }
}
