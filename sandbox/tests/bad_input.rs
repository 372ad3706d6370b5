//! Bad input never panics the sandbox and never corrupts its state (issue 2, "Done when"):
//! malformed JSON, wrong content types, huge bodies, invalid UTF-8, wrong JSON shapes and
//! garbage paths and queries go to every route; every answer is a clear 4xx (or, for routes
//! that take no body, their normal answer) and the data stored before is unchanged afterwards.

mod harness;

use harness::Env;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

struct Ids {
    order: String,
    spare_order: String,
    spare_trade: String,
    payment: String,
    spare_payment: String,
    spare_checkout: String,
}

/// Every route of the sandbox: (method, URL, bearer token to send).
fn every_route(
    env: &Env,
    ids: &Ids,
    client: &str,
    user: &str,
) -> Vec<(&'static str, String, Option<String>)> {
    let api = |p: &str| env.api(p);
    let control = |p: &str| env.control(p);
    let origin = env.sandbox.origin();
    let (c, u) = (Some(client.to_owned()), Some(user.to_owned()));
    let checkout = format!("{origin}/checkout/{}", ids.spare_checkout);
    vec![
        ("POST", env.sandbox.token_endpoint(), None),
        ("GET", env.sandbox.userinfo_endpoint(), u.clone()),
        ("GET", api("/openapi/v1/merchant"), c.clone()),
        ("GET", api("/openapi/v1/products"), c.clone()),
        ("POST", api("/openapi/v1/orders"), u.clone()),
        (
            "GET",
            api(&format!("/openapi/v1/orders/{}", ids.order)),
            u.clone(),
        ),
        (
            "POST",
            api(&format!("/openapi/v1/orders/{}/payment", ids.order)),
            u.clone(),
        ),
        (
            "GET",
            api(&format!("/openapi/v1/orders/{}/payment", ids.order)),
            u.clone(),
        ),
        (
            "GET",
            api("/openapi/v1/merchant-payment-channels"),
            c.clone(),
        ),
        ("POST", api("/openapi/v1/merchant-payments"), c.clone()),
        ("GET", api("/openapi/v1/merchant-payments"), c.clone()),
        (
            "GET",
            api(&format!("/openapi/v1/merchant-payments/{}", ids.payment)),
            c.clone(),
        ),
        (
            "GET",
            api(&format!(
                "/openapi/v1/merchant-payments/{}/notifications",
                ids.payment
            )),
            c.clone(),
        ),
        (
            "POST",
            api(&format!(
                "/openapi/v1/merchant-payments/{}/notifications/evt-x/retry",
                ids.payment
            )),
            c.clone(),
        ),
        ("GET", checkout.clone(), None),
        ("POST", format!("{checkout}/login"), None),
        ("POST", format!("{checkout}/logout"), None),
        ("POST", format!("{checkout}/pay"), None),
        ("POST", format!("{checkout}/card/complete"), None),
        ("POST", format!("{checkout}/card/cancel"), None),
        ("POST", format!("{checkout}/cancel"), None),
        (
            "GET",
            format!("{origin}/catalog-pay/{}", ids.spare_trade),
            None,
        ),
        (
            "POST",
            format!("{origin}/catalog-pay/{}/pay", ids.spare_trade),
            None,
        ),
        (
            "POST",
            format!("{origin}/catalog-pay/{}/cancel", ids.spare_trade),
            None,
        ),
        ("POST", control("/users/alice/tokens"), None),
        ("GET", control("/clock"), None),
        ("GET", control("/users/alice"), None),
        ("PUT", control("/users/alice/wallet"), None),
        ("POST", control("/clock/advance"), None),
        (
            "POST",
            control(&format!("/catalog/trades/{}/pay", ids.spare_trade)),
            None,
        ),
        (
            "POST",
            control(&format!("/catalog/trades/{}/cancel", ids.spare_trade)),
            None,
        ),
        ("POST", control("/faults"), None),
        ("GET", control("/faults"), None),
        ("DELETE", control("/faults/1"), None),
        ("GET", control("/requests"), None),
        ("DELETE", control("/limits"), None),
        (
            "POST",
            control(&format!(
                "/merchant-payments/{}/checkout/pay",
                ids.spare_payment
            )),
            None,
        ),
        (
            "POST",
            control(&format!(
                "/merchant-payments/{}/checkout/session",
                ids.spare_payment
            )),
            None,
        ),
        (
            "POST",
            control(&format!(
                "/merchant-payments/{}/checkout/unclear",
                ids.spare_payment
            )),
            None,
        ),
        (
            "POST",
            control(&format!("/merchant-payments/{}/force", ids.spare_payment)),
            None,
        ),
        (
            "PUT",
            control(&format!(
                "/merchants/{}/notification-default",
                seed::MERCHANT_NO
            )),
            None,
        ),
        ("PUT", control("/sweep"), None),
        ("POST", control("/sweep"), None),
        ("DELETE", control("/requests"), None),
        // POST /_sandbox/reset is left out on purpose: it takes no body and its whole job is
        // to put the seed back, which this test would read as lost data.
        ("GET", control("/notifications/attempts"), None),
        ("GET", control("/no-such-control"), None),
        ("GET", format!("{origin}/no/such/route"), None),
    ]
}

