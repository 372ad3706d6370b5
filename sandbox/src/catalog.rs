//! Catalogue products, catalog orders and catalog payment sessions.

use std::sync::Arc;

use axum::Router;

use crate::state::Shared;

/// Catalogue products, catalog orders and catalog payment sessions.
#[derive(Debug, Default)]
pub struct CatalogStore {}

/// Routes of this module.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
}

impl CatalogStore {
    /// The seeded catalogue.
    pub fn seeded() -> Self {
        CatalogStore::default()
    }
}

/// Routes outside the API prefix (userinfo, checkout pages).
pub fn root_routes() -> Router<Arc<Shared>> {
    Router::new()
}
