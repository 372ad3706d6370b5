//! Authentication over real HTTP (contract: "Authentication", the endpoint index's scope and
//! token-subject columns, errors `invalid_token`, `insufficient_scope`,
//! `client_credentials_required`, `merchant_inactive`).

mod harness;

use harness::Env;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

/// A client-credentials token request of `client_id` with its secret and optional scopes.
fn client_credentials(
    env: &Env,
    client_id: &str,
    secret: &str,
    scope: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut form = vec![
        ("grant_type", "client_credentials"),
        ("client_id", client_id),
        ("client_secret", secret),
    ];
    form.extend(scope.map(|scope| ("scope", scope)));
    env.http.post(env.sandbox.token_endpoint()).form(&form)
}

#[tokio::test]
async fn token_endpoint_grants_client_credentials_with_scope_and_expires_in() {
    let env = Env::start().await;
    let response = client_credentials(
        &env,
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
        Some("merchant_payments.read products.read"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = response.json().await.unwrap();
    assert!(body["access_token"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(body["scope"], "merchant_payments.read products.read");
    assert_eq!(body["expires_in"], 3600);
}

/// "No user refresh token is issued; after expiry request a new token with the server
/// credentials": the token answer has no `refresh_token`, and a new request gets a new token.
#[tokio::test]
async fn token_response_issues_no_refresh_token() {
    let env = Env::start().await;
    let request = || {
        client_credentials(
            &env,
            seed::MERCHANT_CLIENT_ID,
            seed::MERCHANT_CLIENT_SECRET,
            Some("merchant_payments.read"),
        )
    };
    let first: Value = request().send().await.unwrap().json().await.unwrap();
    assert!(first["access_token"].is_string());
    assert!(first.get("refresh_token").is_none(), "{first}");
    let second: Value = request().send().await.unwrap().json().await.unwrap();
    assert!(second.get("refresh_token").is_none());
    assert_ne!(
        first["access_token"], second["access_token"],
        "a new request gets a new token"
    );
}

/// "The response gives ... the granted `scope`" and "Existing applications do not gain these
/// scopes automatically": a request naming approved and unapproved scopes is granted only the
/// approved part, and the token cannot use what was not granted (403 `insufficient_scope`).
#[tokio::test]
async fn granted_scope_is_only_the_approved_part_of_the_request() {
    let env = Env::start().await;
    let response = client_credentials(
        &env,
        seed::CATALOG_CLIENT_ID,
        seed::CATALOG_CLIENT_SECRET,
        Some("products.read merchant_payments.create"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["scope"], "products.read",
        "only the approved scope is granted"
    );
    let token = body["access_token"].as_str().unwrap();
    let products = env.get(&env.api("/openapi/v1/products"), Some(token)).await;
    assert_eq!(products.status, StatusCode::OK);
    let create = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(token),
            &json!({"external_reference": "r", "idempotency_key": "k", "amount_minor": 100, "currency": "USD"}),
        )
        .await;
    assert_eq!(create.status, StatusCode::FORBIDDEN);
    assert_eq!(create.error(), "insufficient_scope");
}

#[tokio::test]
async fn client_credentials_tokens_never_carry_user_scopes() {
    let env = Env::start().await;
    let response = client_credentials(
        &env,
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
        None,
    )
    .send()
    .await
    .unwrap();
    let body: Value = response.json().await.unwrap();
    let scopes: Vec<&str> = body["scope"].as_str().unwrap().split(' ').collect();
    for user_scope in [
        "openid",
        "orders.create",
        "orders.read",
        "payments.create",
        "payments.read",
    ] {
        assert!(!scopes.contains(&user_scope), "{user_scope} in {scopes:?}");
    }
    for scope in [
        "merchant.profile.read",
        "products.read",
        "merchant_payments.read",
        "merchant_payments.create",
    ] {
        assert!(scopes.contains(&scope), "{scope} missing from {scopes:?}");
    }
}

/// Form fields of a token request.
type Form = &'static [(&'static str, &'static str)];

#[tokio::test]
async fn token_request_errors_follow_oauth() {
    let env = Env::start().await;
    let cases: &[(Form, u16, &str)] = &[
        (
            &[
                ("grant_type", "password"),
                ("client_id", seed::MERCHANT_CLIENT_ID),
                ("client_secret", seed::MERCHANT_CLIENT_SECRET),
            ],
            400,
            "unsupported_grant_type",
        ),
        (
            &[
                ("client_id", seed::MERCHANT_CLIENT_ID),
                ("client_secret", seed::MERCHANT_CLIENT_SECRET),
            ],
            400,
            "unsupported_grant_type",
        ),
        (
            &[
                ("grant_type", "client_credentials"),
                ("client_id", "nobody"),
                ("client_secret", "x"),
            ],
            401,
            "invalid_client",
        ),
        (
            &[
                ("grant_type", "client_credentials"),
                ("client_id", seed::MERCHANT_CLIENT_ID),
                ("client_secret", "wrong"),
            ],
            401,
            "invalid_client",
        ),
        (
            &[
                ("grant_type", "client_credentials"),
                ("client_id", seed::MERCHANT_CLIENT_ID),
            ],
            401,
            "invalid_client",
        ),
        (
            &[
                ("grant_type", "client_credentials"),
                ("client_id", seed::PUBLIC_CLIENT_ID),
            ],
            400,
            "unauthorized_client",
        ),
        (
            &[
                ("grant_type", "client_credentials"),
                ("client_id", seed::CATALOG_CLIENT_ID),
                ("client_secret", seed::CATALOG_CLIENT_SECRET),
                ("scope", "merchant_payments.create"),
            ],
            400,
            "invalid_scope",
        ),
        (
            &[
                ("grant_type", "client_credentials"),
                ("client_id", seed::MERCHANT_CLIENT_ID),
                ("client_secret", seed::MERCHANT_CLIENT_SECRET),
                ("scope", "openid"),
            ],
            400,
            "invalid_scope",
        ),
    ];
    for (form, status, error) in cases {
        let answer = harness::answer(
            env.http
                .post(env.sandbox.token_endpoint())
                .form(form)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(answer.status.as_u16(), *status, "{form:?}");
        assert_eq!(answer.error(), *error, "{form:?}");
        assert!(!answer.text.contains(seed::MERCHANT_CLIENT_SECRET));
    }
}

#[tokio::test]
async fn token_request_must_be_form_encoded() {
    let env = Env::start().await;
    let answer = env
        .post(
            &env.sandbox.token_endpoint(),
            None,
            &json!({"grant_type": "client_credentials", "client_id": seed::MERCHANT_CLIENT_ID,
                    "client_secret": seed::MERCHANT_CLIENT_SECRET}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), "invalid_request");
}

/// Which token subjects an endpoint accepts.
#[derive(Clone, Copy, PartialEq)]
enum Subject {
    User,
    Client,
    Either,
}

struct Route {
    method: &'static str,
    path: String,
    subject: Subject,
    scope: &'static str,
}

fn routes(env: &Env) -> Vec<Route> {
    let api = |p: &str| env.api(p);
    vec![
        Route {
            method: "GET",
            path: env.sandbox.userinfo_endpoint(),
            subject: Subject::User,
            scope: "openid",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/merchant"),
            subject: Subject::Either,
            scope: "merchant.profile.read",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/products"),
            subject: Subject::Either,
            scope: "products.read",
        },
        Route {
            method: "POST",
            path: api("/openapi/v1/orders"),
            subject: Subject::User,
            scope: "orders.create",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/orders/CO0"),
            subject: Subject::User,
            scope: "orders.read",
        },
        Route {
            method: "POST",
            path: api("/openapi/v1/orders/CO0/payment"),
            subject: Subject::User,
            scope: "payments.create",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/orders/CO0/payment"),
            subject: Subject::User,
            scope: "payments.read",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/merchant-payment-channels"),
            subject: Subject::Client,
            scope: "merchant_payments.read",
        },
        Route {
            method: "POST",
            path: api("/openapi/v1/merchant-payments"),
            subject: Subject::Client,
            scope: "merchant_payments.create",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/merchant-payments/MP0"),
            subject: Subject::Client,
            scope: "merchant_payments.read",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/merchant-payments?order_no=MP0"),
            subject: Subject::Client,
            scope: "merchant_payments.read",
        },
        Route {
            method: "GET",
            path: api("/openapi/v1/merchant-payments/MP0/notifications"),
            subject: Subject::Client,
            scope: "merchant_payments.read",
        },
        Route {
            method: "POST",
            path: api("/openapi/v1/merchant-payments/MP0/notifications/E0/retry"),
            subject: Subject::Client,
            scope: "merchant_payments.create",
        },
    ]
}

async fn call(env: &Env, route: &Route, token: Option<&str>) -> harness::Answer {
    let mut request = match route.method {
        "POST" => env.http.post(&route.path).json(&json!({})),
        _ => env.http.get(&route.path),
    };
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    harness::answer(request.send().await.unwrap()).await
}

/// Every endpoint runs the same checks in the same order: a valid token (401
/// `invalid_token`), the token subject (403 `client_credentials_required` on client-only
/// endpoints), the scope (403 `insufficient_scope`), then an active bound merchant (403
/// `merchant_inactive`).
#[tokio::test]
async fn every_endpoint_enforces_token_subject_scope_and_active_merchant() {
    let env = Env::start().await;
    let client_all = env.merchant_token().await;
    let client_products_only = env
        .client_token(
            seed::MERCHANT_CLIENT_ID,
            seed::MERCHANT_CLIENT_SECRET,
            "products.read",
        )
        .await;
    let catalog_client = env
        .client_token(seed::CATALOG_CLIENT_ID, seed::CATALOG_CLIENT_SECRET, "")
        .await;
    let inactive_client = env
        .client_token(seed::INACTIVE_CLIENT_ID, seed::INACTIVE_CLIENT_SECRET, "")
        .await;
    let unbound_client = env
        .client_token(seed::UNBOUND_CLIENT_ID, seed::UNBOUND_CLIENT_SECRET, "")
        .await;
    let user_all = env
        .user_token_via(seed::USER_ALICE, seed::MERCHANT_CLIENT_ID, "")
        .await;
    let user_products_only = env
        .user_token_via(seed::USER_ALICE, seed::MERCHANT_CLIENT_ID, "products.read")
        .await;
    let inactive_user = env
        .user_token_via(seed::USER_ALICE, seed::INACTIVE_CLIENT_ID, "")
        .await;

    const PASS: &str = "pass";
    for route in routes(&env) {
        let user_only_scope = route.subject == Subject::User;
        let cases: Vec<(&str, Option<&str>, &str)> = vec![
            ("no token", None, "invalid_token"),
            ("unknown token", Some("sbx_at_not_a_token"), "invalid_token"),
            (
                "client token, all approved scopes",
                Some(&client_all),
                if user_only_scope {
                    "insufficient_scope"
                } else {
                    PASS
                },
            ),
            (
                "client token, products.read only",
                Some(&client_products_only),
                if route.scope == "products.read" {
                    PASS
                } else {
                    "insufficient_scope"
                },
            ),
            (
                "client without merchant_payments scopes",
                Some(&catalog_client),
                if route.scope.starts_with("merchant_payments.") || user_only_scope {
                    "insufficient_scope"
                } else {
                    PASS
                },
            ),
            (
                "client of an inactive merchant",
                Some(&inactive_client),
                if user_only_scope {
                    "insufficient_scope"
                } else {
                    "merchant_inactive"
                },
            ),
            (
                "client bound to no merchant",
                Some(&unbound_client),
                if user_only_scope {
                    "insufficient_scope"
                } else {
                    "merchant_inactive"
                },
            ),
            (
                "user token, all scopes",
                Some(&user_all),
                if route.subject == Subject::Client {
                    "client_credentials_required"
                } else {
                    PASS
                },
            ),
            (
                "user token, products.read only",
                Some(&user_products_only),
                match route.subject {
                    Subject::Client => "client_credentials_required",
                    _ if route.scope == "products.read" => PASS,
                    _ => "insufficient_scope",
                },
            ),
            (
                "user token through an inactive merchant's client",
                Some(&inactive_user),
                if route.subject == Subject::Client {
                    "client_credentials_required"
                } else {
                    "merchant_inactive"
                },
            ),
        ];
        for (name, token, expected) in cases {
            let answer = call(&env, &route, token).await;
            let what = format!(
                "{} {} with {name}: {} {:?}",
                route.method, route.path, answer.status, answer.body
            );
            match expected {
                PASS => assert!(
                    answer.status != StatusCode::UNAUTHORIZED
                        && answer.status != StatusCode::FORBIDDEN,
                    "{what}"
                ),
                "invalid_token" => {
                    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{what}");
                    assert_eq!(answer.error(), expected, "{what}");
                    assert!(answer.headers.contains_key("www-authenticate"), "{what}");
                }
                _ => {
                    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{what}");
                    assert_eq!(answer.error(), expected, "{what}");
                }
            }
        }
    }
}

#[tokio::test]
async fn expired_tokens_give_401_invalid_token() {
    let env = Env::start().await;
    let client = env.merchant_token().await;
    let user = env.user_token(seed::USER_ALICE).await;
    let profile = env.api("/openapi/v1/merchant");
    assert_eq!(
        env.get(&profile, Some(&client)).await.status,
        StatusCode::OK
    );
    env.advance(3599).await;
    assert_eq!(
        env.get(&profile, Some(&client)).await.status,
        StatusCode::OK
    );
    env.advance(1).await;
    for token in [&client, &user] {
        let answer = env.get(&profile, Some(token)).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
        assert_eq!(answer.error(), "invalid_token");
    }
    // A new token works again.
    let fresh = env.merchant_token().await;
    assert_eq!(env.get(&profile, Some(&fresh)).await.status, StatusCode::OK);
}

#[tokio::test]
async fn bearer_scheme_is_case_insensitive_and_other_schemes_are_refused() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let url = env.api("/openapi/v1/merchant");
    for (header, status) in [
        (format!("Bearer {token}"), StatusCode::OK),
        (format!("bearer {token}"), StatusCode::OK),
        (format!("Basic {token}"), StatusCode::UNAUTHORIZED),
        (token.clone(), StatusCode::UNAUTHORIZED),
        ("Bearer ".to_owned(), StatusCode::UNAUTHORIZED),
    ] {
        let response = env
            .http
            .get(&url)
            .header("authorization", &header)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{header}");
    }
}

#[tokio::test]
async fn user_tokens_are_minted_only_for_seeded_users_and_known_clients() {
    let env = Env::start().await;
    let unknown_user = env
        .post(
            &env.control("/users/mallory/tokens"),
            None,
            &json!({"client_id": seed::CATALOG_CLIENT_ID}),
        )
        .await;
    assert_eq!(unknown_user.status, StatusCode::NOT_FOUND);
    let unknown_client = env
        .post(
            &env.control("/users/alice/tokens"),
            None,
            &json!({"client_id": "nobody"}),
        )
        .await;
    assert_eq!(unknown_client.status, StatusCode::BAD_REQUEST);
    assert_eq!(unknown_client.body["field"], "client_id");
    let unapproved = env
        .post(
            &env.control("/users/alice/tokens"),
            None,
            &json!({"client_id": seed::PUBLIC_CLIENT_ID, "scope": "orders.create"}),
        )
        .await;
    assert_eq!(unapproved.status, StatusCode::BAD_REQUEST);
    assert_eq!(unapproved.error(), "invalid_scope");
    // A public client's user token works for what the client is approved for.
    let public = env
        .user_token_via(seed::USER_ALICE, seed::PUBLIC_CLIENT_ID, "")
        .await;
    let products = env
        .get(&env.api("/openapi/v1/products"), Some(&public))
        .await;
    assert_eq!(products.status, StatusCode::OK);
}
