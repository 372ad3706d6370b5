//! Merchant-collection rules: channel directory, create with idempotency and client-side
//! validation, query, list, unknown statuses, notification records and re-queue.

mod common;

use std::time::Duration;

use common::{Harness, s};
use serde_json::{Value, json};
use storefront::{
    ChannelProvider, CreateMerchantPayment, Error, ErrorCode, ErrorKind, ListMerchantPaymentsQuery,
    MerchantPayment, MerchantPaymentStatus, MinorAmount,
};

fn usd(amount: &str) -> MinorAmount {
    MinorAmount::parse_decimal(amount, 2).unwrap()
}

fn create_path() -> String {
    format!("{}/openapi/v1/merchant-payments", s::API_PREFIX)
}

/// Makes the service answer the next merchant-payment create with `status` and `body`.
async fn fail_next_create(h: &Harness, status: u16, body: Value) {
    h.fault(json!({"method": "POST", "path": create_path(), "status": status, "body": body}))
        .await;
}

/// The merchant payments listed for one `external_reference`.
async fn listed_by_reference(h: &Harness, reference: &str) -> Vec<MerchantPayment> {
    h.client
        .list_merchant_payments(&ListMerchantPaymentsQuery::by_external_reference(reference))
        .await
        .unwrap()
}

/// Contract: the directory lists channels usable for creating a merchant payment.
#[tokio::test]
async fn channel_directory_lists_real_channel_identifiers() {
    let h = Harness::start().await;
    let channels = h.client.list_channels().await.unwrap();
    let coin = channels
        .iter()
        .find(|c| c.payment_no == s::CHANNEL_PLATFORM_COIN)
        .expect("platform coin listed");
    assert_eq!(coin.provider, ChannelProvider::PlatformCoin);
    assert!(coin.login_required);
    assert!(channels.iter().any(|c| c.payment_no == s::CHANNEL_CARD_USD));
    assert!(
        channels
            .iter()
            .all(|c| c.payment_no != s::CHANNEL_CARD_EUR_OTHER)
    );
}

/// Contract: create returns the create fields; amount, currency and precision are checked;
/// query and list return the same payment; times keep their zone.
#[tokio::test]
async fn create_query_and_list_a_merchant_payment() {
    let h = Harness::start().await;
    let req = CreateMerchantPayment::new("order-create-1", usd("12.50"), "USD")
        .with_description("Coffee beans")
        .with_expires_in(1800)
        .expect_currency_decimals(2);
    let created = h.client.create_merchant_payment(&req).await.unwrap();
    assert_eq!(created.idempotency_key, req.idempotency_key());
    let p = &created.payment;
    assert_eq!(p.status, MerchantPaymentStatus::Pending);
    assert_eq!(
        p.amount_minor.to_decimal_string(p.currency_decimals),
        "12.50"
    );
    assert_eq!(p.payment_no, "");
    assert!(!p.test_mode);
    let checkout = p.checkout_url.as_ref().expect("checkout_url on creation");
    assert!(checkout.expose().starts_with("http"));
    assert!(
        !format!("{p:?}").contains(checkout.expose()),
        "token redacted"
    );

    let queried = h.client.get_merchant_payment(&p.order_no).await.unwrap();
    assert_eq!(queried.order_no, p.order_no);
    assert_eq!(queried.expires_at, p.expires_at);
    assert!(queried.event_id.is_none());

    let by_ref = listed_by_reference(&h, "order-create-1").await;
    assert_eq!(by_ref.len(), 1);
    let both = h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery {
            external_reference: Some("order-create-1".into()),
            order_no: Some("no-such-order".into()),
            limit: Some(5),
        })
        .await
        .unwrap();
    assert!(both.is_empty(), "both filters must match");
}

