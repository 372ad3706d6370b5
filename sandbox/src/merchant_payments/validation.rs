//! Field rules of POST /openapi/v1/merchant-payments: each field's type and limits, with the
//! contract's error code, `field` and `error_description`; the result is the normalized request
//! that idempotency compares.

use axum::http::StatusCode;
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::notifications::config::{self, NotifyInput};

/// Largest `amount_minor` (2^53 - 1).
pub const MAX_AMOUNT_MINOR: i64 = 9_007_199_254_740_991;
/// `external_reference` limit in bytes.
pub const MAX_EXTERNAL_REFERENCE_BYTES: usize = 191;
/// `idempotency_key` limit in bytes.
pub const MAX_IDEMPOTENCY_KEY_BYTES: usize = 128;
/// `description` limit in bytes (after trimming).
pub const MAX_DESCRIPTION_BYTES: usize = 500;
/// `expires_in` range and default, in seconds.
pub const EXPIRES_IN_MIN: i64 = 60;
/// Largest `expires_in`.
pub const EXPIRES_IN_MAX: i64 = 7200;
/// `expires_in` when omitted.
pub const EXPIRES_IN_DEFAULT: i64 = 1800;
/// `return_url` limit in bytes.
pub const MAX_RETURN_URL_BYTES: usize = 2048;

/// A create request after validation and normalization (trimmed description and return
/// address, default expiry applied, empty `payment_no` as none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateRequest {
    /// Idempotency key (not part of the compared parameters).
    pub idempotency_key: String,
    /// Compared parameters.
    pub params: CreateParams,
}

/// The normalized parameters that a repeat with the same key must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateParams {
    /// Merchant reference as sent.
    pub external_reference: String,
    /// Positive amount in minor units.
    pub amount_minor: i64,
    /// Uppercase currency code.
    pub currency: String,
    /// Fixed channel, if any.
    pub payment_no: Option<String>,
    /// Trimmed description, if non-empty.
    pub description: Option<String>,
    /// Seconds until expiry (1800 when omitted).
    pub expires_in: i64,
    /// Trimmed return address, if non-empty.
    pub return_url: Option<String>,
    /// Notification inputs (not the merchant default: a retry does not re-read it).
    pub notify: NotifyInput,
}

fn invalid(field: &str, description: impl Into<String>) -> ApiError {
    ApiError::invalid_request(description).field(field)
}

/// A present member of the body. `null` is present: it is not the type of any member, so it is
/// refused like any other wrong type rather than taken as the member left out.
fn member<'a>(body: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    body.get(name)
}

fn string_member<'a>(body: &'a Map<String, Value>, name: &str) -> ApiResult<Option<&'a str>> {
    match member(body, name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(name, format!("{name} must be a string"))),
    }
}

/// Validates a create body in the order of the contract's parameter table.
pub fn validate_create(body: &Value, allow_loopback_notify: bool) -> ApiResult<CreateRequest> {
    let body = body
        .as_object()
        .ok_or_else(|| ApiError::invalid_request("the body must be a JSON object"))?;

    let external_reference = string_member(body, "external_reference")?
        .ok_or_else(|| invalid("external_reference", "external_reference is required"))?;
    if external_reference.trim().is_empty() {
        return Err(invalid(
            "external_reference",
            "external_reference must not be empty after trimming",
        ));
    }
    if external_reference.len() > MAX_EXTERNAL_REFERENCE_BYTES {
        return Err(invalid(
            "external_reference",
            format!("external_reference exceeds {MAX_EXTERNAL_REFERENCE_BYTES} bytes"),
        ));
    }

    let idempotency_key = string_member(body, "idempotency_key")?
        .filter(|k| !k.is_empty())
        .ok_or_else(|| invalid("idempotency_key", "idempotency_key is required"))?;
    if idempotency_key.len() > MAX_IDEMPOTENCY_KEY_BYTES {
        return Err(invalid(
            "idempotency_key",
            format!("idempotency_key exceeds {MAX_IDEMPOTENCY_KEY_BYTES} bytes"),
        ));
    }

    let amount_minor = validate_amount(member(body, "amount_minor"))?;
    let currency = validate_currency(member(body, "currency"))?;

    let payment_no = string_member(body, "payment_no")?
        .filter(|p| !p.is_empty())
        .map(str::to_owned);

    let description = string_member(body, "description")?
        .map(str::trim)
        .filter(|d| !d.is_empty());
    if let Some(d) = description
        && d.len() > MAX_DESCRIPTION_BYTES
    {
        return Err(invalid(
            "description",
            format!("description exceeds {MAX_DESCRIPTION_BYTES} bytes after trimming"),
        ));
    }

    let expires_in = validate_expires_in(member(body, "expires_in"))?;
    let notify = config::parse_inputs(body, allow_loopback_notify)?;
    let return_url = validate_return_url(member(body, "return_url"))?;

    Ok(CreateRequest {
        idempotency_key: idempotency_key.to_owned(),
        params: CreateParams {
            external_reference: external_reference.to_owned(),
            amount_minor,
            currency,
            payment_no,
            description: description.map(str::to_owned),
            expires_in,
            return_url,
            notify,
        },
    })
}

