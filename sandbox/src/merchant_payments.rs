//! Merchant payments, idempotency records and checkout sessions.

use std::sync::Arc;

use axum::Router;

use crate::state::Shared;

/// Merchant payments, idempotency records and checkout sessions.
#[derive(Debug, Default)]
pub struct PaymentStore {}

/// Routes of this module.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
}

/// Routes outside the API prefix (userinfo, checkout pages).
pub fn root_routes() -> Router<Arc<Shared>> {
    Router::new()
}
