//! Hostile answers never panic, flood or run unbounded (issue 10, items 3, 5 and 6).
//!
//! The sandbox answers by the contract, so these tests run the SDK over real HTTP against small
//! servers on 127.0.0.1 that answer what a broken or hostile service could: a token that "never
//! expires", a products endpoint that repeats page 1 forever, a status endpoint that stalls or
//! fails, absurd precisions and negative prices. Each test names the rule it proves.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::TryStreamExt;
use serde_json::{Value, json};
use storefront::{
    Client, Config, Error, ErrorKind, PaymentStatus, PaymentWaitOutcome, ProductQuery, RetryPolicy,
    UserSession,
};

const ORDER: &str = "O1";
const STATUS_PATH: &str = "/api/openapi/v1/orders/O1/payment";
const ORDER_PATH: &str = "/api/openapi/v1/orders/O1";
const PRODUCTS_PATH: &str = "/api/openapi/v1/products";
const TOKEN_PATH: &str = "/oauth/token";

/// Request counters of a hostile server.
#[derive(Default)]
struct Counts {
    token: AtomicUsize,
    products: AtomicUsize,
    status: AtomicUsize,
}

type Shared = Arc<Counts>;

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A token endpoint granting `expires_in` (which may be anything a server could send).
fn token_route(expires_in: Value) -> Router<Shared> {
    Router::new().route(
        TOKEN_PATH,
        post(move |State(c): State<Shared>| {
            let expires_in = expires_in.clone();
            async move {
                c.token.fetch_add(1, Ordering::SeqCst);
                json_response(
                    StatusCode::OK,
                    json!({"access_token": "client-token", "scope": "products.read",
                           "expires_in": expires_in}),
                )
            }
        }),
    )
}

/// Serves `app` (plus a well-behaved token endpoint unless it has one) on 127.0.0.1:0.
async fn serve(app: Router<Shared>) -> (String, Shared) {
    let counts: Shared = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = app.with_state(counts.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), counts)
}

/// A client of the hostile server at `origin`, plain HTTP on loopback, one attempt per call
/// (so that a failed poll reaches the wait as it is).
fn config(origin: &str) -> Config {
    Config::new(
        format!("{origin}/api"),
        format!("{origin}{TOKEN_PATH}"),
        "client",
        "secret",
    )
    .with_insecure_loopback(true)
    .with_retry_policy(RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    })
}

fn user(origin: &str) -> UserSession {
    Client::new(config(origin)).unwrap().user("user-token")
}

fn product(n: u64, price: i64) -> Value {
    json!({"gd_no": format!("G{n}"), "gd_name": "Beans", "actual_price": price,
           "retail_price": price, "currency": "USD", "currency_decimals": 2, "in_stock": 5,
           "buy_limit_num": 0, "payment_policy": "automatic"})
}

fn page_of(list: Vec<Value>, total: u64, page: u64, limit: u64) -> Value {
    json!({"list": list, "total": total, "page": page, "limit": limit})
}

fn requested_page(uri: &Uri) -> u64 {
    uri.query()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
}

/// A products endpoint answering every request with `answer(requested page)`.
fn products_route(answer: fn(u64) -> Value) -> Router<Shared> {
    token_route(json!(3600)).route(
        PRODUCTS_PATH,
        get(move |State(c): State<Shared>, uri: Uri| async move {
            c.products.fetch_add(1, Ordering::SeqCst);
            json_response(StatusCode::OK, answer(requested_page(&uri)))
        }),
    )
}

fn paid_order() -> Value {
    json!({"order_no": ORDER, "gd_no": "G1", "quantity": 1, "status": 1,
           "currency": "USD", "currency_decimals": 2, "total_amount": 1250000000,
           "discount_amount": 0, "handling_amount": 0, "pay_amount": 1250000000,
           "payment_currency": "USD", "payment_currency_decimals": 2,
           "payment_subtotal": 1250000000, "payment_handling_amount": 0,
           "payment_pay_amount": 1250000000})
}

