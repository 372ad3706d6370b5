//! Fault injection per route (sandbox only): tests make the next requests to a route slow,
//! fail with a given answer, lose their connection, or return a malformed or oversized body, so
//! that client retry and timeout behaviour is proven against real HTTP.
//!
//! A fault matches on the HTTP method and the exact path under the origin (with the API prefix,
//! e.g. `POST /api/openapi/v1/orders`; the query string is ignored) and applies to the next
//! `times` matching requests (default 1). Several faults on one route apply in the order they
//! were added, each for its own `times`. Faults never apply to `/_sandbox/faults` itself.
//!
//! What a fault does, in order: wait `latency_ms`; then, with `drop_connection`, close the
//! connection without any answer; with `status`, `body`, `headers`, `malformed_body` or
//! `oversized_body`, answer that instead of the real handler (status default 500, body default
//! the contract's error shape for the status); with only `latency_ms`, run the real handler after
//! the wait. With `after_handler`, the real handler runs FIRST (its effects are stored), then
//! the wait, then the drop or replaced answer: the request was processed but its answer came too
//! late, was lost, or was an error, which is how "a timeout does not prove failure" is tested.

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};

pub mod http;

/// Longest latency a fault may add.
pub const MAX_LATENCY_MS: u64 = 120_000;
/// Size of an oversized body when `oversized_body` is `true` (16 MiB, beyond any sane client cap).
pub const DEFAULT_OVERSIZED_BYTES: usize = 16 * 1024 * 1024;
/// Largest oversized body a fault may ask for.
pub const MAX_OVERSIZED_BYTES: usize = 256 * 1024 * 1024;

/// Marker put on a response whose connection must be dropped without answering; the accept
/// loop (`server.rs`) closes the connection when it sees it.
#[derive(Debug, Clone, Copy)]
pub struct DropConnection;

/// One injected fault.
#[derive(Debug, Clone)]
pub struct Fault {
    /// Fault id (for listing and deleting one fault).
    pub id: u64,
    /// HTTP method to match.
    pub method: Method,
    /// Exact path to match.
    pub path: String,
    /// Answer status (default 500 when an answer is injected).
    pub status: Option<StatusCode>,
    /// Answer body: a JSON value (sent as JSON) or a string (sent as is).
    pub body: Option<Value>,
    /// Extra answer headers.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Delay before anything else.
    pub latency_ms: u64,
    /// Close the connection without answering.
    pub drop_connection: bool,
    /// Answer a truncated JSON body.
    pub malformed_body: bool,
    /// Answer a body of this many bytes.
    pub oversized_body: Option<usize>,
    /// Run the real handler first (its effects are stored), then wait, then drop or replace
    /// the answer: "processed, but the answer was late or lost".
    pub after_handler: bool,
    /// Matching requests left.
    pub remaining: u32,
}

impl Fault {
    fn answers(&self) -> bool {
        self.status.is_some()
            || self.body.is_some()
            || !self.headers.is_empty()
            || self.malformed_body
            || self.oversized_body.is_some()
    }

    fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "method": self.method.as_str(),
            "path": self.path,
            "status": self.status.map(|s| s.as_u16()),
            "body": self.body,
            "headers": self.headers.iter().map(|(n, v)| (n.as_str().to_owned(), Value::from(v.to_str().unwrap_or("")))).collect::<serde_json::Map<_, _>>(),
            "latency_ms": self.latency_ms,
            "drop_connection": self.drop_connection,
            "malformed_body": self.malformed_body,
            "oversized_body": self.oversized_body,
            "after_handler": self.after_handler,
            "times": self.remaining,
        })
    }

    /// The injected answer (when the fault answers instead of the handler).
    fn response(&self) -> Response {
        let status = self.status.unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let (content_type, bytes): (&str, Vec<u8>) = if let Some(size) = self.oversized_body {
            ("application/json", oversized(size))
        } else if self.malformed_body {
            (
                "application/json",
                br#"{"list": [{"gd_no": "G1001", "gd_name": "trunc"#.to_vec(),
            )
        } else {
            match &self.body {
                Some(Value::String(text)) => {
                    ("text/plain; charset=utf-8", text.clone().into_bytes())
                }
                Some(value) => ("application/json", value.to_string().into_bytes()),
                None => (
                    "application/json",
                    json!({ "error": default_error(status) })
                        .to_string()
                        .into_bytes(),
                ),
            }
        };
        let mut response = Response::new(Body::from(bytes));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        for (name, value) in &self.headers {
            response.headers_mut().insert(name.clone(), value.clone());
        }
        response
    }
}

/// The contract's error code that usually goes with a status.
fn default_error(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "invalid_request",
        401 => "invalid_token",
        403 => "insufficient_scope",
        404 => "not_found",
        409 => "payment_conflict",
        410 => "payment_expired",
        422 => "channel_unavailable",
        429 => "rate_limited",
        503 => "rate_limit_unavailable",
        202 => "provider_result_pending",
        _ => "server_error",
    }
}

