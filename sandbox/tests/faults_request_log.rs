//! The request log (`GET /_sandbox/requests`): what the sandbox received, with secrets redacted.

mod harness;

use harness::Env;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

async fn requests(env: &Env, query: &str) -> Vec<Value> {
    let answer = env
        .get(&env.control(&format!("/requests{query}")), None)
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    answer.body.as_array().expect("a JSON array").clone()
}

#[tokio::test]
async fn requests_are_recorded_with_method_path_query_headers_and_body() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    env.get(
        &env.api("/openapi/v1/products?page=2&limit=5"),
        Some(&alice),
    )
    .await;
    let body =
        json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD});
    env.create_order(&alice, body.clone()).await;
    let all = requests(&env, "").await;
    let list = all
        .iter()
        .find(|r| r["path"] == "/api/openapi/v1/products")
        .expect("the product list is recorded");
    assert_eq!(list["method"], "GET");
    assert_eq!(list["peer"], "127.0.0.1");
    assert_eq!(list["query"], "page=2&limit=5");
    assert_eq!(list["status"], 200);
    let order = requests(&env, "?method=POST&path=/api/openapi/v1/orders").await;
    assert_eq!(order.len(), 1);
    assert_eq!(
        serde_json::from_str::<Value>(order[0]["body"].as_str().unwrap()).unwrap(),
        body
    );
    assert_eq!(order[0]["headers"]["content-type"], "application/json");
    assert_eq!(order[0]["status"], 201);
    // Control requests are not recorded.
    assert!(
        all.iter()
            .all(|r| !r["path"].as_str().unwrap().starts_with("/_sandbox"))
    );
}

#[tokio::test]
async fn recorded_requests_never_contain_tokens_or_secrets() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    env.get(&env.api("/openapi/v1/merchant"), Some(&token))
        .await;
    env.post(
        &env.api("/openapi/v1/merchant-payments"),
        Some(&token),
        &json!({"external_reference": "r1", "idempotency_key": "k1", "amount_minor": 100,
                "currency": "USD", "notify_url": "https://example.com/n",
                "notify_secret": "notify-secret-value-0123456789abcdef"}),
    )
    .await;
    env.get(
        &format!(
            "{}/checkout/checkout-token-value/x?token=tok-value",
            env.sandbox.origin()
        ),
        None,
    )
    .await;
    let log = serde_json::to_string(&requests(&env, "").await).unwrap();
    for secret in [
        token.as_str(),
        seed::MERCHANT_CLIENT_SECRET,
        "notify-secret-value-0123456789abcdef",
        "checkout-token-value",
        "tok-value",
    ] {
        assert!(!log.contains(secret), "{secret} leaked into {log}");
    }
    assert!(log.contains("Bearer [redacted]"));
    assert!(log.contains("client_secret=%5Bredacted%5D"));
    assert!(
        log.contains("sbx_merchant_client"),
        "non-secret fields are kept"
    );
}

#[tokio::test]
async fn faulted_and_dropped_requests_are_recorded_too() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let path = format!("{}/openapi/v1/merchant", seed::API_PREFIX);
    env.post(
        &env.control("/faults"),
        None,
        &json!({"method": "GET", "path": path, "status": 500}),
    )
    .await;
    env.post(
        &env.control("/faults"),
        None,
        &json!({"method": "GET", "path": path, "drop_connection": true}),
    )
    .await;
    env.get(&env.api("/openapi/v1/merchant"), Some(&token))
        .await;
    let _ = env
        .http
        .get(env.api("/openapi/v1/merchant"))
        .bearer_auth(&token)
        .send()
        .await;
    env.get(&env.api("/openapi/v1/merchant"), Some(&token))
        .await;
    let seen = requests(&env, &format!("?path={path}")).await;
    let statuses: Vec<&Value> = seen.iter().map(|r| &r["status"]).collect();
    assert_eq!(statuses, vec![&json!(500), &Value::Null, &json!(200)]);
    assert_eq!(seen[1]["dropped"], true);
}

#[tokio::test]
async fn request_log_can_be_cleared() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    env.get(&env.api("/openapi/v1/merchant"), Some(&token))
        .await;
    assert!(!requests(&env, "").await.is_empty());
    let cleared = env
        .http
        .delete(env.control("/requests"))
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.status(), StatusCode::OK);
    assert!(requests(&env, "").await.is_empty());
}

