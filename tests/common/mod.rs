//! Shared harness of the integration tests: an in-process sandbox, an SDK client for the seeded
//! merchant, and helpers for the sandbox-only control endpoints (clock, buyers, faults, request
//! log). Every test runs over real HTTP against its own sandbox.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use storefront::{Client, Config, RetryPolicy};
use storefront_sandbox::{Sandbox, SandboxOptions, seed};

#[allow(unused_imports)]
pub use storefront_sandbox::seed as s;

pub mod browser;
pub mod hook;

/// A sandbox plus a client of the seeded merchant.
pub struct Harness {
    pub sandbox: Sandbox,
    pub client: Client,
    http: reqwest::Client,
}

/// A plain reqwest client for the control endpoints (ring provider, given roots only).
pub fn raw_http(ca_pem: Option<&str>) -> reqwest::Client {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = ca_pem {
        use rustls::pki_types::{CertificateDer, pem::PemObject};
        for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .unwrap()
}

/// The merchant client's configuration for this sandbox: fast retries so tests stay quick.
pub fn merchant_config(sandbox: &Sandbox) -> Config {
    Config::new(
        sandbox.base_url(),
        sandbox.token_endpoint(),
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
    )
    .with_userinfo_endpoint(sandbox.userinfo_endpoint())
    .with_insecure_loopback(true)
    .with_retry_policy(RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(200),
        max_retry_after: Duration::from_secs(5),
    })
}

impl Harness {
    /// Sandbox over plain HTTP and the merchant client.
    pub async fn start() -> Harness {
        Self::start_with(|c| c).await
    }

    /// Same, with the configuration adjusted by `adjust`.
    pub async fn start_with(adjust: impl FnOnce(Config) -> Config) -> Harness {
        let sandbox = Sandbox::start_with(SandboxOptions::default())
            .await
            .expect("sandbox starts");
        let client = Client::new(adjust(merchant_config(&sandbox))).expect("client builds");
        Harness {
            http: raw_http(None),
            sandbox,
            client,
        }
    }

    /// A sandbox started with `options`, and the client adjusted by `adjust`.
    pub async fn start_with_options(
        options: SandboxOptions,
        adjust: impl FnOnce(Config) -> Config,
    ) -> Harness {
        let sandbox = Sandbox::start_with(options).await.expect("sandbox starts");
        let client = Client::new(adjust(merchant_config(&sandbox))).expect("client builds");
        Harness {
            http: raw_http(None),
            sandbox,
            client,
        }
    }

    /// Another client on the same sandbox.
    pub fn client_with(&self, adjust: impl FnOnce(Config) -> Config) -> Client {
        Client::new(adjust(merchant_config(&self.sandbox))).expect("client builds")
    }

    /// Sends a control request and returns its JSON (panics on a non-2xx answer).
    pub async fn control(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.sandbox.control_url());
        let mut rb = match method {
            "POST" => self.http.post(&url),
            "PUT" => self.http.put(&url),
            "DELETE" => self.http.delete(&url),
            _ => self.http.get(&url),
        };
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.expect("control request");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        assert!(
            status.is_success(),
            "control {method} {path}: {status} {text}"
        );
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// A user token of a seeded user, minted through the merchant client.
    pub async fn user_token(&self, user: &str) -> String {
        self.user_token_via(user, seed::MERCHANT_CLIENT_ID).await
    }

    /// A user token of a seeded user, minted through the given client.
    pub async fn user_token_via(&self, user: &str, client_id: &str) -> String {
        let v = self
            .control(
                "POST",
                &format!("/users/{user}/tokens"),
                Some(json!({ "client_id": client_id })),
            )
            .await;
        v["access_token"].as_str().expect("access_token").to_owned()
    }

    /// Injects a fault (see the sandbox README) on `method` + exact `path` (under the origin).
    pub async fn fault(&self, spec: Value) {
        self.control("POST", "/faults", Some(spec)).await;
    }

    /// The API path of a business route (`/api/openapi/v1/...`).
    pub fn api_path(&self, route: &str) -> String {
        format!("{}{route}", seed::API_PREFIX)
    }

    /// Requests the sandbox received.
    pub async fn requests(&self) -> Vec<Value> {
        let v = self.control("GET", "/requests", None).await;
        match v {
            Value::Array(items) => items,
            Value::Object(mut o) => match o.remove("items").or_else(|| o.remove("requests")) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// Received requests with this method and exact path.
    pub async fn requests_to(&self, method: &str, path: &str) -> Vec<Value> {
        self.requests()
            .await
            .into_iter()
            .filter(|r| r["method"] == method && r["path"] == path)
            .collect()
    }

    /// Moves the sandbox clock forward.
    pub async fn advance_clock(&self, seconds: u64) {
        self.control(
            "POST",
            "/clock/advance",
            Some(json!({ "seconds": seconds })),
        )
        .await;
    }

    /// Notification delivery attempts the sandbox made.
    pub async fn notification_attempts(&self) -> Vec<Value> {
        match self.control("GET", "/notifications/attempts", None).await {
            Value::Array(items) => items,
            Value::Object(mut o) => match o.remove("items").or_else(|| o.remove("attempts")) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }
}
