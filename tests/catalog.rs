//! Catalog rules: profile, products by page and stream, userinfo, orders with `other_ipu`,
//! payment start with its relative redirect, payment status and the payment wait.

mod common;

use std::time::Duration;

use common::{Harness, s};
use futures_util::TryStreamExt;
use storefront::{
    CreateOrderRequest, CreatedOrder, ErrorKind, OrderStatus, OtherIpuForm, PaymentStatus,
    PaymentWaitOutcome, Product, ProductQuery, UserSession,
};

/// Creates an order for `quantity` of the seeded beans, payable through `channel`.
async fn order_beans(user: &UserSession, quantity: u32, channel: &str) -> CreatedOrder {
    user.create_order(&CreateOrderRequest::new(
        s::PRODUCT_BEANS,
        quantity,
        channel,
    ))
    .await
    .unwrap()
}

/// The products listed with the exact filter `gd_no`.
async fn products_numbered(h: &Harness, gd_no: &str) -> Vec<Product> {
    let query = ProductQuery {
        gd_no: Some(gd_no.into()),
        ..Default::default()
    };
    h.client.list_products(&query).await.unwrap().list
}

/// Orders one bag by card, starts the payment, has the channel `action` ("pay" or "cancel")
/// its trade, and waits for the decided payment.
async fn card_payment_decided_by_channel(action: &str) -> PaymentWaitOutcome {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = order_beans(&user, 1, s::CHANNEL_CARD_USD).await;
    let start = user
        .start_payment(&order.order_no, s::CHANNEL_CARD_USD)
        .await
        .unwrap();
    let path = format!("/catalog/trades/{}/{action}", start.trade_no);
    h.control("POST", &path, None).await;
    user.wait_for_payment(
        &order.order_no,
        Duration::from_millis(30),
        Duration::from_secs(10),
    )
    .await
    .unwrap()
}

/// Contract: the merchant profile reads with a client or a user token.
#[tokio::test]
async fn merchant_profile_reads_with_client_and_user_tokens() {
    let h = Harness::start().await;
    let by_client = h.client.merchant_profile().await.unwrap();
    assert_eq!(by_client.merchant_no, s::MERCHANT_NO);
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    assert_eq!(user.merchant_profile().await.unwrap(), by_client);
}

/// Contract: products page and limit (default 20), `total` is the matching count, only enabled
/// products; the stream walks every page.
#[tokio::test]
async fn products_by_page_and_stream_over_all_pages() {
    let h = Harness::start().await;
    let first = h
        .client
        .list_products(&ProductQuery::default())
        .await
        .unwrap();
    assert_eq!(first.page, 1);
    assert_eq!(first.limit, 20);
    assert_eq!(first.total as usize, s::ENABLED_PRODUCT_COUNT);
    assert_eq!(first.list.len(), 20);
    let all: Vec<_> = h
        .client
        .products_stream(ProductQuery::default())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(all.len(), s::ENABLED_PRODUCT_COUNT);
    assert!(all.iter().all(|p| p.gd_no != s::PRODUCT_DISABLED));
    let mut numbers: Vec<_> = all.iter().map(|p| p.gd_no.clone()).collect();
    numbers.dedup();
    assert_eq!(numbers.len(), s::ENABLED_PRODUCT_COUNT, "no product twice");
    let small: Vec<_> = h
        .client
        .products_stream(ProductQuery {
            limit: Some(7),
            ..Default::default()
        })
        .try_collect()
        .await
        .unwrap();
    assert_eq!(small.len(), s::ENABLED_PRODUCT_COUNT);
}

/// Contract: `gd_no` is an exact filter; eight-decimal prices are exact.
#[tokio::test]
async fn product_filter_and_fixed_point_price() {
    let h = Harness::start().await;
    let list = products_numbered(&h, s::PRODUCT_BEANS).await;
    assert_eq!(list.len(), 1);
    let beans = &list[0];
    assert_eq!(beans.actual_price.to_decimal_string(2).unwrap(), "12.50");
    assert_eq!(beans.currency, "USD");
}