/// A payment status endpoint answering poll number `n` (0-based) with `answer(n)`, and the
/// order endpoint with a paid order.
fn status_route<F, Fut>(answer: F) -> Router<Shared>
where
    F: Fn(usize) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    Router::new()
        .route(
            STATUS_PATH,
            get(move |State(c): State<Shared>| {
                let answer = answer.clone();
                async move { answer(c.status.fetch_add(1, Ordering::SeqCst)).await }
            }),
        )
        .route(
            ORDER_PATH,
            get(|| async { json_response(StatusCode::OK, paid_order()) }),
        )
}

fn status(code: i64) -> Response {
    json_response(StatusCode::OK, json!({ "status": code }))
}

// ---- Item 3: one answer must not panic the client ----

/// Rule: a token's lifetime is capped (one day); `expires_in` of 2^63 or more gives a cached,
/// usable token instead of "overflow when adding duration to instant" on every call.
#[tokio::test]
async fn huge_expires_in_gives_a_cached_token_not_a_panic() {
    for expires_in in [json!(u64::MAX), json!(1u64 << 63)] {
        let (origin, counts) = serve(token_route(expires_in)).await;
        let client = Client::new(config(&origin)).unwrap();
        let granted = client.authenticate().await.unwrap();
        assert!(granted.expires_in >= 1 << 63);
        client.authenticate().await.unwrap();
        assert_eq!(
            client.access_token().await.unwrap().expose(),
            "client-token"
        );
        assert_eq!(
            counts.token.load(Ordering::SeqCst),
            1,
            "the token is cached"
        );
    }
}

/// Rule: every configuration duration is at most one day; `Duration::MAX` is a configuration
/// error from `Client::new`, never a panic when a call computes its deadline.
#[tokio::test]
async fn duration_max_in_the_configuration_is_a_config_error() {
    let (origin, counts) = serve(products_route(|p| page_of(vec![], 0, p, 20))).await;
    let adjust: [fn(Config) -> Config; 3] = [
        |c| c.with_overall_deadline(Duration::MAX),
        |c| c.with_attempt_timeout(Duration::MAX),
        |c| {
            c.with_retry_policy(RetryPolicy {
                max_retry_after: Duration::MAX,
                max_delay: Duration::MAX,
                base_delay: Duration::MAX,
                ..RetryPolicy::default()
            })
        },
    ];
    for f in adjust {
        match Client::new(f(config(&origin))) {
            Err(e) => assert_eq!(e.kind(), ErrorKind::Config, "{e}"),
            Ok(client) => {
                // Whatever else: a call must not panic.
                let _ = client.list_products(&ProductQuery::default()).await;
                panic!("Duration::MAX accepted");
            }
        }
    }
    let mut c = config(&origin);
    c.token_refresh_margin = Duration::MAX;
    assert_eq!(Client::new(c).unwrap_err().kind(), ErrorKind::Config);
    assert_eq!(counts.products.load(Ordering::SeqCst), 0);
}

/// Rule: `Duration::MAX` as the wait's timeout or interval cannot overflow the clock: the
/// timeout is capped (30 days), and a next poll past the deadline ends the wait.
#[tokio::test]
async fn duration_max_timeout_or_interval_of_the_wait_does_not_panic() {
    let (origin, _) = serve(status_route(|n| async move {
        status(if n == 0 { 0 } else { 1 })
    }))
    .await;
    let user = user(&origin);
    let outcome = user
        .wait_for_payment(ORDER, Duration::from_millis(100), Duration::MAX)
        .await
        .unwrap();
    assert_eq!(outcome.payment_status(), PaymentStatus::Paid);

    let (origin, counts) = serve(status_route(|_| async { status(0) })).await;
    let err = user_session_wait(&origin, Duration::MAX, Duration::from_secs(1)).await;
    assert!(still_awaiting(&err), "{err:?}");
    assert_eq!(counts.status.load(Ordering::SeqCst), 1);
}

/// A wait expected to end without a final status ("still pending" is an outcome, not an
/// error).
async fn user_session_wait(
    origin: &str,
    interval: Duration,
    timeout: Duration,
) -> PaymentWaitOutcome {
    user(origin)
        .wait_for_payment(ORDER, interval, timeout)
        .await
        .unwrap()
}