/// A syntactically valid JSON object of `size` bytes (padding in one string field).
fn oversized(size: usize) -> Vec<u8> {
    let head = br#"{"padding":""#;
    let tail = br#""}"#;
    let fill = size.saturating_sub(head.len() + tail.len());
    let mut bytes = Vec::with_capacity(size.max(head.len() + tail.len()));
    bytes.extend_from_slice(head);
    bytes.resize(head.len() + fill, b'x');
    bytes.extend_from_slice(tail);
    bytes
}

/// Injected faults, in the order they were added.
#[derive(Debug, Default)]
pub struct FaultStore {
    pub(crate) faults: Vec<Fault>,
    next_id: u64,
}

impl FaultStore {
    /// Takes one use of the first fault matching the request, removing it when used up.
    pub fn take(&mut self, method: &Method, path: &str) -> Option<Fault> {
        let index = self
            .faults
            .iter()
            .position(|f| f.method == *method && f.path == path)?;
        let fault = &mut self.faults[index];
        fault.remaining = fault.remaining.saturating_sub(1);
        let taken = fault.clone();
        if fault.remaining == 0 {
            self.faults.remove(index);
        }
        Some(taken)
    }

    /// Adds a fault; returns its id.
    pub fn add(&mut self, mut fault: Fault) -> u64 {
        self.next_id += 1;
        fault.id = self.next_id;
        self.faults.push(fault);
        self.next_id
    }

    /// The faults still pending, in the order they apply.
    pub fn pending(&self) -> &[Fault] {
        &self.faults
    }

    /// Removes every fault.
    pub fn clear(&mut self) {
        self.faults.clear();
    }
}

/// Reads a fault from the body of `POST /_sandbox/faults`.
fn parse_fault(body: &Value) -> ApiResult<Fault> {
    let object = body
        .as_object()
        .ok_or_else(|| ApiError::invalid_request("the body must be a JSON object"))?;
    let known = [
        "method",
        "path",
        "status",
        "body",
        "headers",
        "latency_ms",
        "drop_connection",
        "malformed_body",
        "oversized_body",
        "after_handler",
        "times",
    ];
    if let Some(unknown) = object.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(
            ApiError::invalid_request(format!("unknown fault field {unknown}")).field(unknown),
        );
    }
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .and_then(|m| Method::from_bytes(m.to_ascii_uppercase().as_bytes()).ok())
        .ok_or_else(|| {
            ApiError::invalid_request("method must be an HTTP method").field("method")
        })?;
    let path = object
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| p.starts_with('/'))
        .ok_or_else(|| ApiError::invalid_request("path must start with /").field("path"))?
        .to_owned();
    let status = match object.get("status") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .filter(|s| (200..=599).contains(s))
                .and_then(|s| StatusCode::from_u16(s).ok())
                .ok_or_else(|| {
                    ApiError::invalid_request("status must be an HTTP status from 200 to 599")
                        .field("status")
                })?,
        ),
    };
    let mut headers = Vec::new();
    match object.get("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, value) in map {
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => String::new(),
                };
                let name = HeaderName::from_bytes(name.as_bytes());
                let value = HeaderValue::from_str(&text);
                match (name, value) {
                    (Ok(name), Ok(value)) if !text.is_empty() => headers.push((name, value)),
                    _ => {
                        return Err(ApiError::invalid_request(
                            "headers must map valid header names to string values",
                        )
                        .field("headers"));
                    }
                }
            }
        }
        Some(_) => {
            return Err(ApiError::invalid_request("headers must be an object").field("headers"));
        }
    }
    let flag = |name: &str| -> ApiResult<bool> {
        match object.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => {
                Err(ApiError::invalid_request(format!("{name} must be a boolean")).field(name))
            }
        }
    };
    let latency_ms = match object.get("latency_ms") {
        None | Some(Value::Null) => 0,
        Some(value) => value
            .as_u64()
            .filter(|ms| *ms <= MAX_LATENCY_MS)
            .ok_or_else(|| {
                ApiError::invalid_request(format!("latency_ms must be 0 to {MAX_LATENCY_MS}"))
                    .field("latency_ms")
            })?,
    };
    let oversized_body = match object.get("oversized_body") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(DEFAULT_OVERSIZED_BYTES),
        Some(value) => Some(
            value
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (1..=MAX_OVERSIZED_BYTES).contains(n))
                .ok_or_else(|| {
                    ApiError::invalid_request(
                        "oversized_body must be true or a byte count up to 256 MiB",
                    )
                    .field("oversized_body")
                })?,
        ),
    };
    let times = match object.get("times") {
        None | Some(Value::Null) => 1,
        Some(value) => value
            .as_u64()
            .filter(|t| (1..=1_000_000).contains(t))
            .map(|t| t as u32)
            .ok_or_else(|| {
                ApiError::invalid_request("times must be an integer from 1 to 1000000")
                    .field("times")
            })?,
    };
    let body = match object.get("body") {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.clone()),
    };
    Ok(Fault {
        id: 0,
        method,
        path,
        status,
        body,
        headers,
        latency_ms,
        drop_connection: flag("drop_connection")?,
        malformed_body: flag("malformed_body")?,
        oversized_body,
        after_handler: flag("after_handler")?,
        remaining: times,
    })
}