/// Limits: the product page limit is 1 to 100; the SDK refuses others before sending.
#[tokio::test]
async fn out_of_range_product_limit_is_refused_before_sending() {
    let h = Harness::start().await;
    let err = h
        .client
        .list_products(&ProductQuery {
            limit: Some(101),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Validation);
    assert_eq!(err.field(), Some("limit"));
    assert!(
        h.requests_to("GET", &h.api_path("/openapi/v1/products"))
            .await
            .is_empty()
    );
}

/// Contract: userinfo needs a user token with `openid`; its fields are not shown, so it is a map.
#[tokio::test]
async fn userinfo_is_returned_as_a_json_map() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let info = user.userinfo().await.unwrap();
    assert_eq!(info["sub"], s::USER_ALICE);
}

/// Contract: `other_ipu` keys come from `other_ipu_cnf` (keys, never labels); required inputs
/// are enforced before sending; the service accepts the built map.
#[tokio::test]
async fn other_ipu_is_built_from_keys_with_required_flags_enforced() {
    let h = Harness::start().await;
    let gift = products_numbered(&h, s::PRODUCT_GIFT_CARD).await.remove(0);
    let form = OtherIpuForm::for_product(&gift).unwrap();
    assert!(
        form.fields()
            .iter()
            .any(|f| f.key == "recipient_email" && f.required)
    );
    let missing = form.build([("gift_message", "hi")]).unwrap_err();
    assert_eq!(missing.field(), Some("other_ipu.recipient_email"));
    let label = form
        .build([("Recipient email", "a@example.com")])
        .unwrap_err();
    assert_eq!(label.kind(), ErrorKind::Validation);

    let other_ipu = form
        .build([
            ("recipient_email", "friend@example.com"),
            ("gift_message", "Enjoy"),
        ])
        .unwrap();
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = user
        .create_order(
            &CreateOrderRequest::new(&gift.gd_no, 1, s::CHANNEL_PLATFORM_COIN)
                .with_other_ipu(other_ipu),
        )
        .await
        .unwrap();
    let read = user.get_order(&order.order_no).await.unwrap();
    assert_eq!(read.gd_no, s::PRODUCT_GIFT_CARD);
    assert_eq!(read.status, OrderStatus::AwaitingPayment);
}

/// Contract: creation does not mean paid; platform-coin payment start debits during the
/// request; poll the payment status until 1 or 2, then read the order.
#[tokio::test]
async fn catalog_order_paid_with_platform_coin_and_waited_for() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = order_beans(&user, 2, s::CHANNEL_PLATFORM_COIN).await;
    assert_eq!(
        user.payment_status(&order.order_no).await.unwrap(),
        PaymentStatus::AwaitingPayment
    );
    user.start_payment(&order.order_no, s::CHANNEL_PLATFORM_COIN)
        .await
        .unwrap();
    let outcome = user
        .wait_for_payment(
            &order.order_no,
            Duration::from_millis(50),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(outcome.payment_status(), PaymentStatus::Paid);
    assert!(matches!(
        outcome.order().unwrap().status,
        OrderStatus::PaidProcessing | OrderStatus::Completed
    ));
    assert_eq!(outcome.order().unwrap().quantity, 2);
    assert_eq!(
        outcome
            .order()
            .unwrap()
            .total_amount
            .to_decimal_string(2)
            .unwrap(),
        "25.00"
    );
    assert!(outcome.order().unwrap().created_at.is_some());
}

/// Contract: "a relative address is resolved against the platform service address, not the
/// client's own domain"; `expire_time` (Unix seconds) becomes a time.
#[tokio::test]
async fn relative_redirect_resolves_to_the_service_origin() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = order_beans(&user, 1, s::CHANNEL_CARD_USD).await;
    let start = user
        .start_payment(&order.order_no, s::CHANNEL_CARD_USD)
        .await
        .unwrap();
    assert_eq!(
        start.redirect.origin().ascii_serialization(),
        h.sandbox.origin()
    );
    assert!(start.redirect.path().contains(&start.trade_no));
    assert!(start.expire_time.unix_timestamp() > 0);
    // The address really is the service's payment page.
    let page = common::raw_http(None)
        .get(start.redirect.as_str())
        .send()
        .await
        .unwrap();
    assert!(page.status().is_success());
}