/// Contract: "On a timeout, retry with the original key and parameters"; a repeat with identical
/// parameters returns the same payment. The sandbox holds one payment.
#[tokio::test]
async fn same_idempotency_key_is_reused_across_retries_and_one_payment_exists() {
    let h = Harness::start_with(|c| c.with_attempt_timeout(Duration::from_millis(400))).await;
    h.client.authenticate().await.unwrap();
    h.fault(json!({"method": "POST", "path": create_path(), "latency_ms": 1500}))
        .await;
    let req = CreateMerchantPayment::new("order-idem-1", usd("5.00"), "USD");
    let created = h.client.create_merchant_payment(&req).await.unwrap();
    let posts = h.requests_to("POST", &create_path()).await;
    assert!(posts.len() >= 2, "timed out once, then retried: {posts:?}");
    for p in &posts {
        assert!(
            p.to_string().contains(req.idempotency_key()),
            "every attempt carries the original key: {p}"
        );
    }
    let listed = listed_by_reference(&h, "order-idem-1").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].order_no, created.payment.order_no);
    // The app retrying later with its persisted key and the same parameters gets the same one.
    let again = h.client.create_merchant_payment(&req).await.unwrap();
    assert_eq!(again.payment.order_no, created.payment.order_no);
    let listed = listed_by_reference(&h, "order-idem-1").await;
    assert_eq!(listed.len(), 1);
}

/// Contract: 500 `server_error` — reuse the original idempotency key for writes.
#[tokio::test]
async fn create_is_retried_with_the_same_key_after_a_server_error() {
    let h = Harness::start().await;
    fail_next_create(&h, 500, json!({"error": "server_error"})).await;
    let req = CreateMerchantPayment::new("order-idem-2", usd("5.00"), "USD");
    h.client.create_merchant_payment(&req).await.unwrap();
    assert_eq!(h.requests_to("POST", &create_path()).await.len(), 2);
}

/// Contract: 503 `notification_unavailable` — retry later with the original key.
#[tokio::test]
async fn notification_unavailable_is_retried_with_the_original_key() {
    let h = Harness::start().await;
    fail_next_create(&h, 503, json!({"error": "notification_unavailable"})).await;
    let req = CreateMerchantPayment::new("order-idem-3", usd("5.00"), "USD");
    h.client.create_merchant_payment(&req).await.unwrap();
    assert_eq!(h.requests_to("POST", &create_path()).await.len(), 2);
}

/// Contract: changed parameters under the same key give 409 `payment_conflict` (not retried).
#[tokio::test]
async fn changed_parameters_under_the_same_key_conflict() {
    let h = Harness::start().await;
    let req = CreateMerchantPayment::new("order-conflict", usd("5.00"), "USD");
    h.client.create_merchant_payment(&req).await.unwrap();
    let again = h.client.create_merchant_payment(&req).await.unwrap();
    assert_eq!(again.idempotency_key, req.idempotency_key());
    let mut changed = req.clone();
    changed.amount_minor = usd("6.00");
    let err = h
        .client
        .create_merchant_payment(&changed)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409));
    assert!(err.is_code(&ErrorCode::PaymentConflict));
    assert_eq!(h.requests_to("POST", &create_path()).await.len(), 3);
}

/// Limits: every parameter is checked client-side; nothing is sent for an invalid request.
#[tokio::test]
async fn invalid_parameters_are_refused_before_sending() {
    let h = Harness::start().await;
    let cases = [
        (
            CreateMerchantPayment::new("r", usd("1.00"), "USD").with_expires_in(7201),
            "expires_in",
        ),
        (
            CreateMerchantPayment::new(" ", usd("1.00"), "USD"),
            "external_reference",
        ),
        (
            CreateMerchantPayment::new("r", usd("1.00"), "USD")
                .with_notification("https://192.168.1.5/hook", "x".repeat(40)),
            "notify_url",
        ),
        (
            CreateMerchantPayment::new("r", usd("1.00"), "USD")
                .with_return_url("http://shop.example/back"),
            "return_url",
        ),
    ];
    for (req, field) in cases {
        let err = h.client.create_merchant_payment(&req).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation);
        assert_eq!(err.field(), Some(field));
    }
    assert!(h.requests_to("POST", &create_path()).await.is_empty());
}

/// Errors: a service validation error keeps `error_description` and `field`.
#[tokio::test]
async fn service_validation_error_keeps_description_and_field() {
    let h = Harness::start().await;
    fail_next_create(&h, 400, json!({"error": "invalid_expires_in", "error_description": "60 to 7200", "field": "expires_in"})).await;
    let err = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new("r-400", usd("1.00"), "USD"))
        .await
        .unwrap_err();
    assert!(err.is_code(&ErrorCode::InvalidExpiresIn));
    assert_eq!(err.field(), Some("expires_in"));
    assert_eq!(err.error_description(), Some("60 to 7200"));
    assert_eq!(h.requests_to("POST", &create_path()).await.len(), 1);
}

