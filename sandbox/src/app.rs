//! The router: business API under the API prefix, OAuth endpoints, checkout pages and controls,
//! wrapped in request recording (outermost), the guard against web pages ([`crate::guard`]),
//! fault injection, and the contract's error shape for answers the framework itself produces.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::error::ApiError;
use crate::state::AppState;
use crate::{
    catalog, control, dashboard, faults, limits, merchant_payments, notifications, requests, seed,
};

/// Builds the whole application over the application state.
pub fn router(shared: Arc<AppState>) -> Router {
    let api = Router::new()
        .merge(catalog::http::routes())
        .merge(merchant_payments::http::routes())
        .merge(notifications::http::routes());
    let control = control::routes()
        .merge(catalog::http::control_routes())
        .merge(merchant_payments::http::control_routes())
        .merge(faults::http::routes())
        .merge(requests::http::routes())
        .merge(limits::http::routes())
        .merge(dashboard::routes());
    Router::new()
        .nest(seed::API_PREFIX, api)
        .route(seed::TOKEN_PATH, post(crate::auth::token_endpoint))
        .merge(crate::openapi::routes())
        .merge(catalog::http::root_routes())
        .merge(merchant_payments::http::root_routes())
        .merge(dashboard::root_routes())
        .nest(seed::CONTROL_PREFIX, control)
        .fallback(|| async { ApiError::not_found("not_found").describe("no such route") })
        // Innermost: framework answers (wrong method, undecodable path) in the error shape.
        .layer(axum::middleware::from_fn(contract_errors))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            faults::http::middleware,
        ))
        // Host, origin and form rules: nothing a web page may not do reaches faults or handlers.
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            crate::guard::http::middleware,
        ))
        // Outermost: every request is recorded before a fault or handler sees it.
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            requests::http::middleware,
        ))
        .with_state(shared)
}

/// The contract says every error body carries at least a string `error`. Handlers answer that
/// way themselves; this turns the framework's own plain-text errors (405 for a wrong method,
/// 400 for a path segment that is not UTF-8, ...) on API, OAuth and control paths into the same
/// shape. Checkout pages (HTML) and injected faults (applied outside this layer) are untouched.
async fn contract_errors(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let json_paths = [
        format!("{}/", seed::API_PREFIX),
        "/oauth/".to_owned(),
        format!("{}/", seed::CONTROL_PREFIX),
    ];
    let applies = json_paths.iter().any(|prefix| path.starts_with(prefix));
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !applies || is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let code = match status {
        StatusCode::UNAUTHORIZED => "invalid_token",
        StatusCode::NOT_FOUND => "not_found",
        s if s.is_server_error() => "server_error",
        _ => "invalid_request",
    };
    let mut error = ApiError::new(status, code);
    if !text.trim().is_empty() {
        error = error.describe(text.trim());
    } else if status == StatusCode::METHOD_NOT_ALLOWED {
        error = error.describe("this method is not allowed on this path");
    }
    let mut fixed = error.into_response();
    for name in [header::ALLOW, header::RETRY_AFTER] {
        if let Some(value) = parts.headers.get(&name) {
            fixed.headers_mut().insert(name, value.clone());
        }
    }
    fixed
}
