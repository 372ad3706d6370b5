//! The dashboard token (form rule): an HTML form on another site can post to a control route
//! without any `Origin` (old browsers, privacy tools), but it cannot know this per-sandbox random
//! token. Every form submission (`application/x-www-form-urlencoded`, `multipart/form-data`,
//! `text/plain`) to a control route must carry it, in the `sandbox_token` field or the
//! `X-Sandbox-Token` header; the dashboard's forms carry it in a hidden field and its script
//! sends it as the header.

use axum::http::{HeaderMap, header};

/// Name of the hidden form field that carries the token.
pub const FIELD: &str = "sandbox_token";

/// Name of the request header that carries the token (sent by the dashboard's script).
pub const HEADER: &str = "x-sandbox-token";

/// The per-sandbox random token of the dashboard's forms (32 bytes from the system CSPRNG).
#[derive(Clone)]
pub struct DashboardToken(String);

impl std::fmt::Debug for DashboardToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DashboardToken(..)")
    }
}

impl Default for DashboardToken {
    fn default() -> Self {
        DashboardToken(crate::ids::random_hex("sbx_dt_", 32))
    }
}

impl DashboardToken {
    /// The token, for the dashboard pages' hidden fields.
    pub fn value(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is the token. The SHA-256 digests are compared (as `auth.rs` compares
    /// client secrets), so the time taken says nothing about the token's bytes.
    pub fn matches(&self, candidate: &str) -> bool {
        let digest = |s: &str| ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
        digest(&self.0).as_ref() == digest(candidate).as_ref()
    }
}

/// The form encoding of a request, when its `Content-Type` is one an HTML form can send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormKind {
    /// `application/x-www-form-urlencoded`.
    UrlEncoded,
    /// `multipart/form-data` with its boundary.
    Multipart(String),
    /// `text/plain` (`name=value` lines).
    TextPlain,
}

/// The form encoding of a request; `None` when the content type is not one a form can send.
pub fn form_kind(headers: &HeaderMap) -> Option<FormKind> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().unwrap_or("");
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "application/x-www-form-urlencoded" => Some(FormKind::UrlEncoded),
        "text/plain" => Some(FormKind::TextPlain),
        "multipart/form-data" => {
            let boundary = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("boundary"))
                .map(|(_, v)| v.trim().trim_matches('"').to_owned())
                .unwrap_or_default();
            Some(FormKind::Multipart(boundary))
        }
        _ => None,
    }
}

/// The `sandbox_token` field of a form body of `kind`, when present.
pub fn field(kind: &FormKind, body: &[u8]) -> Option<String> {
    match kind {
        FormKind::UrlEncoded => url::form_urlencoded::parse(body)
            .find(|(name, _)| name == FIELD)
            .map(|(_, value)| value.into_owned()),
        FormKind::TextPlain => String::from_utf8_lossy(body).lines().find_map(|line| {
            let (name, value) = line.split_once('=')?;
            (name == FIELD).then(|| value.trim_end_matches('\r').to_owned())
        }),
        FormKind::Multipart(boundary) if !boundary.is_empty() => {
            let text = String::from_utf8_lossy(body);
            let delimiter = format!("--{boundary}");
            text.split(delimiter.as_str()).find_map(|part| {
                let (head, value) = part.split_once("\r\n\r\n")?;
                let named = head.lines().any(|line| {
                    line.to_ascii_lowercase()
                        .starts_with("content-disposition:")
                        && line.contains(&format!("name=\"{FIELD}\""))
                });
                named.then(|| value.trim_end_matches("\r\n").to_owned())
            })
        }
        FormKind::Multipart(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn kind(content_type: &'static str) -> Option<FormKind> {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        form_kind(&headers)
    }

    #[test]
    fn the_token_field_is_found_in_each_form_encoding() {
        let token = DashboardToken::default();
        assert!(token.matches(token.value()));
        assert!(!token.matches("sbx_dt_0"));
        assert_eq!(kind("application/json"), None);
        let url = kind("application/x-www-form-urlencoded; charset=utf-8").unwrap();
        assert_eq!(
            field(&url, b"a=1&sandbox_token=t%2B1").as_deref(),
            Some("t+1")
        );
        assert_eq!(field(&url, b""), None);
        let plain = kind("text/plain").unwrap();
        assert_eq!(
            field(&plain, b"a=1\r\nsandbox_token=tok\r\n").as_deref(),
            Some("tok")
        );
        let multi = kind("multipart/form-data; boundary=\"XyZ\"").unwrap();
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"sandbox_token\"\r\n\r\ntok\r\n--XyZ--\r\n";
        assert_eq!(field(&multi, body).as_deref(), Some("tok"));
        assert_eq!(field(&multi, b"--XyZ--\r\n"), None);
    }
}
