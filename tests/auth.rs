//! Authentication rules: the client-credentials token request, its cache and single flight, one
//! refresh on 401 `invalid_token`, user tokens from a value or a provider, and token subjects.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Harness, s};
use serde_json::json;
use storefront::{
    CreateOrderRequest, Error, ErrorCode, ErrorKind, Operation, Secret, TokenFuture, TokenSubject,
    UserToken, UserTokenProvider,
};

fn token_path() -> &'static str {
    s::TOKEN_PATH
}

/// Contract: the token request is a form-encoded POST with grant_type, client_id, client_secret
/// and space-separated scope; the response's `scope` and `expires_in` are reported.
#[tokio::test]
async fn client_credentials_token_is_form_encoded_with_space_separated_scopes() {
    let h = Harness::start().await;
    let granted = h.client.authenticate().await.unwrap();
    assert!(granted.expires_in > 0);
    for scope in storefront::DEFAULT_CLIENT_SCOPES {
        assert!(granted.scope.iter().any(|g| g == scope), "{granted:?}");
    }
    let reqs = h.requests_to("POST", token_path()).await;
    assert_eq!(reqs.len(), 1);
    let text = reqs[0].to_string();
    assert!(text.contains("client_credentials"), "{text}");
    assert!(
        !text.contains(s::MERCHANT_CLIENT_SECRET),
        "request log must redact the secret"
    );
}

/// Contract: manage the token lifetime by `expires_in` — one token serves many calls.
#[tokio::test]
async fn token_is_cached_until_shortly_before_expiry() {
    let h = Harness::start().await;
    h.client.merchant_profile().await.unwrap();
    h.client.list_channels().await.unwrap();
    h.client.list_products(&Default::default()).await.unwrap();
    assert_eq!(h.requests_to("POST", token_path()).await.len(), 1);
}

/// Issue rule: one token request in flight however many calls wait on it.
#[tokio::test]
async fn concurrent_calls_share_one_token_request() {
    let h = Harness::start().await;
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let c = h.client.clone();
        tasks.push(tokio::spawn(async move { c.list_channels().await }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(h.requests_to("POST", token_path()).await.len(), 1);
}

/// Contract: 401 `invalid_token` means "obtain a valid token": the SDK refreshes once and
/// retries. The sandbox clock moves past the token's expiry, which the SDK cannot see.
#[tokio::test]
async fn invalid_token_triggers_one_refresh_and_retry() {
    let h = Harness::start().await;
    let granted = h.client.authenticate().await.unwrap();
    h.advance_clock(granted.expires_in + 60).await;
    h.client.list_channels().await.unwrap();
    assert_eq!(h.requests_to("POST", token_path()).await.len(), 2);
    let channel_calls = h
        .requests_to("GET", &h.api_path("/openapi/v1/merchant-payment-channels"))
        .await;
    assert_eq!(channel_calls.len(), 2, "one rejected call and one retry");
}

/// A second 401 after the refresh is returned, not retried forever.
#[tokio::test]
async fn persistent_invalid_token_is_returned_after_one_refresh() {
    let h = Harness::start().await;
    let path = h.api_path("/openapi/v1/merchant");
    h.fault(json!({"method": "GET", "path": path, "status": 401,
                   "body": {"error": "invalid_token"}, "times": 5}))
        .await;
    let err = h.client.merchant_profile().await.unwrap_err();
    assert_eq!(err.status(), Some(401));
    assert!(err.is_code(&ErrorCode::InvalidToken));
    assert_eq!(h.requests_to("GET", &path).await.len(), 2);
    assert_eq!(h.requests_to("POST", token_path()).await.len(), 2);
}

/// Wrong client credentials give the OAuth error as an API error; no retry of a 401.
#[tokio::test]
async fn wrong_client_secret_is_an_api_error_with_the_oauth_code() {
    let h = Harness::start().await;
    let mut cfg = common::merchant_config(&h.sandbox);
    cfg.client_secret = Some(Secret::new("wrong-secret"));
    let client = storefront::Client::new(cfg).unwrap();
    let err = client.list_channels().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Api);
    assert_eq!(err.code(), Some(&ErrorCode::Other("invalid_client".into())));
    assert!(!err.to_string().contains("wrong-secret"));
    assert_eq!(h.requests_to("POST", token_path()).await.len(), 1);
}

/// Contract: merchant-collection endpoints need a client bound to an active merchant.
#[tokio::test]
async fn inactive_merchant_gets_merchant_inactive() {
    let h = Harness::start().await;
    let client = h.client_with(|mut c| {
        c.client_id = s::INACTIVE_CLIENT_ID.into();
        c.client_secret = Some(Secret::new(s::INACTIVE_CLIENT_SECRET));
        c
    });
    let err = client.list_channels().await.unwrap_err();
    assert_eq!(err.status(), Some(403));
    assert!(err.is_code(&ErrorCode::MerchantInactive));
}

struct CountingProvider {
    calls: AtomicUsize,
    first: String,
    second: String,
}

impl UserTokenProvider for CountingProvider {
    fn user_token(&self, rejected: Option<&Secret>) -> TokenFuture<'_> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let token = if n == 0 { &self.first } else { &self.second };
        assert_eq!(rejected.is_some(), n > 0);
        let token = Secret::new(token.clone());
        Box::pin(async move { Ok(token) })
    }
}

