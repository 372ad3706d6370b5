//! Requests the sandbox received, for tests to inspect.

use std::sync::Arc;

use axum::Router;

use crate::state::Shared;

/// Requests the sandbox received, for tests to inspect.
#[derive(Debug, Default)]
pub struct RequestLog {}

/// Routes of this module.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
}
