//! What schemathesis found fuzzing the sandbox through `sandbox/openapi.json` (see
//! docs/schemathesis.md), each pinned by a test.

mod harness;

use harness::{Answer, Env};
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

/// The set-up of every test here: a sandbox and a token of its seeded merchant.
async fn start() -> (Env, String) {
    let env = Env::start().await;
    let client = env.merchant_token().await;
    (env, client)
}

/// A valid creation body under the idempotency key `key`.
fn create_body(key: &str) -> Value {
    json!({
        "external_reference": "ORDER-1001",
        "idempotency_key": key,
        "amount_minor": 1999,
        "currency": "USD",
    })
}

/// POST /openapi/v1/merchant-payments with the merchant's token.
async fn create(env: &Env, client: &str, body: &Value) -> Answer {
    let url = env.api("/openapi/v1/merchant-payments");
    env.post(&url, Some(client), body).await
}

/// Asserts a 400 answer with the error code `error` (`what` names the case).
fn assert_bad_request(answer: &Answer, error: &str, what: &str) {
    assert_eq!(
        answer.status,
        StatusCode::BAD_REQUEST,
        "{what}: {}",
        answer.text
    );
    assert_eq!(answer.error(), error, "{what}");
}

/// A JSON `null` is not a string, a boolean or an object: an optional member sent as `null` is a
/// bad parameter (400), not the member left out (the contract types every member; it never says
/// `null`).
#[tokio::test]
async fn null_for_an_optional_member_is_refused_not_taken_as_omitted() {
    let (env, client) = start().await;
    let cases = [
        ("payment_no", "invalid_request"),
        ("description", "invalid_request"),
        ("expires_in", "invalid_expires_in"),
        ("return_url", "invalid_return_url"),
        ("notify_enabled", "invalid_request"),
    ];
    for (i, (field, error)) in cases.into_iter().enumerate() {
        let mut body = create_body(&format!("null-{i}"));
        body[field] = Value::Null;
        let answer = create(&env, &client, &body).await;
        assert_bad_request(&answer, error, field);
        assert_eq!(answer.body["field"], field, "{field}");
    }
    // The pair: each alone is refused as a bad address or secret.
    for (field, error) in [
        ("notify_url", "invalid_notify_url"),
        ("notify_secret", "invalid_notify_secret"),
    ] {
        let mut body = create_body(&format!("null-{field}"));
        body["notify_url"] = "https://merchant.example/hook".into();
        body["notify_secret"] = "s".repeat(40).into();
        body[field] = Value::Null;
        let answer = create(&env, &client, &body).await;
        assert_bad_request(&answer, error, field);
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
    let (env, client) = start().await;
    let mut body = create_body("order-1001-attempt-1");
    body["amount_minor"] = json!(1999.0);
    body["expires_in"] = json!(6.0e2);
    let answer = create(&env, &client, &body).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    assert_eq!(answer.body["amount_minor"], 1999);
    // The same normalized parameters: an idempotent repeat, written the plain way.
    let mut plain = create_body("order-1001-attempt-1");
    plain["expires_in"] = json!(600);
    let again = create(&env, &client, &plain).await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.text);
    assert_eq!(again.body["order_no"], answer.body["order_no"]);

    for (field, value, error) in [
        ("amount_minor", json!(1999.5), "invalid_request"),
        ("amount_minor", json!(1.0e300), "invalid_request"),
        ("expires_in", json!(600.5), "invalid_expires_in"),
    ] {
        let mut body = create_body(&format!("fraction-{field}-{value}"));
        body[field] = value;
        let answer = create(&env, &client, &body).await;
        assert_bad_request(&answer, error, field);
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
