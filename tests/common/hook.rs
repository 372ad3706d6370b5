//! A merchant's notification receiver on 127.0.0.1: stores every raw delivery (headers and
//! body) and acknowledges it with 200.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};

/// The raw deliveries a receiver got, in arrival order.
pub type Deliveries = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

async fn record(State(d): State<Deliveries>, headers: HeaderMap, body: Bytes) -> StatusCode {
    d.lock().unwrap().push((headers, body));
    StatusCode::OK
}

/// Starts a receiver that stores raw deliveries and acknowledges them; returns its address
/// (`http://127.0.0.1:{port}/hook`) and what it got.
pub async fn receiver() -> (String, Deliveries) {
    let deliveries: Deliveries = Arc::default();
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(record))
        .with_state(deliveries.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, deliveries)
}