/// Errors: HTTP 202 `provider_result_pending` is not success and not retried blindly.
#[tokio::test]
async fn provider_result_pending_is_a_distinct_outcome() {
    let h = Harness::start().await;
    fail_next_create(&h, 202, json!({"error": "provider_result_pending"})).await;
    let err = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new("r-202", usd("1.00"), "USD"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::ProviderResultPending { .. }),
        "{err:?}"
    );
    assert_eq!(err.kind(), ErrorKind::ProviderResultPending);
    // Issue 12 item 3: it names the payment by the request's reference and key.
    let lookup = err.lookup().unwrap();
    assert_eq!(lookup.external_reference.as_deref(), Some("r-202"));
    assert!(lookup.idempotency_key.is_some());
    assert!(err.advice().is_some());
    assert_eq!(h.requests_to("POST", &create_path()).await.len(), 1);
}

/// Contract: "verify the returned amount, currency and precision" after creation.
#[tokio::test]
async fn a_created_payment_with_another_amount_is_reported() {
    let h = Harness::start().await;
    let req = CreateMerchantPayment::new("r-mismatch", usd("1.00"), "USD");
    let body = json!({"order_no": "MPX1", "external_reference": "r-mismatch", "payment_no": "",
        "amount_minor": 1000, "currency": "USD", "currency_decimals": 2, "status": "pending",
        "test_mode": false, "checkout_url": "https://checkout.example/c/tok",
        "expires_at": "2030-01-01T00:00:00Z"});
    h.fault(json!({"method": "POST", "path": create_path(), "status": 201, "body": body}))
        .await;
    let err = h.client.create_merchant_payment(&req).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ResponseMismatch);
    assert_eq!(err.field(), Some("amount_minor"));
}

/// Contract: `checkout_url` is an absolute HTTPS address carrying a token; a plain-HTTP one to
/// a public host is reported instead of being handed to the buyer.
#[tokio::test]
async fn a_plain_http_checkout_url_is_reported() {
    let h = Harness::start().await;
    let req = CreateMerchantPayment::new("r-http-checkout", usd("1.00"), "USD");
    let body = json!({"order_no": "MPX2", "external_reference": "r-http-checkout",
        "payment_no": "", "amount_minor": 100, "currency": "USD", "currency_decimals": 2,
        "status": "pending", "test_mode": false,
        "checkout_url": "http://checkout.example/c/tok_secret_value",
        "expires_at": "2030-01-01T00:00:00Z"});
    h.fault(json!({"method": "POST", "path": create_path(), "status": 201, "body": body}))
        .await;
    let err = h.client.create_merchant_payment(&req).await.unwrap_err();
    assert_eq!(err.field(), Some("checkout_url"));
    assert!(!err.to_string().contains("tok_secret_value"), "{err}");
}

/// Versioning: unknown future statuses are kept and never treated as paid.
#[tokio::test]
async fn an_unknown_status_is_never_paid() {
    let h = Harness::start().await;
    let created = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new("r-unknown", usd("1.00"), "USD"))
        .await
        .unwrap();
    let order_no = created.payment.order_no.clone();
    let mut body = serde_json::to_value(&created.payment).unwrap();
    body["status"] = json!("settling_v2");
    body["status_version"] = json!(3);
    h.fault(json!({"method": "GET",
                   "path": format!("{}/{order_no}", create_path()),
                   "status": 200, "body": body}))
        .await;
    let p = h.client.get_merchant_payment(&order_no).await.unwrap();
    assert_eq!(
        p.status,
        MerchantPaymentStatus::Unknown("settling_v2".into())
    );
    assert!(!p.status.is_paid());
    assert!(p.status.needs_verification());
}

/// Contract: an unknown or foreign number gives 404 `payment_not_found`.
#[tokio::test]
async fn unknown_payment_number_is_payment_not_found() {
    let h = Harness::start().await;
    let err = h.client.get_merchant_payment("MP-NOPE").await.unwrap_err();
    assert!(err.is_code(&ErrorCode::PaymentNotFound));
    assert_eq!(err.status(), Some(404));
}

