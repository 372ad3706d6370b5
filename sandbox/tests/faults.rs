//! Fault injection per route (sandbox README, "Control endpoints"): given status, body and
//! headers, latency, dropped connections, malformed and oversized bodies, `times`, matching on
//! method and exact path. These are what the SDK's retry and timeout tests rely on.

mod harness;

use std::time::Duration;

use harness::Env;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

fn products_path() -> String {
    format!("{}/openapi/v1/products", seed::API_PREFIX)
}

async fn add_fault(env: &Env, spec: Value) -> harness::Answer {
    env.post(&env.control("/faults"), None, &spec).await
}

async fn products(env: &Env, token: &str) -> harness::Answer {
    env.get(&env.api("/openapi/v1/products"), Some(token)).await
}

#[tokio::test]
async fn fault_answers_with_the_given_status_body_and_headers_instead_of_the_handler() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let added = add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "status": 429,
               "body": {"error": "rate_limited", "error_description": "slow down"},
               "headers": {"Retry-After": "7"}}),
    )
    .await;
    assert_eq!(added.status, StatusCode::CREATED, "{:?}", added.body);
    let faulted = products(&env, &token).await;
    assert_eq!(faulted.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(faulted.headers["retry-after"], "7");
    assert_eq!(faulted.error(), "rate_limited");
    assert_eq!(faulted.body["error_description"], "slow down");
    let next = products(&env, &token).await;
    assert_eq!(next.status, StatusCode::OK, "times defaults to 1");
    assert_eq!(next.body["total"], seed::ENABLED_PRODUCT_COUNT);
}

#[tokio::test]
async fn fault_applies_to_the_next_times_matching_requests_in_the_order_added() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "status": 500, "times": 2}),
    )
    .await;
    add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "status": 503}),
    )
    .await;
    let mut seen = Vec::new();
    for _ in 0..4 {
        let answer = products(&env, &token).await;
        seen.push((answer.status.as_u16(), answer.error().to_owned()));
    }
    assert_eq!(
        seen,
        vec![
            (500, "server_error".to_owned()),
            (500, "server_error".to_owned()),
            (503, "rate_limit_unavailable".to_owned()),
            (200, String::new()),
        ]
    );
}

#[tokio::test]
async fn fault_matches_method_and_exact_path_only() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "status": 500, "times": 10}),
    )
    .await;
    // Another path, another method and a path without the API prefix are not affected.
    let profile = env
        .get(&env.api("/openapi/v1/merchant"), Some(&token))
        .await;
    assert_eq!(profile.status, StatusCode::OK);
    let post = env
        .post(&env.api("/openapi/v1/products"), Some(&token), &json!({}))
        .await;
    assert_ne!(post.status, StatusCode::INTERNAL_SERVER_ERROR);
    add_fault(
        &env,
        json!({"method": "GET", "path": "/openapi/v1/merchant", "status": 500}),
    )
    .await;
    let profile = env
        .get(&env.api("/openapi/v1/merchant"), Some(&token))
        .await;
    assert_eq!(profile.status, StatusCode::OK);
    // The query string does not take part in matching.
    let with_query = env
        .get(
            &env.api("/openapi/v1/products?page=2&limit=5"),
            Some(&token),
        )
        .await;
    assert_eq!(with_query.status, StatusCode::INTERNAL_SERVER_ERROR);
}

#[tokio::test]
async fn dropped_connection_gives_no_answer_and_the_handler_never_runs() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let orders = format!("{}/openapi/v1/orders", seed::API_PREFIX);
    add_fault(
        &env,
        json!({"method": "POST", "path": orders, "drop_connection": true}),
    )
    .await;
    let result = env
        .http
        .post(env.api("/openapi/v1/orders"))
        .bearer_auth(&alice)
        .json(&json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD}))
        .send()
        .await;
    let error = result.expect_err("the connection is closed without an answer");
    assert!(!error.is_status() && !error.is_timeout(), "{error:?}");
    assert_eq!(env.sandbox.inspect().catalog_order_count(), 0);
    // The next request is served normally.
    env.order(&alice, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
}

#[tokio::test]
async fn latency_beyond_the_client_timeout_makes_the_client_time_out() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "latency_ms": 3000}),
    )
    .await;
    let impatient = harness::http_client(None);
    let result = impatient
        .get(env.api("/openapi/v1/products"))
        .bearer_auth(&token)
        .timeout(Duration::from_millis(200))
        .send()
        .await;
    assert!(result.expect_err("the answer comes too late").is_timeout());
}

#[tokio::test]
async fn latency_only_fault_runs_the_real_handler_after_the_wait() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "latency_ms": 50}),
    )
    .await;
    let answer = products(&env, &token).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["total"], seed::ENABLED_PRODUCT_COUNT);
}

#[tokio::test]
async fn malformed_body_fault_answers_truncated_json() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "status": 200, "malformed_body": true}),
    )
    .await;
    let answer = products(&env, &token).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.headers["content-type"], "application/json");
    assert!(
        serde_json::from_str::<Value>(&answer.text).is_err(),
        "{}",
        answer.text
    );
}

