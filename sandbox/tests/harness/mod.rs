//! Shared helpers of the sandbox's own integration tests: start a sandbox, get tokens, call it
//! over real HTTP with reqwest (ring TLS provider, trusting only the sandbox CA when given).

#![allow(dead_code)]

use std::sync::Arc;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use storefront_sandbox::{Sandbox, SandboxOptions, seed};

/// A running sandbox and an HTTP client for it.
pub struct Env {
    /// The sandbox.
    pub sandbox: Sandbox,
    /// A plain reqwest client (ring provider; trusts only the sandbox CA under TLS).
    pub http: reqwest::Client,
}

/// An HTTP answer: status, headers and the body parsed as JSON (`Value::Null` when not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Answer {
    /// The `error` code of an error body.
    pub fn error(&self) -> &str {
        self.body["error"].as_str().unwrap_or("")
    }
}

/// A reqwest client using ring; with `ca_pem`, it trusts only that CA.
pub fn http_client(ca_pem: Option<&str>) -> reqwest::Client {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = ca_pem {
        for cert in rustls::pki_types::pem::PemObject::pem_slice_iter(pem.as_bytes()) {
            roots
                .add(cert.expect("the CA PEM parses"))
                .expect("the CA is a valid root");
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("the client builds")
}

impl Env {
    /// Starts a plain-HTTP sandbox.
    pub async fn start() -> Env {
        Self::start_with(SandboxOptions::default()).await
    }

    /// Starts a sandbox with options.
    pub async fn start_with(options: SandboxOptions) -> Env {
        let sandbox = Sandbox::start_with(options)
            .await
            .expect("the sandbox starts");
        let http = http_client(sandbox.ca_pem().as_deref());
        Env { sandbox, http }
    }

    /// `{base_url}` + path.
    pub fn api(&self, path: &str) -> String {
        format!("{}{path}", self.sandbox.base_url())
    }

    /// Control URL + path.
    pub fn control(&self, path: &str) -> String {
        format!("{}{path}", self.sandbox.control_url())
    }

    /// A client-credentials token (all approved scopes when `scope` is empty).
    pub async fn client_token(&self, client_id: &str, secret: &str, scope: &str) -> String {
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("client_id", client_id),
            ("client_secret", secret),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        let response = self
            .http
            .post(self.sandbox.token_endpoint())
            .form(&form)
            .send()
            .await
            .expect("the token request is answered");
        assert_eq!(response.status(), StatusCode::OK, "token for {client_id}");
        let body: Value = response.json().await.unwrap();
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// The main merchant client's token with every approved scope.
    pub async fn merchant_token(&self) -> String {
        self.client_token(seed::MERCHANT_CLIENT_ID, seed::MERCHANT_CLIENT_SECRET, "")
            .await
    }

    /// A user token for `user` through `client_id` (all approved scopes when `scope` is empty).
    pub async fn user_token_via(&self, user: &str, client_id: &str, scope: &str) -> String {
        let mut body = json!({ "client_id": client_id });
        if !scope.is_empty() {
            body["scope"] = scope.into();
        }
        let answer = self
            .post(&self.control(&format!("/users/{user}/tokens")), None, &body)
            .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.body["access_token"].as_str().unwrap().to_owned()
    }

    /// A user token for `user` through the catalog client, all scopes.
    pub async fn user_token(&self, user: &str) -> String {
        self.user_token_via(user, seed::CATALOG_CLIENT_ID, "").await
    }

    /// GET with an optional bearer token.
    pub async fn get(&self, url: &str, token: Option<&str>) -> Answer {
        let mut request = self.http.get(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        answer(request.send().await.expect("the GET is answered")).await
    }

    /// POST a JSON body with an optional bearer token.
    pub async fn post(&self, url: &str, token: Option<&str>, body: &Value) -> Answer {
        let mut request = self.http.post(url).json(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        answer(request.send().await.expect("the POST is answered")).await
    }

    /// POST without a body.
    pub async fn post_empty(&self, url: &str, token: Option<&str>) -> Answer {
        let mut request = self.http.post(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        answer(request.send().await.expect("the POST is answered")).await
    }

    /// PUT a JSON body to a control endpoint (`path` under the control prefix).
    pub async fn put_control(&self, path: &str, body: &Value) -> Answer {
        let request = self.http.put(self.control(path)).json(body);
        answer(request.send().await.expect("the PUT is answered")).await
    }

    /// Moves the sandbox clock through the control endpoint.
    pub async fn advance(&self, seconds: i64) {
        let answer = self
            .post(
                &self.control("/clock/advance"),
                None,
                &json!({ "seconds": seconds }),
            )
            .await;
        assert_eq!(answer.status, StatusCode::OK);
    }

    /// Creates a catalog order as `token`; returns the answer.
    pub async fn create_order(&self, token: &str, body: Value) -> Answer {
        self.post(&self.api("/openapi/v1/orders"), Some(token), &body)
            .await
    }

    /// Creates an order that must succeed; returns its number.
    pub async fn order(&self, token: &str, gd_no: &str, quantity: i64, payment_no: &str) -> String {
        let answer = self
            .create_order(
                token,
                json!({"gd_no": gd_no, "quantity": quantity, "payment_no": payment_no}),
            )
            .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.body["order_no"].as_str().unwrap().to_owned()
    }
}

/// Reads a response into an [`Answer`].
pub async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        body,
        text,
    }
}

/// A fresh scratch directory under the system temp dir, unique to this process and moment.
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("sbx-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A standalone sandbox process, killed and reaped on drop, so a failing test never leaves the
/// binary running.
pub struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The standalone binary of this package.
pub const BINARY: &str = env!("CARGO_BIN_EXE_storefront-sandbox");

/// The standalone binary, started on an ephemeral port and killed on drop, with its ready file
/// and an HTTP client for it (for tests that must run against the binary itself).
pub struct Binary {
    _running: Running,
    /// The ready file the binary wrote.
    pub ready_path: std::path::PathBuf,
    /// The ready file's content.
    pub ready: Value,
    /// A plain HTTP client.
    pub http: reqwest::Client,
}

impl Binary {
    /// Starts the binary with `--port 0 --ready-file` in a scratch directory named after `name`.
    pub fn start(name: &str) -> Binary {
        let dir = scratch_dir(name);
        let ready_path = dir.join("ready.json");
        let child = std::process::Command::new(BINARY)
            .args(["--port", "0", "--ready-file"])
            .arg(&ready_path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the binary starts");
        let running = Running(child);
        let ready = loop {
            if let Ok(text) = std::fs::read_to_string(&ready_path) {
                break serde_json::from_str::<Value>(&text).expect("the ready file is JSON");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        Binary {
            _running: running,
            ready_path,
            ready,
            http: http_client(None),
        }
    }

    /// The origin it listens on.
    pub fn origin(&self) -> &str {
        self.ready["origin"].as_str().unwrap()
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        url::Url::parse(self.origin()).unwrap().port().unwrap()
    }

    /// Control URL + path.
    pub fn control(&self, path: &str) -> String {
        format!("{}{path}", self.ready["control_url"].as_str().unwrap())
    }

    /// `{base_url}` + path.
    pub fn api(&self, path: &str) -> String {
        format!("{}{path}", self.ready["base_url"].as_str().unwrap())
    }

    /// The main merchant client's token.
    pub async fn merchant_token(&self) -> String {
        let answer = answer(
            self.http
                .post(self.ready["token_endpoint"].as_str().unwrap())
                .form(&[
                    ("grant_type", "client_credentials"),
                    ("client_id", seed::MERCHANT_CLIENT_ID),
                    ("client_secret", seed::MERCHANT_CLIENT_SECRET),
                ])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
        answer.body["access_token"].as_str().unwrap().to_owned()
    }

    /// Creates a card payment; returns its create answer.
    pub async fn create_payment(&self, token: &str, key: &str) -> Value {
        let answer = answer(
            self.http
                .post(self.api("/openapi/v1/merchant-payments"))
                .bearer_auth(token)
                .json(&json!({
                    "external_reference": format!("order-{key}"),
                    "idempotency_key": key,
                    "amount_minor": 1250,
                    "currency": "USD",
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
        answer.body
    }

    /// The payment's status as the service API reports it.
    pub async fn status_of(&self, token: &str, order_no: &str) -> String {
        let answer = answer(
            self.http
                .get(self.api(&format!("/openapi/v1/merchant-payments/{order_no}")))
                .bearer_auth(token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
        answer.body["status"].as_str().unwrap().to_owned()
    }

    /// The sandbox clock's offset in seconds.
    pub async fn clock_offset(&self) -> i64 {
        let answer = answer(self.http.get(self.control("/clock")).send().await.unwrap()).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
        answer.body["offset_seconds"].as_i64().unwrap()
    }
}
