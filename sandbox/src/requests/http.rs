//! HTTP side of the request log: the recording middleware and `GET`/`DELETE
//! /_sandbox/requests`. Sees the application state; the log is [`super::RequestLog`].

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use super::{keep, redact_body, redact_checkout_tokens, redact_headers, redact_path, redact_query};
use crate::error::ApiError;
use crate::extract::MAX_BODY_BYTES;
use crate::faults::DropConnection;
use crate::seed;
use crate::state::AppState;

/// Control routes: `GET /requests` (optional `method` and `path` filters), `DELETE /requests`.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/requests", get(list).delete(clear))
}

async fn list(State(shared): State<Arc<AppState>>, RawQuery(query): RawQuery) -> Json<Value> {
    let mut method = None;
    let mut path = None;
    for (name, value) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match name.as_ref() {
            "method" => method = Some(value.to_ascii_uppercase()),
            "path" => path = Some(value.into_owned()),
            _ => {}
        }
    }
    let db = shared.db();
    let items = db
        .requests
        .records
        .iter()
        .map(|r| &r.value)
        .filter(|r| method.as_deref().is_none_or(|m| r["method"] == m))
        .filter(|r| path.as_deref().is_none_or(|p| r["path"] == p))
        .cloned()
        .collect();
    Json(Value::Array(items))
}

async fn clear(State(shared): State<Arc<AppState>>) -> Json<Value> {
    let mut db = shared.db();
    db.requests.records.clear();
    Json(json!({ "cleared": true }))
}

/// Middleware recording every request outside the control prefix (see the module docs). A body
/// over [`MAX_BODY_BYTES`] is answered with 413 `invalid_request` here, for every route.
pub async fn middleware(
    State(shared): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    if path == seed::CONTROL_PREFIX || path.starts_with(&format!("{}/", seed::CONTROL_PREFIX)) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip().to_string());
    let mut record = json!({
        "peer": peer,
        "at": shared.clock.now().format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
        "method": parts.method.as_str(),
        "path": redact_checkout_tokens(&redact_path(&path)),
        "query": parts.uri.query().map(|q| redact_checkout_tokens(&redact_query(q))),
        "headers": redact_headers(&parts.headers),
        "body": Value::Null,
        "body_bytes": 0,
        "status": Value::Null,
    });
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            record["body"] = format!("<more than {MAX_BODY_BYTES} bytes, not kept>").into();
            let id = shared.db().requests.push(record);
            let error = ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "invalid_request")
                .describe(format!("the body exceeds {MAX_BODY_BYTES} bytes"));
            shared.db().requests.set_status(id, Some(413));
            return error.into_response();
        }
    };
    record["body_bytes"] = bytes.len().into();
    if !bytes.is_empty() {
        record["body"] = keep(redact_body(&parts.headers, &bytes)).into();
    }
    let id = shared.db().requests.push(record);
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let status = if response.extensions().get::<DropConnection>().is_some() {
        None
    } else {
        Some(response.status().as_u16())
    };
    shared.db().requests.set_status(id, status);
    response
}