#[tokio::test]
async fn oversized_body_fault_answers_that_many_bytes() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for (spec, size) in [
        (json!(5_000_000), 5_000_000usize),
        (json!(true), 16 * 1024 * 1024),
    ] {
        add_fault(&env, json!({"method": "GET", "path": products_path(), "status": 200, "oversized_body": spec})).await;
        let answer = products(&env, &token).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.text.len(), size);
        assert!(
            answer.body.is_object(),
            "the oversized body is still valid JSON"
        );
    }
}

#[tokio::test]
async fn status_only_fault_gets_the_contract_error_shape() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for (status, error) in [
        (500, "server_error"),
        (503, "rate_limit_unavailable"),
        (401, "invalid_token"),
        (429, "rate_limited"),
    ] {
        add_fault(
            &env,
            json!({"method": "GET", "path": products_path(), "status": status}),
        )
        .await;
        let answer = products(&env, &token).await;
        assert_eq!(answer.status.as_u16(), status);
        assert_eq!(answer.error(), error);
    }
}

#[tokio::test]
async fn faults_can_be_listed_and_cleared() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    add_fault(
        &env,
        json!({"method": "GET", "path": products_path(), "status": 500, "times": 3}),
    )
    .await;
    let listed = env.get(&env.control("/faults"), None).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert_eq!(listed.body[0]["times"], 3);
    let cleared = env
        .http
        .delete(env.control("/faults"))
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.status(), StatusCode::OK);
    assert_eq!(products(&env, &token).await.status, StatusCode::OK);
    assert_eq!(env.get(&env.control("/faults"), None).await.body, json!([]));
}

#[tokio::test]
async fn invalid_fault_specifications_are_refused_with_the_field() {
    let env = Env::start().await;
    let path = products_path();
    for (spec, field) in [
        (json!({"path": path, "status": 500}), "method"),
        (json!({"method": "GET", "status": 500}), "path"),
        (
            json!({"method": "GET", "path": "openapi", "status": 500}),
            "path",
        ),
        (
            json!({"method": "GET", "path": path, "status": 99}),
            "status",
        ),
        (
            json!({"method": "GET", "path": path, "status": "500"}),
            "status",
        ),
        (json!({"method": "GET", "path": path, "times": 0}), "times"),
        (
            json!({"method": "GET", "path": path, "latency_ms": -1}),
            "latency_ms",
        ),
        (
            json!({"method": "GET", "path": path, "headers": {"Bad Header": "x"}}),
            "headers",
        ),
        (
            json!({"method": "GET", "path": path, "drop_connection": "yes"}),
            "drop_connection",
        ),
        (
            json!({"method": "GET", "path": path, "statuss": 500}),
            "statuss",
        ),
    ] {
        let answer = add_fault(&env, spec.clone()).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{spec}");
        assert_eq!(answer.body["field"], field, "{spec}");
    }
    assert_eq!(env.get(&env.control("/faults"), None).await.body, json!([]));
}

#[tokio::test]
async fn faults_never_block_the_fault_controls_themselves() {
    let env = Env::start().await;
    let faults = format!("{}/faults", seed::CONTROL_PREFIX);
    add_fault(
        &env,
        json!({"method": "DELETE", "path": faults, "drop_connection": true}),
    )
    .await;
    let cleared = env
        .http
        .delete(env.control("/faults"))
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.status(), StatusCode::OK);
}

/// `after_handler`: the request is processed and stored, then its answer is lost, late or
/// replaced, so a client sees a failure although the order exists ("a timeout does not prove
/// failure").
#[tokio::test]
async fn after_handler_fault_processes_the_request_then_loses_or_delays_the_answer() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let orders = format!("{}/openapi/v1/orders", seed::API_PREFIX);
    let body =
        json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD});
    let cases = [
        json!({"method": "POST", "path": orders, "after_handler": true, "drop_connection": true}),
        json!({"method": "POST", "path": orders, "after_handler": true, "latency_ms": 3000}),
        json!({"method": "POST", "path": orders, "after_handler": true, "status": 502}),
    ];
    for (created, spec) in cases.into_iter().enumerate() {
        add_fault(&env, spec.clone()).await;
        let result = env
            .http
            .post(env.api("/openapi/v1/orders"))
            .bearer_auth(&alice)
            .json(&body)
            .timeout(Duration::from_millis(500))
            .send()
            .await;
        match result {
            Ok(response) => assert_eq!(response.status(), StatusCode::BAD_GATEWAY, "{spec}"),
            Err(error) => assert!(!error.is_status(), "{spec}: {error:?}"),
        }
        // The handler ran before the answer was lost; under load it may still be finishing
        // when the client gives up, so wait for its effect (bounded only against a hang).
        let mut stored = 0;
        for _ in 0..400 {
            stored = env.sandbox.inspect().catalog_order_count();
            if stored > created {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(stored, created + 1, "{spec}: the order was created anyway");
    }
}
