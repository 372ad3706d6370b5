//! The sandbox's developer dashboard in a real browser (issue 17): headless Chromium (Debian's
//! `chromium` package), driven by `tests/browser/dashboard.mjs` (playwright-core), opens
//! `/_sandbox/` of an in-process sandbox where the SDK created a merchant payment that notifies
//! a local receiver, clicks "Pay" and sees `paid` in the payment's timeline and the delivery
//! attempt with the receiver's 2xx answer, then clicks "Refund" and sees the `refunded` attempt.
//! The SDK then reads `refunded`, and the receiver got the three signed notifications the page
//! lists. Screenshots are kept in `target/test-artifacts/browser-dashboard/`.
//!
//! Needs `chromium` and `node` with `tests/browser/node_modules`, so it is ignored by a plain
//! `cargo test`; `.ci/suites/55-browser.sh` installs both and runs it with `--ignored`.

mod common;

use std::time::Instant;

use common::browser::{Driver, artifacts_dir, assert_screenshots};
use common::hook::receiver;
use common::{Harness, s};
use serde_json::json;
use storefront::{CreateMerchantPayment, MinorAmount, WebhookVerifier};

const SECRET: &str = "browser-dashboard-notify-secret-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and node (tests/browser); run by .ci/suites/55-browser.sh"]
async fn a_developer_pays_and_refunds_from_the_dashboard_in_headless_chromium() {
    let started = Instant::now();
    let h = Harness::start().await;
    let (url, deliveries) = receiver().await;
    let amount = MinorAmount::parse_decimal("12.50", 2).unwrap();
    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new("dashboard-order-1", amount, "USD")
                .with_description("Browser dashboard test order")
                .with_notification(&url, SECRET),
        )
        .await
        .unwrap();
    let order_no = created.payment.order_no.clone();
    let checkout_url = created
        .payment
        .checkout_url
        .as_ref()
        .expect("checkout_url")
        .expose()
        .to_owned();

    let mut driver = Driver::start("dashboard.mjs");
    let artifacts = artifacts_dir("browser-dashboard");
    driver.send(json!({
        "dashboard_url": format!("{}/", h.sandbox.control_url()),
        "order_no": order_no,
        "payment_no": s::CHANNEL_CARD_USD,
        "artifacts_dir": artifacts,
    }));
    let done = driver.next("done");
    let browser_done = started.elapsed();

    // The timeline the page showed: one row per status_version, with when and why.
    let timeline: Vec<(u64, &str)> = done["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["version"].as_u64().unwrap(),
                t["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        timeline,
        [(1, "pending"), (2, "paid"), (3, "refunded")],
        "{done:#}"
    );
    assert_eq!(
        done["timeline"][1]["why"],
        format!("{} confirmed the payment", s::CHANNEL_CARD_USD)
    );
    assert_eq!(done["timeline"][2]["why"], "platform confirmed a refund");
    // The buttons' requests succeeded, and the page script raised nothing.
    let flashes = done["flashes"].as_array().unwrap();
    assert_eq!(flashes.len(), 2, "{done:#}");
    assert!(
        flashes[0]
            .as_str()
            .unwrap()
            .starts_with("\u{2713} Pay: POST ")
            && flashes[0]
                .as_str()
                .unwrap()
                .ends_with("/checkout/pay \u{2192} 200"),
        "{done:#}"
    );
    assert!(
        flashes[1]
            .as_str()
            .unwrap()
            .starts_with("\u{2713} Refund: POST "),
        "{done:#}"
    );
    assert_eq!(done["page_errors"], json!([]), "{done:#}");
    assert!(
        !done["page_text"]
            .as_str()
            .unwrap()
            .contains(checkout_url.rsplit('/').next().unwrap()),
        "the dashboard shows no checkout token"
    );

    // The receiver got exactly the three notifications the page lists, each acknowledged (200),
    // signed with the payment's secret.
    let got = deliveries.lock().unwrap().clone();
    assert_eq!(got.len(), 3, "one delivery per status change");
    let verifier = WebhookVerifier::new([SECRET]).unwrap();
    let attempts = done["attempts"].as_array().unwrap();
    for (headers, body) in &got {
        let event_id = headers
            .get("x-service-event-id")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let event = verifier
            .verify_headers(headers, body)
            .unwrap_or_else(|e| panic!("{event_id} verifies: {e}"));
        let shown = attempts
            .iter()
            .find(|a| a["event_id"] == event_id.as_str())
            .unwrap_or_else(|| panic!("{event_id} on the page: {done:#}"));
        assert_eq!(
            shown["event_status"],
            event.data.status.as_str(),
            "{done:#}"
        );
        assert_eq!(shown["http_status"], "200", "{done:#}");
        assert_eq!(shown["answer"], "HTTP 200", "{done:#}");
    }

    // Screenshots kept as artifacts.
    assert_screenshots(&done, 4);

    // The SDK reads what the dashboard did.
    let queried = h.client.get_merchant_payment(&order_no).await.unwrap();
    assert_eq!(queried.status.as_str(), "refunded", "{queried:?}");
    assert_eq!(queried.status_version, Some(3));
    assert_eq!(queried.payment_no, s::CHANNEL_CARD_USD);
    println!(
        "browser dashboard: paid and refunded {order_no} in {browser_done:.1?} (browser part), {:.1?} in all",
        started.elapsed()
    );
}