const JSON: &str = "application/json";
const FORM: &str = "application/x-www-form-urlencoded";

fn payloads() -> Vec<(&'static str, Option<&'static str>, Vec<u8>)> {
    let valid = br#"{"gd_no":"G1001","quantity":1,"payment_no":"ch_card_usd"}"#.to_vec();
    let mut huge = b"{\"padding\":\"".to_vec();
    huge.resize(2 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}");
    let wrong_types = json!({
        "gd_no": 5, "quantity": "x", "payment_no": [], "other_ipu": 3, "seconds": "x",
        "status": 5, "client_id": 1, "amount_minor": 1.5, "currency": {}, "method": 5,
        "path": 1, "url": 2, "secret": [], "enabled": "yes", "user": 9, "scope": 4,
        "external_reference": null, "idempotency_key": 7, "interval_seconds": "z"
    })
    .to_string()
    .into_bytes();
    vec![
        (
            "malformed JSON",
            Some(JSON),
            br#"{"gd_no": "G1001", "#.to_vec(),
        ),
        ("wrong content type", Some("text/plain"), valid.clone()),
        ("no content type", None, valid),
        (
            "invalid UTF-8 JSON",
            Some(JSON),
            vec![b'{', b'"', 0xff, 0xfe, b'"', b':', b'1', b'}'],
        ),
        (
            "invalid UTF-8 form",
            Some(FORM),
            vec![b'u', b's', b'e', b'r', b'=', 0xff, 0xc3],
        ),
        ("malformed form", Some(FORM), b"%%%&&==&grant_type".to_vec()),
        ("huge JSON body", Some(JSON), huge),
        ("JSON array", Some(JSON), b"[1,2,3]".to_vec()),
        ("JSON null", Some(JSON), b"null".to_vec()),
        (
            "deeply nested JSON",
            Some(JSON),
            "[".repeat(100_000).into_bytes(),
        ),
        ("wrong field types", Some(JSON), wrong_types),
        ("empty body", Some(JSON), Vec::new()),
    ]
}

async fn snapshot(env: &Env, ids: &Ids, client: &str, user: &str) -> Value {
    let world_part = {
        let view = env.sandbox.inspect();
        json!({
            "wallets": view.wallets(),
            "catalog_orders": view.catalog_order_count(),
            "notify_default": format!("{:?}", view.notify_default(seed::MERCHANT_NO)),
        })
    };
    json!({
        "order": env.get(&env.api(&format!("/openapi/v1/orders/{}", ids.order)), Some(user)).await.body,
        "order_payment": env.get(&env.api(&format!("/openapi/v1/orders/{}/payment", ids.order)), Some(user)).await.body,
        "payment": env.get(&env.api(&format!("/openapi/v1/merchant-payments/{}", ids.payment)), Some(client)).await.body,
        "product": env.get(&env.api(&format!("/openapi/v1/products?gd_no={}", seed::PRODUCT_BEANS)), Some(client)).await.body,
        "clock_offset": env.get(&env.control("/clock"), None).await.body["offset_seconds"],
        "faults": env.get(&env.control("/faults"), None).await.body,
        "world": world_part,
    })
}

