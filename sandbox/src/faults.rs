//! Faults injected by tests on given routes.

use std::sync::Arc;

use axum::Router;

use crate::state::Shared;

/// Faults injected by tests on given routes.
#[derive(Debug, Default)]
pub struct FaultStore {}

/// Routes of this module.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
}
