//! The standalone binary against web pages (the guard's rules, see "Security of the local
//! sandbox" in the README): a page of another origin cannot change it (origin rule), a
//! DNS-rebinding page cannot reach it at all (host rule), and a form without the dashboard
//! token cannot change it (form rule).

mod harness;

use harness::{Answer, Binary, answer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

const FORM: &str = "application/x-www-form-urlencoded";
const EVIL: &str = "http://evil.example";

/// A browser form post to `url`: `headers`, a form content type and `body`.
async fn form_post(sandbox: &Binary, url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut request = sandbox
        .http
        .post(url)
        .header("content-type", FORM)
        .body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    answer(request.send().await.unwrap()).await
}

/// The dashboard's form token, read from its overview page.
async fn dashboard_token(sandbox: &Binary) -> String {
    let page = answer(sandbox.http.get(sandbox.control("/")).send().await.unwrap()).await;
    assert_eq!(page.status, StatusCode::OK);
    let marker = r#"name="sandbox_token" value=""#;
    let start = page.text.find(marker).expect("the forms carry the token") + marker.len();
    let end = start + page.text[start..].find('"').unwrap();
    page.text[start..end].to_owned()
}

/// The checkout token in a create answer's `checkout_url` (`.../checkout/{token}`).
fn checkout_path(created: &Value) -> String {
    let url = url::Url::parse(created["checkout_url"].as_str().unwrap()).unwrap();
    url.path().to_owned()
}

#[tokio::test]
async fn cross_origin_form_posts_are_refused_and_change_nothing() {
    let sandbox = Binary::start("cross-origin");
    let token = sandbox.merchant_token().await;
    let created = sandbox.create_payment(&token, "csrf-1").await;
    let order_no = created["order_no"].as_str().unwrap().to_owned();
    let payment =
        |action: &str| sandbox.control(&format!("/merchant-payments/{order_no}/{action}"));
    let checkout = format!("{}{}/pay", sandbox.origin(), checkout_path(&created));
    let targets = [
        payment("checkout/pay"),
        payment("force"),
        payment("expire"),
        sandbox.control("/reset"),
        sandbox.control("/sweep"),
        checkout,
    ];
    let shapes: [&[(&str, &str)]; 4] = [
        &[("origin", EVIL)],
        &[("origin", EVIL), ("sec-fetch-site", "cross-site")],
        &[("sec-fetch-site", "cross-site")],
        &[("origin", "null")],
    ];
    for url in &targets {
        for headers in shapes {
            let refused = form_post(&sandbox, url, headers, "").await;
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{url} {headers:?}");
            assert_eq!(refused.error(), "cross_origin_request", "{}", refused.text);
            assert!(refused.body["error_description"].is_string());
        }
    }
    // Nothing changed: not paid nor expired, the clock did not move, and no reset happened
    // (the merchant's token and payment are still there).
    assert_eq!(sandbox.status_of(&token, &order_no).await, "pending");
    assert_eq!(sandbox.clock_offset().await, 0);

    // The same posts from the sandbox's own origin are not refused by the origin rule (a form
    // still needs the dashboard token on control routes: see the form rule's test).
    let own = form_post(
        &sandbox,
        &payment("force"),
        &[
            ("origin", sandbox.origin()),
            ("sec-fetch-site", "same-origin"),
        ],
        "",
    )
    .await;
    assert_eq!(own.error(), "dashboard_token_invalid", "{}", own.text);

    // A client that is not a browser (no Origin, JSON) keeps working.
    let paid = answer(
        sandbox
            .http
            .post(payment("checkout/pay"))
            .json(&json!({ "payment_no": seed::CHANNEL_CARD_USD }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text);
    assert_eq!(sandbox.status_of(&token, &order_no).await, "paid");
}

#[tokio::test]
async fn requests_naming_a_host_the_sandbox_does_not_serve_are_refused() {
    let sandbox = Binary::start("dns-rebinding");
    let token = sandbox.merchant_token().await;
    let order_no = sandbox.create_payment(&token, "rebind-1").await["order_no"]
        .as_str()
        .unwrap()
        .to_owned();
    let port = sandbox.port();
    let evil_with_port = format!("evil.example:{port}");
    let lookalike = format!("127.0.0.1.evil.example:{port}");
    let send = |method: reqwest::Method, url: String, host: String| {
        let request = sandbox.http.request(method, url).header("host", host);
        async move { answer(request.send().await.unwrap()).await }
    };
    for host in ["evil.example", evil_with_port.as_str(), lookalike.as_str()] {
        for (method, url) in [
            (reqwest::Method::GET, sandbox.control("/")),
            (reqwest::Method::GET, sandbox.control("/clock")),
            (reqwest::Method::POST, sandbox.control("/reset")),
            (
                reqwest::Method::POST,
                sandbox.control(&format!("/merchant-payments/{order_no}/force")),
            ),
            (
                reqwest::Method::GET,
                sandbox.api("/openapi/v1/merchant-payment-channels"),
            ),
        ] {
            let refused = send(method.clone(), url.clone(), host.to_owned()).await;
            assert_eq!(
                refused.status,
                StatusCode::MISDIRECTED_REQUEST,
                "{method} {url} Host {host}"
            );
            assert_eq!(refused.error(), "host_not_served", "{}", refused.text);
        }
    }
    // The force and reset above did nothing.
    assert_eq!(sandbox.status_of(&token, &order_no).await, "pending");
    // The loopback names are served, on any port (a port mapping presents another one).
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("localhost:{}", port.wrapping_add(1)),
    ] {
        let page = send(reqwest::Method::GET, sandbox.control("/"), host.clone()).await;
        assert_eq!(page.status, StatusCode::OK, "Host {host}");
    }
}

#[tokio::test]
async fn dashboard_forms_need_the_dashboard_token() {
    let sandbox = Binary::start("dashboard-token");
    let token = sandbox.merchant_token().await;
    let dashboard_token = dashboard_token(&sandbox).await;
    assert!(dashboard_token.len() >= 32, "{dashboard_token}");
    let same_origin = [("origin", sandbox.origin())];
    let reset = sandbox.control("/reset");

    // Without the token (with or without Origin: old browsers send none), or with a wrong one,
    // a form submission is refused and nothing is reset: the merchant token still works.
    for (headers, body) in [
        (&same_origin[..], ""),
        (&[][..], ""),
        (&same_origin[..], "sandbox_token=sbx_dt_00"),
    ] {
        let refused = form_post(&sandbox, &reset, headers, body).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{headers:?} {body}");
        assert_eq!(
            refused.error(),
            "dashboard_token_invalid",
            "{}",
            refused.text
        );
    }
    for content_type in ["text/plain", "multipart/form-data; boundary=x"] {
        let refused = answer(
            sandbox
                .http
                .post(&reset)
                .header("content-type", content_type)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(refused.error(), "dashboard_token_invalid", "{content_type}");
    }
    let wrong_header = answer(
        sandbox
            .http
            .post(&reset)
            .header("x-sandbox-token", "sbx_dt_00")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(wrong_header.error(), "dashboard_token_invalid");
    sandbox.create_payment(&token, "still-valid").await;

    // The dashboard's own form, with its token, works.
    let done = form_post(
        &sandbox,
        &reset,
        &same_origin,
        &format!("sandbox_token={dashboard_token}"),
    )
    .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert_eq!(done.body["reset"], true);
    // So does the dashboard script's shape: JSON with the token in X-Sandbox-Token.
    let advanced = answer(
        sandbox
            .http
            .post(sandbox.control("/clock/advance"))
            .header("origin", sandbox.origin())
            .header("x-sandbox-token", &dashboard_token)
            .json(&json!({ "seconds": 5 }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(advanced.status, StatusCode::OK, "{}", advanced.text);
}
