//! Request-body extraction that answers bad input with the contract's error shape.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Largest request body the sandbox reads (64 KiB); larger bodies get 413 `invalid_request`.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON request body (`Content-Type: application/json`) decoded into `T`.
/// Wrong content type, oversized bodies, invalid UTF-8 and malformed JSON each give a 400-class
/// `invalid_request` naming the problem; nothing is stored.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, ApiError> {
        let is_json = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        if !is_json {
            return Err(ApiError::invalid_request(
                "Content-Type must be application/json",
            ));
        }
        let bytes = read_body(request).await?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| ApiError::invalid_request("the body is not valid UTF-8"))?;
        serde_json::from_str(text)
            .map(JsonBody)
            .map_err(|e| ApiError::invalid_request(format!("malformed JSON body: {e}")))
    }
}

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] with 413.
pub async fn read_body(request: Request) -> Result<Bytes, ApiError> {
    let body = axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            ApiError::new(axum::http::StatusCode::PAYLOAD_TOO_LARGE, "invalid_request")
                .describe(format!("the body exceeds {MAX_BODY_BYTES} bytes"))
        })?;
    Ok(body)
}

/// The integer a JSON number stands for. JSON has one number type, and `integer` in JSON Schema
/// (hence in `sandbox/openapi.json`, OpenAPI 3.1) is any number whose fractional part is zero:
/// `1999.0` and `1.999e3` are 1999. `None` for anything else (a fraction, a string, `null`).
/// Values beyond `i64` saturate to `i64::MAX` or `i64::MIN`, so range checks refuse them.
pub fn json_integer(value: &serde_json::Value) -> Option<i64> {
    let number = value.as_number()?;
    if let Some(i) = number.as_i64() {
        return Some(i);
    }
    if number.as_u64().is_some() {
        return Some(i64::MAX);
    }
    let f = number.as_f64()?;
    // `as` saturates; below 2^53 the conversion is exact.
    (f.is_finite() && f.fract() == 0.0).then_some(f as i64)
}
