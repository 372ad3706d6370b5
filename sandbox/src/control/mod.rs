//! Sandbox-only control endpoints under `/_sandbox` (not part of the service contract):
//! they drive what the real service would do on its own (time passing, buyers paying).

use std::sync::Arc;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::extract::JsonBody;
use crate::state::Shared;

/// Routes under the control prefix (the prefix itself is added by the caller).
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/users/{user}/tokens", post(crate::auth::mint_user_token))
        .route("/clock", get(clock))
        .route("/clock/advance", post(advance_clock))
}

fn clock_json(shared: &Shared) -> Value {
    json!({
        "now": shared.clock.now().format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
        "offset_seconds": shared.clock.offset_seconds(),
    })
}

async fn clock(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(clock_json(&shared))
}

/// Body of POST /_sandbox/clock/advance.
#[derive(Debug, Deserialize)]
pub struct Advance {
    seconds: i64,
}

async fn advance_clock(
    State(shared): State<Arc<Shared>>,
    JsonBody(body): JsonBody<Advance>,
) -> Result<Json<Value>, crate::error::ApiError> {
    if body.seconds < 0 {
        return Err(
            crate::error::ApiError::invalid_request("the clock only moves forward")
                .field("seconds"),
        );
    }
    shared.clock.advance(body.seconds);
    Ok(Json(clock_json(&shared)))
}
