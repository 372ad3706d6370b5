//! HTTPS with a certificate generated at start: clients that trust only the sandbox CA connect,
//! clients that do not trust it are refused (issue 2, "Transport").

mod harness;

use harness::{Env, http_client};
use reqwest::StatusCode;
use storefront_sandbox::{SandboxOptions, seed};

async fn tls_env() -> Env {
    Env::start_with(SandboxOptions {
        tls: true,
        ..SandboxOptions::default()
    })
    .await
}

#[tokio::test]
async fn https_sandbox_serves_the_whole_flow_to_a_client_trusting_only_its_ca() {
    let env = tls_env().await;
    assert!(env.sandbox.origin().starts_with("https://127.0.0.1:"));
    assert!(env.sandbox.base_url().starts_with("https://"));
    assert!(env.sandbox.token_endpoint().starts_with("https://"));
    let pem = env.sandbox.ca_pem().expect("a CA is handed out under TLS");
    assert!(pem.contains("BEGIN CERTIFICATE"));
    let token = env.merchant_token().await;
    let products = env
        .get(&env.api("/openapi/v1/products"), Some(&token))
        .await;
    assert_eq!(products.status, StatusCode::OK);
    assert_eq!(products.body["total"], seed::ENABLED_PRODUCT_COUNT);
    let alice = env.user_token(seed::USER_ALICE).await;
    let userinfo = env
        .get(&env.sandbox.userinfo_endpoint(), Some(&alice))
        .await;
    assert_eq!(userinfo.body["sub"], seed::USER_ALICE);
}

#[tokio::test]
async fn certificate_is_valid_for_localhost_too() {
    let env = tls_env().await;
    let url = format!(
        "https://localhost:{}{}",
        env.sandbox.address().port(),
        seed::TOKEN_PATH
    );
    let response = env
        .http
        .post(url)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", seed::MERCHANT_CLIENT_ID),
            ("client_secret", seed::MERCHANT_CLIENT_SECRET),
        ])
        .send()
        .await
        .expect("the certificate names localhost");
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn client_not_trusting_the_sandbox_ca_is_refused() {
    let env = tls_env().await;
    let untrusting = http_client(None);
    let error = untrusting
        .get(env.api("/openapi/v1/products"))
        .send()
        .await
        .expect_err("the certificate chain is not trusted");
    assert!(error.is_connect(), "{error:?}");
    // A CA from another sandbox is no better.
    let other = tls_env().await;
    let wrong_ca = http_client(other.sandbox.ca_pem().as_deref());
    assert!(
        wrong_ca
            .get(env.api("/openapi/v1/products"))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn plain_http_is_not_served_on_the_https_port() {
    let env = tls_env().await;
    let url = format!(
        "http://127.0.0.1:{}{}",
        env.sandbox.address().port(),
        seed::TOKEN_PATH
    );
    let result = http_client(None).get(url).send().await;
    assert!(result.is_err() || !result.unwrap().status().is_success());
}

#[tokio::test]
async fn checkout_url_is_absolute_https_under_tls() {
    let env = tls_env().await;
    let token = env.merchant_token().await;
    let created = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(&token),
            &serde_json::json!({"external_reference": "tls-1", "idempotency_key": "tls-1",
                                "amount_minor": 250, "currency": "USD"}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let checkout_url = created.body["checkout_url"].as_str().unwrap();
    assert!(
        checkout_url.starts_with(&format!("{}/", env.sandbox.origin())),
        "{checkout_url}"
    );
    let page = env.get(checkout_url, None).await;
    assert_eq!(page.status, StatusCode::OK);
}
