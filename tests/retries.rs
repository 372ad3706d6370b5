//! Retry rules: reads retry on transient failures; 429 waits for `Retry-After` (capped); catalog
//! order creation and payment start are never re-sent once they may have been processed, and a
//! processed write whose answer was lost really happened (orders exist, wallets are debited once,
//! merchant-payment creates are repeated with the original key and give the same payment).

mod common;

use std::time::Duration;

use common::{Harness, s};
use serde_json::json;
use storefront::{
    CreateMerchantPayment, CreateOrderRequest, Error, ErrorCode, ErrorKind,
    ListMerchantPaymentsQuery, MinorAmount, Operation, OrderStatus, PaymentStatus, TransportKind,
};

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
            assert!(advice.contains("do not send the order again"));
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

/// A 429 to an order POST is never re-sent, however definite it looks: a 429 `rate_limited` with
/// `Retry-After` after the order was stored (the `after_handler` tests below) looks exactly the
/// same, and catalog rate limits are "not shown" by the contract. Outcome unknown, with the
/// status and `Retry-After` kept for the app.
#[tokio::test]
async fn catalog_order_429_is_not_resent_and_keeps_retry_after() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    h.fault(
        json!({"method": "POST", "path": orders_path(), "status": 429,
                   "headers": {"Retry-After": "1"}, "body": {"error": "rate_limited"}}),
    )
    .await;
    let err = user.create_order(&beans()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown, "{err:?}");
    assert_eq!(err.status(), Some(429));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
    assert_eq!(h.requests_to("POST", &orders_path()).await.len(), 1);
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

// ---------------------------------------------------------------------------------------------
// Processed, then the answer was lost: the sandbox's `after_handler` faults run the real
// handler (its effects are stored) and only then delay, drop or replace the answer. These tests
// prove the service-side half of the rules above: the write really happened.
// ---------------------------------------------------------------------------------------------

fn create_path() -> String {
    format!("{}/openapi/v1/merchant-payments", s::API_PREFIX)
}

/// Catalog orders of `user` stored by the sandbox (read in-process: the client never saw the
/// order number).
fn stored_orders_of(h: &Harness, user: &str) -> Vec<String> {
    h.sandbox
        .inspect()
        .catalog_orders()
        .into_iter()
        .filter(|o| o.user_id == user)
        .map(|o| o.order_no)
        .collect()
}

