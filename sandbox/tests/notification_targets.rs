//! Which notification targets the sandbox accepts and delivers to (contract, Events:
//! `notify_url` "public HTTPS only ... no private-network address"; Errors:
//! `invalid_notify_url`): every non-public address form is refused at creation, and the
//! resolved address is checked again at every delivery, so DNS rebinding reaches nothing.
//! Loopback receivers only with `SandboxOptions::allow_loopback_notify`.

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::{SandboxOptions, seed};

const SECRET: &str = "explicit-secret-0123456789abcdef0123";

fn with_notify(key: &str, url: &str) -> Value {
    let mut b = body(key);
    b["notify_url"] = json!(url);
    b["notify_secret"] = json!(SECRET);
    b
}

async fn strict() -> Env {
    Env::start_with(SandboxOptions {
        allow_loopback_notify: false,
        ..SandboxOptions::default()
    })
    .await
}

async fn pin(env: &Env, host: &str, addresses: &[&str]) {
    let answer = env
        .put_control(&format!("/dns/{host}"), &json!({ "addresses": addresses }))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
}

/// The one delivery record of a payment, once its first attempt finished.
async fn first_attempt(env: &Env, order: &str) -> Value {
    let token = env.merchant_token().await;
    let url = env.api(&format!(
        "/openapi/v1/merchant-payments/{order}/notifications"
    ));
    eventually("the first attempt is recorded", || {
        let (env, url, token) = (env, &url, &token);
        async move {
            let record = &env.get(url, Some(token)).await.body["items"][0];
            record["attempts"] == 1 && record["delivery_attempts"][0]["finished_at"].is_string()
        }
    })
    .await;
    env.get(&url, Some(&token)).await.body["items"][0].clone()
}

fn port_of(receiver: &Receiver) -> u16 {
    reqwest::Url::parse(&receiver.url)
        .unwrap()
        .port()
        .expect("the receiver has a port")
}

/// Every address form of issue 10 item 7 is refused at creation with 400 `invalid_notify_url`
/// (field `notify_url`), and the merchant-default control refuses them too.
#[tokio::test]
async fn non_public_address_forms_are_refused_at_creation() {
    let env = strict().await;
    let token = env.merchant_token().await;
    let refused = [
        "https://[64:ff9b::a00:1]/n",         // NAT64 of 10.0.0.1
        "https://[64:ff9b::7f00:1]/n",        // NAT64 of 127.0.0.1
        "https://[64:ff9b:1::808:808]/n",     // local-use NAT64
        "https://[2002:c0a8:101::1]/n",       // 6to4 of 192.168.1.1
        "https://[2002:7f00:1::1]/n",         // 6to4 of 127.0.0.1
        "https://[::ffff:127.0.0.1]/n",       // IPv4-mapped loopback
        "https://[::ffff:169.254.169.254]/n", // IPv4-mapped link-local
        "https://[::10.0.0.1]/n",             // IPv4-compatible
        "https://[fec0::1]/n",                // site-local
        "https://[ff02::1]/n",                // multicast
        "https://[2001:db8::1]/n",            // documentation
        "https://[2001::1]/n",                // Teredo
        "https://[::]/n",                     // unspecified
        "https://192.0.0.8/n",                // IETF protocol assignments
        "https://192.0.2.1/n",                // TEST-NET-1
        "https://198.18.0.1/n",               // benchmarking
        "https://198.51.100.1/n",             // TEST-NET-2
        "https://203.0.113.1/n",              // TEST-NET-3
        "https://224.0.0.1/n",                // multicast
        "https://240.0.0.1/n",                // reserved
        "https://255.255.255.255/n",          // broadcast
        "https://0.0.0.0/n",                  // unspecified
        "https://100.64.0.1/n",               // CGNAT
        "https://LOCALHOST./n",               // trailing dot
        "https://hooks.localhost./n",
        "https://0x7f000001/n", // hexadecimal 127.0.0.1
        "https://2130706433/n", // decimal 127.0.0.1
        "https://0177.0.0.1/n", // octal 127.0.0.1
        "https://127.0.0.1./n",
        "https://nas.home.arpa/n",
        "https://db.internal./n",
        "https://printer.local/n",
    ];
    for (index, url) in refused.into_iter().enumerate() {
        let answer = create(&env, &token, &with_notify(&format!("r-{index}"), url)).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{url}: {}",
            answer.text
        );
        assert_eq!(answer.error(), "invalid_notify_url", "{url}");
        assert_eq!(answer.body["field"], "notify_url", "{url}");
        let default = env
            .put_control(
                &format!("/merchants/{}/notification-default", seed::MERCHANT_NO),
                &json!({ "url": url, "secret": SECRET, "enabled": true }),
            )
            .await;
        assert_eq!(default.status, StatusCode::BAD_REQUEST, "default {url}");
    }
    for (index, url) in [
        "https://hooks.shop.example/n",
        "https://[64:ff9b::808:808]/n",
        "https://[2002:808:808::1]/n",
        "https://[::ffff:8.8.8.8]/n",
        "https://[2606:4700::1]/n",
        "https://8.8.8.8/n",
    ]
    .into_iter()
    .enumerate()
    {
        let answer = create(&env, &token, &with_notify(&format!("ok-{index}"), url)).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{url}: {}", answer.text);
    }
}

