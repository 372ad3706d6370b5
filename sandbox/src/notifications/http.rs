//! HTTP side of notifications: the business endpoints of delivery records (the list and the
//! re-queue), the delivery controls, and their routes.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::store::{logged_view, record_view};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::limits::Bucket;
use crate::merchant_payments::http::{effective_limit, payment_not_found};
use crate::state::AppState;

/// GET /openapi/v1/merchant-payments/{order_no}/notifications: the payment's delivery records,
/// status version descending, at most `limit` (default 20, out of range → 20). Only the
/// caller's own payments are visible.
pub async fn list_records(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    Path(order_no): Path<String>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult<Json<Value>> {
    let merchant_no =
        caller.authorize_client(&shared, "merchant_payments.read", Bucket::MerchantRead)?;
    let limit = query
        .map(|Query(q)| effective_limit(q.get("limit").map(String::as_str)))
        .unwrap_or_else(|_| effective_limit(None));
    let db = shared.db();
    db.payments
        .payments
        .get(&order_no)
        .filter(|p| p.merchant_no == merchant_no)
        .ok_or_else(payment_not_found)?;
    let mut records: Vec<_> = db
        .notifications
        .records
        .get(&order_no)
        .map(|list| list.iter().collect())
        .unwrap_or_default();
    records.sort_by_key(|r| std::cmp::Reverse(r.status_version));
    let items: Vec<Value> = records.into_iter().take(limit).map(record_view).collect();
    Ok(Json(json!({ "items": items })))
}

/// POST /openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry: re-queues an
/// exhausted notification. 202 `{"accepted": true}`; a delivered or pending one queues
/// nothing; no new event, no status change.
pub async fn requeue(
    State(shared): State<Arc<AppState>>,
    caller: Caller,
    Path((order_no, event_id)): Path<(String, String)>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let merchant_no = caller.authorize_client(
        &shared,
        "merchant_payments.create",
        Bucket::NotificationRetry,
    )?;
    let now = shared.clock.now();
    let mut db = shared.db();
    db.payments
        .payments
        .get(&order_no)
        .filter(|p| p.merchant_no == merchant_no)
        .ok_or_else(payment_not_found)?;
    db.notifications
        .requeue(&order_no, &event_id, now)
        .ok_or_else(|| {
            ApiError::not_found("payment_not_found")
                .describe("this payment has no notification with that event id")
        })?;
    Ok((StatusCode::ACCEPTED, Json(json!({ "accepted": true }))))
}

/// GET /_sandbox/notifications/attempts: every delivery attempt (target, headers, raw body,
/// result), oldest first. Optional `order_no` filter.
pub async fn attempts(
    State(shared): State<Arc<AppState>>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Json<Value> {
    let order_no = query.ok().and_then(|Query(q)| q.get("order_no").cloned());
    let db = shared.db();
    let items: Vec<Value> = db
        .notifications
        .log
        .iter()
        .filter(|a| order_no.as_ref().is_none_or(|o| *o == a.order_no))
        .map(logged_view)
        .collect();
    Json(json!({ "items": items }))
}

/// POST /_sandbox/merchant-payments/{order_no}/notifications/{event_id}/redeliver: sends the
/// event again now (see [`super::store::NotificationStore::redeliver_now`]). Answers
/// `{"redelivery": "advanced" | "queued" | "in_flight"}`; 404 `payment_not_found` for an
/// unknown payment or event.
pub async fn redeliver(
    State(shared): State<Arc<AppState>>,
    Path((order_no, event_id)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    use super::store::Redelivery;
    let now = shared.clock.now();
    let done = shared
        .db()
        .notifications
        .redeliver_now(&order_no, &event_id, now)
        .ok_or_else(|| {
            ApiError::not_found("payment_not_found")
                .describe("no such payment, or it has no notification with that event id")
        })?;
    let name = match done {
        Redelivery::Advanced => "advanced",
        Redelivery::Queued => "queued",
        Redelivery::InFlight => "in_flight",
    };
    Ok(Json(json!({ "redelivery": name })))
}

/// Body of PUT /_sandbox/notifications/worker.
#[derive(Debug, serde::Deserialize)]
pub struct WorkerSetting {
    /// False stops delivery (events keep being stored); true resumes it.
    pub enabled: bool,
}

/// PUT /_sandbox/notifications/worker: stops or resumes the delivery worker, to show that
/// stored events survive an interruption and that due work resumes afterwards.
pub async fn set_worker(
    State(shared): State<Arc<AppState>>,
    crate::extract::JsonBody(body): crate::extract::JsonBody<WorkerSetting>,
) -> Json<Value> {
    shared.db().notifications.paused = !body.enabled;
    Json(json!({ "enabled": body.enabled }))
}

/// Body of PUT /_sandbox/dns/{host}.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DnsPin {
    /// IP addresses the host resolves to for notification delivery; empty removes the pin.
    pub addresses: Vec<String>,
}

/// PUT /_sandbox/dns/{host}: pins a host name to addresses for notification delivery (instead
/// of the system resolver), e.g. to prove that a name resolving to a private address is
/// refused at delivery. An empty list removes the pin.
pub async fn set_dns(
    State(shared): State<Arc<AppState>>,
    Path(host): Path<String>,
    crate::extract::JsonBody(body): crate::extract::JsonBody<DnsPin>,
) -> ApiResult<Json<Value>> {
    let host = super::resolve::normalize_host(&host);
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ApiError::invalid_request("host must be a host name").field("host"));
    }
    let addresses = body
        .addresses
        .iter()
        .map(|a| a.trim().parse::<std::net::IpAddr>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            ApiError::invalid_request("addresses must be IP addresses").field("addresses")
        })?;
    shared.dns.set(&host, addresses.clone());
    Ok(Json(json!({
        "host": host,
        "addresses": addresses.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })))
}

/// DELETE /_sandbox/dns: removes every pinned host name.
pub async fn clear_dns(State(shared): State<Arc<AppState>>) -> Json<Value> {
    shared.dns.clear();
    Json(json!({ "cleared": true }))
}

/// Business routes under the API prefix.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/openapi/v1/merchant-payments/{order_no}/notifications",
            get(list_records),
        )
        .route(
            "/openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry",
            post(requeue),
        )
}

/// Sandbox controls under the control prefix.
pub fn control_routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/notifications/attempts", get(attempts))
        .route("/notifications/worker", put(set_worker))
        .route(
            "/merchant-payments/{order_no}/notifications/{event_id}/redeliver",
            post(redeliver),
        )
        .route("/dns", delete(clear_dns))
        .route("/dns/{host}", put(set_dns))
}
