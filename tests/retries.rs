//! Retry rules: reads retry on transient failures; 429 waits for `Retry-After` (capped); catalog
//! order creation and payment start are never re-sent once they may have been processed.

mod common;

use std::time::Duration;

use common::{Harness, s};
use serde_json::json;
use storefront::{CreateOrderRequest, Error, ErrorCode, ErrorKind, Operation, TransportKind};

fn orders_path() -> String {
    format!("{}/openapi/v1/orders", s::API_PREFIX)
}

fn channels_path() -> String {
    format!("{}/openapi/v1/merchant-payment-channels", s::API_PREFIX)
}

fn beans() -> CreateOrderRequest {
    CreateOrderRequest::new(s::PRODUCT_BEANS, 1, s::CHANNEL_PLATFORM_COIN)
}

/// Contract: 429 `rate_limited` — wait per `Retry-After`, then the read succeeds.
#[tokio::test]
async fn rate_limited_read_waits_for_retry_after_then_succeeds() {
    let h = Harness::start().await;
    h.fault(
        json!({"method": "GET", "path": channels_path(), "status": 429,
                   "headers": {"Retry-After": "1"}, "body": {"error": "rate_limited"}}),
    )
    .await;
    h.client.list_channels().await.unwrap();
    let calls = h.requests_to("GET", &channels_path()).await;
    assert_eq!(calls.len(), 2);
}

/// A `Retry-After` longer than the policy's cap is returned to the caller with its value.
#[tokio::test]
async fn retry_after_above_the_cap_is_returned_not_waited() {
    let h = Harness::start().await;
    h.fault(
        json!({"method": "GET", "path": channels_path(), "status": 429,
                   "headers": {"Retry-After": "3600"}, "body": {"error": "rate_limited"}}),
    )
    .await;
    let err = h.client.list_channels().await.unwrap_err();
    assert!(err.is_code(&ErrorCode::RateLimited));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(h.requests_to("GET", &channels_path()).await.len(), 1);
}

/// Reads retry on 5xx, 503 `rate_limit_unavailable` and dropped connections.
#[tokio::test]
async fn reads_retry_on_server_errors_and_dropped_connections() {
    let h = Harness::start().await;
    h.fault(
        json!({"method": "GET", "path": channels_path(), "status": 503,
                   "body": {"error": "rate_limit_unavailable"}}),
    )
    .await;
    h.client.list_channels().await.unwrap();
    h.fault(json!({"method": "GET", "path": channels_path(), "drop_connection": true}))
        .await;
    h.client.list_channels().await.unwrap();
    assert_eq!(h.requests_to("GET", &channels_path()).await.len(), 4);
}

/// Retries stop at the policy's attempt count and report the last error.
#[tokio::test]
async fn retries_stop_after_max_attempts() {
    let h = Harness::start().await;
    h.fault(
        json!({"method": "GET", "path": channels_path(), "status": 500,
                   "body": {"error": "server_error"}, "times": 50}),
    )
    .await;
    let err = h.client.list_channels().await.unwrap_err();
    assert!(err.is_code(&ErrorCode::ServerError), "{err:?}");
    assert_eq!(h.requests_to("GET", &channels_path()).await.len(), 4);
}

/// The overall deadline bounds all attempts and waits.
#[tokio::test]
async fn overall_deadline_bounds_retries() {
    let h = Harness::start_with(|c| {
        c.with_attempt_timeout(Duration::from_millis(300))
            .with_overall_deadline(Duration::from_millis(700))
    })
    .await;
    h.client.authenticate().await.unwrap();
    h.fault(json!({"method": "GET", "path": channels_path(), "latency_ms": 2000, "times": 10}))
        .await;
    let err = h.client.list_channels().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::DeadlineExceeded { .. }
                | Error::Transport {
                    kind: TransportKind::Timeout,
                    ..
                }
        ),
        "{err:?}"
    );
    assert!(h.requests_to("GET", &channels_path()).await.len() <= 3);
}

