//! Checkout in a real browser (issue 10): headless Chromium (Debian's `chromium` package),
//! driven by `tests/browser/checkout.mjs` (playwright-core), opens the `checkout_url` of a
//! merchant payment on the sandbox (HTTPS, its own CA), logs in as a seeded buyer, picks the
//! platform coin, pays, and lands on the merchant's `return_url` (a page the driver serves over
//! HTTPS on 127.0.0.1); the SDK then reads `paid`. Screenshots are kept in
//! `target/test-artifacts/browser-checkout/`.
//!
//! Needs `chromium` and `node` with `tests/browser/node_modules`, so it is ignored by a plain
//! `cargo test`; `.ci/suites/55-browser.sh` installs both and runs it with `--ignored`.

mod common;

use std::time::Instant;

use common::browser::{Driver, artifacts_dir, assert_screenshots};
use common::{raw_http, s};
use serde_json::{Value, json};
use storefront::{Client, Config, CreateMerchantPayment, MinorAmount, PaymentExpectation};
use storefront_sandbox::{Sandbox, SandboxOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and node (tests/browser); run by .ci/suites/55-browser.sh"]
async fn a_buyer_pays_in_headless_chromium_and_lands_on_the_return_url() {
    let started = Instant::now();
    let sandbox = Sandbox::start_with(SandboxOptions {
        tls: true,
        ..Default::default()
    })
    .await
    .expect("sandbox starts");
    let ca_pem = sandbox.ca_pem().expect("a TLS sandbox has a CA");
    let client = Client::new(
        Config::new(
            sandbox.base_url(),
            sandbox.token_endpoint(),
            s::MERCHANT_CLIENT_ID,
            s::MERCHANT_CLIENT_SECRET,
        )
        .with_root_ca_pem(ca_pem.clone())
        .with_user_agent("storefront-browser-test/1"),
    )
    .expect("client builds");
    let control = raw_http(Some(&ca_pem));
    let wallet = |user: &'static str| {
        let control = control.clone();
        let url = format!("{}/users/{user}", sandbox.control_url());
        async move {
            let v: Value = control.get(url).send().await.unwrap().json().await.unwrap();
            v["wallet"].as_i64().expect("wallet")
        }
    };
    let wallet_before = wallet(s::USER_ALICE).await;

    let mut driver = Driver::start("checkout.mjs");
    let return_url = driver.next("return_page")["return_url"]
        .as_str()
        .unwrap()
        .to_owned();

    let channels = client.list_channels().await.unwrap();
    let coin = channels
        .iter()
        .find(|c| c.payment_no == s::CHANNEL_PLATFORM_COIN)
        .expect("the platform coin is offered");
    assert!(coin.login_required, "the platform coin needs a buyer login");
    let amount = MinorAmount::parse_decimal("12.50", 2).unwrap();
    let request = CreateMerchantPayment::new("browser-order-1", amount, "USD")
        .with_description("Browser checkout test order")
        .with_return_url(&return_url)
        .expect_currency_decimals(2);
    let created = client.create_merchant_payment(&request).await.unwrap();
    let payment = &created.payment;
    assert_eq!(payment.return_url.as_deref(), Some(return_url.as_str()));
    let checkout_url = payment.checkout_url.as_ref().expect("checkout_url");
    let checkout_token = checkout_url.expose().rsplit('/').next().unwrap().to_owned();
    assert!(checkout_url.expose().starts_with(&sandbox.origin()));

    let artifacts = artifacts_dir("browser-checkout");
    driver.send(json!({
        "checkout_url": checkout_url.expose(),
        "ca_pem": ca_pem,
        "user": s::USER_ALICE,
        "method_label": coin.name,
        "artifacts_dir": artifacts,
    }));
    let done = driver.next("done");
    let browser_done = started.elapsed();

    // The browser landed on the return address exactly as saved, nothing appended.
    assert_eq!(done["final_url"], return_url.as_str(), "{done:#}");
    assert_eq!(done["title"], "Merchant: order returned", "{done:#}");
    assert!(
        done["page_text"]
            .as_str()
            .unwrap()
            .contains(&format!("Return address: {return_url}")),
        "{done:#}"
    );
    let steps = done["checkout_steps"].as_array().unwrap();
    assert_eq!(steps[0]["status"], 200, "{done:#}");
    assert!(
        steps[1]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("Logged in as {}", s::USER_ALICE)),
        "{done:#}"
    );
    // The return page got the buyer once, with at most the checkout's origin as referrer.
    let page_hits: Vec<&Value> = done["return_hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["url"] != "/favicon.ico")
        .collect();
    assert_eq!(page_hits.len(), 1, "{done:#}");
    assert_eq!(
        page_hits[0]["url"], "/shop/orders/browser-1/return?step=paid",
        "{done:#}"
    );
    let referer = page_hits[0]["referer"].as_str().unwrap_or("");
    assert!(
        !referer.contains(&checkout_token),
        "the checkout token reached the merchant page as Referer: {referer}"
    );

    // Screenshots kept as artifacts.
    assert_screenshots(&done, 3);

    // The SDK then reads paid, with the channel the buyer chose, and the wallet was debited.
    let queried = client
        .get_merchant_payment(&payment.order_no)
        .await
        .unwrap();
    assert!(queried.status.is_paid(), "{queried:?}");
    assert_eq!(queried.payment_no, s::CHANNEL_PLATFORM_COIN);
    assert!(queried.event_id.is_some() && queried.occurred_at.is_some());
    PaymentExpectation {
        external_reference: "browser-order-1".into(),
        amount_minor: amount,
        currency: "USD".into(),
        test_mode: false,
    }
    .check_payment(&queried)
    .unwrap();
    let wallet_after = wallet(s::USER_ALICE).await;
    assert!(
        wallet_after < wallet_before,
        "alice paid with the platform coin: {wallet_before} -> {wallet_after}"
    );

    // Chromium's requests are in the sandbox log, with the checkout token redacted everywhere.
    let log: Value = control
        .get(format!("{}/requests", sandbox.control_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let log_text = log.to_string();
    let checkout_requests: Vec<&Value> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or("").starts_with("/checkout/"))
        .collect();
    for (method, path) in [
        ("GET", "/checkout/[redacted]"),
        ("POST", "/checkout/[redacted]/login"),
        ("POST", "/checkout/[redacted]/pay"),
    ] {
        assert!(
            checkout_requests
                .iter()
                .any(|r| r["method"] == method && r["path"] == path),
            "{method} {path} in the request log: {log_text}"
        );
    }
    assert!(
        checkout_requests.iter().any(|r| r["headers"]["user-agent"]
            .as_str()
            .unwrap_or("")
            .contains("Chrome")),
        "the checkout requests came from Chromium: {log_text}"
    );
    assert!(!log_text.contains(&checkout_token), "{log_text}");
    println!(
        "browser checkout: paid {} via {} in {:.1?} (browser part), {:.1?} in all",
        queried.order_no,
        queried.payment_no,
        browser_done,
        started.elapsed()
    );
}
