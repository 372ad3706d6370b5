//! The hosted checkout page over real HTTP, as a browser would use it (contract: "Buyer method
//! selection", "Return address flow (browser)", "States and transitions" other rules, "Limits"
//! checkout per IP).

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

const RETURN_URL: &str = "https://shop.example/back?order=A-1#top";

struct Page {
    status: StatusCode,
    location: Option<String>,
    html: String,
}

async fn fetch(env: &Env, request: reqwest::RequestBuilder) -> Page {
    let _ = env;
    let response = request.send().await.expect("the checkout answers");
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let html = response.text().await.unwrap_or_default();
    Page {
        status,
        location,
        html,
    }
}

async fn open(env: &Env, url: &str) -> Page {
    fetch(env, env.http.get(url)).await
}

async fn submit(env: &Env, checkout_url: &str, action: &str, form: &[(&str, &str)]) -> Page {
    fetch(
        env,
        env.http.post(format!("{checkout_url}/{action}")).form(form),
    )
    .await
}

/// The per-order method identifiers on the page, with their labels.
fn methods(html: &str) -> Vec<(String, String)> {
    let marker = "name=\"method\" value=\"";
    html.match_indices(marker)
        .map(|(at, _)| {
            let rest = &html[at + marker.len()..];
            let id = rest[..rest.find('"').unwrap()].to_owned();
            let label_start = rest.find('>').unwrap() + 1;
            let label = rest[label_start..label_start + rest[label_start..].find('<').unwrap()]
                .trim()
                .to_owned();
            (id, label)
        })
        .collect()
}

fn method_id(html: &str, label_prefix: &str) -> String {
    methods(html)
        .into_iter()
        .find(|(_, label)| label.starts_with(label_prefix))
        .unwrap_or_else(|| panic!("no method {label_prefix} in {html}"))
        .0
}

async fn payment_with_return(env: &Env, token: &str, key: &str) -> Value {
    let mut request = body(key);
    request["external_reference"] = json!("INTERNAL-REF-7731");
    request["description"] = json!("Two bags of single-origin beans");
    request["return_url"] = json!(RETURN_URL);
    created(env, token, &request).await
}

#[tokio::test]
async fn checkout_page_shows_only_merchant_name_description_amount_countdown_and_methods() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = payment_with_return(&env, &token, "page").await;
    let url = payment["checkout_url"].as_str().unwrap();
    let page = open(&env, url).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = &page.html;
    assert!(html.contains("Sandbox Coffee Roasters"), "merchant name");
    assert!(
        html.contains("Two bags of single-origin beans"),
        "description"
    );
    assert!(html.contains("12.50 USD"), "amount");
    assert!(html.contains("id=\"countdown\""), "countdown");
    let offered = methods(html);
    assert!(offered.len() >= 2, "{offered:?}");
    for (id, _) in &offered {
        assert!(
            !id.starts_with("ch_"),
            "per-order method identifiers, not channel numbers"
        );
    }
    assert!(!html.contains("INTERNAL-REF-7731"), "no external reference");
    assert!(
        !html.contains(payment["order_no"].as_str().unwrap()),
        "no order number"
    );
    assert!(
        !html.contains("shop.example/back"),
        "the return address is not shown"
    );
}

#[tokio::test]
async fn platform_coin_payment_on_the_page_moves_to_the_saved_return_url_with_nothing_appended() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = payment_with_return(&env, &token, "coin-page").await;
    let url = payment["checkout_url"].as_str().unwrap();
    let page = open(&env, url).await;
    let coin = method_id(&page.html, "Platform Coin");
    let anonymous = submit(&env, url, "pay", &[("method", &coin)]).await;
    assert_eq!(
        anonymous.status,
        StatusCode::FORBIDDEN,
        "the wallet needs login"
    );
    assert!(anonymous.html.contains("log in"));
    let login = submit(&env, url, "login", &[("user", seed::USER_ALICE)]).await;
    assert_eq!(login.status, StatusCode::SEE_OTHER);
    let paid = submit(&env, url, "pay", &[("method", &coin)]).await;
    assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.html);
    assert_eq!(
        paid.location.as_deref(),
        Some(RETURN_URL),
        "exactly as saved"
    );
    let order = order_no(&payment);
    let p = query(&env, &token, &order).await.body;
    assert_eq!(p["status"], "paid");
    assert_eq!(p["payment_no"], seed::CHANNEL_PLATFORM_COIN);
    let again = open(&env, url).await;
    assert_eq!(
        again.status,
        StatusCode::SEE_OTHER,
        "a paid checkout moves on"
    );
    assert_eq!(again.location.as_deref(), Some(RETURN_URL));
}

