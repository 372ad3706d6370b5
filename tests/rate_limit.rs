//! The client-side rate limiter (contract, "Limits": create merchant payment 60 per client per
//! minute; query, filtered list and channel directory 300, shared; notification retry 30). A
//! burst waits for room instead of earning 429s; a 429 from the service still pauses the class
//! for every clone of the client.
//!
//! The sandbox keeps the contract's budgets over a window shortened to a few seconds
//! (`SandboxOptions::rate_limit_window_seconds`), and the client is given the same window, so
//! the pacing a minute-long window imposes is watched in seconds.

mod common;

use std::time::{Duration, Instant};

use common::{Harness, s};
use serde_json::json;
use storefront::{CreateMerchantPayment, LimitClass, MinorAmount, RateLimits, RetryPolicy};
use storefront_sandbox::SandboxOptions;

const WINDOW_SECONDS: u32 = 3;

fn short_window() -> SandboxOptions {
    SandboxOptions {
        rate_limit_window_seconds: WINDOW_SECONDS,
        ..SandboxOptions::default()
    }
}

fn client_window() -> RateLimits {
    RateLimits {
        window: Duration::from_secs(WINDOW_SECONDS.into()),
        margin: Duration::from_millis(300),
        ..RateLimits::default()
    }
}

fn create_path() -> String {
    format!("{}/openapi/v1/merchant-payments", s::API_PREFIX)
}

/// Sends `n` merchant-payment creates at once, each from a clone of the client.
async fn burst_of_creates(h: &Harness, n: usize, tag: &str) -> Vec<storefront::Result<()>> {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let client = h.client.clone();
            let reference = format!("{tag}-{i}");
            tokio::spawn(async move {
                let request = CreateMerchantPayment::new(
                    reference,
                    MinorAmount::parse_decimal("1.00", 2).unwrap(),
                    "USD",
                );
                client.create_merchant_payment(&request).await.map(|_| ())
            })
        })
        .collect();
    let mut results = Vec::with_capacity(n);
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

async fn statuses_of_creates(h: &Harness) -> Vec<u64> {
    h.requests_to("POST", &create_path())
        .await
        .iter()
        .map(|r| r["status"].as_u64().unwrap_or(0))
        .collect()
}

/// 200 concurrent creates (budget 60 per window): every one succeeds, the service answers no
/// 429, and the burst takes the three further windows the budget demands, no less.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_creates_get_no_429_within_the_budget() {
    let h = Harness::start_with_options(short_window(), |c| {
        c.with_rate_limits(client_window())
            .with_overall_deadline(Duration::from_secs(60))
    })
    .await;
    h.client.authenticate().await.unwrap();
    let started = Instant::now();
    let results = burst_of_creates(&h, 200, "burst").await;
    let elapsed = started.elapsed();
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");

    let statuses = statuses_of_creates(&h).await;
    assert_eq!(statuses.len(), 200, "one request per create, no retries");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 0, "no 429");
    // 200 = 60 + 60 + 60 + 20: the last 20 may leave only after three full windows.
    let window = Duration::from_secs(WINDOW_SECONDS.into());
    assert!(elapsed >= window * 3, "paced: {elapsed:?}");
    let create = h
        .client
        .rate_limit_state()
        .into_iter()
        .find(|s| s.class == LimitClass::Create)
        .unwrap();
    assert_eq!(create.budget, 60);
    assert!(create.in_window <= 60, "{create:?}");
}

/// Without the limiter the same burst earns 429s from the service (what the limiter spares).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_limiter_a_burst_earns_429s() {
    let h = Harness::start_with_options(short_window(), |c| {
        c.with_rate_limits(RateLimits::disabled())
            .with_retry_policy(RetryPolicy::none())
    })
    .await;
    h.client.authenticate().await.unwrap();
    let results = burst_of_creates(&h, 80, "unpaced").await;
    let refused = results.iter().filter(|r| r.is_err()).count();
    assert_eq!(refused, 20, "60 admitted per window, 20 refused");
    let statuses = statuses_of_creates(&h).await;
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 20);
}

/// A 429 with `Retry-After` pauses the class for every clone: another clone's read waits for it
/// and is admitted, with no further 429.
#[tokio::test]
async fn a_429_pauses_the_class_for_every_clone_of_the_client() {
    let h = Harness::start_with(|c| c.with_retry_policy(RetryPolicy::none())).await;
    h.client.authenticate().await.unwrap();
    let channels = format!("{}/openapi/v1/merchant-payment-channels", s::API_PREFIX);
    h.fault(json!({"method": "GET", "path": channels, "status": 429,
                   "headers": {"Retry-After": "2"}, "body": {"error": "rate_limited"}}))
        .await;
    let err = h.client.list_channels().await.unwrap_err();
    assert_eq!(err.status(), Some(429));
    let read = h
        .client
        .rate_limit_state()
        .into_iter()
        .find(|s| s.class == LimitClass::Read)
        .unwrap();
    let paused_for = read.paused_for.expect("the class is paused");
    assert!(paused_for <= Duration::from_secs(2), "{read:?}");

    let other = h.client.clone();
    let started = Instant::now();
    other.list_channels().await.unwrap();
    // The clone waited out what was left of the pause (measured just before it started).
    assert!(started.elapsed() + Duration::from_millis(50) >= paused_for);
    assert_eq!(h.requests_to("GET", &channels).await.len(), 2);
}

/// The cap on requests in flight (`max_in_flight`): 100 concurrent calls against a server that
/// holds each request 50 ms never have more than the cap on the wire at once (bounded
/// connections and memory under any burst), and all of them complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_in_flight_never_exceed_the_cap() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::Router;
    use axum::routing::{get, post};

    let now = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (n, p) = (now.clone(), peak.clone());
    let app = Router::new()
        .route(
            "/oauth/token",
            post(|| async { axum::Json(json!({"access_token": "t", "expires_in": 3600})) }),
        )
        .route(
            "/api/openapi/v1/merchant-payment-channels",
            get(move || {
                let (n, p) = (n.clone(), p.clone());
                async move {
                    let inside = n.fetch_add(1, Ordering::SeqCst) + 1;
                    p.fetch_max(inside, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    n.fetch_sub(1, Ordering::SeqCst);
                    axum::Json(json!({"items": []}))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = storefront::Client::new(
        storefront::Config::new(
            format!("{origin}/api"),
            format!("{origin}/oauth/token"),
            "client",
            "secret",
        )
        .with_insecure_loopback(true)
        .with_rate_limits(RateLimits::disabled())
        .with_max_in_flight(8),
    )
    .unwrap();
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.list_channels().await })
        })
        .collect();
    for call in calls {
        call.await.unwrap().unwrap();
    }
    let peak = peak.load(Ordering::SeqCst);
    assert!((1..=8).contains(&peak), "peak in flight {peak}");
}
