//! HTTP side of rate limits: `DELETE /_sandbox/limits`. Handlers count requests with
//! `AppState::check_limit` (crate-internal).

use std::sync::Arc;

use axum::extract::State;
use axum::routing::delete;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::state::AppState;

/// Control routes: `DELETE /_sandbox/limits` resets every window.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/limits", delete(reset))
}

async fn reset(State(shared): State<Arc<AppState>>) -> Json<Value> {
    shared.db().limits.reset();
    Json(json!({ "reset": true }))
}
