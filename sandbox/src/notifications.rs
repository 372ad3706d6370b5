//! Signed server-to-server status notifications of merchant payments: the configuration table
//! ([`config`]), events and delivery records ([`store`]), the signature ([`signing`]), one
//! delivery attempt ([`delivery`], run by the background worker) and the business endpoints
//! ([`handlers`]).

use std::sync::Arc;

use axum::Router;
use axum::routing::{delete, get, post, put};

use crate::state::Shared;

pub mod address;
pub mod config;
pub mod delivery;
pub mod handlers;
pub mod resolve;
pub mod signing;
pub mod store;

pub use store::NotificationStore;

/// Business routes under the API prefix.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/openapi/v1/merchant-payments/{order_no}/notifications",
            get(handlers::list_records),
        )
        .route(
            "/openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry",
            post(handlers::requeue),
        )
}

/// Sandbox controls under the control prefix.
pub fn control_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/notifications/attempts", get(handlers::attempts))
        .route("/notifications/worker", put(handlers::set_worker))
        .route(
            "/merchant-payments/{order_no}/notifications/{event_id}/redeliver",
            post(handlers::redeliver),
        )
        .route("/dns", delete(handlers::clear_dns))
        .route("/dns/{host}", put(handlers::set_dns))
}
