//! Transport security: HTTPS with only the given roots, the platform verifier by default, and
//! plain HTTP refused unless loopback is explicitly allowed.

mod common;

use storefront::{Client, Config, ErrorKind, TransportKind};
use storefront_sandbox::{Sandbox, SandboxOptions, seed};

async fn tls_sandbox() -> Sandbox {
    Sandbox::start_with(SandboxOptions {
        tls: true,
        ..Default::default()
    })
    .await
    .unwrap()
}

fn config(sandbox: &Sandbox) -> Config {
    Config::new(
        sandbox.base_url(),
        sandbox.token_endpoint(),
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
    )
}

/// Issue rule: when the caller supplies a CA, only those roots are trusted — the sandbox's
/// generated CA makes HTTPS work end to end with the ring provider.
#[tokio::test]
async fn https_with_the_given_ca_works() {
    let sandbox = tls_sandbox().await;
    assert!(sandbox.base_url().starts_with("https://"));
    let client = Client::new(config(&sandbox).with_root_ca_pem(sandbox.ca_pem().unwrap())).unwrap();
    let profile = client.merchant_profile().await.unwrap();
    assert_eq!(profile.merchant_no, seed::MERCHANT_NO);
}

/// Issue rule: without a CA the platform verifier decides, and it does not trust the sandbox's
/// private CA: a TLS transport error, nothing sent, and not retried (it would not heal).
#[tokio::test]
async fn platform_verifier_rejects_an_unknown_ca() {
    let sandbox = tls_sandbox().await;
    let client = Client::new(config(&sandbox)).unwrap();
    let err = client.merchant_profile().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport, "{err:?}");
    assert!(
        matches!(
            err,
            storefront::Error::Transport {
                kind: TransportKind::Tls,
                ..
            }
        ),
        "{err:?}"
    );
}

/// Config rule: HTTPS only; plain HTTP only for loopback hosts and only when enabled.
#[tokio::test]
async fn plain_http_needs_explicit_loopback_permission() {
    let sandbox = Sandbox::start().await.unwrap();
    let err = Client::new(config(&sandbox)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    let client = Client::new(config(&sandbox).with_insecure_loopback(true)).unwrap();
    client.merchant_profile().await.unwrap();
}
