//! Helpers of the merchant-payment, checkout and notification tests: creating payments,
//! driving the checkout controls, and a local notification receiver (axum on 127.0.0.1:0).

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

use crate::harness::{Answer, Env};

/// A valid create body with this idempotency key (USD 12.50, merchant chooses nothing else).
pub fn body(key: &str) -> Value {
    json!({
        "external_reference": format!("order-{key}"),
        "idempotency_key": key,
        "amount_minor": 1250,
        "currency": "USD",
    })
}

/// `body(key)` expiring after 60 seconds, the shortest `expires_in` the contract allows.
pub fn short_lived(key: &str) -> Value {
    let mut request = body(key);
    request["expires_in"] = json!(60);
    request
}

/// POST /openapi/v1/merchant-payments.
pub async fn create(env: &Env, token: &str, body: &Value) -> Answer {
    env.post(&env.api("/openapi/v1/merchant-payments"), Some(token), body)
        .await
}

/// Creates a payment that must succeed; returns the create response.
pub async fn created(env: &Env, token: &str, body: &Value) -> Value {
    let answer = create(env, token, body).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    answer.body
}

/// Creates a payment with `body(key)` and returns its order number.
pub async fn new_payment(env: &Env, token: &str, key: &str) -> String {
    order_no(&created(env, token, &body(key)).await)
}

/// The `order_no` of a payment object.
pub fn order_no(payment: &Value) -> String {
    payment["order_no"]
        .as_str()
        .expect("order_no is a string")
        .to_owned()
}

/// GET /openapi/v1/merchant-payments/{order_no}.
pub async fn query(env: &Env, token: &str, order_no: &str) -> Answer {
    env.get(
        &env.api(&format!("/openapi/v1/merchant-payments/{order_no}")),
        Some(token),
    )
    .await
}

/// GET /openapi/v1/merchant-payments?{filters}.
pub async fn list(env: &Env, token: &str, filters: &str) -> Answer {
    env.get(
        &env.api(&format!("/openapi/v1/merchant-payments?{filters}")),
        Some(token),
    )
    .await
}

/// The status of a payment, read through the query endpoint.
pub async fn status(env: &Env, token: &str, order_no: &str) -> String {
    let answer = query(env, token, order_no).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    answer.body["status"].as_str().unwrap().to_owned()
}

/// POST a control under /_sandbox/merchant-payments/{order_no}/{action}.
pub async fn control(env: &Env, order_no: &str, action: &str, body: Value) -> Answer {
    env.post(
        &env.control(&format!("/merchant-payments/{order_no}/{action}")),
        None,
        &body,
    )
    .await
}

/// The buyer pays with the card channel (anonymous).
pub async fn pay_by_card(env: &Env, order_no: &str) -> Answer {
    control(
        env,
        order_no,
        "checkout/pay",
        json!({"payment_no": seed::CHANNEL_CARD_USD}),
    )
    .await
}

/// Forces a platform-side status.
pub async fn force(env: &Env, order_no: &str, status: &str) -> Answer {
    control(env, order_no, "force", json!({ "status": status })).await
}

/// Pauses or resumes the automatic sweep.
pub async fn set_sweep(env: &Env, enabled: bool) {
    let response = env
        .put_control("/sweep", &json!({ "enabled": enabled }))
        .await;
    assert_eq!(response.status, StatusCode::OK);
}

/// Sets the merchant-center default notification.
pub async fn set_default(env: &Env, merchant_no: &str, url: &str, secret: &str, enabled: bool) {
    let response = env
        .put_control(
            &format!("/merchants/{merchant_no}/notification-default"),
            &json!({ "url": url, "secret": secret, "enabled": enabled }),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK);
}

/// Waits (bounded, polling) until `check` holds; panics with `what` otherwise. The bound is
/// generous: it only stops a broken test from hanging, it asserts nothing about timing.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..600 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    /// A header as text.
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the notification body is JSON")
    }
}

#[derive(Default)]
struct ReceiverState {
    received: Vec<Received>,
    /// Statuses to answer with, in order; 200 when empty.
    script: VecDeque<u16>,
    /// Status used once the script is empty.
    fallback: Option<u16>,
    /// Real-time delay before answering.
    delay: Option<Duration>,
    /// Own address, sent as `Location` with 3xx answers (a client following it would come back).
    url: String,
}

/// A local notification receiver.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    state: Arc<Mutex<ReceiverState>>,
}

impl Receiver {
    /// Starts a receiver on 127.0.0.1:0 answering 200 unless told otherwise.
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(ReceiverState {
            url: url.clone(),
            ..ReceiverState::default()
        }));
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(state.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { url, state }
    }

    /// Answers every request with `status` from now on.
    pub fn answer_always(&self, status: u16) {
        let mut state = self.state.lock().unwrap();
        state.script.clear();
        state.fallback = Some(status);
    }

    /// Waits `delay` (real time) before answering from now on.
    pub fn answer_slowly(&self, delay: Duration) {
        self.state.lock().unwrap().delay = Some(delay);
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        self.state.lock().unwrap().received.len()
    }

    /// The requests of one notification event (by `X-Service-Event-ID`).
    pub fn received_for(&self, event_id: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.header("x-service-event-id") == event_id)
            .collect()
    }

    /// Waits until at least `n` requests of one notification event arrived; returns them.
    pub async fn wait_for_event(&self, event_id: &str, n: usize) -> Vec<Received> {
        let this = self.clone();
        eventually(&format!("{n} deliveries of {event_id}"), || {
            let this = this.clone();
            async move { this.received_for(event_id).len() >= n }
        })
        .await;
        self.received_for(event_id)
    }

    /// Waits until at least `n` requests arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        let this = self.clone();
        eventually(&format!("{n} notifications received"), || {
            let this = this.clone();
            async move { this.count() >= n }
        })
        .await;
        self.received()
    }
}

async fn receive(
    State(state): State<Arc<Mutex<ReceiverState>>>,
    headers: HeaderMap,
    body: Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (code, delay, url) = {
        let mut state = state.lock().unwrap();
        state.received.push(Received { headers, body });
        let code = state.script.pop_front().or(state.fallback).unwrap_or(200);
        (code, state.delay, state.url.clone())
    };
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let status = AxumStatus::from_u16(code).unwrap_or(AxumStatus::OK);
    if status.is_redirection() {
        (status, [(axum::http::header::LOCATION, url)]).into_response()
    } else {
        status.into_response()
    }
}
