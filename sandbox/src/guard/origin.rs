//! The origin rule (CSRF): a state-changing request that a browser sent on behalf of a page of
//! another origin is refused. Browsers say where a request comes from in `Origin` and
//! `Sec-Fetch-Site`; clients that are not browsers (the SDKs, tests, the `trigger` command,
//! curl) send neither and are not affected.

use axum::http::{HeaderMap, Method};

/// Whether `method` can change state (every method but GET, HEAD and OPTIONS).
pub fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Why a request with these headers, sent to the served `host` (the request's `Host`, already
/// checked against the allow-list), comes from another origin; `None` when it does not.
///
/// Refused: `Sec-Fetch-Site: cross-site` or `same-site`; an `Origin` that is not
/// `http(s)://HOST`; `Origin: null` unless the browser also says `Sec-Fetch-Site: same-origin`
/// (a page served with `Referrer-Policy: no-referrer`, like the hosted checkout, posts its own
/// forms with `Origin: null`).
pub fn cross_origin(headers: &HeaderMap, host: &str) -> Option<String> {
    let fetch_site = headers
        .get("sec-fetch-site")
        .map(|v| v.to_str().unwrap_or("").trim().to_ascii_lowercase());
    if let Some(site) = fetch_site.as_deref()
        && matches!(site, "cross-site" | "same-site")
    {
        return Some(format!(
            "Sec-Fetch-Site: {site}: a page of another site cannot change the sandbox"
        ));
    }
    let origin = headers.get(axum::http::header::ORIGIN)?;
    let origin = origin.to_str().unwrap_or("").trim();
    if origin == "null" {
        return (fetch_site.as_deref() != Some("same-origin")).then(|| {
            "Origin: null without Sec-Fetch-Site: same-origin: the request's origin is unknown"
                .to_owned()
        });
    }
    if same_origin(origin, host) {
        None
    } else {
        Some(format!(
            "Origin {origin:?} is not the sandbox's own origin: a page of another origin cannot change the sandbox"
        ))
    }
}

/// Whether `origin` (`scheme://host[:port]`) names the same host and port as the `Host` value.
fn same_origin(origin: &str, host: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    if !matches!(url.scheme(), "http" | "https") || url.path() != "/" && !url.path().is_empty() {
        return false;
    }
    let Ok(request) = url::Url::parse(&format!("{}://{host}", url.scheme())) else {
        return false;
    };
    url.host_str().map(str::to_ascii_lowercase) == request.host_str().map(str::to_ascii_lowercase)
        && url.port_or_known_default() == request.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn only_the_own_origin_or_no_origin_passes() {
        let host = "127.0.0.1:8080";
        assert!(cross_origin(&headers(&[]), host).is_none());
        assert!(cross_origin(&headers(&[("origin", "http://127.0.0.1:8080")]), host).is_none());
        assert!(cross_origin(&headers(&[("sec-fetch-site", "same-origin")]), host).is_none());
        assert!(cross_origin(&headers(&[("sec-fetch-site", "none")]), host).is_none());
        assert!(
            cross_origin(
                &headers(&[("origin", "null"), ("sec-fetch-site", "same-origin")]),
                host
            )
            .is_none()
        );
        for refused in [
            headers(&[("origin", "http://evil.example")]),
            headers(&[("origin", "http://127.0.0.1:8081")]),
            headers(&[("origin", "http://localhost:8080")]),
            headers(&[("origin", "null")]),
            headers(&[("origin", "garbage")]),
            headers(&[("sec-fetch-site", "cross-site")]),
            headers(&[("sec-fetch-site", "same-site")]),
            headers(&[
                ("origin", "http://127.0.0.1:8080"),
                ("sec-fetch-site", "cross-site"),
            ]),
        ] {
            assert!(cross_origin(&refused, host).is_some(), "{refused:?}");
        }
    }
}