/// Contract: the list needs `external_reference` and/or `order_no`.
#[tokio::test]
async fn list_without_a_filter_is_refused_before_sending() {
    let h = Harness::start().await;
    let err = h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Validation);
    let err = h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery {
            order_no: Some("x".into()),
            limit: Some(0),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("limit"));
}

/// Contract: paying at the checkout confirms the payment; the query shows the confirmation
/// fields (`event_id`, `occurred_at`, higher `status_version`).
#[tokio::test]
async fn paid_payment_query_shows_confirmation_fields() {
    let h = Harness::start().await;
    let created = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new("r-paid", usd("3.00"), "USD"))
        .await
        .unwrap();
    let order_no = &created.payment.order_no;
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/checkout/pay"),
        Some(json!({"payment_no": s::CHANNEL_CARD_USD})),
    )
    .await;
    let p = h.client.get_merchant_payment(order_no).await.unwrap();
    assert!(p.status.is_paid());
    assert!(p.event_id.is_some());
    assert!(p.occurred_at.is_some());
    assert!(p.status_version.is_some_and(|v| v > 0));
    assert_eq!(p.payment_no, s::CHANNEL_CARD_USD);
}

/// Contract: delivery records by payment number; re-queue answers 202 `{"accepted": true}`.
#[tokio::test]
async fn notification_records_and_requeue() {
    let h = Harness::start().await;
    // A loopback receiver that refuses every delivery.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(|| async { axum::http::StatusCode::INTERNAL_SERVER_ERROR }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });

    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new("r-notify", usd("2.00"), "USD")
                .with_notification(&url, "n".repeat(40)),
        )
        .await
        .unwrap();
    let order_no = &created.payment.order_no;
    // Let the automatic attempts run out on the sandbox clock (1 min ... 8 h intervals).
    let mut records = Vec::new();
    for _ in 0..40 {
        h.advance_clock(3 * 3600).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        records = h
            .client
            .list_notification_records(order_no, Some(10))
            .await
            .unwrap();
        if records
            .iter()
            .any(|r| r.delivery_status.as_str() == "failed")
        {
            break;
        }
    }
    let record = records.first().expect("a delivery record");
    assert_eq!(record.delivery_status.as_str(), "failed", "{records:?}");
    assert!(record.attempts >= 1);
    let accepted = h
        .client
        .retry_notification(order_no, &record.event_id)
        .await
        .unwrap();
    assert!(accepted.accepted);
}

/// States: a pending payment whose `expires_at` passed with no channel session started reads
/// as `expired` — not paid, and not a status to guess from a local timer.
#[tokio::test]
async fn expired_payment_reads_as_expired_and_not_paid() {
    let h = Harness::start().await;
    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new("r-expire", usd("1.00"), "USD").with_expires_in(60),
        )
        .await
        .unwrap();
    h.advance_clock(120).await;
    let p = h
        .client
        .get_merchant_payment(&created.payment.order_no)
        .await
        .unwrap();
    assert_eq!(p.status, MerchantPaymentStatus::Expired);
    assert!(!p.status.is_paid());
    assert!(p.status_version.is_some_and(|v| v > 0));
}

/// States: `review` is undecided — never paid, needs verification.
#[tokio::test]
async fn review_status_needs_verification_and_is_not_paid() {
    let h = Harness::start().await;
    let created = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new("r-review", usd("1.00"), "USD"))
        .await
        .unwrap();
    let order_no = &created.payment.order_no;
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/force"),
        Some(json!({"status": "review"})),
    )
    .await;
    let p = h.client.get_merchant_payment(order_no).await.unwrap();
    assert_eq!(p.status, MerchantPaymentStatus::Review);
    assert!(!p.status.is_paid());
    assert!(p.status.needs_verification());
}

/// Events: `notify_enabled` true without an address and secret and without an enabled
/// merchant default is refused with 400 `invalid_notify_config` (only the service knows the
/// default, so the SDK sends it).
#[tokio::test]
async fn notify_enabled_without_a_usable_default_is_invalid_notify_config() {
    let h = Harness::start().await;
    let err = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new("r-notify-cfg", usd("1.00"), "USD")
                .with_notify_enabled(true),
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert!(err.is_code(&ErrorCode::InvalidNotifyConfig), "{err:?}");
}