/// Whether the wait ended still pending with status 0 seen last.
fn still_awaiting(outcome: &PaymentWaitOutcome) -> bool {
    matches!(
        outcome,
        PaymentWaitOutcome::StillPending {
            last_status: PaymentStatus::AwaitingPayment,
            ..
        }
    )
}

/// Rule: page arithmetic is checked: a server `page` of `u32::MAX` ends the stream with a
/// decode error instead of overflowing `page + 1`.
#[tokio::test]
async fn server_page_u32_max_ends_the_stream_with_a_decode_error() {
    let (origin, _) = serve(products_route(|p| {
        page_of(vec![product(p, 1)], u64::MAX, p, 1)
    }))
    .await;
    let client = Client::new(config(&origin)).unwrap();
    let query = ProductQuery {
        page: Some(u32::MAX),
        limit: Some(1),
        ..Default::default()
    };
    let got: Result<Vec<_>, _> = client.products_stream(query).try_collect().await;
    assert_eq!(got.unwrap_err().kind(), ErrorKind::Decode);

    let (origin, _) = serve(products_route(|_| {
        page_of(vec![product(1, 1)], 45, u64::from(u32::MAX), 20)
    }))
    .await;
    let client = Client::new(config(&origin)).unwrap();
    let got: Result<Vec<_>, _> = client
        .products_stream(ProductQuery::default())
        .try_collect()
        .await;
    assert_eq!(got.unwrap_err().kind(), ErrorKind::Decode);
}

// ---- Item 5: no unbounded work from the server ----

/// Collects the stream with a generous guard against looping forever.
async fn collect_guarded(origin: &str) -> (Result<usize, Error>, Duration) {
    let client = Client::new(config(origin)).unwrap();
    let started = Instant::now();
    let collected = tokio::time::timeout(
        Duration::from_secs(20),
        client
            .products_stream(ProductQuery::default())
            .try_collect::<Vec<_>>(),
    )
    .await
    .expect("the stream ends instead of looping");
    (collected.map(|v| v.len()), started.elapsed())
}

/// Rule: a server that repeats a page or never advances ends the stream with a decode error
/// after a bounded number of requests (it looped forever: 10,992 requests in 3 s).
#[tokio::test]
async fn repeating_or_stuck_pages_end_the_stream_after_few_requests() {
    let answers: [fn(u64) -> Value; 5] = [
        // Page 1 whatever is asked, with a total never reached (the old code looped forever).
        |_| page_of((0..20).map(|n| product(n, 1)).collect(), 1 << 40, 1, 20),
        // Page 1 whatever is asked.
        |_| page_of((0..20).map(|n| product(n, 1)).collect(), 45, 1, 20),
        // The page number asked for, the products of page 1.
        |p| page_of((0..20).map(|n| product(n, 1)).collect(), 45, p, 20),
        // An empty list before `total` is reached.
        |p| page_of(vec![], 45, p, 20),
        // A `total` that grows with every page (never reached).
        |p| {
            let list = (0..20).map(|n| product((p - 1) * 20 + n, 1)).collect();
            page_of(list, 45 * p, p, 20)
        },
    ];
    for (i, answer) in answers.into_iter().enumerate() {
        let (origin, counts) = serve(products_route(answer)).await;
        let (got, _) = collect_guarded(&origin).await;
        assert_eq!(got.unwrap_err().kind(), ErrorKind::Decode, "case {i}");
        let requests = counts.products.load(Ordering::SeqCst);
        assert!(requests <= 2, "case {i}: {requests} requests");
    }
}

/// Rule: the stream stops at `total` (3 pages for 45 products of 20), whatever follows.
#[tokio::test]
async fn the_stream_stops_at_total() {
    let (origin, counts) = serve(products_route(|p| {
        let list = (0..20).map(|n| product((p - 1) * 20 + n, 1)).collect();
        page_of(list, 45, p, 20)
    }))
    .await;
    let (got, _) = collect_guarded(&origin).await;
    assert_eq!(got.unwrap(), 45);
    assert_eq!(counts.products.load(Ordering::SeqCst), 3);
}