/// Contract: stop polling at status 2 (cancelled).
#[tokio::test]
async fn wait_for_payment_stops_at_cancelled() {
    let outcome = card_payment_decided_by_channel("cancel").await;
    assert_eq!(outcome.payment_status(), PaymentStatus::Cancelled);
}

/// Contract: poll with an overall timeout; an undecided payment ends "still pending" (an
/// outcome, issue 12 item 3), not a guessed failure and not an error.
#[tokio::test]
async fn wait_for_payment_gives_up_after_its_timeout() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = order_beans(&user, 1, s::CHANNEL_CARD_USD).await;
    let outcome = user
        .wait_for_payment(
            &order.order_no,
            Duration::from_millis(30),
            Duration::from_millis(200),
        )
        .await
        .unwrap();
    match outcome {
        PaymentWaitOutcome::StillPending {
            last_status,
            waited,
            last_poll_failed,
        } => {
            assert_eq!(last_status, PaymentStatus::AwaitingPayment);
            assert!(!waited.is_zero());
            assert!(!last_poll_failed);
        }
        other => panic!("{other:?}"),
    }
}

/// Contract: a card payment completes through the channel; the wait sees it paid.
#[tokio::test]
async fn card_payment_completed_by_channel_is_seen_as_paid() {
    let outcome = card_payment_decided_by_channel("pay").await;
    assert_eq!(outcome.payment_status(), PaymentStatus::Paid);
    assert!(!outcome.order().unwrap().trade_no.is_empty());
}

/// Contract: an order must belong to the authorized user; another user cannot read it.
#[tokio::test]
async fn another_users_order_is_not_readable() {
    let h = Harness::start().await;
    let alice = h.client.user(h.user_token(s::USER_ALICE).await);
    let carol = h.client.user(h.user_token(s::USER_CAROL).await);
    let order = order_beans(&alice, 1, s::CHANNEL_PLATFORM_COIN).await;
    let err = carol.get_order(&order.order_no).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Api);
    assert!(matches!(err.status(), Some(403 | 404)));
}

/// Contract: unmet business conditions give 422 (a wallet too small for the order).
#[tokio::test]
async fn unmet_payment_condition_is_a_422_api_error() {
    let h = Harness::start().await;
    let bob = h.client.user(h.user_token(s::USER_BOB).await);
    let order = order_beans(&bob, 1, s::CHANNEL_PLATFORM_COIN).await;
    let err = bob
        .start_payment(&order.order_no, s::CHANNEL_PLATFORM_COIN)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(422), "{err:?}");
}

/// Contract: poll with an interval; a 429 during the wait is honoured (its `Retry-After`)
/// rather than treated as a failure.
#[tokio::test]
async fn wait_for_payment_honours_retry_after_on_429() {
    let h = Harness::start().await;
    let no_retry = h.client_with(|c| {
        c.with_retry_policy(storefront::RetryPolicy {
            max_attempts: 1,
            ..Default::default()
        })
    });
    let user = no_retry.user(h.user_token(s::USER_ALICE).await);
    let order = order_beans(&user, 1, s::CHANNEL_PLATFORM_COIN).await;
    user.start_payment(&order.order_no, s::CHANNEL_PLATFORM_COIN)
        .await
        .unwrap();
    let path = h.api_path(&format!("/openapi/v1/orders/{}/payment", order.order_no));
    h.fault(
        serde_json::json!({"method": "GET", "path": path, "status": 429,
        "headers": {"Retry-After": "1"}, "body": {"error": "rate_limited"}, "times": 2}),
    )
    .await;
    let outcome = user
        .wait_for_payment(
            &order.order_no,
            Duration::from_millis(20),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(outcome.payment_status(), PaymentStatus::Paid);
    assert_eq!(h.requests_to("GET", &path).await.len(), 3);
}

/// Issue rule: the wait is cancellable by dropping it — no polls happen afterwards.
#[tokio::test]
async fn dropping_the_wait_stops_polling() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = order_beans(&user, 1, s::CHANNEL_CARD_USD).await;
    let wait = user.wait_for_payment(
        &order.order_no,
        Duration::from_millis(20),
        Duration::from_secs(60),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(500), wait)
            .await
            .is_err()
    );
    // Let a request that was already on the wire when the wait was dropped land first.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let path = h.api_path(&format!("/openapi/v1/orders/{}/payment", order.order_no));
    let polled = h.requests_to("GET", &path).await.len();
    assert!(polled >= 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.requests_to("GET", &path).await.len(), polled);
}

