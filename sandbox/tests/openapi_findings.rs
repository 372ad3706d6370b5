//! What schemathesis found fuzzing the sandbox through `sandbox/openapi.json` (see
//! docs/schemathesis.md), each pinned by a test.

mod harness;

use harness::Env;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

fn create_body() -> Value {
    json!({
        "external_reference": "ORDER-1001",
        "idempotency_key": "order-1001-attempt-1",
        "amount_minor": 1999,
        "currency": "USD",
    })
}

/// A JSON `null` is not a string, a boolean or an object: an optional member sent as `null` is a
/// bad parameter (400), not the member left out (the contract types every member; it never says
/// `null`).
#[tokio::test]
async fn null_for_an_optional_member_is_refused_not_taken_as_omitted() {
    let env = Env::start().await;
    let client = env.merchant_token().await;
    let cases = [
        ("payment_no", "invalid_request"),
        ("description", "invalid_request"),
        ("expires_in", "invalid_expires_in"),
        ("return_url", "invalid_return_url"),
        ("notify_enabled", "invalid_request"),
    ];
    for (i, (field, error)) in cases.into_iter().enumerate() {
        let mut body = create_body();
        body["idempotency_key"] = format!("null-{i}").into();
        body[field] = Value::Null;
        let answer = env
            .post(
                &env.api("/openapi/v1/merchant-payments"),
                Some(&client),
                &body,
            )
            .await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{field}: {}",
            answer.text
        );
        assert_eq!(answer.error(), error, "{field}");
        assert_eq!(answer.body["field"], field, "{field}");
    }
    // The pair: each alone is refused as a bad address or secret.
    for (field, error) in [
        ("notify_url", "invalid_notify_url"),
        ("notify_secret", "invalid_notify_secret"),
    ] {
        let mut body = create_body();
        body["idempotency_key"] = format!("null-{field}").into();
        body["notify_url"] = "https://merchant.example/hook".into();
        body["notify_secret"] = "s".repeat(40).into();
        body[field] = Value::Null;
        let answer = env
            .post(
                &env.api("/openapi/v1/merchant-payments"),
                Some(&client),
                &body,
            )
            .await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{field}: {}",
            answer.text
        );
        assert_eq!(answer.error(), error, "{field}");
    }

    let user = env.user_token(seed::USER_ALICE).await;
    let answer = env
        .create_order(
            &user,
            json!({"gd_no": "G1001", "quantity": 1, "payment_no": "ch_platform_coin", "other_ipu": null}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
    assert_eq!(answer.error(), "invalid_request");
    assert_eq!(answer.body["field"], "other_ipu");
}

/// JSON has one number type, and the document's `integer` (JSON Schema, OpenAPI 3.1) is any
/// number with a zero fractional part: `1999.0` and `1.999e3` are the integer 1999. A fraction
/// stays refused.
#[tokio::test]
async fn integral_numbers_written_with_a_fraction_or_exponent_are_integers() {
    let env = Env::start().await;
    let client = env.merchant_token().await;
    let mut body = create_body();
    body["amount_minor"] = json!(1999.0);
    body["expires_in"] = json!(6.0e2);
    let answer = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(&client),
            &body,
        )
        .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    assert_eq!(answer.body["amount_minor"], 1999);
    // The same normalized parameters: an idempotent repeat, written the plain way.
    let mut plain = create_body();
    plain["expires_in"] = json!(600);
    let again = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(&client),
            &plain,
        )
        .await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.text);
    assert_eq!(again.body["order_no"], answer.body["order_no"]);

    for (field, value, error) in [
        ("amount_minor", json!(1999.5), "invalid_request"),
        ("amount_minor", json!(1.0e300), "invalid_request"),
        ("expires_in", json!(600.5), "invalid_expires_in"),
    ] {
        let mut body = create_body();
        body["idempotency_key"] = format!("fraction-{field}-{value}").into();
        body[field] = value;
        let answer = env
            .post(
                &env.api("/openapi/v1/merchant-payments"),
                Some(&client),
                &body,
            )
            .await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{field}: {}",
            answer.text
        );
        assert_eq!(answer.error(), error);
    }

    let user = env.user_token(seed::USER_ALICE).await;
    let answer = env
        .create_order(
            &user,
            json!({"gd_no": "G1001", "quantity": 2.0, "payment_no": "ch_platform_coin"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let order = env
        .get(
            &env.api(&format!(
                "/openapi/v1/orders/{}",
                answer.body["order_no"].as_str().unwrap()
            )),
            Some(&user),
        )
        .await;
    assert_eq!(order.body["quantity"], 2);
    let answer = env
        .create_order(
            &user,
            json!({"gd_no": "G1001", "quantity": 1.5, "payment_no": "ch_platform_coin"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
}