/// Contract: "a timeout does not prove failure" and repeated POSTs may create different
/// orders — a timed-out catalog order POST is reported as outcome unknown and not re-sent.
#[tokio::test]
async fn catalog_order_post_that_times_out_is_not_resent() {
    let h = Harness::start_with(|c| c.with_attempt_timeout(Duration::from_millis(300))).await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    h.fault(json!({"method": "POST", "path": orders_path(), "latency_ms": 1500}))
        .await;
    let err = user.create_order(&beans()).await.unwrap_err();
    match &err {
        Error::OutcomeUnknown {
            operation, advice, ..
        } => {
            assert_eq!(*operation, Operation::CreateOrder);
            assert!(advice.contains("do not re-order blindly"));
        }
        other => panic!("expected OutcomeUnknown, got {other:?}"),
    }
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown);
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(h.requests_to("POST", &orders_path()).await.len(), 1);
}

/// A 5xx on catalog order creation may mean it was processed: outcome unknown, not re-sent.
#[tokio::test]
async fn catalog_order_server_error_is_outcome_unknown() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    h.fault(json!({"method": "POST", "path": orders_path(), "status": 502}))
        .await;
    let err = user.create_order(&beans()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown);
    assert_eq!(err.status(), Some(502));
    assert_eq!(h.requests_to("POST", &orders_path()).await.len(), 1);
}

/// A connection lost after sending the order is outcome unknown, not re-sent.
#[tokio::test]
async fn catalog_order_dropped_connection_is_outcome_unknown() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    h.fault(json!({"method": "POST", "path": orders_path(), "drop_connection": true}))
        .await;
    let err = user.create_order(&beans()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown, "{err:?}");
    assert_eq!(h.requests_to("POST", &orders_path()).await.len(), 1);
}

/// Only a definite 429 may be re-sent after `Retry-After`.
#[tokio::test]
async fn catalog_order_definite_429_is_resent_after_retry_after() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    h.fault(
        json!({"method": "POST", "path": orders_path(), "status": 429,
                   "headers": {"Retry-After": "1"}, "body": {"error": "rate_limited"}}),
    )
    .await;
    let created = user.create_order(&beans()).await.unwrap();
    assert!(!created.order_no.is_empty());
    assert_eq!(h.requests_to("POST", &orders_path()).await.len(), 2);
}

/// Payment start may debit the wallet during the request: a timeout is outcome unknown and the
/// advice is to read the status and the order.
#[tokio::test]
async fn payment_start_that_times_out_is_not_resent() {
    let h = Harness::start_with(|c| c.with_attempt_timeout(Duration::from_millis(300))).await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = user.create_order(&beans()).await.unwrap();
    let path = format!("{}/{}/payment", orders_path(), order.order_no);
    h.fault(json!({"method": "POST", "path": path, "latency_ms": 1500}))
        .await;
    let err = user
        .start_payment(&order.order_no, s::CHANNEL_PLATFORM_COIN)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::OutcomeUnknown {
                operation: Operation::StartPayment,
                ..
            }
        ),
        "{err:?}"
    );
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(h.requests_to("POST", &path).await.len(), 1);
}

/// A malformed body is a decode error; an oversized one is refused by the size cap.
#[tokio::test]
async fn malformed_and_oversized_bodies_are_typed_errors() {
    let h = Harness::start_with(|mut c| {
        c.max_response_bytes = 64 * 1024;
        c.retry.max_attempts = 1;
        c
    })
    .await;
    h.fault(
        json!({"method": "GET", "path": channels_path(), "status": 200, "malformed_body": true}),
    )
    .await;
    let err = h.client.list_channels().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err:?}");
    h.fault(
        json!({"method": "GET", "path": channels_path(), "status": 200, "oversized_body": true}),
    )
    .await;
    let err = h.client.list_channels().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                kind: TransportKind::BodyTooLarge,
                ..
            }
        ),
        "{err:?}"
    );
}
