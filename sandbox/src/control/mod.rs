//! Sandbox-only control endpoints under `/_sandbox` (not part of the service contract):
//! they drive what the real service would do on its own (time passing, buyers paying).

use std::sync::Arc;

use axum::extract::Path;
use axum::extract::State;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::extract::JsonBody;
use crate::state::{Shared, World};

/// Routes under the control prefix (the prefix itself is added by the caller).
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/users/{user}/tokens", post(crate::auth::mint_user_token))
        .route("/clock", get(clock))
        .route("/clock/advance", post(advance_clock))
        .route("/users/{user}", get(user))
        .route("/users/{user}/wallet", put(set_wallet))
        .route("/reset", post(reset))
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

fn unknown_user() -> ApiError {
    ApiError::not_found("unknown_user").describe("no such sandbox user")
}

/// GET /_sandbox/users/{user}: the user's platform-coin wallet (eight-decimal fixed point).
async fn user(
    State(shared): State<Arc<Shared>>,
    Path(user): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let world = shared.world();
    let user = world.users.get(&user).ok_or_else(unknown_user)?;
    Ok(Json(
        json!({ "user_id": user.user_id, "wallet": user.wallet }),
    ))
}

/// Body of PUT /_sandbox/users/{user}/wallet.
#[derive(Debug, Deserialize)]
pub struct Wallet {
    wallet: i64,
}

/// PUT /_sandbox/users/{user}/wallet: sets the wallet balance (eight-decimal, not negative).
async fn set_wallet(
    State(shared): State<Arc<Shared>>,
    Path(user): Path<String>,
    JsonBody(body): JsonBody<Wallet>,
) -> Result<Json<Value>, ApiError> {
    if body.wallet < 0 {
        return Err(ApiError::invalid_request("the wallet cannot be negative").field("wallet"));
    }
    let mut world = shared.world();
    let user = world.users.get_mut(&user).ok_or_else(unknown_user)?;
    user.wallet = body.wallet;
    Ok(Json(
        json!({ "user_id": user.user_id, "wallet": user.wallet }),
    ))
}

/// POST /_sandbox/reset: every stored thing goes back to the seed (tokens, orders, payments,
/// notifications, faults, request log, rate limits, pinned host names). The clock keeps its
/// offset: it never runs back, and the rate-limit window keeps its configured length.
async fn reset(State(shared): State<Arc<Shared>>) -> Json<Value> {
    {
        let mut world = shared.world();
        let window = world.limits.window();
        *world = World::seeded();
        world.limits.set_window(window);
    }
    shared.dns.clear();
    Json(json!({ "reset": true }))
}