/// POST /openapi/v1/orders: "The client does not send a total or a buyer id"; `quantity` is
/// positive and `gd_no` and `payment_no` are required. Invalid requests are refused before
/// anything is sent; a valid one carries only the contract's body fields, as JSON.
#[tokio::test]
async fn order_body_has_no_total_or_buyer_and_quantity_must_be_positive() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let path = h.api_path("/openapi/v1/orders");
    let refused = [
        (
            CreateOrderRequest::new(s::PRODUCT_BEANS, 0, s::CHANNEL_PLATFORM_COIN),
            "quantity",
        ),
        (
            CreateOrderRequest::new(" ", 1, s::CHANNEL_PLATFORM_COIN),
            "gd_no",
        ),
        (
            CreateOrderRequest::new(s::PRODUCT_BEANS, 1, ""),
            "payment_no",
        ),
    ];
    for (req, field) in refused {
        let err = user.create_order(&req).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation, "{req:?}");
        assert_eq!(err.field(), Some(field));
    }
    assert!(h.requests_to("POST", &path).await.is_empty());

    order_beans(&user, 1, s::CHANNEL_PLATFORM_COIN).await;
    let sent = h.requests_to("POST", &path).await;
    assert_eq!(sent.len(), 1);
    let body = match &sent[0]["body"] {
        serde_json::Value::String(text) => serde_json::from_str(text).unwrap(),
        other => other.clone(),
    };
    let mut keys: Vec<&str> = body
        .as_object()
        .expect("a JSON object body")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["gd_no", "payment_no", "quantity"], "{body}");
    let content_type = sent[0]["headers"]["content-type"].to_string();
    assert!(content_type.contains("application/json"), "{content_type}");
}

/// Versioning: "Status numbering of merchant payments (strings) differs from catalog order and
/// payment numbers (integers); they must not be mixed." A merchant-payment style `"paid"` on
/// the catalog payment status is a decode error, never payment; the integers keep their own
/// meanings (payment status 2 is cancelled, order status 2 is cancelled, 3 only for orders).
#[tokio::test]
async fn catalog_statuses_are_integers_never_merchant_payment_strings() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = order_beans(&user, 1, s::CHANNEL_PLATFORM_COIN).await;
    let path = h.api_path(&format!("/openapi/v1/orders/{}/payment", order.order_no));
    h.fault(
        serde_json::json!({"method": "GET", "path": path, "status": 200,
                               "body": {"status": "paid"}}),
    )
    .await;
    let err = user.payment_status(&order.order_no).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err:?}");
    h.fault(
        serde_json::json!({"method": "GET", "path": path, "status": 200,
                               "body": {"status": 3}}),
    )
    .await;
    let unknown = user.payment_status(&order.order_no).await.unwrap();
    assert_eq!(unknown, PaymentStatus::Unknown(3));
    assert!(!unknown.is_final());
    assert_eq!(
        user.payment_status(&order.order_no).await.unwrap(),
        PaymentStatus::AwaitingPayment
    );
    assert_eq!(
        user.get_order(&order.order_no).await.unwrap().status,
        OrderStatus::AwaitingPayment
    );
}
