//! The SDK's `notify_url` pre-check refuses locally (typed validation error, field
//! `notify_url`, nothing sent) every target the service refuses (contract, Events: "`notify_url`:
//! public HTTPS only ... no private-network address"; Errors: `invalid_notify_url`), checked
//! against the sandbox running as the real service does (HTTPS, loopback receivers refused).

mod common;

use serde_json::json;
use storefront::{Client, Config, CreateMerchantPayment, ErrorKind, MinorAmount};
use storefront_sandbox::{Sandbox, SandboxOptions, seed};

const SECRET: &str = "notify-secret-0123456789abcdef-0123";

/// Every address form of issue 10 item 7 (and the older ones), each refused by the service.
const REFUSED: &[&str] = &[
    "https://[64:ff9b::a00:1]/n",
    "https://[64:ff9b::7f00:1]/n",
    "https://[64:ff9b:1::808:808]/n",
    "https://[2002:c0a8:101::1]/n",
    "https://[2002:7f00:1::1]/n",
    "https://[::ffff:127.0.0.1]/n",
    "https://[::ffff:10.0.0.1]/n",
    "https://[::10.0.0.1]/n",
    "https://[::127.0.0.1]/n",
    "https://[fec0::1]/n",
    "https://[fe80::1]/n",
    "https://[fd00::1]/n",
    "https://[ff02::1]/n",
    "https://[2001:db8::1]/n",
    "https://[2001::1]/n",
    "https://[::]/n",
    "https://[::1]/n",
    "https://192.0.0.8/n",
    "https://192.0.2.1/n",
    "https://198.18.0.1/n",
    "https://198.51.100.1/n",
    "https://203.0.113.1/n",
    "https://224.0.0.1/n",
    "https://240.0.0.1/n",
    "https://255.255.255.255/n",
    "https://0.0.0.0/n",
    "https://100.64.0.1/n",
    "https://169.254.169.254/n",
    "https://127.0.0.1/n",
    "https://LOCALHOST./n",
    "https://localhost/n",
    "https://hooks.localhost./n",
    "https://0x7f000001/n",
    "https://2130706433/n",
    "https://0177.0.0.1/n",
    "https://127.0.0.1./n",
    "https://intranet/n",
    "https://printer.local/n",
    "https://nas.home.arpa./n",
    "https://db.internal/n",
    " https://hooks.shop.example/n",
    "https://hooks.shop.example/a\tb",
];

/// Public targets both accept.
const ACCEPTED: &[&str] = &[
    "https://hooks.shop.example/n",
    "https://hooks.shop.example./n",
    "https://[64:ff9b::808:808]/n",
    "https://[2002:808:808::1]/n",
    "https://[::ffff:8.8.8.8]/n",
    "https://8.8.8.8/n",
];

fn request(key: &str, url: &str) -> CreateMerchantPayment {
    CreateMerchantPayment::new(
        format!("order-{key}"),
        MinorAmount::new(1250).unwrap(),
        "USD",
    )
    .with_idempotency_key(key)
    .with_notification(url, SECRET)
}

/// Table: the SDK refuses each target before sending (the sandbox's request log shows no SDK
/// create), and the sandbox refuses the same body with 400 `invalid_notify_url`; public
/// targets are accepted by both.
#[tokio::test]
async fn sdk_refuses_locally_every_notify_url_the_service_refuses() {
    let sandbox = Sandbox::start_with(SandboxOptions {
        tls: true,
        allow_loopback_notify: false,
        ..SandboxOptions::default()
    })
    .await
    .unwrap();
    let ca = sandbox.ca_pem().unwrap();
    let client = Client::new(
        Config::new(
            sandbox.base_url(),
            sandbox.token_endpoint(),
            seed::MERCHANT_CLIENT_ID,
            seed::MERCHANT_CLIENT_SECRET,
        )
        .with_root_ca_pem(ca.clone()),
    )
    .unwrap();
    let raw = common::raw_http(Some(&ca));
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", seed::MERCHANT_CLIENT_ID),
        ("client_secret", seed::MERCHANT_CLIENT_SECRET),
    ];
    let token: serde_json::Value = raw
        .post(sandbox.token_endpoint())
        .form(&form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["access_token"].as_str().unwrap().to_owned();
    let create_url = format!("{}/openapi/v1/merchant-payments", sandbox.base_url());

    for (index, url) in REFUSED.iter().enumerate() {
        let err = client
            .create_merchant_payment(&request(&format!("sdk-{index}"), url))
            .await
            .expect_err(url);
        assert_eq!(err.kind(), ErrorKind::Validation, "{url}: {err:?}");
        assert_eq!(err.field(), Some("notify_url"), "{url}: {err:?}");

        let body = json!({
            "external_reference": format!("order-raw-{index}"),
            "idempotency_key": format!("raw-{index}"),
            "amount_minor": 1250,
            "currency": "USD",
            "notify_url": url,
            "notify_secret": SECRET,
        });
        let answer = raw
            .post(&create_url)
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 400, "sandbox {url}");
        let answer: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(answer["error"], "invalid_notify_url", "sandbox {url}");
    }
    let log: Vec<serde_json::Value> = raw
        .get(format!(
            "{}/requests?method=POST&path=/api/openapi/v1/merchant-payments",
            sandbox.control_url()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        log.len(),
        REFUSED.len(),
        "only the raw requests reached the service"
    );

    for (index, url) in ACCEPTED.iter().enumerate() {
        client
            .create_merchant_payment(&request(&format!("ok-{index}"), url))
            .await
            .unwrap_or_else(|e| panic!("{url}: {e:?}"));
    }
}

/// With `allow_insecure_loopback` (sandbox development), loopback receivers are accepted, also
/// written with a trailing dot or as a `*.localhost` name; private targets still are not.
#[tokio::test]
async fn loopback_receivers_only_with_allow_insecure_loopback() {
    let allowed = [
        "http://127.0.0.1:9000/hook",
        "http://localhost:9000/hook",
        "http://LOCALHOST.:9000/hook",
        "https://hooks.localhost/hook",
        "http://[::1]:9000/hook",
    ];
    for url in allowed {
        let r = request("k", url);
        assert!(r.validate(true).is_ok(), "{url}");
        let err = r.validate(false).unwrap_err();
        assert_eq!(err.field(), Some("notify_url"), "{url}");
    }
    for url in [
        "http://10.0.0.1/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[64:ff9b::7f00:1]/hook",
        "http://hooks.shop.example/hook",
    ] {
        let err = request("k", url).validate(true).unwrap_err();
        assert_eq!(err.field(), Some("notify_url"), "{url}");
    }
}
