//! The lifetime of client-credentials tokens: set at start (`SandboxOptions::
//! token_lifetime_seconds`, `--token-lifetime`) or at run time (`PUT /_sandbox/token-lifetime`),
//! it is the grant's `expires_in`, and a token is refused with 401 `invalid_token` from that many
//! seconds of sandbox clock on. SDK tests use short lifetimes to prove that a token is never sent
//! after its stated expiry.

mod harness;

use harness::{Answer, Env};
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::{Sandbox, SandboxOptions, auth, seed};

/// A client-credentials grant of the main merchant client: the token and its `expires_in`.
async fn grant(env: &Env) -> (String, Value) {
    let response = env
        .http
        .post(env.sandbox.token_endpoint())
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", seed::MERCHANT_CLIENT_ID),
            ("client_secret", seed::MERCHANT_CLIENT_SECRET),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    (
        body["access_token"].as_str().unwrap().to_owned(),
        body["expires_in"].clone(),
    )
}

/// The merchant profile read with `token`.
async fn profile(env: &Env, token: &str) -> Answer {
    env.get(&env.api("/openapi/v1/merchant"), Some(token)).await
}

fn assert_expired(answer: &Answer) {
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{:?}", answer.body);
    assert_eq!(answer.error(), "invalid_token");
}

async fn with_lifetime(seconds: i64) -> Env {
    Env::start_with(SandboxOptions {
        token_lifetime_seconds: Some(seconds),
        ..SandboxOptions::default()
    })
    .await
}

#[tokio::test]
async fn default_lifetime_is_an_hour() {
    let env = Env::start().await;
    let (_, expires_in) = grant(&env).await;
    assert_eq!(expires_in, auth::TOKEN_LIFETIME_SECONDS);
    assert_eq!(expires_in, 3600);
    let answer = env.get(&env.control("/token-lifetime"), None).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body, json!({ "seconds": 3600 }));
}

#[tokio::test]
async fn option_sets_expires_in_and_the_token_expires_at_it() {
    let env = with_lifetime(2).await;
    let (token, expires_in) = grant(&env).await;
    assert_eq!(expires_in, 2);
    assert_eq!(
        env.get(&env.control("/token-lifetime"), None).await.body,
        json!({ "seconds": 2 })
    );
    assert_eq!(profile(&env, &token).await.status, StatusCode::OK);
    // At the stated expiry (not after it) the token is refused.
    env.advance(2).await;
    assert_expired(&profile(&env, &token).await);
    // A new grant works again, for its own lifetime.
    let (fresh, _) = grant(&env).await;
    assert_eq!(profile(&env, &fresh).await.status, StatusCode::OK);
}

#[tokio::test]
async fn lifetime_zero_grants_a_token_that_is_already_expired() {
    let env = with_lifetime(0).await;
    let (token, expires_in) = grant(&env).await;
    assert_eq!(expires_in, 0);
    assert_expired(&profile(&env, &token).await);
}

#[tokio::test]
async fn an_invalid_option_refuses_to_start() {
    for seconds in [-1, auth::MAX_TOKEN_LIFETIME_SECONDS + 1] {
        let error = Sandbox::start_with(SandboxOptions {
            token_lifetime_seconds: Some(seconds),
            ..SandboxOptions::default()
        })
        .await
        .expect_err("an out-of-range lifetime is refused");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{seconds}");
    }
}

#[tokio::test]
async fn control_endpoint_changes_the_lifetime_of_later_grants() {
    let env = Env::start().await;
    let (long_lived, expires_in) = grant(&env).await;
    assert_eq!(expires_in, 3600);

    let answer = env
        .put_control("/token-lifetime", &json!({ "seconds": 2 }))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.body, json!({ "seconds": 2 }));
    assert_eq!(
        env.get(&env.control("/token-lifetime"), None).await.body,
        json!({ "seconds": 2 })
    );

    let (short_lived, expires_in) = grant(&env).await;
    assert_eq!(expires_in, 2);
    assert_eq!(profile(&env, &short_lived).await.status, StatusCode::OK);
    env.advance(2).await;
    assert_expired(&profile(&env, &short_lived).await);
    // A token issued before the change keeps its own expiry.
    assert_eq!(profile(&env, &long_lived).await.status, StatusCode::OK);

    let answer = env
        .put_control("/token-lifetime", &json!({ "seconds": 0 }))
        .await;
    assert_eq!(answer.body, json!({ "seconds": 0 }));
    let (token, expires_in) = grant(&env).await;
    assert_eq!(expires_in, 0);
    assert_expired(&profile(&env, &token).await);
}

#[tokio::test]
async fn control_endpoint_refuses_anything_but_whole_non_negative_seconds() {
    let env = with_lifetime(5).await;
    for body in [
        json!({ "seconds": -1 }),
        json!({ "seconds": 1.5 }),
        json!({ "seconds": "10" }),
        json!({ "seconds": null }),
        json!({ "seconds": auth::MAX_TOKEN_LIFETIME_SECONDS + 1 }),
        json!({}),
    ] {
        let answer = env.put_control("/token-lifetime", &body).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(answer.error(), "invalid_request", "{body}");
        assert_eq!(answer.body["field"], "seconds", "{body}");
    }
    // Nothing changed.
    assert_eq!(
        env.get(&env.control("/token-lifetime"), None).await.body,
        json!({ "seconds": 5 })
    );
    let (_, expires_in) = grant(&env).await;
    assert_eq!(expires_in, 5);
}

#[tokio::test]
async fn reset_keeps_the_configured_lifetime() {
    let env = with_lifetime(2).await;
    env.put_control("/token-lifetime", &json!({ "seconds": 7 }))
        .await;
    let answer = env.post_empty(&env.control("/reset"), None).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        env.get(&env.control("/token-lifetime"), None).await.body,
        json!({ "seconds": 7 })
    );
    let (_, expires_in) = grant(&env).await;
    assert_eq!(expires_in, 7);
}