/// Rule: the poll interval has a floor of 100 ms (a 1 ns interval gave 170 polls in 300 ms).
#[tokio::test]
async fn a_tiny_poll_interval_is_raised_to_the_floor() {
    let (origin, counts) = serve(status_route(|_| async { status(0) })).await;
    let err = user_session_wait(&origin, Duration::from_nanos(1), Duration::from_millis(300)).await;
    assert!(still_awaiting(&err), "{err:?}");
    let polls = counts.status.load(Ordering::SeqCst);
    assert!((1..=4).contains(&polls), "{polls} polls in 300 ms");
}

/// Rule: `currency_decimals` above 18 and negative prices or stock are decode errors (the
/// contract's precisions, prices and stock are small non-negative integers).
#[tokio::test]
async fn absurd_precision_and_negative_prices_are_decode_errors() {
    let answers: [fn(u64) -> Value; 3] = [
        |p| {
            let mut item = product(1, 1);
            item["currency_decimals"] = json!(4294967295u32);
            page_of(vec![item], 1, p, 20)
        },
        |p| page_of(vec![product(1, -1250000000)], 1, p, 20),
        |p| {
            let mut item = product(1, 1);
            item["in_stock"] = json!(-5);
            page_of(vec![item], 1, p, 20)
        },
    ];
    for (i, answer) in answers.into_iter().enumerate() {
        let (origin, _) = serve(products_route(answer)).await;
        let client = Client::new(config(&origin)).unwrap();
        let err = client
            .list_products(&ProductQuery::default())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "case {i}: {err}");
    }
}

// ---- Item 6: the wait's timeout is its timeout ----

/// Rule: the overall timeout bounds the poll in flight: with every status poll stalling 5 s, a
/// 1.5 s wait ends still pending well within 3 s (it took 12.95 s and gave a transport
/// error).
#[tokio::test]
async fn a_stalled_poll_is_cut_at_the_wait_timeout() {
    let (origin, _) = serve(status_route(|_| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        status(0)
    }))
    .await;
    let started = Instant::now();
    let err = user_session_wait(
        &origin,
        Duration::from_millis(100),
        Duration::from_millis(1500),
    )
    .await;
    let took = started.elapsed();
    assert!(!err.is_final(), "{err:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(took >= Duration::from_millis(1400), "took {took:?}");
}

/// Rule: a failed poll (5xx, a dropped answer) does not end the wait; polling goes on at the
/// interval until a definite answer.
#[tokio::test]
async fn failed_polls_do_not_end_the_wait() {
    let (origin, counts) = serve(status_route(|n| async move {
        match n {
            0 => json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": "server_error"}),
            ),
            1 => json_response(StatusCode::BAD_GATEWAY, json!({})),
            2 => json_response(
                StatusCode::TOO_MANY_REQUESTS,
                json!({"error": "rate_limited"}),
            ),
            _ => status(1),
        }
    }))
    .await;
    let outcome = user(&origin)
        .wait_for_payment(ORDER, Duration::from_millis(100), Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(outcome.payment_status(), PaymentStatus::Paid);
    assert_eq!(counts.status.load(Ordering::SeqCst), 4);
}

/// Rule: polls that keep failing end still pending (last poll failed) at the deadline, not in the first error.
#[tokio::test]
async fn polls_failing_until_the_deadline_give_wait_timeout() {
    let (origin, counts) = serve(status_route(|_| async {
        json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": "rate_limit_unavailable"}),
        )
    }))
    .await;
    let started = Instant::now();
    let err = user_session_wait(
        &origin,
        Duration::from_millis(100),
        Duration::from_millis(800),
    )
    .await;
    assert!(still_awaiting(&err), "{err:?}");
    assert!(
        matches!(
            err,
            PaymentWaitOutcome::StillPending {
                last_poll_failed: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(counts.status.load(Ordering::SeqCst) >= 2);
}

/// Rule: a definite client error (404: the order is not the user's) ends the wait at once.
#[tokio::test]
async fn a_definite_client_error_ends_the_wait_at_once() {
    let (origin, counts) = serve(status_route(|_| async {
        json_response(StatusCode::NOT_FOUND, json!({"error": "not_found"}))
    }))
    .await;
    let err = user(&origin)
        .wait_for_payment(ORDER, Duration::from_millis(100), Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404), "{err:?}");
    assert_eq!(counts.status.load(Ordering::SeqCst), 1);
}