/// Limits: `external_reference` (non-empty after trim, max 191 bytes), `idempotency_key`
/// (max 128 bytes), `description` (max 500 bytes, trimmed), `expires_in` (60 to 7200),
/// `notify_secret` (32 to 256 bytes, no whitespace, sent with `notify_url`), `notify_enabled`
/// false not combined with address or secret, `return_url` (HTTPS, max 2048 bytes, no user
/// info, backslash or whitespace) and `amount_minor` (max 9007199254740991): each violation is
/// refused before anything is sent, and each boundary value is accepted by the service.
#[tokio::test]
async fn create_limits_are_refused_before_sending_and_their_boundaries_accepted() {
    let h = Harness::start().await;
    let r = |reference: &str| CreateMerchantPayment::new(reference, usd("1.00"), "USD");
    let hook = "http://127.0.0.1:9/hook";
    let secret = "s".repeat(32);
    // Bytes, not characters: 96 two-byte characters are 192 bytes.
    let refused = [
        (r(&"é".repeat(96)), "external_reference"),
        (r("\t \n"), "external_reference"),
        (
            CreateMerchantPayment::new("r", usd("1.00"), "usd"),
            "currency",
        ),
        (r("r").with_idempotency_key(""), "idempotency_key"),
        (
            r("r").with_idempotency_key("k".repeat(129)),
            "idempotency_key",
        ),
        (r("r").with_description("d".repeat(501)), "description"),
        (r("r").with_expires_in(59), "expires_in"),
        (r("r").with_expires_in(7201), "expires_in"),
        (
            r("r").with_notification(hook, "s".repeat(31)),
            "notify_secret",
        ),
        (
            r("r").with_notification(hook, "s".repeat(257)),
            "notify_secret",
        ),
        (
            r("r").with_notification(hook, format!("{secret}\tmore")),
            "notify_secret",
        ),
        (
            CreateMerchantPayment {
                notify_url: Some(hook.into()),
                ..r("r")
            },
            "notify_secret",
        ),
        (
            CreateMerchantPayment {
                notify_secret: Some(secret.clone().into()),
                ..r("r")
            },
            "notify_url",
        ),
        (
            r("r")
                .with_notification(hook, secret.clone())
                .with_notify_enabled(false),
            "notify_enabled",
        ),
        (
            r("r").with_notification("https://shop.example/hook#frag", secret.clone()),
            "notify_url",
        ),
        (
            r("r").with_notification("https://user@shop.example/hook", secret.clone()),
            "notify_url",
        ),
        (
            r("r").with_notification(
                format!("https://shop.example/{}", "h".repeat(2048)),
                secret.clone(),
            ),
            "notify_url",
        ),
        (
            r("r").with_return_url("https://user:pw@shop.example/back"),
            "return_url",
        ),
        (
            r("r").with_return_url("https://shop.example\\back"),
            "return_url",
        ),
        (
            r("r").with_return_url("https://shop.example/a\u{7}b"),
            "return_url",
        ),
        (
            r("r").with_return_url(format!("https://shop.example/{}", "a".repeat(2030))),
            "return_url",
        ),
    ];
    for (req, field) in refused {
        let dbg = format!("{req:?}");
        let err = h.client.create_merchant_payment(&req).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation, "{dbg}");
        assert_eq!(err.field(), Some(field), "{dbg}");
    }
    assert!(h.requests_to("POST", &create_path()).await.is_empty());
    // An amount above the maximum cannot even be built, from code or from JSON.
    assert!(MinorAmount::new(storefront::MAX_AMOUNT_MINOR + 1).is_err());
    let too_big = json!({"external_reference": "r", "amount_minor": 9_007_199_254_740_992u64,
                         "currency": "USD"});
    assert!(serde_json::from_value::<CreateMerchantPayment>(too_big).is_err());

    // The boundary values themselves are valid, and the service agrees.
    let accepted = [
        r(&format!("{}x", "é".repeat(95))),
        r("r-key").with_idempotency_key("k".repeat(128)),
        r("r-desc").with_description(format!("  {}  ", "d".repeat(500))),
        r("r-60").with_expires_in(60),
        r("r-7200").with_expires_in(7200),
        r("r-s32").with_notification(hook, secret.clone()),
        r("r-s256").with_notification(hook, "s".repeat(256)),
        r("r-ret").with_return_url(format!(
            " https://shop.example/{}?a=1#f ",
            "a".repeat(2048 - "https://shop.example/?a=1#f".len())
        )),
    ];
    let n = accepted.len();
    for req in accepted {
        let dbg = format!("{req:?}");
        let created = h.client.create_merchant_payment(&req).await.expect(&dbg);
        assert_eq!(created.idempotency_key, req.idempotency_key(), "{dbg}");
    }
    assert_eq!(h.requests_to("POST", &create_path()).await.len(), n);
}

