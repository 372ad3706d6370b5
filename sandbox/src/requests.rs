//! Requests the sandbox received, for tests to inspect (sandbox only): `GET /_sandbox/requests`.
//!
//! Every request outside the control prefix is recorded before faults and handlers run (so a
//! request that timed out on the client, or was answered by a fault, is still seen), with its
//! method, exact path, raw query, headers and body. Secrets never reach the log: the
//! `Authorization`, `Cookie` and `Proxy-Authorization` headers, the checkout token wherever it
//! appears (`/checkout/{token}` in the path, in any header such as `Referer` or `Origin`, in the
//! query or body, also percent-encoded, and any `ct_…` token text), and secret-named fields of
//! JSON, form and query data (`client_secret`, `notify_secret`, `secret`, `access_token`,
//! `token`, `password`) are replaced by `[redacted]`. A body that is neither valid JSON nor form
//! data cannot be redacted field by field: when it mentions a secret-like name (`secret`,
//! `token`, `password`) or holds an escape (`\\`, `%`) that could hide one, it is replaced by
//! `[redacted: unparsable body]`. The latest [`MAX_RECORDS`] requests are kept, each with at most
//! [`MAX_KEPT_BODY_CHARS`] characters of its body.

use std::collections::VecDeque;

use axum::http::HeaderMap;
use serde_json::{Map, Value};

pub mod http;

/// How many requests are kept (oldest dropped first).
pub const MAX_RECORDS: usize = 2000;
/// How much of a body is kept in the log (longer bodies are cut, `body_bytes` says how long).
pub const MAX_KEPT_BODY_CHARS: usize = 16 * 1024;

const REDACTED: &str = "[redacted]";
const SECRET_FIELDS: &[&str] = &[
    "client_secret",
    "notify_secret",
    "secret",
    "access_token",
    "token",
    "password",
];

/// One received request.
#[derive(Debug, Clone)]
pub struct Recorded {
    id: u64,
    value: Value,
}

/// The request log.
#[derive(Debug, Default)]
pub struct RequestLog {
    records: VecDeque<Recorded>,
    next_id: u64,
}

impl RequestLog {
    fn push(&mut self, mut value: Value) -> u64 {
        self.next_id += 1;
        value["seq"] = self.next_id.into();
        self.records.push_back(Recorded {
            id: self.next_id,
            value,
        });
        while self.records.len() > MAX_RECORDS {
            self.records.pop_front();
        }
        self.next_id
    }

    fn set_status(&mut self, id: u64, status: Option<u16>) {
        if let Some(record) = self.records.iter_mut().rev().find(|r| r.id == id) {
            record.value["status"] = status.map(Value::from).unwrap_or(Value::Null);
            record.value["dropped"] = status.is_none().into();
        }
    }
}

/// Cuts a (redacted) body text to [`MAX_KEPT_BODY_CHARS`] characters.
fn keep(text: String) -> String {
    match text.char_indices().nth(MAX_KEPT_BODY_CHARS) {
        Some((cut, _)) => format!("{}...(cut)", &text[..cut]),
        None => text,
    }
}

fn redact_headers(headers: &HeaderMap) -> Value {
    let mut out = Map::new();
    for (name, value) in headers {
        let text = match name.as_str() {
            "authorization" | "proxy-authorization" => {
                let scheme = value
                    .to_str()
                    .ok()
                    .and_then(|v| v.split_whitespace().next())
                    .unwrap_or("");
                format!("{scheme} {REDACTED}").trim().to_owned()
            }
            "cookie" | "set-cookie" => REDACTED.to_owned(),
            _ => redact_checkout_tokens(&String::from_utf8_lossy(value.as_bytes())),
        };
        match out.get_mut(name.as_str()) {
            Some(Value::String(existing)) => {
                existing.push_str(", ");
                existing.push_str(&text);
            }
            _ => {
                out.insert(name.as_str().to_owned(), text.into());
            }
        }
    }
    Value::Object(out)
}

/// Replaces the checkout token in `/checkout/{token}/...` paths.
fn redact_path(path: &str) -> String {
    let mut segments: Vec<&str> = path.split('/').collect();
    for i in 1..segments.len() {
        if segments[i - 1] == "checkout" && !segments[i].is_empty() {
            segments[i] = REDACTED;
        }
    }
    segments.join("/")
}

fn is_secret(name: &str) -> bool {
    SECRET_FIELDS.contains(&name.to_ascii_lowercase().as_str())
}

fn redact_query(query: &str) -> String {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if !pairs.iter().any(|(k, _)| is_secret(k)) {
        return query.to_owned();
    }
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &pairs {
        out.append_pair(k, if is_secret(k) { REDACTED } else { v });
    }
    out.finish()
}

fn redact_json(value: &mut Value) -> bool {
    match value {
        Value::Object(map) => {
            let mut changed = false;
            for (key, value) in map.iter_mut() {
                if is_secret(key) && !value.is_null() {
                    *value = REDACTED.into();
                    changed = true;
                } else {
                    changed |= redact_json(value);
                }
            }
            changed
        }
        Value::Array(items) => {
            let mut changed = false;
            for item in items {
                changed |= redact_json(item);
            }
            changed
        }
        _ => false,
    }
}

/// Marks that open a checkout token in free text (matched case-insensitively).
const CHECKOUT_MARKERS: &[&str] = &["/checkout/", "%2fcheckout%2f"];
/// Prefix of checkout tokens (see `merchant_payments::http::build_payment`).
const TOKEN_PREFIX: &str = "ct_";

