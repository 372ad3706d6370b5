//! Per-client and per-IP rate limits of the contract.

use std::sync::Arc;

use axum::Router;

use crate::state::Shared;

/// Per-client and per-IP rate limits of the contract.
#[derive(Debug, Default)]
pub struct RateLimiter {}

/// Routes of this module.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
}