async fn setup(env: &Env, client: &str, user: &str) -> Ids {
    let order = env
        .order(user, seed::PRODUCT_BEANS, 2, seed::CHANNEL_CARD_USD)
        .await;
    let spare_order = env.order(user, "G1006", 1, seed::CHANNEL_CARD_USD).await;
    let started = env
        .post(
            &env.api(&format!("/openapi/v1/orders/{spare_order}/payment")),
            Some(user),
            &json!({"payment_no": seed::CHANNEL_CARD_USD}),
        )
        .await;
    let create = |key: &str| json!({"external_reference": key, "idempotency_key": key, "amount_minor": 1234, "currency": "USD"});
    let payment = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(client),
            &create("bad-1"),
        )
        .await;
    let spare = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(client),
            &create("bad-2"),
        )
        .await;
    assert_eq!(payment.status, StatusCode::CREATED, "{:?}", payment.body);
    let checkout_url = spare.body["checkout_url"].as_str().unwrap();
    Ids {
        order,
        spare_order,
        spare_trade: started.body["trade_no"].as_str().unwrap().to_owned(),
        payment: payment.body["order_no"].as_str().unwrap().to_owned(),
        spare_payment: spare.body["order_no"].as_str().unwrap().to_owned(),
        spare_checkout: checkout_url.rsplit('/').next().unwrap().to_owned(),
    }
}

#[tokio::test]
async fn bad_input_to_every_route_gets_a_clear_4xx_and_loses_no_data() {
    let env = Env::start().await;
    let client = env.merchant_token().await;
    let user = env
        .user_token_via(seed::USER_ALICE, seed::MERCHANT_CLIENT_ID, "")
        .await;
    let ids = setup(&env, &client, &user).await;
    let before = snapshot(&env, &ids, &client, &user).await;
    assert_eq!(before["order"]["status"], 0, "{before}");
    assert!(!ids.spare_order.is_empty());

    let routes = every_route(&env, &ids, &client, &user);
    for (method, url, token) in &routes {
        // Keep per-IP checkout budgets out of the way: every request should reach its handler.
        env.http
            .delete(env.control("/limits"))
            .send()
            .await
            .unwrap();
        for (name, content_type, body) in payloads() {
            let mut request = env.http.request(method.parse().unwrap(), url).body(body);
            if let Some(content_type) = content_type {
                request = request.header("content-type", content_type);
            }
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request
                .send()
                .await
                .unwrap_or_else(|e| panic!("{method} {url} with {name}: no answer: {e}"));
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            assert!(
                status.is_client_error() || status.is_success() || status.is_redirection(),
                "{method} {url} with {name}: {status} {text}"
            );
            // API, OAuth and control errors carry the contract's error shape.
            let json_route = !url.contains("/checkout/") && !url.contains("/catalog-pay/");
            if json_route && status.is_client_error() {
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                assert!(
                    body["error"].is_string(),
                    "{method} {url} with {name}: {status} {text}"
                );
            }
        }
    }

    // Garbage in paths and queries.
    for url in [
        env.api("/openapi/v1/orders/%FF%FE"),
        env.api(&format!(
            "/openapi/v1/products?page=%FF&limit=%&search_value={}",
            "x".repeat(8000)
        )),
        env.api("/openapi/v1/merchant-payments?limit=%ZZ&order_no=%C3"),
        format!("{}/checkout/%00%FF/pay", env.sandbox.origin()),
        env.control("/requests?method=%FF"),
    ] {
        let answer = env.get(&url, Some(&client)).await;
        assert!(
            answer.status.as_u16() < 500,
            "{url}: {} {}",
            answer.status,
            answer.text
        );
    }

    let after = snapshot(&env, &ids, &client, &user).await;
    assert_eq!(before, after, "stored data changed");
    // Earlier tokens still work and the sandbox still accepts good requests.
    let order_no = env
        .order(&user, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
    assert!(!order_no.is_empty());
}

#[tokio::test]
async fn framework_errors_carry_the_contract_error_shape() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for (method, url, status) in [
        ("POST", env.api("/openapi/v1/merchant"), 405),
        ("DELETE", env.sandbox.token_endpoint(), 405),
        ("GET", env.api("/openapi/v1/orders/%FF%FE"), 400),
        ("GET", env.api("/openapi/v1/nothing-here"), 404),
        ("PATCH", env.control("/clock"), 405),
    ] {
        let response = env
            .http
            .request(method.parse().unwrap(), &url)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let answer = harness::answer(response).await;
        assert_eq!(
            answer.status.as_u16(),
            status,
            "{method} {url}: {}",
            answer.text
        );
        assert!(
            answer.body["error"].is_string(),
            "{method} {url}: {}",
            answer.text
        );
    }
}