/// Issue rule: a user-token provider is asked again once when the service rejects its token.
#[tokio::test]
async fn user_token_provider_is_asked_again_on_invalid_token() {
    let h = Harness::start().await;
    let provider = Arc::new(CountingProvider {
        calls: AtomicUsize::new(0),
        first: "revoked-or-made-up-token".into(),
        second: h.user_token(s::USER_ALICE).await,
    });
    let session = h.client.user(UserToken::Provider(
        provider.clone() as Arc<dyn UserTokenProvider>
    ));
    let info = session.userinfo().await.unwrap();
    assert_eq!(info["sub"], s::USER_ALICE);
    assert_eq!(provider.calls.load(Ordering::SeqCst), 2);
    session.userinfo().await.unwrap();
    assert_eq!(
        provider.calls.load(Ordering::SeqCst),
        2,
        "token kept after refresh"
    );
}

/// A fixed user token that is rejected is reported (nothing to refresh).
#[tokio::test]
async fn rejected_fixed_user_token_is_reported() {
    let h = Harness::start().await;
    let err = h.client.user("made-up-token").userinfo().await.unwrap_err();
    assert!(err.is_code(&ErrorCode::InvalidToken), "{err:?}");
}

/// Contract: catalog orders need a user token; the SDK refuses a client-credentials token
/// passed as a user token before sending anything.
#[tokio::test]
async fn client_token_is_refused_where_a_user_token_is_required() {
    let h = Harness::start().await;
    let client_token = h.client.access_token().await.unwrap();
    let session = h.client.user(client_token);
    let err = session
        .create_order(&CreateOrderRequest::new(
            s::PRODUCT_BEANS,
            1,
            s::CHANNEL_PLATFORM_COIN,
        ))
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        Error::WrongTokenSubject {
            operation: Operation::CreateOrder,
            required: TokenSubject::User
        }
    ));
    assert!(
        h.requests_to("POST", &h.api_path("/openapi/v1/orders"))
            .await
            .is_empty()
    );
    // Products accept either subject, so the same token works there.
    session.list_products(&Default::default()).await.unwrap();
}

/// Contract: the service itself refuses a user token on merchant collection with
/// `client_credentials_required`, and a client token on catalog orders.
#[tokio::test]
async fn service_enforces_token_subjects_too() {
    let h = Harness::start().await;
    let user = h.user_token(s::USER_ALICE).await;
    let resp = common::raw_http(None)
        .get(format!(
            "{}/openapi/v1/merchant-payment-channels",
            h.sandbox.base_url()
        ))
        .bearer_auth(user)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 403);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"], "client_credentials_required");
}

