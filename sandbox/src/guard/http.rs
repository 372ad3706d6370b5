//! HTTP side of the guard: the middleware applying the host, origin and form rules of
//! [`super`] to every request before faults and handlers see it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{form_token, origin};
use crate::error::ApiError;
use crate::seed::{API_PREFIX, CONTROL_PREFIX};
use crate::state::AppState;

/// Whether `path` is under `prefix` (the prefix itself or below it).
fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The middleware applying the host, origin and form rules (see the module documentation).
pub async fn middleware(
    State(shared): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let guard = &shared.guard;
    let host = request
        .headers()
        .get(header::HOST)
        .map(|v| v.to_str().unwrap_or("").to_owned())
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()));
    let Some(host) = host.filter(|h| guard.hosts.serves(h)) else {
        return ApiError::host_not_served(
            "this Host is not served by the sandbox (add it with --allow-host)",
        )
        .into_response();
    };
    let path = request.uri().path();
    let service_api = under(path, API_PREFIX) || path.starts_with("/oauth/");
    if service_api || !origin::changes_state(request.method()) {
        return next.run(request).await;
    }
    if let Some(why) = origin::cross_origin(request.headers(), &host) {
        return ApiError::cross_origin_request(why).into_response();
    }
    if !under(path, CONTROL_PREFIX) {
        return next.run(request).await;
    }
    if let Some(sent) = request.headers().get(form_token::HEADER) {
        return if guard.token.matches(sent.to_str().unwrap_or("")) {
            next.run(request).await
        } else {
            ApiError::dashboard_token_invalid("X-Sandbox-Token is not this sandbox's token")
                .into_response()
        };
    }
    let Some(kind) = form_token::form_kind(request.headers()) else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let bytes = match crate::extract::read_body(Request::new(body)).await {
        Ok(bytes) => bytes,
        Err(error) => return error.into_response(),
    };
    let sent = form_token::field(&kind, &bytes);
    if sent.is_some_and(|t| guard.token.matches(&t)) {
        next.run(Request::from_parts(parts, Body::from(bytes)))
            .await
    } else {
        ApiError::dashboard_token_invalid(format!(
            "a form submission to a control route needs the dashboard's {} field",
            form_token::FIELD
        ))
        .into_response()
    }
}