/// Replaces checkout tokens in free text (header values such as `Referer`, queries, bodies):
/// the segment after `/checkout/` (also percent-encoded) and any `ct_` followed by at least 16
/// hex digits.
fn redact_checkout_tokens(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let rest = &lower[i..];
        if let Some(marker) = CHECKOUT_MARKERS.iter().find(|m| rest.starts_with(**m)) {
            out.push_str(&text[i..i + marker.len()]);
            i += marker.len();
            let len = text[i..]
                .find(|c: char| "/?#&%\"' ,;<>\\".contains(c) || c.is_whitespace())
                .unwrap_or(text.len() - i);
            if len > 0 {
                out.push_str(REDACTED);
                i += len;
            }
            continue;
        }
        let starts_word = !out.ends_with(|p: char| p.is_ascii_alphanumeric() || p == '_');
        if starts_word && rest.starts_with(TOKEN_PREFIX) {
            let hex = rest[TOKEN_PREFIX.len()..]
                .bytes()
                .take_while(u8::is_ascii_hexdigit)
                .count();
            if hex >= 16 {
                out.push_str(REDACTED);
                i += TOKEN_PREFIX.len() + hex;
                continue;
            }
        }
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Whether an unparsable body could carry a secret: it mentions a secret-like name, or holds an
/// escape that could spell one.
fn may_hide_secret(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["secret", "token", "password", "\\", "%"]
        .iter()
        .any(|needle| lower.contains(needle))
}

/// The body as text with secrets replaced (see the module docs).
fn redact_body(headers: &HeaderMap, bytes: &[u8]) -> String {
    redact_checkout_tokens(&redact_fields(headers, bytes))
}

/// JSON and form bodies are redacted field by field (and re-encoded only when something was
/// replaced); other bodies are kept as (lossy) UTF-8 unless they may hide a secret.
fn redact_fields(headers: &HeaderMap, bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("application/x-www-form-urlencoded") {
        return redact_query(&text);
    }
    if let Ok(mut value) = serde_json::from_slice::<Value>(bytes) {
        if redact_json(&mut value) {
            return value.to_string();
        }
        return text;
    }
    // Not JSON and not a form: still never keep a secret-looking form pair.
    if text.contains('=') && !text.contains('{') {
        return redact_query(&text);
    }
    if may_hide_secret(&text) {
        return UNPARSABLE.to_owned();
    }
    text
}

/// What replaces an unparsable body that may hide a secret.
const UNPARSABLE: &str = "[redacted: unparsable body]";

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_redacted_from_paths_queries_and_bodies() {
        assert_eq!(
            redact_path("/checkout/abc123/pay"),
            "/checkout/[redacted]/pay"
        );
        assert_eq!(
            redact_query("a=1&client_secret=s3"),
            "a=1&client_secret=%5Bredacted%5D"
        );
        let mut body = json!({"notify_secret": "x", "nested": {"token": "t"}, "keep": "k"});
        assert!(redact_json(&mut body));
        assert_eq!(body["notify_secret"], REDACTED);
        assert_eq!(body["nested"]["token"], REDACTED);
        assert_eq!(body["keep"], "k");
    }

    #[test]
    fn checkout_tokens_are_redacted_from_free_text() {
        let token = "ct_0123456789abcdef0123456789abcdef";
        let rows = [
            (
                format!("http://127.0.0.1:8080/checkout/{token}"),
                "http://127.0.0.1:8080/checkout/[redacted]",
            ),
            (
                format!("https://x/CHECKOUT/{token}/pay?a=1"),
                "https://x/CHECKOUT/[redacted]/pay?a=1",
            ),
            (
                format!("back=https%3A%2F%2Fx%2Fcheckout%2F{token}%3Fa"),
                "back=https%3A%2F%2Fx%2Fcheckout%2F[redacted]%3Fa",
            ),
            (format!("{{\"u\":\"{token}\"}}"), "{\"u\":\"[redacted]\"}"),
            (
                "ct_short and acct_0123456789abcdef0123".to_owned(),
                "ct_short and acct_0123456789abcdef0123",
            ),
            ("/checkout/".to_owned(), "/checkout/"),
            ("é/checkout/é".to_owned(), "é/checkout/[redacted]"),
        ];
        for (text, expected) in rows {
            assert_eq!(redact_checkout_tokens(&text), expected, "{text}");
        }
    }

    #[test]
    fn unparsable_bodies_that_may_hide_a_secret_are_not_kept() {
        let json = HeaderMap::from_iter([(
            axum::http::header::CONTENT_TYPE,
            "application/json".parse().unwrap(),
        )]);
        for body in [
            "{\"notify_secret\": \"s3cr3t-value\", ",
            "{'notify_secret': 's3cr3t-value'}",
            "{\"notify\\u005fsecret\": \"s3cr3t-value\"",
            "{\"Client_Secret\" \"s3cr3t-value\"}",
        ] {
            assert_eq!(redact_body(&json, body.as_bytes()), UNPARSABLE, "{body}");
        }
        assert_eq!(redact_body(&json, b"{\"amount\": 1,"), "{\"amount\": 1,");
        assert_eq!(
            redact_body(&json, b"notify_secret=abc&x=1"),
            "notify_secret=%5Bredacted%5D&x=1"
        );
    }

    #[test]
    fn long_bodies_are_cut_in_the_log() {
        let long = "é".repeat(MAX_KEPT_BODY_CHARS + 5);
        let kept = keep(long);
        assert!(kept.ends_with("...(cut)"));
        assert_eq!(kept.chars().count(), MAX_KEPT_BODY_CHARS + "...(cut)".len());
        assert_eq!(keep("short".into()), "short");
    }
}