/// Conventions: business calls carry `Authorization: Bearer`, write requests use
/// `Content-Type: application/json`, the token request is form-encoded; the user agent names
/// the SDK version and the host app.
#[tokio::test]
async fn requests_carry_bearer_json_content_type_and_sdk_user_agent() {
    let h = Harness::start_with(|c| c.with_user_agent("shop-backend/2.1")).await;
    h.client
        .create_merchant_payment(&storefront::CreateMerchantPayment::new(
            "ua-ref",
            storefront::MinorAmount::new(100).unwrap(),
            "USD",
        ))
        .await
        .unwrap();
    let token = &h.requests_to("POST", token_path()).await[0];
    assert!(
        token["headers"]["content-type"]
            .as_str()
            .unwrap()
            .starts_with("application/x-www-form-urlencoded")
    );
    let create = &h
        .requests_to("POST", &h.api_path("/openapi/v1/merchant-payments"))
        .await[0];
    let headers = &create["headers"];
    assert!(
        headers["authorization"]
            .as_str()
            .unwrap()
            .starts_with("Bearer ")
    );
    assert_eq!(headers["content-type"], "application/json");
    let ua = headers["user-agent"].as_str().unwrap();
    assert!(ua.starts_with(storefront::SDK_USER_AGENT), "{ua}");
    assert!(ua.ends_with("shop-backend/2.1"), "{ua}");
}

/// Authentication: "manage lifetime by `expires_in`", without flooding the token endpoint: a
/// token granted for 0 seconds serves every call that waited for its token request (20
/// concurrent calls, one token request) and is not kept for later calls (issue 15, item 4: a
/// token is never sent after its stated expiry); a later call requests a new token with the
/// server credentials (no refresh token).
#[tokio::test]
async fn an_expires_in_0_token_serves_its_waiters_once_and_is_not_reused() {
    let h = Harness::start().await;
    // A genuine token, then the token endpoint answers with it but `expires_in` 0.
    let other = h.client_with(|c| c);
    let granted = other.authenticate().await.unwrap();
    let token = other.access_token().await.unwrap();
    h.fault(
        json!({"method": "POST", "path": token_path(), "status": 200, "times": 1,
                   "body": {"access_token": token.expose(), "token_type": "Bearer",
                            "scope": granted.scope.join(" "), "expires_in": 0}}),
    )
    .await;
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let client = h.client.clone();
            tokio::spawn(async move { client.list_channels().await })
        })
        .collect();
    for call in calls {
        call.await.unwrap().unwrap();
    }
    assert_eq!(
        h.requests_to("POST", token_path()).await.len(),
        1 + 1,
        "one token request for 20 concurrent calls, not one per call"
    );
    // The 0-second token is not reused: the next call asks for a token (a real one now).
    h.client.list_channels().await.unwrap();
    h.client.list_channels().await.unwrap();
    let token_requests = h.requests_to("POST", token_path()).await;
    assert_eq!(token_requests.len(), 1 + 2);
    for r in &token_requests {
        let text = r.to_string();
        assert!(text.contains("client_credentials"), "{text}");
        assert!(!text.contains("refresh_token"), "{text}");
    }
}

/// Authentication: after a failure "request a new token with the server credentials"; the
/// token request is safe to repeat, so a 5xx or a dropped connection on it is retried.
#[tokio::test]
async fn token_request_is_retried_after_a_server_error_or_dropped_connection() {
    let h = Harness::start().await;
    h.fault(
        json!({"method": "POST", "path": token_path(), "status": 500,
                   "body": {"error": "server_error"}}),
    )
    .await;
    h.fault(json!({"method": "POST", "path": token_path(), "drop_connection": true}))
        .await;
    h.client.list_channels().await.unwrap();
    assert_eq!(h.requests_to("POST", token_path()).await.len(), 3);
}