/// A create body that is not valid JSON still never leaves its `notify_secret` in the log
/// (issue 10 item 8): truncated, single-quoted, with an escaped key, or sent as plain text.
#[tokio::test]
async fn malformed_create_bodies_never_keep_the_notify_secret() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let secret = "malformed-secret-value-0123456789abcdef";
    let bodies = [
        (
            "application/json",
            format!(r#"{{"external_reference": "r", "notify_secret": "{secret}", "#),
        ),
        (
            "application/json",
            format!(r#"{{"notify_secret": "{secret}"}} trailing"#),
        ),
        (
            "application/json",
            format!("{{'notify_secret': '{secret}'}}"),
        ),
        (
            "application/json",
            format!(r#"{{"notify\u005fsecret": "{secret}""#),
        ),
        (
            "application/json",
            format!(r#"{{"notify_secret" "{secret}"}}"#),
        ),
        ("text/plain", format!("notify_secret: {secret}")),
    ];
    for (content_type, body) in &bodies {
        let answer = env
            .http
            .post(env.api("/openapi/v1/merchant-payments"))
            .bearer_auth(&token)
            .header("content-type", *content_type)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_client_error(), "{body}");
    }
    let logged = requests(
        &env,
        &format!(
            "?method=POST&path={}/openapi/v1/merchant-payments",
            seed::API_PREFIX
        ),
    )
    .await;
    assert_eq!(
        logged.len(),
        bodies.len(),
        "every request is still recorded"
    );
    for (entry, (_, body)) in logged.iter().zip(&bodies) {
        assert_eq!(entry["body_bytes"], body.len(), "{entry}");
        assert_eq!(entry["status"], 400, "{entry}");
    }
    let log = serde_json::to_string(&logged).unwrap();
    assert!(!log.contains(secret), "the secret leaked into {log}");
    assert!(!log.contains("malformed-secret"), "{log}");
}

/// The checkout token never reaches the log, wherever the buyer's browser or a client puts it:
/// the `Referer` and `Origin` headers of checkout form posts, a header or query of another
/// request carrying the checkout URL (also percent-encoded), or a body (issue 10 item 8).
#[tokio::test]
async fn checkout_token_in_referer_headers_queries_and_bodies_is_redacted() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let created = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(&token),
            &json!({"external_reference": "ref-1", "idempotency_key": "key-1",
                    "amount_minor": 1250, "currency": "USD"}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let checkout_url = created.body["checkout_url"].as_str().unwrap().to_owned();
    let checkout_token = checkout_url.rsplit('/').next().unwrap().to_owned();
    assert!(checkout_token.len() > 16);

    let page = env
        .http
        .get(&checkout_url)
        .header("referer", format!("{checkout_url}?from=list"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let login = env
        .http
        .post(format!("{checkout_url}/login"))
        .header("referer", &checkout_url)
        .header("origin", env.sandbox.origin())
        .form(&[("user", seed::USER_ALICE)])
        .send()
        .await
        .unwrap();
    assert!(login.status().is_redirection() || login.status().is_success());
    let encoded: String = url::form_urlencoded::byte_serialize(checkout_url.as_bytes()).collect();
    env.http
        .get(env.api(&format!("/openapi/v1/merchant?back={encoded}")))
        .bearer_auth(&token)
        .header("referer", &checkout_url)
        .header("x-return-to", &checkout_url)
        .send()
        .await
        .unwrap();
    env.http
        .get(env.api(&format!("/openapi/v1/merchant?t={checkout_token}")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    env.post(
        &env.api("/openapi/v1/merchant-payments"),
        Some(&token),
        &json!({"external_reference": checkout_url, "idempotency_key": "key-2",
                "amount_minor": 1250, "currency": "USD"}),
    )
    .await;

    let log = serde_json::to_string(&requests(&env, "").await).unwrap();
    assert!(
        !log.contains(&checkout_token),
        "the checkout token leaked into {log}"
    );
    assert!(log.contains("/checkout/[redacted]"), "{log}");
    assert!(
        log.contains("\"referer\""),
        "the header itself is kept: {log}"
    );
}