#[tokio::test]
async fn card_payment_returns_to_the_checkout_first_then_to_the_merchant_when_paid() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = payment_with_return(&env, &token, "card-page").await;
    let url = payment["checkout_url"].as_str().unwrap();
    let card = method_id(&open(&env, url).await.html, "Card (USD)");
    let started = submit(&env, url, "pay", &[("method", &card)]).await;
    assert_eq!(started.status, StatusCode::SEE_OTHER);
    assert_eq!(
        started.location.as_deref(),
        Some(url),
        "back to the checkout"
    );
    let order = order_no(&payment);
    assert_eq!(status(&env, &token, &order).await, "pending");
    let cancelled = submit(&env, url, "card/cancel", &[]).await;
    assert_eq!(
        cancelled.status,
        StatusCode::OK,
        "a cancel never triggers the return"
    );
    assert!(cancelled.location.is_none());
    let page = open(&env, url).await;
    assert!(
        page.html.contains("Complete card payment"),
        "the session continues"
    );
    assert!(methods(&page.html).is_empty(), "the method is locked");
    let done = submit(&env, url, "card/complete", &[]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(done.location.as_deref(), Some(RETURN_URL));
    assert_eq!(status(&env, &token, &order).await, "paid");
}

#[tokio::test]
async fn paid_page_without_return_url_stays_and_shows_no_payment_internals() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = created(&env, &token, &body("no-return")).await;
    let url = payment["checkout_url"].as_str().unwrap();
    let card = method_id(&open(&env, url).await.html, "Card (USD)");
    submit(&env, url, "pay", &[("method", &card)]).await;
    let done = submit(&env, url, "card/complete", &[]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(done.location.as_deref(), Some(url), "stays in the checkout");
    let page = open(&env, url).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.html.contains("Payment complete"));
    let p = query(&env, &token, &order_no(&payment)).await.body;
    for hidden in ["event_id", "provider_trade_no", "settlement_coin"] {
        let value = p[hidden].as_str().unwrap();
        assert!(
            !page.html.contains(value),
            "{hidden} is kept out of the checkout"
        );
    }
}

#[tokio::test]
async fn browser_cancel_and_added_status_parameters_neither_end_nor_confirm_the_payment() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = payment_with_return(&env, &token, "cancel").await;
    let url = payment["checkout_url"].as_str().unwrap();
    let cancelled = submit(&env, url, "cancel", &[]).await;
    assert_eq!(cancelled.status, StatusCode::OK);
    assert!(cancelled.location.is_none());
    let spoofed = open(
        &env,
        &format!("{url}?status=paid&return_url=https://evil.example/"),
    )
    .await;
    assert_eq!(
        spoofed.status,
        StatusCode::OK,
        "no move to any return address"
    );
    assert!(spoofed.location.is_none());
    assert_eq!(status(&env, &token, &order_no(&payment)).await, "pending");
}

#[tokio::test]
async fn checkout_methods_are_per_order_identifiers_not_channel_numbers() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let a = payment_with_return(&env, &token, "ids-a").await;
    let b = payment_with_return(&env, &token, "ids-b").await;
    let url_a = a["checkout_url"].as_str().unwrap();
    let url_b = b["checkout_url"].as_str().unwrap();
    let card_b = method_id(&open(&env, url_b).await.html, "Card (USD)");
    let card_a = method_id(&open(&env, url_a).await.html, "Card (USD)");
    assert_ne!(card_a, card_b);
    for bogus in [seed::CHANNEL_CARD_USD, card_b.as_str()] {
        let page = submit(&env, url_a, "pay", &[("method", bogus)]).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{bogus}");
    }
    assert_eq!(status(&env, &token, &order_no(&a)).await, "pending");
}

#[tokio::test]
async fn test_channel_on_the_checkout_needs_its_assigned_payer_logged_in() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("page-test-channel");
    request["payment_no"] = json!(seed::CHANNEL_CARD_TEST);
    let payment = created(&env, &token, &request).await;
    let url = payment["checkout_url"].as_str().unwrap();
    let id = method_id(&open(&env, url).await.html, "Card test channel");
    let page = submit(&env, url, "pay", &[("method", &id)]).await;
    assert_eq!(
        page.status,
        StatusCode::FORBIDDEN,
        "payer restriction forces login"
    );
    submit(&env, url, "login", &[("user", seed::USER_CAROL)]).await;
    let page = submit(&env, url, "pay", &[("method", &id)]).await;
    assert_eq!(
        page.status,
        StatusCode::FORBIDDEN,
        "carol is not an assigned payer"
    );
    submit(&env, url, "logout", &[]).await;
    submit(&env, url, "login", &[("user", seed::USER_ALICE)]).await;
    let page = submit(&env, url, "pay", &[("method", &id)]).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    let p = query(&env, &token, &order_no(&payment)).await.body;
    assert_eq!(
        (p["payment_no"].as_str(), p["test_mode"].as_bool()),
        (Some(seed::CHANNEL_CARD_TEST), Some(true))
    );
}

#[tokio::test]
async fn checkout_read_of_an_expired_due_payment_turns_it_expired() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    set_sweep(&env, false).await;
    let request = short_lived("page-expiry");
    let payment = created(&env, &token, &request).await;
    let url = payment["checkout_url"].as_str().unwrap();
    env.advance(61).await;
    let page = open(&env, url).await;
    assert!(
        page.html.contains("This payment has expired"),
        "the sweep is paused: the checkout read itself expired it"
    );
    let record = list(&env, &token, "external_reference=order-page-expiry").await;
    assert_eq!(record.body["items"][0]["status"], "expired");
    assert_eq!(
        record.body["items"][0]["status_version"], 2,
        "changed once, by the checkout read"
    );
    let card = submit(&env, url, "pay", &[("method", "m_anything")]).await;
    assert_eq!(card.status, StatusCode::GONE, "payment_expired");
}

