//! `GET /openapi.json`: the OpenAPI 3.1 description of the contract is served, parses, names
//! exactly the contract's endpoint index (plus the token endpoint), and every operation it names
//! is routed by the sandbox (answered by a handler, not by the router's `not_found` fallback).

mod harness;

use std::collections::BTreeSet;

use harness::{Answer, Env, answer};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use storefront_sandbox::seed;

/// The contract's endpoint index, and the token request described under Authentication.
const CONTRACT_OPERATIONS: &[(&str, &str)] = &[
    ("POST", "/oauth/token"),
    ("GET", "/oauth/userinfo"),
    ("GET", "/openapi/v1/merchant"),
    ("GET", "/openapi/v1/products"),
    ("POST", "/openapi/v1/orders"),
    ("GET", "/openapi/v1/orders/{order_no}"),
    ("POST", "/openapi/v1/orders/{order_no}/payment"),
    ("GET", "/openapi/v1/orders/{order_no}/payment"),
    ("GET", "/openapi/v1/merchant-payment-channels"),
    ("POST", "/openapi/v1/merchant-payments"),
    ("GET", "/openapi/v1/merchant-payments/{order_no}"),
    ("GET", "/openapi/v1/merchant-payments"),
    (
        "GET",
        "/openapi/v1/merchant-payments/{order_no}/notifications",
    ),
    (
        "POST",
        "/openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry",
    ),
];

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

async fn fetch_document(env: &Env) -> (Answer, Value) {
    let response = env
        .http
        .get(format!("{}/openapi.json", env.sandbox.origin()))
        .send()
        .await
        .expect("GET /openapi.json is answered");
    let answer = answer(response).await;
    let document: Value = serde_json::from_str(&answer.text).expect("the document is valid JSON");
    (answer, document)
}

/// Every `(METHOD, path)` the document names.
fn operations(document: &Value) -> BTreeSet<(String, String)> {
    let paths = document["paths"].as_object().expect("paths is an object");
    let mut found = BTreeSet::new();
    for (path, item) in paths {
        for method in METHODS {
            if item.get(*method).is_some() {
                found.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    found
}

#[tokio::test]
async fn the_document_is_served_as_json_and_is_openapi_3_1() {
    let env = Env::start().await;
    let (answer, document) = fetch_document(&env).await;
    assert_eq!(answer.status, StatusCode::OK);
    let content_type = answer.headers["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(answer.text, storefront_sandbox::openapi::DOCUMENT);
    assert_eq!(document["servers"][0]["url"], seed::API_PREFIX);
    assert!(
        document["webhooks"]["merchant_payment.status_changed"]["post"].is_object(),
        "the notification is described as a webhook"
    );
    let schemes = document["components"]["securitySchemes"]
        .as_object()
        .unwrap();
    assert_eq!(
        schemes["clientCredentials"]["flows"]["clientCredentials"]["tokenUrl"],
        seed::TOKEN_PATH
    );
    assert!(schemes.contains_key("userToken"));
    // Sandbox controls are not part of the contract.
    assert!(
        document["paths"]
            .as_object()
            .unwrap()
            .keys()
            .all(|p| !p.starts_with(seed::CONTROL_PREFIX)),
        "no /_sandbox path"
    );
}

#[tokio::test]
async fn the_document_names_exactly_the_contract_endpoints() {
    let env = Env::start().await;
    let (_, document) = fetch_document(&env).await;
    let expected: BTreeSet<(String, String)> = CONTRACT_OPERATIONS
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(operations(&document), expected);
}

/// Each operation of the document, with a token of the subject its security names (and path
/// parameters filled with a value that exists nowhere), reaches a handler of the sandbox: the
/// answer is not the router's fallback (404 `not_found`, "no such route") nor 405.
#[tokio::test]
async fn every_operation_in_the_document_is_routed_by_the_sandbox() {
    let env = Env::start().await;
    let (_, document) = fetch_document(&env).await;
    let client = env.merchant_token().await;
    let user = env.user_token(seed::USER_ALICE).await;
    let origin = env.sandbox.origin();
    let top_server = document["servers"][0]["url"].as_str().unwrap().to_owned();

    let probe = |method: &str, url: String, token: Option<String>| {
        let mut request = env
            .http
            .request(Method::from_bytes(method.as_bytes()).unwrap(), url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if method == "POST" {
            request = request
                .header("content-type", "application/json")
                .body("{}");
        }
        async move { answer(request.send().await.expect("answered")).await }
    };

    // The probe tells a routed path from an unrouted one.
    let unrouted = probe(
        "GET",
        format!("{origin}{top_server}/openapi/v1/no-such-thing"),
        Some(client.clone()),
    )
    .await;
    assert_eq!(unrouted.status, StatusCode::NOT_FOUND);
    assert_eq!(unrouted.error(), "not_found");

    for (method, path) in operations(&document) {
        let item = &document["paths"][&path];
        let operation = &item[method.to_lowercase()];
        let server = item["servers"][0]["url"]
            .as_str()
            .unwrap_or(&top_server)
            .trim_end_matches('/');
        let concrete = path
            .replace("{order_no}", "100000000000000000000")
            .replace("{event_id}", "evt_none");
        let security = operation
            .get("security")
            .or_else(|| document.get("security"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let token = security.first().and_then(|requirement| {
            if requirement.get("userToken").is_some() {
                Some(user.clone())
            } else if requirement.get("clientCredentials").is_some() {
                Some(client.clone())
            } else {
                None
            }
        });
        let got = probe(&method, format!("{origin}{server}{concrete}"), token).await;
        let fallback = got.status == StatusCode::NOT_FOUND
            && (got.error() == "not_found" || got.body["error_description"] == "no such route");
        assert!(
            !fallback && got.status != StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}: the sandbox does not route it ({} {})",
            got.status,
            got.text
        );
        // Documented statuses only (a probe with fake numbers and an empty body gets an error).
        let responses = operation["responses"].as_object().unwrap();
        let status = got.status.as_u16().to_string();
        let range = format!("{}XX", &status[..1]);
        assert!(
            responses.contains_key(&status)
                || responses.contains_key(&range)
                || responses.contains_key("default"),
            "{method} {path}: {status} is not documented ({})",
            got.text
        );
    }
}