/// Waits (yielding, bounded) until the sandbox stores `count` orders of `user`: after a client
/// timeout the handler may still be finishing in its own task.
async fn wait_for_stored_orders(h: &Harness, user: &str, count: usize) -> Vec<String> {
    for _ in 0..500 {
        let orders = stored_orders_of(h, user);
        if orders.len() >= count {
            return orders;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stored_orders_of(h, user)
}

/// The platform-coin wallet of a seeded user (eight-decimal fixed point).
async fn wallet(h: &Harness, user: &str) -> i64 {
    h.control("GET", &format!("/users/{user}"), None).await["wallet"]
        .as_i64()
        .expect("wallet")
}

/// Stock of a product as the catalogue reports it.
async fn stock(h: &Harness, gd_no: &str) -> i64 {
    let page = h
        .client
        .list_products(&storefront::ProductQuery {
            gd_no: Some(gd_no.into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.list.len(), 1);
    page.list[0].in_stock
}

/// Asserts an `OutcomeUnknown` for `operation` carrying the contract's advice.
fn assert_outcome_unknown(err: &Error, operation: Operation, advice_part: &str) {
    match err {
        Error::OutcomeUnknown {
            operation: op,
            advice,
            ..
        } => {
            assert_eq!(*op, operation);
            assert!(advice.contains(advice_part), "advice: {advice}");
        }
        other => panic!("expected OutcomeUnknown for {operation}, got {other:?}"),
    }
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown);
}

/// Proves "a timeout does not prove failure" for a catalog order whose handler ran: reported
/// as outcome unknown, sent once, and the order exists (number, stock reservation, readable by
/// its user).
async fn assert_lost_order_answer(h: &Harness, fault: serde_json::Value) {
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let stock_before = stock(h, s::PRODUCT_BEANS).await;
    h.fault(fault).await;

    let err = user.create_order(&beans()).await.unwrap_err();
    assert_outcome_unknown(&err, Operation::CreateOrder, "do not send the order again");
    assert!(
        err.to_string().contains("do not send the order again"),
        "{err}"
    );
    assert_eq!(
        h.requests_to("POST", &orders_path()).await.len(),
        1,
        "the order POST is never re-sent"
    );

    let stored = wait_for_stored_orders(h, s::USER_ALICE, 1).await;
    assert_eq!(stored.len(), 1, "exactly one order was created: {stored:?}");
    let order = user.get_order(&stored[0]).await.unwrap();
    assert_eq!(order.gd_no, s::PRODUCT_BEANS);
    assert_eq!(order.quantity, 1);
    assert_eq!(order.status, OrderStatus::AwaitingPayment);
    assert_eq!(stock(h, s::PRODUCT_BEANS).await, stock_before - 1);
}

/// Contract (catalog order create): "a timeout does not prove failure". The order was created,
/// then the connection was lost before the answer: outcome unknown, sent once, order exists.
#[tokio::test]
async fn catalog_order_lost_answer_does_not_prove_failure_the_order_exists() {
    let h = Harness::start().await;
    let fault = json!({"method": "POST", "path": orders_path(),
                       "after_handler": true, "drop_connection": true});
    assert_lost_order_answer(&h, fault).await;
}

/// Contract (catalog order create): "a timeout does not prove failure". The order was created,
/// then the answer came later than the attempt timeout: outcome unknown, sent once, order exists.
#[tokio::test]
async fn catalog_order_timed_out_answer_does_not_prove_failure_the_order_exists() {
    let h = Harness::start_with(|c| c.with_attempt_timeout(Duration::from_millis(1000))).await;
    h.client.authenticate().await.unwrap();
    let fault = json!({"method": "POST", "path": orders_path(),
                       "after_handler": true, "latency_ms": 60_000});
    assert_lost_order_answer(&h, fault).await;
}

/// Contract (catalog order create): a 5xx does not prove failure either. The order was created,
/// then the answer was replaced by a 502: outcome unknown, sent once, order exists.
#[tokio::test]
async fn catalog_order_server_error_after_creation_does_not_prove_failure_the_order_exists() {
    let h = Harness::start().await;
    let fault = json!({"method": "POST", "path": orders_path(),
                       "after_handler": true, "status": 502});
    assert_lost_order_answer(&h, fault).await;
}

/// Proves, for a platform-coin payment start whose handler ran (the wallet was debited) and whose
/// answer was then lost or replaced by `fault(path)`: outcome unknown with the advice to read the
/// status, sent once, and the status and the order show it paid, the wallet debited exactly once.
async fn assert_lost_payment_start(h: &Harness, fault: impl FnOnce(&str) -> serde_json::Value) {
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = user.create_order(&beans()).await.unwrap();
    let path = format!("{}/{}/payment", orders_path(), order.order_no);
    let wallet_before = wallet(h, s::USER_ALICE).await;
    h.fault(fault(&path)).await;

    let err = user
        .start_payment(&order.order_no, s::CHANNEL_PLATFORM_COIN)
        .await
        .unwrap_err();
    assert_outcome_unknown(&err, Operation::StartPayment, "poll the payment status");
    assert_eq!(
        h.requests_to("POST", &path).await.len(),
        1,
        "payment start is never re-sent"
    );

    assert_eq!(
        user.payment_status(&order.order_no).await.unwrap(),
        PaymentStatus::Paid
    );
    let read = user.get_order(&order.order_no).await.unwrap();
    assert!(
        matches!(
            read.status,
            OrderStatus::PaidProcessing | OrderStatus::Completed
        ),
        "{:?}",
        read.status
    );
    let debited = wallet_before - wallet(h, s::USER_ALICE).await;
    assert!(read.payment_pay_amount.raw() > 0);
    assert_eq!(
        debited,
        read.payment_pay_amount.raw(),
        "the wallet was debited exactly once"
    );
}

/// Contract (payment start): "the platform-coin channel may debit the wallet during the request,
/// so it is not a read-only preview". The wallet was debited, then the connection was lost.
#[tokio::test]
async fn payment_start_lost_answer_after_the_debit_is_outcome_unknown_and_paid_once() {
    let h = Harness::start().await;
    assert_lost_payment_start(&h, |path| {
        json!({"method": "POST", "path": path, "after_handler": true, "drop_connection": true})
    })
    .await;
}

/// Contract (payment start): same, the answer replaced by a 500 after the debit.
#[tokio::test]
async fn payment_start_server_error_after_the_debit_is_outcome_unknown_and_paid_once() {
    let h = Harness::start().await;
    assert_lost_payment_start(
        &h,
        |path| json!({"method": "POST", "path": path, "after_handler": true, "status": 500}),
    )
    .await;
}

// ---------------------------------------------------------------------------------------------
// Hostile answers to the two operations that are never re-sent (issue: "a processed order
// reported as an ordinary failure", "order create re-sent after a 429 or a 401"). The handler ran
// (order stored, wallet debited), then the answer was replaced by something the client cannot
// use or must not trust as "not processed". Each must be OutcomeUnknown, sent once, and the
// sandbox must hold exactly one order / one debit.
// ---------------------------------------------------------------------------------------------

/// Contract (catalog order create): 201 returns `{"order_no"}`; an order that exists but whose
/// 201 body is truncated JSON is outcome unknown, never a decode error an app would re-order on.
#[tokio::test]
async fn catalog_order_malformed_201_after_creation_is_outcome_unknown_the_order_exists() {
    let h = Harness::start().await;
    let fault = json!({"method": "POST", "path": orders_path(), "after_handler": true,
                       "status": 201, "malformed_body": true});
    assert_lost_order_answer(&h, fault).await;
}

/// Same, with a well-formed 201 that lacks `order_no` (`{}`).
#[tokio::test]
async fn catalog_order_empty_201_after_creation_is_outcome_unknown_the_order_exists() {
    let h = Harness::start().await;
    let fault = json!({"method": "POST", "path": orders_path(), "after_handler": true,
                       "status": 201, "body": {}});
    assert_lost_order_answer(&h, fault).await;
}

/// Contract: "repeated POSTs may create different orders"; catalog rate limits are "not shown",
/// so a 429 to an order POST does not prove it was not processed: not re-sent after
/// `Retry-After`, outcome unknown, one order.
#[tokio::test]
async fn catalog_order_429_after_creation_is_not_resent_and_is_outcome_unknown() {
    let h = Harness::start().await;
    let fault = json!({"method": "POST", "path": orders_path(), "after_handler": true,
                       "status": 429, "headers": {"Retry-After": "1"},
                       "body": {"error": "rate_limited"}});
    assert_lost_order_answer(&h, fault).await;
}

/// A user-token provider that always hands out the same (valid) token and counts the asks.
struct SameTokenProvider {
    token: String,
    asks: std::sync::atomic::AtomicUsize,
}

impl storefront::UserTokenProvider for SameTokenProvider {
    fn user_token(&self, _rejected: Option<&storefront::Secret>) -> storefront::TokenFuture<'_> {
        self.asks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let token = storefront::Secret::new(self.token.clone());
        Box::pin(async move { Ok(token) })
    }
}

/// A 401 to an order POST with a token provider: the provider is asked for a new token (so the
/// next call carries it) but the POST is not re-sent; outcome unknown, one order.
#[tokio::test]
async fn catalog_order_401_after_creation_is_not_resent_with_a_token_provider() {
    let h = Harness::start().await;
    let provider = std::sync::Arc::new(SameTokenProvider {
        token: h.user_token(s::USER_ALICE).await,
        asks: Default::default(),
    });
    let user = h
        .client
        .user(storefront::UserToken::Provider(provider.clone()));
    h.fault(
        json!({"method": "POST", "path": orders_path(), "after_handler": true,
                   "status": 401, "body": {"error": "invalid_token"}}),
    )
    .await;
    let err = user.create_order(&beans()).await.unwrap_err();
    assert_outcome_unknown(&err, Operation::CreateOrder, "do not send the order again");
    assert_eq!(err.status(), Some(401), "the answer seen is kept");
    assert_eq!(
        h.requests_to("POST", &orders_path()).await.len(),
        1,
        "never re-sent"
    );
    assert_eq!(wait_for_stored_orders(&h, s::USER_ALICE, 1).await.len(), 1);
    assert_eq!(
        provider.asks.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "the provider was asked again for the next call"
    );
}

/// Contract (payment start): "the platform-coin channel may debit the wallet during the request".
/// A truncated 200 after the debit is outcome unknown, sent once, debited once.
#[tokio::test]
async fn payment_start_malformed_200_after_the_debit_is_outcome_unknown_and_paid_once() {
    let h = Harness::start().await;
    assert_lost_payment_start(&h, |path| {
        json!({"method": "POST", "path": path, "after_handler": true, "status": 200,
               "malformed_body": true})
    })
    .await;
}

/// A 429 to a payment start after the debit is not re-sent (the honest second answer would be
/// 422, telling the app a paid payment failed): outcome unknown, debited once.
#[tokio::test]
async fn payment_start_429_after_the_debit_is_not_resent_and_paid_once() {
    let h = Harness::start().await;
    assert_lost_payment_start(&h, |path| {
        json!({"method": "POST", "path": path, "after_handler": true, "status": 429,
               "headers": {"Retry-After": "1"}, "body": {"error": "rate_limited"}})
    })
    .await;
}

/// A payment start whose 200 carries a redirect the app must not open (`javascript:`, plain
/// http to another host, a scheme-relative `//host`): refused, and since the wallet was debited,
/// outcome unknown rather than a decode error.
#[tokio::test]
async fn payment_start_unsafe_redirects_after_the_debit_are_refused_as_outcome_unknown() {
    for redirect in [
        "javascript:alert(1)",
        "http://evil.example/pay",
        "//evil.example/pay",
        "https://user@evil.example/pay",
    ] {
        let h = Harness::start().await;
        assert_lost_payment_start(&h, |path| {
            json!({"method": "POST", "path": path, "after_handler": true, "status": 200,
                   "body": {"trade_no": "T-hostile", "redirect": redirect,
                            "expire_time": 4_102_444_800i64}})
        })
        .await;
    }
}

/// Oversized answers are not retried: the same request would pull the same oversized body again
/// (the issue measured about 30 MB pulled for a 4 MiB cap). One request, `BodyTooLarge`.
#[tokio::test]
async fn oversized_read_answer_is_not_retried() {
    let h = Harness::start().await;
    h.client.authenticate().await.unwrap();
    let cap = h.client.config().max_response_bytes;
    h.fault(
        json!({"method": "GET", "path": channels_path(), "status": 200,
                   "oversized_body": cap * 2, "times": 5}),
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
    assert_eq!(h.requests_to("GET", &channels_path()).await.len(), 1);
}

/// Proves "retry with the original key and parameters" for a merchant-payment create whose
/// first attempt was processed and whose answer was then lost or replaced: the SDK re-sent a
/// byte-identical body (same idempotency key), the repeat answered 201 with the payment the first
/// attempt created, and the sandbox holds exactly one payment for the reference.
async fn assert_create_retried_with_original_key(
    h: &Harness,
    reference: &str,
    fault: serde_json::Value,
) {
    h.client.authenticate().await.unwrap();
    h.fault(fault).await;
    let req = CreateMerchantPayment::new(
        reference,
        MinorAmount::parse_decimal("7.25", 2).unwrap(),
        "USD",
    );
    let created = h.client.create_merchant_payment(&req).await.unwrap();
    assert_eq!(created.idempotency_key, req.idempotency_key());

    let listed = h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery::by_external_reference(reference))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1, "exactly one payment for the reference");
    assert_eq!(
        listed[0].order_no, created.payment.order_no,
        "the repeat returned the payment the first attempt created"
    );
    let posts = h.requests_to("POST", &create_path()).await;
    assert_eq!(
        posts.len(),
        2,
        "processed and lost once, then re-sent once: {posts:?}"
    );
    assert_eq!(posts[1]["status"], 201, "the repeat is answered 201");
    let first = posts[0]["body"].as_str().expect("first body");
    let second = posts[1]["body"].as_str().expect("second body");
    assert_eq!(first, second, "the retry sends identical parameters");
    let sent: serde_json::Value = serde_json::from_str(first).unwrap();
    assert_eq!(sent["idempotency_key"], req.idempotency_key());
}

/// Contract (merchant-payment create): "On a timeout, retry with the original key and
/// parameters; do not use a new key". First attempt processed, connection then lost.
#[tokio::test]
async fn create_processed_then_connection_lost_is_retried_with_the_original_key() {
    let h = Harness::start().await;
    let fault = json!({"method": "POST", "path": create_path(),
                       "after_handler": true, "drop_connection": true});
    assert_create_retried_with_original_key(&h, "order-lost-1", fault).await;
}

/// Contract (merchant-payment create): "On a timeout, retry with the original key and
/// parameters; do not use a new key". First attempt processed, its answer later than the
/// attempt timeout.
#[tokio::test]
async fn create_processed_then_timed_out_is_retried_with_the_original_key() {
    let h = Harness::start_with(|c| c.with_attempt_timeout(Duration::from_millis(1000))).await;
    let fault = json!({"method": "POST", "path": create_path(),
                       "after_handler": true, "latency_ms": 60_000});
    assert_create_retried_with_original_key(&h, "order-late-1", fault).await;
}

/// Contract (Errors, 500 `server_error`): "reuse the original idempotency key for writes". First
/// attempt processed, its answer replaced by a 500: retried with the same key, same payment.
#[tokio::test]
async fn create_processed_then_server_error_is_retried_with_the_original_key() {
    let h = Harness::start().await;
    let fault = json!({"method": "POST", "path": create_path(),
                       "after_handler": true, "status": 500});
    assert_create_retried_with_original_key(&h, "order-5xx-1", fault).await;
}

/// Contract (merchant-payment create): "On a timeout, retry with the original key and
/// parameters; do not use a new key", also after the SDK has given up: every attempt was
/// processed and its answer lost, the call fails, and the app repeating the same request (its
/// persisted key) later gets the one payment the first attempt created.
#[tokio::test]
async fn create_lost_on_every_attempt_is_repeated_later_with_the_same_key_and_one_payment() {
    let h = Harness::start().await;
    h.client.authenticate().await.unwrap();
    let attempts = h.client.config().retry.max_attempts;
    h.fault(
        json!({"method": "POST", "path": create_path(), "after_handler": true,
                   "drop_connection": true, "times": attempts}),
    )
    .await;
    let req = CreateMerchantPayment::new(
        "order-lost-all",
        MinorAmount::parse_decimal("3.10", 2).unwrap(),
        "USD",
    );
    let err = h.client.create_merchant_payment(&req).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                kind: TransportKind::Connection,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        h.requests_to("POST", &create_path()).await.len(),
        attempts as usize
    );

    let again = h.client.create_merchant_payment(&req).await.unwrap();
    let listed = h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery::by_external_reference(
            "order-lost-all",
        ))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1, "exactly one payment for the reference");
    assert_eq!(listed[0].order_no, again.payment.order_no);
    let posts = h.requests_to("POST", &create_path()).await;
    assert_eq!(posts.len(), attempts as usize + 1);
    assert!(
        posts.iter().all(|p| p["body"] == posts[0]["body"]),
        "every attempt, also the app's later repeat, sends identical parameters"
    );
}
