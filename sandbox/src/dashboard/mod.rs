//! The developer's dashboard at `GET /_sandbox/` (sandbox only, no auth, like every control):
//! merchant payments with their status timeline, notification attempts as sent, catalog orders
//! and trades, the clock, pending faults and rate-limit windows, with buttons that call the
//! existing control endpoints.
//!
//! [`view`] is the only module that reads sandbox state (through the read-only views of
//! [`crate::inspect`], which hold no secret); [`pages`] renders those views as HTML.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::error::ApiError;
use crate::state::AppState;

pub mod pages;
pub mod view;

use view::DashboardView;

/// Routes under the control prefix: `/payments/{order_no}`, and the overview at the prefix
/// itself (`/_sandbox`; `/_sandbox/` is in [`root_routes`]).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(overview))
        .route("/payments/{order_no}", get(payment))
        .route("/dashboard.js", get(script))
        .route("/dashboard.css", get(style))
}

/// The overview at `/_sandbox/` (a route nested at `/_sandbox` matches `/_sandbox` only).
pub fn root_routes() -> Router<Arc<AppState>> {
    Router::new().route(&format!("{}/", crate::seed::CONTROL_PREFIX), get(overview))
}

/// The dashboard's Content-Security-Policy: script and style only from the sandbox's own files
/// (no `'unsafe-inline'`), requests and forms only to itself, never framed.
pub const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; \
     connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// A static asset of the dashboard, revalidated on each load and never sniffed.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// GET /_sandbox/dashboard.js: the pages' script.
async fn script() -> Response {
    asset("text/javascript; charset=utf-8", pages::SCRIPT)
}

/// GET /_sandbox/dashboard.css: the pages' style sheet.
async fn style() -> Response {
    asset("text/css; charset=utf-8", pages::STYLE)
}

/// An HTML answer that is never cached, loads nothing from elsewhere and sends no referrer.
fn html(body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CONTENT_SECURITY_POLICY, CSP),
        ],
        body,
    )
        .into_response()
}

/// GET /_sandbox/: the overview.
async fn overview(State(shared): State<Arc<AppState>>) -> Response {
    let view = DashboardView::capture(&shared, None);
    html(pages::overview(&view))
}

/// GET /_sandbox/payments/{order_no}: one payment (404 `payment_not_found` when unknown).
async fn payment(
    State(shared): State<Arc<AppState>>,
    Path(order_no): Path<String>,
) -> Result<Response, ApiError> {
    let view = DashboardView::capture(&shared, Some(&order_no));
    let payment = view
        .payments
        .first()
        .ok_or_else(|| ApiError::not_found("payment_not_found").describe("no such payment"))?;
    Ok(html(pages::payment(&view, payment)))
}
