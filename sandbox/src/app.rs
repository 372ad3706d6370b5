//! The router: business API under the API prefix, OAuth endpoints, checkout pages and controls,
//! wrapped in request recording (outermost) and fault injection.

use std::sync::Arc;

use axum::Router;
use axum::routing::post;

use crate::state::Shared;
use crate::{catalog, control, faults, limits, merchant_payments, notifications, requests, seed};

/// Builds the whole application over shared state.
pub fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .merge(catalog::routes())
        .merge(merchant_payments::routes())
        .merge(notifications::routes());
    let control = control::routes()
        .merge(catalog::control_routes())
        .merge(merchant_payments::control_routes())
        .merge(faults::routes())
        .merge(requests::routes())
        .merge(limits::routes());
    Router::new()
        .nest(seed::API_PREFIX, api)
        .route(seed::TOKEN_PATH, post(crate::auth::token_endpoint))
        .merge(catalog::root_routes())
        .merge(merchant_payments::root_routes())
        .nest(seed::CONTROL_PREFIX, control)
        .fallback(|| async {
            crate::error::ApiError::not_found("not_found").describe("no such route")
        })
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            faults::middleware,
        ))
        // Outermost: every request is recorded before a fault or handler sees it.
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            requests::middleware,
        ))
        .with_state(shared)
}