/// Amount rules: "After creation, verify the returned amount, currency and precision"; the
/// reference is fixed at creation. A created payment that differs in currency, precision or
/// reference is reported with the field named, never returned as a success.
#[tokio::test]
async fn a_created_payment_with_another_currency_precision_or_reference_is_reported() {
    let h = Harness::start().await;
    let answer = |reference: &str, currency: &str, decimals: u32| {
        json!({"order_no": "MPX9", "external_reference": reference, "payment_no": "",
            "amount_minor": 100, "currency": currency, "currency_decimals": decimals,
            "status": "pending", "test_mode": false,
            "checkout_url": "https://checkout.example/c/tok",
            "expires_at": "2030-01-01T00:00:00Z"})
    };
    let cases = [
        (answer("r-v", "EUR", 2), "currency"),
        (answer("r-v", "USD", 0), "currency_decimals"),
        (answer("r-other", "USD", 2), "external_reference"),
    ];
    for (body, field) in cases {
        fail_next_create(&h, 201, body).await;
        let req = CreateMerchantPayment::new("r-v", usd("1.00"), "USD").expect_currency_decimals(2);
        let err = h.client.create_merchant_payment(&req).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ResponseMismatch, "{err:?}");
        assert_eq!(err.field(), Some(field));
    }
    // The genuine answer passes the same checks.
    let ok = CreateMerchantPayment::new("r-v", usd("1.00"), "USD").expect_currency_decimals(2);
    let created = h.client.create_merchant_payment(&ok).await.unwrap();
    assert_eq!(created.payment.currency_decimals, 2);
}

/// Limits: list and notification-record `limit` is 1 to 100. Out-of-range values are refused
/// before sending (the service would silently fall back to 20); 1 and 100 are sent as given.
#[tokio::test]
async fn list_and_notification_limit_must_be_1_to_100() {
    let h = Harness::start().await;
    let created = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new("r-limit", usd("1.00"), "USD"))
        .await
        .unwrap();
    let order_no = created.payment.order_no.clone();
    let list_path = create_path();
    let records_path = format!("{}/{order_no}/notifications", create_path());
    for bad in [0, 101] {
        let q = ListMerchantPaymentsQuery {
            limit: Some(bad),
            ..ListMerchantPaymentsQuery::by_order_no(&order_no)
        };
        let err = h.client.list_merchant_payments(&q).await.unwrap_err();
        assert_eq!(err.field(), Some("limit"));
        let err = h
            .client
            .list_notification_records(&order_no, Some(bad))
            .await
            .unwrap_err();
        assert_eq!(err.field(), Some("limit"));
    }
    assert!(h.requests_to("GET", &list_path).await.is_empty());
    assert!(h.requests_to("GET", &records_path).await.is_empty());
    for good in [1, 100] {
        let q = ListMerchantPaymentsQuery {
            limit: Some(good),
            ..ListMerchantPaymentsQuery::by_order_no(&order_no)
        };
        assert_eq!(h.client.list_merchant_payments(&q).await.unwrap().len(), 1);
        h.client
            .list_notification_records(&order_no, Some(good))
            .await
            .unwrap();
    }
    let sent: Vec<String> = h
        .requests_to("GET", &list_path)
        .await
        .iter()
        .chain(h.requests_to("GET", &records_path).await.iter())
        .map(|r| r["query"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(sent.len(), 4);
    assert_eq!(
        sent.iter()
            .filter(|q| q.contains("limit=1&") || q.ends_with("limit=1"))
            .count(),
        2,
        "{sent:?}"
    );
    assert_eq!(
        sent.iter().filter(|q| q.contains("limit=100")).count(),
        2,
        "{sent:?}"
    );
}

/// Versioning: "clients ignore unused response fields". A query answer with fields this SDK
/// does not know still decodes, and its known fields keep their meaning.
#[tokio::test]
async fn unused_response_fields_are_ignored() {
    let h = Harness::start().await;
    let created = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new("r-extra", usd("1.00"), "USD"))
        .await
        .unwrap();
    let order_no = created.payment.order_no.clone();
    let mut body = serde_json::to_value(&created.payment).unwrap();
    body["future_field"] = json!({"nested": [1, 2]});
    body["display_hint"] = json!("shown elsewhere");
    h.fault(json!({"method": "GET",
                   "path": format!("{}/{order_no}", create_path()),
                   "status": 200, "body": body}))
        .await;
    let p = h.client.get_merchant_payment(&order_no).await.unwrap();
    assert_eq!(p.order_no, order_no);
    assert_eq!(p.amount_minor, usd("1.00"));
    assert_eq!(p.status, MerchantPaymentStatus::Pending);
}

