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
use crate::state::AppState;

/// Routes under the control prefix (the prefix itself is added by the caller).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/users/{user}/tokens", post(crate::auth::mint_user_token))
        .route("/clock", get(clock))
        .route("/clock/advance", post(advance_clock))
        .route("/users/{user}", get(user))
        .route("/users/{user}/wallet", put(set_wallet))
        .route(
            "/token-lifetime",
            get(token_lifetime).put(set_token_lifetime),
        )
        .route("/reset", post(reset))
}

fn clock_json(shared: &AppState) -> Value {
    json!({
        "now": shared.clock.now().format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
        "offset_seconds": shared.clock.offset_seconds(),
    })
}

async fn clock(State(shared): State<Arc<AppState>>) -> Json<Value> {
    Json(clock_json(&shared))
}

/// POST /_sandbox/clock/advance `{"seconds"}`: moves the clock forward. A negative value gives
/// 400 `invalid_request`; one the clock cannot hold (more than
/// [`crate::clock::MAX_OFFSET_SECONDS`] ahead in all, or beyond `i64`) gives 400
/// `clock_out_of_range`, both with `field` `seconds`, and the clock stays where it was.
async fn advance_clock(
    State(shared): State<Arc<AppState>>,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    // Numbers beyond i64 saturate, so the clock refuses them as too far.
    let seconds = crate::extract::json_integer(&body["seconds"]).ok_or_else(|| {
        ApiError::invalid_request("seconds must be a whole number of seconds").field("seconds")
    })?;
    shared.clock.advance(seconds)?;
    Ok(Json(clock_json(&shared)))
}

fn unknown_user() -> ApiError {
    ApiError::not_found("unknown_user").describe("no such sandbox user")
}

/// GET /_sandbox/users/{user}: the user's platform-coin wallet (eight-decimal fixed point).
async fn user(
    State(shared): State<Arc<AppState>>,
    Path(user): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let db = shared.db();
    let user = db.directory.users.get(&user).ok_or_else(unknown_user)?;
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
    State(shared): State<Arc<AppState>>,
    Path(user): Path<String>,
    JsonBody(body): JsonBody<Wallet>,
) -> Result<Json<Value>, ApiError> {
    if body.wallet < 0 {
        return Err(ApiError::invalid_request("the wallet cannot be negative").field("wallet"));
    }
    let mut db = shared.db();
    let user = db.directory.users.get_mut(&user).ok_or_else(unknown_user)?;
    user.wallet = body.wallet;
    Ok(Json(
        json!({ "user_id": user.user_id, "wallet": user.wallet }),
    ))
}

/// GET /_sandbox/token-lifetime: `{"seconds"}`, the lifetime of client-credentials tokens
/// granted from now on.
async fn token_lifetime(State(shared): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({ "seconds": shared.db().directory.token_lifetime_seconds }))
}

/// PUT /_sandbox/token-lifetime: `{"seconds"}` (whole seconds, 0 to
/// [`crate::auth::MAX_TOKEN_LIFETIME_SECONDS`]) becomes the lifetime (`expires_in`) of
/// client-credentials tokens granted from now on; tokens already issued keep their expiry.
/// Anything else gives 400 `invalid_request` with `field` `seconds`.
async fn set_token_lifetime(
    State(shared): State<Arc<AppState>>,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let seconds = body
        .get("seconds")
        .and_then(Value::as_i64)
        .filter(|s| crate::auth::valid_token_lifetime(*s))
        .ok_or_else(|| {
            ApiError::invalid_request(format!(
                "seconds must be whole seconds from 0 to {}",
                crate::auth::MAX_TOKEN_LIFETIME_SECONDS
            ))
            .field("seconds")
        })?;
    shared.db().directory.token_lifetime_seconds = seconds;
    Ok(Json(json!({ "seconds": seconds })))
}

/// POST /_sandbox/reset: every stored thing goes back to the seed (tokens, orders, payments,
/// notifications, faults, request log, rate limits, pinned host names). The clock keeps its
/// offset: it never runs back; the rate-limit window keeps its configured length and the token
/// lifetime its configured value.
async fn reset(State(shared): State<Arc<AppState>>) -> Json<Value> {
    shared.db().reset();
    shared.dns.clear();
    Json(json!({ "reset": true }))
}
