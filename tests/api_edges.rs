//! The sharp edges of the public API (issue 12 item 3), over real HTTP against the sandbox:
//! the defaults table is the configuration, a payment wait that runs out of time is an outcome,
//! unclear answers carry what the app needs to look the payment or order up, and amounts and
//! expiries display for people.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Harness, s};
use serde_json::json;
use storefront::{
    Config, CreateMerchantPayment, CreateOrderRequest, DEFAULT_WAIT_INTERVAL, DEFAULT_WAIT_TIMEOUT,
    Error, ErrorKind, MinorAmount, Operation, PaymentStatus, PaymentWaitOutcome,
};
use time::format_description::well_known::Rfc3339;

/// A duration as the table writes it: whole seconds as `N s`, otherwise `N ms`.
fn duration_text(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Every default of the SDK, from the code, in the table's notation.
fn defaults_from_code() -> BTreeMap<String, String> {
    let c = Config::new(
        "https://a.example/api",
        "https://a.example/t",
        "id",
        "secret",
    );
    let mib = |bytes: usize| {
        assert_eq!(bytes % (1024 * 1024), 0);
        format!("{} MiB", bytes / (1024 * 1024))
    };
    [
        ("connect_timeout", duration_text(c.connect_timeout)),
        ("attempt_timeout", duration_text(c.attempt_timeout)),
        ("overall_deadline", duration_text(c.overall_deadline)),
        ("retry.max_attempts", c.retry.max_attempts.to_string()),
        ("retry.base_delay", duration_text(c.retry.base_delay)),
        ("retry.max_delay", duration_text(c.retry.max_delay)),
        (
            "retry.max_retry_after",
            duration_text(c.retry.max_retry_after),
        ),
        (
            "token_refresh_margin",
            duration_text(c.token_refresh_margin),
        ),
        ("max_response_bytes", mib(c.max_response_bytes)),
        ("max_in_flight", c.max_in_flight.to_string()),
        ("rate_limits.enabled", c.rate_limits.enabled.to_string()),
        (
            "rate_limits.create_per_window",
            c.rate_limits.create_per_window.to_string(),
        ),
        (
            "rate_limits.read_per_window",
            c.rate_limits.read_per_window.to_string(),
        ),
        (
            "rate_limits.requeue_per_window",
            c.rate_limits.requeue_per_window.to_string(),
        ),
        ("rate_limits.window", duration_text(c.rate_limits.window)),
        ("rate_limits.margin", duration_text(c.rate_limits.margin)),
        (
            "shared_state",
            c.shared_state
                .as_ref()
                .map_or("none".to_owned(), |_| "set".to_owned()),
        ),
        (
            "allow_insecure_loopback",
            c.allow_insecure_loopback.to_string(),
        ),
        ("wait.interval", duration_text(DEFAULT_WAIT_INTERVAL)),
        ("wait.timeout", duration_text(DEFAULT_WAIT_TIMEOUT)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The rows `| `setting` | value | why |` of the first table after `marker` in `text` (lines
/// may carry a `/// ` doc-comment prefix).
fn table_after(text: &str, marker: &str) -> BTreeMap<String, String> {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} missing"));
    let mut rows = BTreeMap::new();
    let mut in_table = false;
    for line in text[start..].lines().skip(1) {
        let line = line.trim_start_matches("///").trim();
        if !line.starts_with('|') {
            if in_table {
                break;
            }
            continue;
        }
        in_table = true;
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if let Some(name) = cells[0].strip_prefix('`').and_then(|c| c.strip_suffix('`')) {
            assert!(
                rows.insert(name.to_owned(), cells[1].to_owned()).is_none(),
                "{name} twice"
            );
        }
    }
    rows
}

/// Issue 12 item 3: one table of every default, in the README and in the doc comment of
/// `Config`, equal to what `Config::new` and the wait constants really hold.
#[test]
fn defaults_table_is_the_configuration() {
    let code = defaults_from_code();
    let readme = table_after(include_str!("../README.md"), "## Defaults");
    assert_eq!(readme, code, "README section Defaults");
    let doc = table_after(include_str!("../src/config.rs"), "/// Defaults (the README");
    assert_eq!(doc, code, "doc comment of Config");
    // JSON (the C ABI, Python, PHP) without the optional fields gives the same values.
    let json: Config = serde_json::from_value(json!({"base_url": "https://a.example/api",
        "token_endpoint": "https://a.example/t", "client_id": "id"}))
    .unwrap();
    let new = Config::new("https://a.example/api", "https://a.example/t", "id", "s");
    assert_eq!(json.connect_timeout, new.connect_timeout);
    assert_eq!(json.attempt_timeout, new.attempt_timeout);
    assert_eq!(json.overall_deadline, new.overall_deadline);
    assert_eq!(json.retry, new.retry);
    assert_eq!(json.token_refresh_margin, new.token_refresh_margin);
    assert_eq!(json.max_response_bytes, new.max_response_bytes);
    assert_eq!(json.max_in_flight, new.max_in_flight);
    assert_eq!(json.rate_limits, new.rate_limits);
}

/// Contract (Errors): "HTTP 202 `provider_result_pending` is not success of payment"; (Merchant
/// payment statuses) "do not judge failure from a local timer". Issue 12 item 3: a payment still
/// open when the wait's timeout passes is the outcome
/// `StillPending` (with the last status), not an error; here the status polls fail with 202
/// `provider_result_pending` until then, so the outcome says the last poll failed.
#[tokio::test]
async fn wait_reports_still_pending_as_an_outcome() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = user
        .create_order(&CreateOrderRequest::new(
            s::PRODUCT_BEANS,
            1,
            s::CHANNEL_CARD_USD,
        ))
        .await
        .unwrap();
    // Undecided card payment: the status stays 0.
    let outcome = user
        .wait_for_payment(
            &order.order_no,
            Duration::from_millis(100),
            Duration::from_millis(300),
        )
        .await
        .unwrap();
    assert!(!outcome.is_final());
    assert_eq!(outcome.payment_status(), PaymentStatus::AwaitingPayment);
    assert!(
        matches!(
            outcome,
            PaymentWaitOutcome::StillPending {
                last_poll_failed: false,
                ..
            }
        ),
        "{outcome:?}"
    );

    let path = h.api_path(&format!("/openapi/v1/orders/{}/payment", order.order_no));
    h.fault(json!({"method": "GET", "path": path, "status": 202,
        "body": {"error": "provider_result_pending"}, "times": 1000}))
        .await;
    let outcome = user
        .wait_for_payment(
            &order.order_no,
            Duration::from_millis(100),
            Duration::from_millis(300),
        )
        .await
        .unwrap();
    assert!(
        matches!(
            outcome,
            PaymentWaitOutcome::StillPending {
                last_status: PaymentStatus::AwaitingPayment,
                last_poll_failed: true,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert!(!h.requests_to("GET", &path).await.is_empty());
}

/// Contract (Errors): 202 `provider_result_pending`, "keep the original payment and check".
/// Issue 12 item 3: a 202 `provider_result_pending` on payment start carries the order number
/// and channel the app checks the payment with, and the advice to keep the original payment.
#[tokio::test]
async fn provider_result_pending_carries_the_order_number() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = user
        .create_order(&CreateOrderRequest::new(
            s::PRODUCT_BEANS,
            1,
            s::CHANNEL_CARD_USD,
        ))
        .await
        .unwrap();
    let path = h.api_path(&format!("/openapi/v1/orders/{}/payment", order.order_no));
    h.fault(json!({"method": "POST", "path": path, "status": 202,
        "body": {"error": "provider_result_pending"}}))
        .await;
    let err = user
        .start_payment(&order.order_no, s::CHANNEL_CARD_USD)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ProviderResultPending, "{err:?}");
    let lookup = err.lookup().unwrap();
    assert_eq!(lookup.order_no.as_deref(), Some(order.order_no.as_str()));
    assert_eq!(lookup.payment_no.as_deref(), Some(s::CHANNEL_CARD_USD));
    assert_eq!(
        err.advice(),
        Some(storefront::PROVIDER_RESULT_PENDING_ADVICE)
    );
    assert!(err.to_string().contains(&order.order_no));
    // The number really finds the payment.
    assert_eq!(
        user.payment_status(&lookup.order_no.clone().unwrap())
            .await
            .unwrap(),
        PaymentStatus::AwaitingPayment
    );
}

/// Contract (Overview 8): no general order-list endpoint; (client rules) never retry a catalog
/// order POST blindly. Issue 12 item 3: an order creation of unknown outcome carries the request (the contract
/// has no order list and no number arrived) and advice an app can follow; a payment start of
/// unknown outcome carries the order number to poll.
#[tokio::test]
async fn outcome_unknown_carries_the_request_and_followable_advice() {
    let h = Harness::start().await;
    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let orders = h.api_path("/openapi/v1/orders");
    h.fault(json!({"method": "POST", "path": orders, "status": 500, "after_handler": true}))
        .await;
    let err = user
        .create_order(&CreateOrderRequest::new(
            s::PRODUCT_BEANS,
            2,
            s::CHANNEL_PLATFORM_COIN,
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown, "{err:?}");
    let lookup = err.lookup().unwrap();
    assert_eq!(lookup.gd_no.as_deref(), Some(s::PRODUCT_BEANS));
    assert_eq!(lookup.quantity, Some(2));
    assert_eq!(lookup.payment_no.as_deref(), Some(s::CHANNEL_PLATFORM_COIN));
    assert_eq!(lookup.order_no, None);
    assert_eq!(
        err.advice(),
        Some(Operation::CreateOrder.outcome_unknown_advice())
    );
    assert_eq!(h.requests_to("POST", &orders).await.len(), 1, "not re-sent");

    let order = user
        .create_order(&CreateOrderRequest::new(
            s::PRODUCT_BEANS,
            1,
            s::CHANNEL_PLATFORM_COIN,
        ))
        .await
        .unwrap();
    let path = h.api_path(&format!("/openapi/v1/orders/{}/payment", order.order_no));
    h.fault(json!({"method": "POST", "path": path, "status": 500, "after_handler": true}))
        .await;
    let err = user
        .start_payment(&order.order_no, s::CHANNEL_PLATFORM_COIN)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::OutcomeUnknown {
                operation: Operation::StartPayment,
                ..
            }
        ),
        "{err:?}"
    );
    let order_no = err.lookup().unwrap().order_no.clone().unwrap();
    assert_eq!(order_no, order.order_no);
    // Following the advice: the wait on that number sees the payment the start made.
    let outcome = user
        .wait_for_payment(&order_no, Duration::from_millis(100), DEFAULT_WAIT_TIMEOUT)
        .await
        .unwrap();
    assert_eq!(outcome.payment_status(), PaymentStatus::Paid);
}

/// Contract (Money): `amount_minor` is the amount times 10^`currency_decimals`, converted with
/// integer arithmetic only. Issue 12 item 3: a merchant payment's amount displays as `12.50 USD`, the raw minor amount
/// says what it is, and a payment start's expiry displays as RFC 3339 in UTC.
#[tokio::test]
async fn amounts_and_expiry_display_for_people() {
    let h = Harness::start().await;
    let created = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new(
            "edge-display",
            MinorAmount::parse_decimal("12.50", 2).unwrap(),
            "USD",
        ))
        .await
        .unwrap();
    assert_eq!(created.payment.money().unwrap().to_string(), "12.50 USD");
    assert_eq!(created.payment.amount_minor.to_string(), "1250 minor units");

    let user = h.client.user(h.user_token(s::USER_ALICE).await);
    let order = user
        .create_order(&CreateOrderRequest::new(
            s::PRODUCT_BEANS,
            1,
            s::CHANNEL_CARD_USD,
        ))
        .await
        .unwrap();
    let start = user
        .start_payment(&order.order_no, s::CHANNEL_CARD_USD)
        .await
        .unwrap();
    let shown = start.expire_time.to_string();
    assert!(shown.ends_with('Z') && shown.contains('T'), "{shown}");
    let parsed = time::OffsetDateTime::parse(&shown, &Rfc3339).unwrap();
    assert_eq!(parsed.unix_timestamp(), start.expire_time.unix_seconds());
    assert!(format!("{start:?}").contains(&shown));
    assert!(start.to_string().ends_with(&format!("until {shown}")));
}