/// POST /openapi/v1/merchant-payments: `external_reference` is "not a dedupe key"; the
/// idempotency key is. Two requests with one reference and two keys are two payments, each
/// with its own key; the list by reference returns both, newest first.
#[tokio::test]
async fn external_reference_is_not_a_dedupe_key() {
    let h = Harness::start().await;
    let first = CreateMerchantPayment::new("r-same-ref", usd("1.00"), "USD");
    let second = CreateMerchantPayment::new("r-same-ref", usd("1.00"), "USD");
    assert_ne!(first.idempotency_key(), second.idempotency_key());
    let a = h.client.create_merchant_payment(&first).await.unwrap();
    h.advance_clock(1).await;
    let b = h.client.create_merchant_payment(&second).await.unwrap();
    assert_ne!(a.payment.order_no, b.payment.order_no);
    let listed: Vec<String> = listed_by_reference(&h, "r-same-ref")
        .await
        .into_iter()
        .map(|p| p.order_no)
        .collect();
    assert_eq!(listed, [b.payment.order_no, a.payment.order_no]);
}

/// Return address flow: "When absent or empty … the buyer stays in the checkout flow". An
/// empty (or blank) `return_url` is accepted as "none", and the payment has no return address.
#[tokio::test]
async fn empty_return_url_means_none() {
    let h = Harness::start().await;
    for (reference, blank) in [("r-ret-empty", ""), ("r-ret-blank", "   ")] {
        let created = h
            .client
            .create_merchant_payment(
                &CreateMerchantPayment::new(reference, usd("1.00"), "USD").with_return_url(blank),
            )
            .await
            .unwrap();
        assert_eq!(created.payment.return_url, None);
        let queried = h
            .client
            .get_merchant_payment(&created.payment.order_no)
            .await
            .unwrap();
        assert_eq!(queried.return_url, None);
    }
}

/// Authentication 2: "The caller does not submit a buyer or merchant number"; the create body
/// holds only the contract's parameters (the local precision expectation is never sent), as
/// JSON.
#[tokio::test]
async fn create_body_carries_only_contract_parameters() {
    let h = Harness::start().await;
    let req = CreateMerchantPayment::new("r-body", usd("1.00"), "USD")
        .with_payment_no(s::CHANNEL_CARD_USD)
        .with_description("Beans")
        .with_expires_in(600)
        .with_notification("http://127.0.0.1:9/hook", "n".repeat(40))
        .with_return_url("https://shop.example/back")
        .expect_currency_decimals(2);
    h.client.create_merchant_payment(&req).await.unwrap();
    let sent = h.requests_to("POST", &create_path()).await;
    assert_eq!(sent.len(), 1);
    let body: Value = match &sent[0]["body"] {
        Value::String(text) => serde_json::from_str(text).unwrap(),
        other => other.clone(),
    };
    let mut keys: Vec<&str> = body
        .as_object()
        .expect("a JSON object body")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "amount_minor",
            "currency",
            "description",
            "expires_in",
            "external_reference",
            "idempotency_key",
            "notify_secret",
            "notify_url",
            "payment_no",
            "return_url"
        ],
        "{body}"
    );
    assert_eq!(body["amount_minor"], 100);
    let content_type = sent[0]["headers"]["content-type"].to_string();
    assert!(content_type.contains("application/json"), "{content_type}");
}
