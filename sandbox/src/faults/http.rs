//! HTTP side of fault injection: the middleware that applies faults and the control endpoints
//! that add, list and remove them. Sees the application state; the faults themselves are in
//! [`super::FaultStore`].

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::{DropConnection, Fault, parse_fault};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::seed;
use crate::state::AppState;

/// Control routes: `POST /faults` (add), `GET /faults` (list), `DELETE /faults` (clear all),
/// `DELETE /faults/{id}` (remove one).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/faults", post(add).get(list).delete(clear))
        .route("/faults/{id}", delete(remove))
}

fn faults_path() -> String {
    format!("{}/faults", seed::CONTROL_PREFIX)
}

/// Middleware applying faults before the real handler runs.
pub async fn middleware(
    State(shared): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if path == faults_path() || path.starts_with(&format!("{}/", faults_path())) {
        return next.run(request).await;
    }
    let fault = shared.db().faults.take(request.method(), path);
    let Some(fault) = fault else {
        return next.run(request).await;
    };
    if fault.after_handler {
        // The handler runs to completion in its own task, so its effects are stored even if
        // the client gives up or the connection is then dropped.
        let handled = tokio::spawn(next.run(request)).await;
        if fault.latency_ms > 0 {
            tokio::time::sleep(Duration::from_millis(fault.latency_ms)).await;
        }
        return match handled {
            Ok(_) if fault.drop_connection => dropped(),
            Ok(_) if fault.answers() => fault.response(),
            Ok(real) => real,
            Err(_) => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error").into_response()
            }
        };
    }
    if fault.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(fault.latency_ms)).await;
    }
    if fault.drop_connection {
        return dropped();
    }
    if fault.answers() {
        return fault.response();
    }
    next.run(request).await
}

/// A response that makes the accept loop close the connection without answering.
fn dropped() -> Response {
    let mut response = StatusCode::INTERNAL_SERVER_ERROR.into_response();
    response.extensions_mut().insert(DropConnection);
    response
}

async fn add(
    State(shared): State<Arc<AppState>>,
    JsonBody(body): JsonBody<Value>,
) -> ApiResult<impl IntoResponse> {
    let fault = parse_fault(&body)?;
    let mut db = shared.db();
    let id = db.faults.add(fault);
    let added = db
        .faults
        .faults
        .iter()
        .find(|f| f.id == id)
        .map(Fault::to_json)
        .unwrap_or(Value::Null);
    Ok((StatusCode::CREATED, Json(added)))
}

async fn list(State(shared): State<Arc<AppState>>) -> Json<Value> {
    let db = shared.db();
    Json(Value::Array(
        db.faults.faults.iter().map(Fault::to_json).collect(),
    ))
}

async fn clear(State(shared): State<Arc<AppState>>) -> Json<Value> {
    shared.db().faults.clear();
    Json(json!({ "cleared": true }))
}

async fn remove(
    State(shared): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let mut db = shared.db();
    let before = db.faults.faults.len();
    db.faults
        .faults
        .retain(|f| id.parse::<u64>().ok() != Some(f.id));
    if db.faults.faults.len() == before {
        return Err(ApiError::not_found("fault_not_found").describe("no such fault"));
    }
    Ok(Json(json!({ "removed": true })))
}