fn validate_amount(value: Option<&Value>) -> ApiResult<i64> {
    let value = value.ok_or_else(|| invalid("amount_minor", "amount_minor is required"))?;
    let amount = crate::extract::json_integer(value).ok_or_else(|| {
        invalid(
            "amount_minor",
            "amount_minor must be an integer in minor units",
        )
    })?;
    if amount <= 0 {
        return Err(invalid("amount_minor", "amount_minor must be positive"));
    }
    if amount > MAX_AMOUNT_MINOR {
        return Err(invalid(
            "amount_minor",
            format!("amount_minor must not exceed {MAX_AMOUNT_MINOR}"),
        ));
    }
    Ok(amount)
}

fn validate_currency(value: Option<&Value>) -> ApiResult<String> {
    let value = value.ok_or_else(|| invalid("currency", "currency is required"))?;
    let code = value
        .as_str()
        .ok_or_else(|| invalid("currency", "currency must be a string"))?;
    let well_formed = (3..=8).contains(&code.len()) && code.bytes().all(|b| b.is_ascii_uppercase());
    if !well_formed {
        return Err(invalid(
            "currency",
            "currency must be an uppercase currency code",
        ));
    }
    Ok(code.to_owned())
}

fn validate_expires_in(value: Option<&Value>) -> ApiResult<i64> {
    let Some(value) = value else {
        return Ok(EXPIRES_IN_DEFAULT);
    };
    crate::extract::json_integer(value)
        .filter(|s| (EXPIRES_IN_MIN..=EXPIRES_IN_MAX).contains(s))
        .ok_or_else(|| {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_expires_in")
                .describe(format!(
                    "expires_in must be an integer number of seconds from {EXPIRES_IN_MIN} to {EXPIRES_IN_MAX}"
                ))
                .field("expires_in")
        })
}

fn invalid_return_url(description: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_return_url")
        .describe(description)
        .field("return_url")
}

/// `return_url`: full HTTPS URL, max 2048 bytes, trimmed; no user info, backslash, or
/// unencoded whitespace or control characters. Empty after trimming means none.
fn validate_return_url(value: Option<&Value>) -> ApiResult<Option<String>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let raw = value
        .as_str()
        .ok_or_else(|| invalid_return_url("return_url must be a string"))?;
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    if trimmed.len() > MAX_RETURN_URL_BYTES {
        return Err(invalid_return_url("return_url exceeds 2048 bytes"));
    }
    if trimmed
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return Err(invalid_return_url(
            "return_url must not contain whitespace, control characters or backslashes",
        ));
    }
    let url = url::Url::parse(trimmed)
        .map_err(|_| invalid_return_url("return_url is not a valid absolute URL"))?;
    if url.scheme() != "https" || url.host_str().is_none_or(str::is_empty) {
        return Err(invalid_return_url("return_url must be an https address"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid_return_url("return_url must not contain user info"));
    }
    // Path, query and fragment are kept exactly as the merchant set them.
    Ok(Some(trimmed.to_owned()))
}