/// "cancelled payment, expiry, refund or chargeback do not trigger the success return": the
/// checkout moves to the saved return address only while the status is `paid`.
#[tokio::test]
async fn expiry_refund_and_chargeback_never_trigger_the_success_return() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for after in ["refunded", "chargeback"] {
        let payment = payment_with_return(&env, &token, &format!("return-{after}")).await;
        let url = payment["checkout_url"].as_str().unwrap();
        pay_by_card(&env, &order_no(&payment)).await;
        let paid = open(&env, url).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "paid moves on");
        assert_eq!(paid.location.as_deref(), Some(RETURN_URL));
        assert_eq!(
            force(&env, &order_no(&payment), after).await.status,
            StatusCode::OK
        );
        let page = open(&env, url).await;
        assert_eq!(
            page.status,
            StatusCode::OK,
            "{after}: stays on the checkout"
        );
        assert_eq!(page.location, None, "{after}");
    }
    set_sweep(&env, false).await;
    let mut request = short_lived("return-expired");
    request["return_url"] = json!(RETURN_URL);
    let payment = created(&env, &token, &request).await;
    env.advance(61).await;
    let page = open(&env, payment["checkout_url"].as_str().unwrap()).await;
    assert_eq!(
        page.status,
        StatusCode::OK,
        "expired: stays on the checkout"
    );
    assert_eq!(page.location, None);
    assert_eq!(status(&env, &token, &order_no(&payment)).await, "expired");
}

/// "With one available method it is shown directly. A fixed-channel payment keeps its
/// channel": the page of a payment fixed to the card channel offers exactly that method,
/// preselected, while an open choice offers several.
#[tokio::test]
async fn a_single_available_method_is_shown_directly() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("single-method");
    request["payment_no"] = json!(seed::CHANNEL_CARD_USD);
    let fixed = created(&env, &token, &request).await;
    let page = open(&env, fixed["checkout_url"].as_str().unwrap()).await;
    assert_eq!(page.status, StatusCode::OK);
    let offered = methods(&page.html);
    assert_eq!(offered.len(), 1, "{offered:?}");
    let marker = format!("name=\"method\" value=\"{}\" checked", offered[0].0);
    assert!(
        page.html.contains(&marker),
        "the only method is preselected"
    );
    let open_choice = created(&env, &token, &body("several-methods")).await;
    let page = open(&env, open_choice["checkout_url"].as_str().unwrap()).await;
    assert!(
        methods(&page.html).len() > 1,
        "an open choice offers several methods"
    );
}

#[tokio::test]
async fn unknown_checkout_token_is_not_found() {
    let env = Env::start().await;
    let page = open(
        &env,
        &format!("{}/checkout/ct_unknown", env.sandbox.origin()),
    )
    .await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn checkout_payment_start_is_limited_to_30_per_ip_per_minute() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = created(&env, &token, &body("limit-start")).await;
    let url = payment["checkout_url"].as_str().unwrap();
    for _ in 0..30 {
        let page = submit(&env, url, "pay", &[("method", "m_bogus")]).await;
        assert_ne!(page.status, StatusCode::TOO_MANY_REQUESTS);
    }
    let response = env
        .http
        .post(format!("{url}/pay"))
        .form(&[("method", "m_bogus")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().get("retry-after").is_some());
    env.advance(60).await;
    let page = submit(&env, url, "pay", &[("method", "m_bogus")]).await;
    assert_ne!(
        page.status,
        StatusCode::TOO_MANY_REQUESTS,
        "a new window admits again"
    );
}

#[tokio::test]
async fn checkout_read_is_limited_to_180_per_ip_per_minute() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = created(&env, &token, &body("limit-read")).await;
    let url = payment["checkout_url"].as_str().unwrap();
    for _ in 0..180 {
        assert_eq!(open(&env, url).await.status, StatusCode::OK);
    }
    let page = open(&env, url).await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn checkout_keeps_querying_while_the_payment_result_is_undecided() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let payment = payment_with_return(&env, &token, "undecided").await;
    let url = payment["checkout_url"].as_str().unwrap();
    assert!(
        !open(&env, url)
            .await
            .html
            .contains("http-equiv=\"refresh\"")
    );
    let order = order_no(&payment);
    control(
        &env,
        &order,
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_CARD_USD}),
    )
    .await;
    control(&env, &order, "checkout/unclear", json!({})).await;
    let page = open(&env, url).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.html.contains("http-equiv=\"refresh\""),
        "re-reads itself"
    );
    assert!(
        !page.html.contains("Complete card payment"),
        "no second attempt offered"
    );
    force(&env, &order, "paid").await;
    let page = open(&env, url).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "moves on once paid");
    assert_eq!(page.location.as_deref(), Some(RETURN_URL));
}