/// DNS rebinding: a public-looking name accepted at creation that resolves to loopback or a
/// private address at delivery is never connected to; the attempt fails with a `refused:`
/// `last_error` naming the address. (`PUT /_sandbox/dns/{host}` pins the name offline.)
#[tokio::test]
async fn names_resolving_to_non_public_addresses_are_refused_at_delivery() {
    let env = strict().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let port = port_of(&receiver);
    pin(&env, "rebind.shop.example", &["127.0.0.1"]).await;
    pin(&env, "mixed.shop.example", &["8.8.8.8", "10.1.2.3"]).await;
    for (key, host, address) in [
        ("rebind", "rebind.shop.example", "127.0.0.1"),
        ("mixed", "mixed.shop.example", "10.1.2.3"),
    ] {
        let url = format!("https://{host}:{port}/hook");
        let order = order_no(&created(&env, &token, &with_notify(key, &url)).await);
        let record = first_attempt(&env, &order).await;
        let error = record["last_error"].as_str().unwrap_or_default();
        assert!(
            error.starts_with("refused:") && error.contains(address),
            "{record}"
        );
        assert!(record["last_http_status"].is_null(), "{record}");
        assert_ne!(record["delivery_status"], "delivered");
    }
    assert_eq!(receiver.count(), 0, "nothing reached the loopback receiver");

    // With the loopback switch, loopback is allowed but a private address still is not.
    let env = Env::start().await;
    let token = env.merchant_token().await;
    pin(&env, "private.shop.example", &["192.168.1.20"]).await;
    let url = format!("https://private.shop.example:{port}/hook");
    let order = order_no(&created(&env, &token, &with_notify("private", &url)).await);
    let record = first_attempt(&env, &order).await;
    assert!(
        record["last_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("refused:") && e.contains("192.168.1.20")),
        "{record}"
    );
}

/// `allow_loopback_notify` (the default) accepts loopback receivers at creation and delivers to
/// them, also through a name resolving to loopback; without it both creation and delivery
/// refuse.
#[tokio::test]
async fn the_loopback_switch_governs_creation_and_delivery_alike() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let port = port_of(&receiver);
    pin(&env, "hooks.localhost", &["127.0.0.1"]).await;
    for (key, url) in [
        ("literal", receiver.url.clone()),
        ("name", format!("http://hooks.localhost:{port}/hook")),
        (
            "trailing-dot",
            format!("http://hooks.localhost.:{port}/hook"),
        ),
    ] {
        created(&env, &token, &with_notify(key, &url)).await;
    }
    receiver.wait_for(3).await;

    let env = strict().await;
    let token = env.merchant_token().await;
    for (index, url) in [
        receiver.url.clone(),
        format!("http://hooks.localhost:{port}/hook"),
        format!("https://localhost:{port}/hook"),
        format!("https://[::1]:{port}/hook"),
    ]
    .into_iter()
    .enumerate()
    {
        let answer = create(&env, &token, &with_notify(&format!("s-{index}"), &url)).await;
        assert_eq!(answer.error(), "invalid_notify_url", "{url}");
    }
    assert_eq!(receiver.count(), 3);
}

/// The DNS control refuses what is not an address; `DELETE /_sandbox/dns` and reset clear pins.
#[tokio::test]
async fn dns_control_validates_and_clears() {
    let env = Env::start().await;
    let bad = env
        .put_control("/dns/x.example", &json!({ "addresses": ["not-an-ip"] }))
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.body["field"], "addresses");
    pin(&env, "X.Example.", &["10.0.0.1"]).await;
    assert!(env.sandbox.shared().dns.get("x.example").is_some());
    let cleared = env.http.delete(env.control("/dns")).send().await.unwrap();
    assert_eq!(cleared.status(), StatusCode::OK);
    assert!(env.sandbox.shared().dns.get("x.example").is_none());
    pin(&env, "y.example", &["10.0.0.1"]).await;
    env.post_empty(&env.control("/reset"), None).await;
    assert!(env.sandbox.shared().dns.get("y.example").is_none());
}
