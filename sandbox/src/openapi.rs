//! `GET /openapi.json`: the OpenAPI 3.1 description of the service contract (`sandbox/openapi.json`,
//! checked in and compiled into the binary). It describes the contract's endpoints only, not the
//! sandbox's `/_sandbox` controls.

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::state::AppState;

/// Path of the document on the sandbox's origin.
pub const PATH: &str = "/openapi.json";

/// The document, as checked in.
pub const DOCUMENT: &str = include_str!("../openapi.json");

/// The route serving [`DOCUMENT`].
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route(PATH, get(document))
}

/// Serves [`DOCUMENT`] as `application/json`.
pub async fn document() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}
