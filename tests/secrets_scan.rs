//! Secrets scan (issue 10): both flows run with a TRACE subscriber on every crate; every tracing
//! span and event, the `Debug` (plain and `{:#?}`) and `Display` of every public value the SDK
//! handed back, of every kind of error it can be made to return, the sandbox's request log and
//! its notification delivery log are scanned for the client secret, every access token (client
//! and user), every notification secret, every checkout token and every full checkout URL.
//!
//! The scan also catches partial leaks: any 16-byte piece of a secret (and of its
//! percent-encoded and HTTP Basic forms) counts as a leak. Its self-check plants secrets in
//! control strings and requires the scanner to find them, so a scanner that finds nothing
//! cannot pass.
//!
//! `log` records (reqwest and rustls log through the `log` crate, not `tracing`) are not seen
//! here: the test crate has no `log` dependency to install a logger with.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use common::{Harness, merchant_config, raw_http, s};
use futures_util::TryStreamExt;
use serde_json::json;
use storefront::{
    Client, Config, CreateMerchantPayment, CreateOrderRequest, Error, ErrorKind,
    ListMerchantPaymentsQuery, MinorAmount, Operation, OtherIpuForm, PaymentExpectation,
    ProductQuery, RetryPolicy, Secret, StatusNotification, TestSigner, TokenFuture, UserToken,
    UserTokenProvider, WebhookError, WebhookVerifier, status_version_decision,
};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};

// ---------------------------------------------------------------------------------------------
// A TRACE subscriber for every target, recording every span, span record and event as text.

/// Everything the subscriber saw, one line per span, span record or event.
#[derive(Clone, Default)]
struct TraceLog(Arc<Mutex<Vec<String>>>);

struct Capture {
    log: TraceLog,
    next_id: AtomicU64,
}

/// Writes ` name=value` for every field (both `Display` and `Debug` of recorded errors).
struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let _ = write!(self.0, " {}={}", field.name(), value);
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let _ = write!(self.0, " {}={} / {:?}", field.name(), value, value);
        let mut source = value.source();
        while let Some(s) = source {
            let _ = write!(self.0, " / caused by {s} / {s:?}");
            source = s.source();
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

fn describe(meta: &Metadata<'_>) -> String {
    format!(
        "{} {} {} ({}:{})",
        meta.level(),
        meta.target(),
        meta.name(),
        meta.file().unwrap_or("?"),
        meta.line().unwrap_or(0)
    )
}

impl Subscriber for Capture {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::always()
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::TRACE)
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let mut line = format!("span#{id} {}", describe(attrs.metadata()));
        attrs.record(&mut Fields(&mut line));
        self.log.0.lock().unwrap().push(line);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut line = format!("record span#{}", span.into_u64());
        values.record(&mut Fields(&mut line));
        self.log.0.lock().unwrap().push(line);
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = format!("event {}", describe(event.metadata()));
        event.record(&mut Fields(&mut line));
        self.log.0.lock().unwrap().push(line);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Installs the capturing subscriber as the global default (once per test binary), so events
/// from every thread (runtime workers, blocking pools, the in-process sandbox) are recorded.
fn trace_log() -> &'static TraceLog {
    static LOG: OnceLock<TraceLog> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = TraceLog::default();
        tracing::subscriber::set_global_default(Capture {
            log: log.clone(),
            next_id: AtomicU64::new(0),
        })
        .expect("no other global subscriber in this test binary");
        // reqwest, hyper and rustls also write through the `log` crate: capture those records too.
        log::set_boxed_logger(Box::new(LogCapture(log.clone())))
            .expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Trace);
        log
    })
}

/// Records every `log` crate record (dependencies' logging) into the same trace log.
struct LogCapture(TraceLog);

impl log::Log for LogCapture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let line = format!(
            "log {} {} {}",
            record.level(),
            record.target(),
            record.args()
        );
        self.0.0.lock().unwrap().push(line);
    }

    fn flush(&self) {}
}

// ---------------------------------------------------------------------------------------------
// The scanner.

/// Length of the pieces of a secret that count as a leak on their own.
const PIECE: usize = 16;

/// The forbidden values and how to find them.
#[derive(Default)]
struct Scanner {
    /// (what, full value) of values found only whole (the checkout URL: its origin is public).
    whole: Vec<(String, String)>,
    /// Every `PIECE`-byte window of every secret form, to what it belongs.
    pieces: HashMap<Vec<u8>, String>,
    /// (what, value) of every forbidden value, for the report and self-checks.
    values: Vec<(String, String)>,
}

fn percent_encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn base64(input: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl Scanner {
    /// A secret: found whole or by any `PIECE`-byte piece, also percent-encoded.
    fn secret(&mut self, what: &str, value: &str) {
        assert_non_trivial(what, value);
        if self.values.iter().any(|(_, v)| v == value) {
            return;
        }
        self.values.push((what.to_owned(), value.to_owned()));
        for form in [value.to_owned(), percent_encoded(value)] {
            for piece in form.as_bytes().windows(PIECE) {
                self.pieces.insert(piece.to_vec(), what.to_owned());
            }
        }
    }

    /// A value that is forbidden only as a whole (its public parts, such as an origin, may show).
    fn whole(&mut self, what: &str, value: &str) {
        assert_non_trivial(what, value);
        if self.values.iter().any(|(_, v)| v == value) {
            return;
        }
        self.values.push((what.to_owned(), value.to_owned()));
        self.whole.push((what.to_owned(), value.to_owned()));
        self.whole
            .push((format!("{what} (percent-encoded)"), percent_encoded(value)));
    }

    /// The client secret and its HTTP Basic form (`base64(client_id:secret)`).
    fn client_credentials(&mut self, what: &str, client_id: &str, secret: &str) {
        self.secret(what, secret);
        let basic = base64(format!("{client_id}:{secret}").as_bytes());
        // The Basic form's first bytes only encode the (public) client id.
        let skip = (client_id.len() + 1) / 3 * 4;
        self.secret(&format!("{what} (HTTP Basic form)"), &basic[skip..]);
    }

    /// What in `text` is forbidden (empty when clean).
    fn leaks(&self, text: &str) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        for piece in text.as_bytes().windows(PIECE) {
            if let Some(what) = self.pieces.get(piece) {
                found.insert(what.clone());
            }
        }
        for (what, value) in &self.whole {
            if text.contains(value.as_str()) {
                found.insert(what.clone());
            }
        }
        found
    }
}

fn assert_non_trivial(what: &str, value: &str) {
    assert!(
        value.len() >= PIECE,
        "{what} is too short to scan for: {value:?}"
    );
    assert!(
        !value.contains("REDACTED") && !value.contains("redacted"),
        "{what} is a redaction marker"
    );
    assert!(
        value.bytes().collect::<BTreeSet<_>>().len() >= 8,
        "{what} is not a distinctive value"
    );
}

/// Labelled texts to scan.
#[derive(Default)]
struct Texts {
    items: Vec<(String, String)>,
    /// How many texts of each source.
    counts: BTreeMap<&'static str, usize>,
}

impl Texts {
    fn add(&mut self, source: &'static str, label: impl Into<String>, text: impl Into<String>) {
        *self.counts.entry(source).or_default() += 1;
        self.items
            .push((format!("{source}: {}", label.into()), text.into()));
    }

    /// `{:?}` and `{:#?}`.
    fn debug(&mut self, label: &str, value: &dyn fmt::Debug) {
        self.add("debug", label, format!("{value:?}"));
        self.add("debug", format!("{label} (pretty)"), format!("{value:#?}"));
    }

    /// `{}`.
    fn display(&mut self, label: &str, value: &dyn fmt::Display) {
        self.add("display", label, value.to_string());
    }

    /// `{:?}`, `{:#?}`, `{}` and the error's sources.
    fn error(&mut self, label: &str, error: &(dyn std::error::Error + 'static)) {
        self.debug(label, &error);
        self.display(label, &error);
        let mut source = error.source();
        while let Some(s) = source {
            self.add("error source", label, format!("{s} / {s:?}"));
            source = s.source();
        }
    }
}

/// Fails with every leak found, each with where it was found.
fn assert_clean(scanner: &Scanner, texts: &Texts) {
    let mut leaks = Vec::new();
    for (label, text) in &texts.items {
        let found = scanner.leaks(text);
        if !found.is_empty() {
            let shown: String = text.chars().take(600).collect();
            leaks.push(format!("{found:?} in {label}:\n    {shown}"));
        }
    }
    assert!(
        leaks.is_empty(),
        "{} leak(s):\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Values of the flows.

const NOTIFY_SECRET: &str = "scan-notify-secret-5f0c9e27b1d84a36c2e7";
const WRONG_CLIENT_SECRET: &str = "scan-wrong-client-secret-8d41f7a2c9e0";
const BOGUS_USER_TOKEN: &str = "scan-bogus-user-token-3b9e61f0d2c7a845";
const FAKE_GRANTED_TOKEN: &str = "scan-fake-granted-token-a7c2e9f4b0d1";
const SHORT_NOTIFY_SECRET: &str = "scan-short-7e1d9a";
const SPACED_NOTIFY_SECRET: &str = "scan notify secret with spaces 4c8e2a0f9b7d";
const VERIFIER_ONLY_SECRET: &str = "scan-verifier-only-secret-1f6b3d8a0c5e9";
const DEFAULT_NOTIFY_SECRET: &str = "scan-default-notify-secret-0d7b4f92e6a1c3";

type Received = Arc<Mutex<Vec<(HeaderMap, Bytes, Result<StatusNotification, WebhookError>)>>>;

#[derive(Clone)]
struct Receiver {
    verifier: WebhookVerifier,
    received: Received,
}

async fn receive(State(r): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let verified = r.verifier.verify_headers(&headers, &body);
    let status = if verified.is_ok() {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::BAD_REQUEST
    };
    r.received.lock().unwrap().push((headers, body, verified));
    status
}

async fn start_receiver(verifier: WebhookVerifier) -> (String, Received) {
    let received: Received = Arc::default();
    let app = axum::Router::new()
        .route("/hooks/scan", axum::routing::post(receive))
        .with_state(Receiver {
            verifier,
            received: received.clone(),
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/scan", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

/// Waits until a verified `paid` notification of `order_no` arrived.
async fn wait_paid(received: &Received, order_no: &str) -> StatusNotification {
    for _ in 0..400 {
        let found = received.lock().unwrap().iter().find_map(|(_, _, v)| {
            v.as_ref()
                .ok()
                .filter(|n| n.data.order_no == order_no && n.data.status.is_paid())
                .cloned()
        });
        if let Some(n) = found {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no verified paid notification for {order_no}");
}

/// Hands out a rejected token first, then a good one (the SDK's 401 path with a provider).
struct RotatingProvider {
    first: String,
    then: String,
}

impl UserTokenProvider for RotatingProvider {
    fn user_token(&self, rejected: Option<&Secret>) -> TokenFuture<'_> {
        let value = if rejected.is_some() {
            self.then.clone()
        } else {
            self.first.clone()
        };
        Box::pin(async move { Ok(Secret::new(value)) })
    }
}

/// A provider that cannot supply a token.
struct FailingProvider;

impl UserTokenProvider for FailingProvider {
    fn user_token(&self, _: Option<&Secret>) -> TokenFuture<'_> {
        Box::pin(async { Err(Error::TokenProvider("identity provider unavailable".into())) })
    }
}

fn no_retry(c: Config) -> Config {
    c.with_retry_policy(RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    })
}

/// The token part of a checkout URL (`{origin}/checkout/{token}`).
fn checkout_token(checkout_url: &str) -> String {
    let url = url::Url::parse(checkout_url).expect("checkout_url is a URL");
    let segments: Vec<_> = url.path_segments().unwrap().collect();
    assert_eq!(segments.len(), 2, "{checkout_url}");
    assert_eq!(segments[0], "checkout");
    assert!(
        segments[1].starts_with("ct_"),
        "sandbox token form ct_<hex>"
    );
    segments[1].to_owned()
}

fn path(route: &str) -> String {
    format!("{}{route}", s::API_PREFIX)
}

/// Records a provoked error (its `Debug`, `Display` and sources) and its kind.
fn provoked(
    texts: &mut Texts,
    kinds: &mut BTreeMap<&'static str, Vec<String>>,
    label: &str,
    error: Error,
) {
    texts.error(label, &error);
    if let Some(api) = error.api() {
        texts.debug(&format!("{label} api"), api);
        texts.display(&format!("{label} api"), api);
    }
    kinds
        .entry(error.kind().as_str())
        .or_default()
        .push(label.to_owned());
}

fn webhook_error(texts: &mut Texts, label: &str, error: WebhookError) {
    texts.error(label, &error);
    texts.add("display", format!("{label} code"), error.code());
}

// ---------------------------------------------------------------------------------------------

/// Issue 10 "Secrets scan": both flows at TRACE, `Debug`/`Display` of every value and error,
/// the sandbox request log and delivery log: no secret, token, checkout token or checkout URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_flows_leak_no_secret_anywhere() {
    let trace = trace_log().clone();
    let h = Harness::start_with(|c| c.with_user_agent("secrets-scan/1")).await;
    let mut texts = Texts::default();
    let mut scanner = Scanner::default();
    let mut kinds: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    scanner.client_credentials(
        "client secret",
        s::MERCHANT_CLIENT_ID,
        s::MERCHANT_CLIENT_SECRET,
    );
    scanner.client_credentials(
        "wrong client secret",
        s::MERCHANT_CLIENT_ID,
        WRONG_CLIENT_SECRET,
    );
    for (what, value) in [
        ("notify_secret", NOTIFY_SECRET),
        ("bogus user token", BOGUS_USER_TOKEN),
        ("fake granted token", FAKE_GRANTED_TOKEN),
        ("spaced notify_secret", SPACED_NOTIFY_SECRET),
        ("verifier-only secret", VERIFIER_ONLY_SECRET),
        ("merchant default notify secret", DEFAULT_NOTIFY_SECRET),
    ] {
        scanner.secret(what, value);
    }
    // Too short to be scanned by pieces: scanned whole (it is refused before sending anyway).
    scanner
        .whole
        .push(("short notify_secret".into(), SHORT_NOTIFY_SECRET.to_owned()));

    // --- configuration and client ---------------------------------------------------------
    let config = h.client.config().clone();
    texts.debug("Config", &config);
    texts.debug("Client", &h.client);
    let config_json: Config = serde_json::from_value(json!({
        "base_url": h.sandbox.base_url(),
        "token_endpoint": h.sandbox.token_endpoint(),
        "client_id": s::MERCHANT_CLIENT_ID,
        "client_secret": s::MERCHANT_CLIENT_SECRET,
        "allow_insecure_loopback": true,
    }))
    .unwrap();
    texts.debug("Config from JSON", &config_json);
    let client_secret = config.client_secret.clone().unwrap();
    texts.debug("Config.client_secret", &client_secret);
    texts.display("Config.client_secret", &client_secret);

    // --- catalog flow -----------------------------------------------------------------------
    let granted = h.client.authenticate().await.unwrap();
    texts.debug("GrantedToken", &granted);
    let client_token = h.client.access_token().await.unwrap();
    scanner.secret("client access token", client_token.expose());
    texts.debug("access_token()", &client_token);
    texts.display("access_token()", &client_token);
    let profile = h.client.merchant_profile().await.unwrap();
    texts.debug("MerchantProfile", &profile);
    let page = h
        .client
        .list_products(&ProductQuery::default())
        .await
        .unwrap();
    texts.debug("ProductPage", &page);
    let products: Vec<_> = h
        .client
        .products_stream(ProductQuery::default())
        .try_collect()
        .await
        .unwrap();
    texts.debug("products_stream", &products);

    let alice_token = h.user_token(s::USER_ALICE).await;
    scanner.secret("user access token (alice)", &alice_token);
    let user_token = UserToken::from(alice_token.clone());
    texts.debug("UserToken::Value", &user_token);
    let alice = h.client.user(alice_token.clone());
    texts.debug("UserSession", &alice);
    let userinfo = alice.userinfo().await.unwrap();
    texts.debug("userinfo", &userinfo);
    let user_products = alice.list_products(&ProductQuery::default()).await.unwrap();
    texts.debug("user ProductPage", &user_products);
    let order_request = CreateOrderRequest::new(s::PRODUCT_BEANS, 1, s::CHANNEL_PLATFORM_COIN);
    texts.debug("CreateOrderRequest", &order_request);
    let order = alice.create_order(&order_request).await.unwrap();
    texts.debug("CreatedOrder", &order);
    let start = alice
        .start_payment(&order.order_no, s::CHANNEL_PLATFORM_COIN)
        .await
        .unwrap();
    texts.debug("PaymentStart", &start);
    let outcome = alice
        .wait_for_payment(
            &order.order_no,
            Duration::from_millis(100),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    texts.debug("PaymentWaitOutcome", &outcome);
    texts.display("PaymentStatus", &outcome.payment_status());
    texts.display("OrderStatus", &outcome.order().unwrap().status);
    texts.display("PaymentStart", &start);
    let catalog_order = alice.get_order(&order.order_no).await.unwrap();
    texts.debug("CatalogOrder", &catalog_order);
    let status = alice.payment_status(&order.order_no).await.unwrap();
    texts.debug("PaymentStatus", &status);

    // --- merchant collection ------------------------------------------------------------------
    let channels = h.client.list_channels().await.unwrap();
    texts.debug("PaymentChannel list", &channels);
    let verifier = WebhookVerifier::new([NOTIFY_SECRET]).unwrap();
    texts.debug("WebhookVerifier", &verifier);
    let (receiver_url, received) = start_receiver(verifier.clone()).await;
    // The merchant-center default notification setting (payments created without notification
    // parameters use it); receivers keep the older secret during a rotation.
    let default_verifier = WebhookVerifier::new([NOTIFY_SECRET, DEFAULT_NOTIFY_SECRET]).unwrap();
    texts.debug("WebhookVerifier (rotation)", &default_verifier);
    let (default_receiver_url, default_received) = start_receiver(default_verifier).await;
    h.control(
        "PUT",
        &format!("/merchants/{}/notification-default", s::MERCHANT_NO),
        Some(json!({"url": default_receiver_url, "enabled": true,
                    "secret": DEFAULT_NOTIFY_SECRET})),
    )
    .await;

    let amount = MinorAmount::parse_decimal("12.50", 2).unwrap();
    let reference = "scan-order-1";
    let request = CreateMerchantPayment::new(reference, amount, "USD")
        .with_description("Secrets scan order")
        .with_notification(&receiver_url, NOTIFY_SECRET)
        .with_return_url("https://merchant.example/orders/scan-order-1/return?step=done#top")
        .expect_currency_decimals(2);
    texts.debug("CreateMerchantPayment", &request);
    let created = h.client.create_merchant_payment(&request).await.unwrap();
    let order_no = created.payment.order_no.clone();
    let checkout = created.payment.checkout_url.clone().expect("checkout_url");
    let checkout_url = checkout.expose().to_owned();
    let token = checkout_token(&checkout_url);
    scanner.whole("checkout_url", &checkout_url);
    scanner.secret("checkout token", &token);
    texts.debug("CreatedMerchantPayment", &created);
    texts.debug("MerchantPayment (created)", &created.payment);
    texts.debug("CheckoutUrl", &checkout);
    texts.display("CheckoutUrl", &checkout);
    texts.display("MerchantPaymentStatus", &created.payment.status);

    // The buyer's browser on the checkout: the page with the token in the query, a Referer and
    // a Cookie carrying it, the login form; then the buyer pays (sandbox buyer-action control).
    let browser = raw_http(None);
    let page = browser
        .get(format!("{checkout_url}?from={token}"))
        .header("Referer", &checkout_url)
        .header("Cookie", format!("checkout={token}"))
        .header("X-Checkout", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let login = browser
        .post(format!("{checkout_url}/login"))
        .header("Referer", &checkout_url)
        .form(&[("user", s::USER_BOB)])
        .send()
        .await
        .unwrap();
    assert!(login.status().is_redirection() || login.status().is_success());
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/checkout/pay"),
        Some(json!({"payment_no": s::CHANNEL_CARD_USD})),
    )
    .await;
    let paid = wait_paid(&received, &order_no).await;
    texts.debug("StatusNotification", &paid);
    texts.debug("NotificationData", &paid.data);

    let expectation = PaymentExpectation {
        external_reference: reference.into(),
        amount_minor: amount,
        currency: "USD".into(),
        test_mode: false,
    };
    texts.debug("PaymentExpectation", &expectation);
    let queried = h.client.get_merchant_payment(&order_no).await.unwrap();
    expectation.check_payment(&queried).unwrap();
    assert!(queried.status.is_paid(), "{queried:?}");
    texts.debug("MerchantPayment (queried)", &queried);
    let by_reference = h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery::by_external_reference(reference))
        .await
        .unwrap();
    texts.debug("MerchantPayment list (reference)", &by_reference);
    let by_order = h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery::by_order_no(&order_no))
        .await
        .unwrap();
    texts.debug("MerchantPayment list (order_no)", &by_order);
    let records = h
        .client
        .list_notification_records(&order_no, Some(100))
        .await
        .unwrap();
    assert!(records.len() >= 2, "pending and paid records: {records:?}");
    texts.debug("DeliveryRecord list", &records);
    texts.display("DeliveryStatus", &records[0].delivery_status);
    let requeued = h
        .client
        .retry_notification(&order_no, &records[0].event_id)
        .await
        .unwrap();
    texts.debug("RetryAccepted", &requeued);

    // A payment on the merchant default notification (no per-payment parameters).
    let on_default = h
        .client
        .create_merchant_payment(&CreateMerchantPayment::new(
            "scan-order-2",
            MinorAmount::new(300).unwrap(),
            "USD",
        ))
        .await
        .unwrap();
    texts.debug("CreatedMerchantPayment (default notify)", &on_default);
    let on_default_url = on_default.payment.checkout_url.clone().unwrap();
    scanner.whole("checkout_url (2)", on_default_url.expose());
    scanner.secret(
        "checkout token (2)",
        &checkout_token(on_default_url.expose()),
    );
    h.control(
        "POST",
        &format!(
            "/merchant-payments/{}/checkout/pay",
            on_default.payment.order_no
        ),
        Some(json!({"payment_no": s::CHANNEL_CARD_USD})),
    )
    .await;
    let paid_default = wait_paid(&default_received, &on_default.payment.order_no).await;
    texts.debug("StatusNotification (default secret)", &paid_default);

    // Notification helpers with a secret.
    let signer = TestSigner::new(NOTIFY_SECRET);
    texts.debug("TestSigner", &signer);
    let (headers, body, _) = received.lock().unwrap()[0].clone();
    let event_id = headers["x-service-event-id"].to_str().unwrap().to_owned();
    let timestamp: i64 = headers["x-service-timestamp"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let resigned = signer.headers(&event_id, timestamp, &body);
    texts.debug("TestSigner headers", &resigned);

    // The remaining public types of `src/lib.rs` this run produced or takes.
    texts.debug("ProductQuery", &ProductQuery::default());
    texts.debug(
        "ListMerchantPaymentsQuery",
        &ListMerchantPaymentsQuery::by_order_no(&order_no),
    );
    let gift = products
        .iter()
        .find(|p| p.gd_no == s::PRODUCT_GIFT_CARD)
        .expect("gift card product");
    texts.debug("OtherIpuForm", &OtherIpuForm::for_product(gift).unwrap());
    texts.debug(
        "VersionDecision",
        &status_version_decision(Some(1), paid.data.status_version),
    );
    let money_error = MinorAmount::new(0).unwrap_err();
    texts.error("MoneyError", &money_error);
    texts.debug("Operation", &Operation::CreateMerchantPayment);
    texts.display("Operation", &Operation::CreateMerchantPayment);
    texts.debug(
        "TokenSubject",
        &Client::token_subject_for(Operation::CreateOrder),
    );
    texts.debug("RetryPolicy", &config.retry);

    // --- errors of every kind -----------------------------------------------------------------
    // Wrong client secret (token endpoint refuses the credentials).
    let mut wrong_config = no_retry(merchant_config(&h.sandbox));
    wrong_config.client_secret = Some(Secret::new(WRONG_CLIENT_SECRET));
    texts.debug("Config (wrong secret)", &wrong_config);
    let wrong_client = Client::new(wrong_config).unwrap();
    texts.debug("Client (wrong secret)", &wrong_client);
    provoked(
        &mut texts,
        &mut kinds,
        "wrong client secret: authenticate",
        wrong_client.authenticate().await.unwrap_err(),
    );
    provoked(
        &mut texts,
        &mut kinds,
        "wrong client secret: list_channels",
        wrong_client.list_channels().await.unwrap_err(),
    );
    // Invalid user token, fixed and from a provider (rejected, then renewed).
    let bogus = h.client.user(BOGUS_USER_TOKEN);
    texts.debug("UserSession (bogus token)", &bogus);
    provoked(
        &mut texts,
        &mut kinds,
        "invalid user token: get_order",
        bogus.get_order(&order.order_no).await.unwrap_err(),
    );
    provoked(
        &mut texts,
        &mut kinds,
        "invalid user token: userinfo",
        bogus.userinfo().await.unwrap_err(),
    );
    let rotating: Arc<dyn UserTokenProvider> = Arc::new(RotatingProvider {
        first: BOGUS_USER_TOKEN.to_owned(),
        then: alice_token.clone(),
    });
    let provided = h.client.user(rotating);
    texts.debug("UserSession (provider)", &provided);
    let renewed = provided.get_order(&order.order_no).await.unwrap();
    texts.debug("CatalogOrder (provider)", &renewed);
    let failing: Arc<dyn UserTokenProvider> = Arc::new(FailingProvider);
    texts.debug("UserToken::Provider", &UserToken::from(failing.clone()));
    provoked(
        &mut texts,
        &mut kinds,
        "token provider failure",
        h.client
            .user(failing)
            .get_order(&order.order_no)
            .await
            .unwrap_err(),
    );
    // A client token used where a user token is required.
    provoked(
        &mut texts,
        &mut kinds,
        "client token as user token",
        h.client
            .user(client_token.clone())
            .create_order(&order_request)
            .await
            .unwrap_err(),
    );
    // Validation errors, each with a secret in the request.
    for (label, bad) in [
        (
            "short notify_secret",
            CreateMerchantPayment::new("scan-bad-1", amount, "USD")
                .with_notification(&receiver_url, SHORT_NOTIFY_SECRET),
        ),
        (
            "notify_secret with whitespace",
            CreateMerchantPayment::new("scan-bad-2", amount, "USD")
                .with_notification(&receiver_url, SPACED_NOTIFY_SECRET),
        ),
        (
            "private notify_url",
            CreateMerchantPayment::new("scan-bad-3", amount, "USD")
                .with_notification("https://10.0.0.7/hook", NOTIFY_SECRET),
        ),
        (
            "notify_secret equal to the client secret",
            CreateMerchantPayment::new("scan-bad-5", amount, "USD")
                .with_notification(&receiver_url, s::MERCHANT_CLIENT_SECRET),
        ),
        (
            "notify disabled with a secret",
            CreateMerchantPayment::new("scan-bad-6", amount, "USD")
                .with_notification(&receiver_url, NOTIFY_SECRET)
                .with_notify_enabled(false),
        ),
        (
            "plain-http return_url",
            CreateMerchantPayment::new("scan-bad-7", amount, "USD")
                .with_notification(&receiver_url, NOTIFY_SECRET)
                .with_return_url("http://merchant.example/return"),
        ),
    ] {
        texts.debug(&format!("CreateMerchantPayment ({label})"), &bad);
        provoked(
            &mut texts,
            &mut kinds,
            label,
            h.client.create_merchant_payment(&bad).await.unwrap_err(),
        );
    }
    provoked(
        &mut texts,
        &mut kinds,
        "list without a filter",
        h.client
            .list_merchant_payments(&ListMerchantPaymentsQuery::default())
            .await
            .unwrap_err(),
    );
    // The returned precision differs from the expected one (the payment is created).
    provoked(
        &mut texts,
        &mut kinds,
        "response mismatch",
        h.client
            .create_merchant_payment(
                &CreateMerchantPayment::new("scan-mismatch", amount, "USD")
                    .with_notification(&receiver_url, NOTIFY_SECRET)
                    .expect_currency_decimals(3),
            )
            .await
            .unwrap_err(),
    );
    for p in h
        .client
        .list_merchant_payments(&ListMerchantPaymentsQuery::by_external_reference(
            "scan-mismatch",
        ))
        .await
        .unwrap()
    {
        if let Some(u) = &p.checkout_url {
            scanner.whole("checkout_url (mismatch)", u.expose());
            scanner.secret("checkout token (mismatch)", &checkout_token(u.expose()));
        }
    }
    // Outcome unknown: the order is created but the answer is lost; the payment start answers
    // 500 after it ran.
    h.fault(json!({"method": "POST", "path": path("/openapi/v1/orders"),
                   "after_handler": true, "drop_connection": true}))
        .await;
    provoked(
        &mut texts,
        &mut kinds,
        "outcome unknown: create_order",
        alice.create_order(&order_request).await.unwrap_err(),
    );
    let card_order = alice
        .create_order(&CreateOrderRequest::new(
            s::PRODUCT_BEANS,
            1,
            s::CHANNEL_CARD_USD,
        ))
        .await
        .unwrap();
    h.fault(json!({"method": "POST",
                   "path": path(&format!("/openapi/v1/orders/{}/payment", card_order.order_no)),
                   "after_handler": true, "status": 500}))
        .await;
    provoked(
        &mut texts,
        &mut kinds,
        "outcome unknown: start_payment",
        alice
            .start_payment(&card_order.order_no, s::CHANNEL_CARD_USD)
            .await
            .unwrap_err(),
    );
    let still_pending = alice
        .wait_for_payment(
            &card_order.order_no,
            Duration::from_millis(100),
            Duration::from_millis(350),
        )
        .await
        .unwrap();
    texts.debug("PaymentWaitOutcome::StillPending", &still_pending);
    // Transport, deadline, decode, 429, 5xx and 202 on the merchant side.
    let fragile = h.client_with(no_retry);
    let channels_path = path("/openapi/v1/merchant-payment-channels");
    h.fault(json!({"method": "GET", "path": channels_path, "drop_connection": true}))
        .await;
    provoked(
        &mut texts,
        &mut kinds,
        "dropped connection",
        fragile.list_channels().await.unwrap_err(),
    );
    h.fault(
        json!({"method": "GET", "path": channels_path, "status": 429,
                   "headers": {"Retry-After": "7"}}),
    )
    .await;
    provoked(
        &mut texts,
        &mut kinds,
        "rate limited",
        fragile.list_channels().await.unwrap_err(),
    );
    h.fault(
        json!({"method": "GET", "path": channels_path, "status": 500,
                   "body": {"error": "server_error", "error_description": "scan fault"}}),
    )
    .await;
    provoked(
        &mut texts,
        &mut kinds,
        "server error",
        fragile.list_channels().await.unwrap_err(),
    );
    h.fault(json!({"method": "GET", "path": channels_path, "malformed_body": true}))
        .await;
    provoked(
        &mut texts,
        &mut kinds,
        "malformed body",
        fragile.list_channels().await.unwrap_err(),
    );
    h.fault(
        json!({"method": "GET", "path": path(&format!("/openapi/v1/merchant-payments/{order_no}")),
                   "status": 202, "body": {"error": "provider_result_pending"}}),
    )
    .await;
    provoked(
        &mut texts,
        &mut kinds,
        "provider result pending",
        fragile.get_merchant_payment(&order_no).await.unwrap_err(),
    );
    let slow = h.client_with(|c| {
        c.with_attempt_timeout(Duration::from_millis(150))
            .with_overall_deadline(Duration::from_millis(400))
    });
    slow.authenticate().await.unwrap();
    h.fault(json!({"method": "GET", "path": channels_path, "latency_ms": 1000, "times": 5}))
        .await;
    provoked(
        &mut texts,
        &mut kinds,
        "deadline exceeded",
        slow.list_channels().await.unwrap_err(),
    );
    h.control("DELETE", "/faults", None).await;
    // The token endpoint grants a token in an undecodable answer.
    h.fault(
        json!({"method": "POST", "path": s::TOKEN_PATH, "status": 200,
                   "body": {"access_token": FAKE_GRANTED_TOKEN, "token_type": "Bearer",
                            "scope": "merchant_payments.read", "expires_in": "soon"}}),
    )
    .await;
    provoked(
        &mut texts,
        &mut kinds,
        "undecodable token answer",
        h.client_with(no_retry).authenticate().await.unwrap_err(),
    );
    h.fault(
        json!({"method": "POST", "path": s::TOKEN_PATH, "status": 400,
                   "body": {"error": "invalid_client", "error_description": "scan fault"}}),
    )
    .await;
    provoked(
        &mut texts,
        &mut kinds,
        "token endpoint 400",
        h.client_with(no_retry).authenticate().await.unwrap_err(),
    );
    // Invalid configuration carrying the secret.
    let bad_config = Config::new(
        "http://api.example/api",
        "https://auth.example/oauth/token",
        s::MERCHANT_CLIENT_ID,
        s::MERCHANT_CLIENT_SECRET,
    );
    texts.debug("Config (invalid)", &bad_config);
    provoked(
        &mut texts,
        &mut kinds,
        "invalid configuration",
        Client::new(bad_config).unwrap_err(),
    );
    // Webhook verification failures, with the genuine delivery and the notify secret.
    let stale = verifier.verify_at(
        timestamp + 3600,
        Some(&event_id),
        Some(&timestamp.to_string()),
        Some(resigned[2].1.as_str()),
        &body,
    );
    webhook_error(&mut texts, "webhook: stale", stale.unwrap_err());
    let other = WebhookVerifier::new([VERIFIER_ONLY_SECRET]).unwrap();
    texts.debug("WebhookVerifier (other secret)", &other);
    webhook_error(
        &mut texts,
        "webhook: signature mismatch",
        other.verify_headers(&headers, &body).unwrap_err(),
    );
    webhook_error(
        &mut texts,
        "webhook: no secrets",
        WebhookVerifier::new([""]).unwrap_err(),
    );
    let mut tampered = body.to_vec();
    tampered.truncate(tampered.len() / 2);
    webhook_error(
        &mut texts,
        "webhook: tampered body",
        verifier.verify_headers(&headers, &tampered).unwrap_err(),
    );
    let now = timestamp;
    let fake_body = br#"{"id":"evt_1","type":"other","api_version":1}"#;
    webhook_error(
        &mut texts,
        "webhook: invalid body",
        verifier
            .verify_at(
                now,
                Some("evt_1"),
                Some(&now.to_string()),
                Some(&signer.signature(now, fake_body)),
                fake_body,
            )
            .unwrap_err(),
    );
    let wrong_expectation = PaymentExpectation {
        amount_minor: MinorAmount::new(1).unwrap(),
        ..expectation.clone()
    };
    webhook_error(
        &mut texts,
        "webhook: expectation mismatch",
        wrong_expectation
            .check_notification(&paid.data)
            .unwrap_err(),
    );

    // Tokens the client holds at the end (renewals included).
    let final_token = h.client.access_token().await.unwrap();
    scanner.secret("client access token (end)", final_token.expose());
    let slow_token = slow.access_token().await.unwrap();
    scanner.secret("client access token (slow client)", slow_token.expose());

    // --- what the services and the receiver saw ---------------------------------------------
    let request_log = h.requests().await;
    for entry in &request_log {
        texts.add(
            "request log",
            format!("#{} {} {}", entry["seq"], entry["method"], entry["path"]),
            entry.to_string(),
        );
    }
    let attempts = h.notification_attempts().await;
    for attempt in &attempts {
        texts.add(
            "delivery log",
            format!("{} #{}", attempt["event_id"], attempt["attempt"]),
            attempt.to_string(),
        );
    }
    for (headers, body, verified) in received
        .lock()
        .unwrap()
        .iter()
        .chain(default_received.lock().unwrap().iter())
    {
        texts.add(
            "received notification",
            "headers and body",
            format!("{headers:?} {}", String::from_utf8_lossy(body)),
        );
        texts.debug("verified notification", verified);
    }
    let lines = trace.0.lock().unwrap().clone();
    for line in &lines {
        texts.add("trace", "line", line.clone());
    }

    // --- the scan must have seen something, and the sandbox did meet the secrets ------------
    let log_text = serde_json::to_string(&request_log).unwrap();
    assert!(log_text.contains("[redacted]"), "the request log redacts");
    for route in [
        s::TOKEN_PATH.to_owned(),
        path("/openapi/v1/orders"),
        path("/openapi/v1/merchant-payments"),
        "/checkout/[redacted]".to_owned(),
        "/checkout/[redacted]/login".to_owned(),
    ] {
        assert!(
            request_log.iter().any(|r| r["path"] == route.as_str()),
            "request log has {route}: {log_text}"
        );
    }
    assert!(
        lines.iter().any(|l| l.contains("storefront.request")),
        "the subscriber saw the SDK's request spans"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("event")),
        "the subscriber saw events"
    );
    assert!(attempts.len() >= 4, "delivery attempts: {attempts:?}");
    for kind in [
        ErrorKind::Api,
        ErrorKind::ProviderResultPending,
        ErrorKind::OutcomeUnknown,
        ErrorKind::Transport,
        ErrorKind::DeadlineExceeded,
        ErrorKind::Decode,
        ErrorKind::Validation,
        ErrorKind::WrongTokenSubject,
        ErrorKind::ResponseMismatch,
        ErrorKind::Config,
        ErrorKind::TokenProvider,
    ] {
        assert!(
            kinds.contains_key(kind.as_str()),
            "no {kind:?} error provoked: {kinds:?}"
        );
    }
    // The scanner finds each forbidden value when it is there (self-check on this run's values).
    for (what, value) in &scanner.values {
        let planted = format!("control line with {value} inside");
        assert!(
            !scanner.leaks(&planted).is_empty(),
            "the scanner misses {what}"
        );
    }

    let targets: BTreeSet<String> = lines
        .iter()
        .filter(|l| l.starts_with("span#") || l.starts_with("event "))
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .collect();
    println!(
        "secrets scan: {} forbidden values ({} pieces); {} texts scanned: {:?}; trace targets: {:?}; errors by kind: {:?}",
        scanner.values.len(),
        scanner.pieces.len(),
        texts.items.len(),
        texts.counts,
        targets,
        kinds
            .iter()
            .map(|(k, v)| (*k, v.len()))
            .collect::<BTreeMap<_, _>>(),
    );
    assert_clean(&scanner, &texts);
}

/// The scanner itself: non-trivial values, whole and partial matches in every form, percent-
/// encoded, in Basic form; clean text passes.
#[test]
fn scanner_finds_planted_secrets() {
    let mut scanner = Scanner::default();
    scanner.client_credentials(
        "client secret",
        s::MERCHANT_CLIENT_ID,
        s::MERCHANT_CLIENT_SECRET,
    );
    scanner.secret("notify secret", "scan notify/secret+with=specials&more!");
    scanner.whole(
        "checkout_url",
        "https://127.0.0.1:4443/checkout/ct_0123456789abcdef0123456789abcdef",
    );
    scanner.secret("checkout token", "ct_0123456789abcdef0123456789abcdef");

    let clean = "Config { client_id: \"sbx_merchant_client\", client_secret: Some(Secret([REDACTED])) } \
                 CheckoutUrl(https://127.0.0.1:4443/[REDACTED]) Authorization: Bearer [redacted]";
    assert!(
        scanner.leaks(clean).is_empty(),
        "{:?}",
        scanner.leaks(clean)
    );

    let cases = [
        (
            format!("client_secret={}", s::MERCHANT_CLIENT_SECRET),
            "client secret",
        ),
        (
            format!("half: {}", &s::MERCHANT_CLIENT_SECRET[4..24]),
            "client secret",
        ),
        (
            format!(
                "authorization: Basic {}",
                base64(
                    format!("{}:{}", s::MERCHANT_CLIENT_ID, s::MERCHANT_CLIENT_SECRET).as_bytes()
                )
            ),
            "client secret (HTTP Basic form)",
        ),
        (
            format!(
                "notify_secret={}",
                percent_encoded("scan notify/secret+with=specials&more!")
            ),
            "notify secret",
        ),
        (
            "url: https://127.0.0.1:4443/checkout/ct_0123456789abcdef0123456789abcdef".into(),
            "checkout_url",
        ),
        (
            "Referer: /checkout/ct_0123456789abcdef0123".into(),
            "checkout token",
        ),
    ];
    for (text, what) in cases {
        assert!(
            scanner.leaks(&text).contains(what),
            "{what} not found in {text:?}: {:?}",
            scanner.leaks(&text)
        );
    }
    assert_eq!(base64(b"Man"), "TWFu");
    assert_eq!(base64(b"Ma"), "TWE=");
    assert_eq!(base64(b"M"), "TQ==");

    // Forbidden values must be real secrets, not placeholders.
    for trivial in ["short", "[REDACTED] [REDACTED]", "aaaaaaaaaaaaaaaaaaaaaa"] {
        let outcome = std::panic::catch_unwind(|| {
            Scanner::default().secret("trivial", trivial);
        });
        assert!(outcome.is_err(), "{trivial:?} accepted as a secret");
    }
}

/// `Debug` and `Display` of every secret-bearing public type (from `src/lib.rs`'s re-exports),
/// constructed directly: the secret never shows, and the public parts still do.
#[test]
fn debug_and_display_of_secret_bearing_types_hide_the_secret() {
    const SECRET: &str = "debug-probe-secret-6a1f93c0e8b27d45";
    const TOKEN: &str = "debug-probe-token-0f8e2d7c6b5a4938";
    const CHECKOUT: &str = "https://pay.example/checkout/ct_9c1e5b7d3f0a2e4c6b8d0f1a3c5e7b9d";
    let mut scanner = Scanner::default();
    scanner.secret("secret", SECRET);
    scanner.secret("token", TOKEN);
    scanner.whole("checkout_url", CHECKOUT);
    scanner.secret("checkout token", "ct_9c1e5b7d3f0a2e4c6b8d0f1a3c5e7b9d");
    let mut texts = Texts::default();

    let secret = Secret::new(SECRET);
    texts.debug("Secret", &secret);
    texts.display("Secret", &secret);
    assert_eq!(secret.expose(), SECRET);
    assert_eq!(format!("{secret}"), "[REDACTED]");

    let config = Config::new(
        "https://api.example/api",
        "https://api.example/oauth/token",
        "public-client-id",
        SECRET,
    );
    texts.debug("Config", &config);
    assert!(format!("{config:?}").contains("public-client-id"));
    let config_json: Config = serde_json::from_value(json!({
        "base_url": "https://api.example/api",
        "token_endpoint": "https://api.example/oauth/token",
        "client_id": "public-client-id",
        "client_secret": SECRET,
    }))
    .unwrap();
    texts.debug("Config (JSON)", &config_json);
    let client = Client::new(config.clone()).unwrap();
    texts.debug("Client", &client);
    let session = client.user(TOKEN);
    texts.debug("UserSession", &session);
    texts.debug("UserToken::Value", &UserToken::from(TOKEN));
    texts.debug(
        "UserToken::Value (Secret)",
        &UserToken::from(Secret::new(TOKEN)),
    );

    let request = CreateMerchantPayment::new("ref-1", MinorAmount::new(1250).unwrap(), "USD")
        .with_notification("https://merchant.example/hook", SECRET)
        .with_return_url("https://merchant.example/return");
    texts.debug("CreateMerchantPayment", &request);
    assert!(format!("{request:?}").contains("ref-1"));

    let payment_json = json!({
        "order_no": "202601010000000000001", "external_reference": "ref-1", "payment_no": "",
        "amount_minor": 1250, "currency": "USD", "currency_decimals": 2, "status": "pending",
        "test_mode": false, "checkout_url": CHECKOUT,
        "return_url": "https://merchant.example/return", "expires_at": "2026-01-01T00:30:00Z"
    });
    let payment: storefront::MerchantPayment =
        serde_json::from_value(payment_json.clone()).unwrap();
    texts.debug("MerchantPayment", &payment);
    let checkout = payment.checkout_url.clone().unwrap();
    texts.debug("CheckoutUrl", &checkout);
    texts.display("CheckoutUrl", &checkout);
    assert_eq!(format!("{checkout}"), "https://pay.example/[REDACTED]");
    assert_eq!(checkout.expose(), CHECKOUT);
    let mut created_json = payment_json;
    created_json["idempotency_key"] = json!("idem-1");
    let created: storefront::CreatedMerchantPayment = serde_json::from_value(created_json).unwrap();
    texts.debug("CreatedMerchantPayment", &created);
    assert!(format!("{created:?}").contains("202601010000000000001"));

    let start: storefront::PaymentStart = serde_json::from_value(json!({
        "trade_no": "CT0011", "expire_time": 1_767_225_600,
        "redirect": format!("https://pay.example/catalog-pay/CT0011?session={TOKEN}")
    }))
    .unwrap();
    texts.debug("PaymentStart", &start);

    let verifier = WebhookVerifier::new([SECRET, "second-debug-probe-secret-77aa"]).unwrap();
    texts.debug("WebhookVerifier", &verifier);
    assert!(format!("{verifier:?}").contains("secrets: 2"));
    let signer = TestSigner::new(SECRET);
    texts.debug("TestSigner", &signer);

    for (label, error) in [
        (
            "Error::Config",
            Error::Config("client_secret is required".into()),
        ),
        (
            "Error::TokenProvider",
            Error::TokenProvider("identity provider unavailable".into()),
        ),
        (
            "Error::Validation",
            Error::Validation {
                field: "notify_secret".into(),
                message: "must be 32 to 256 bytes".into(),
            },
        ),
    ] {
        texts.error(label, &error);
    }

    let counted = texts.items.len();
    assert!(counted >= 30, "{counted} texts");
    assert_clean(&scanner, &texts);
    // And the scan would have caught the secret: `expose` shows it.
    assert!(scanner.leaks(secret.expose()).contains("secret"));
    assert!(scanner.leaks(checkout.expose()).contains("checkout_url"));
}

/// A credential written into the user info of `notify_url` or `return_url` (which the contract
/// refuses: "no user info") must not show in the request's `Debug` either: it is validated only
/// when sent, and a request is typically logged before that.
#[test]
fn user_info_in_request_urls_is_not_shown_by_debug() {
    const SECRET: &str = "userinfo-probe-secret-4e9a1c7f3b2d8e60";
    let mut scanner = Scanner::default();
    scanner.secret("password in URL user info", SECRET);
    let request = CreateMerchantPayment::new("ref-1", MinorAmount::new(1250).unwrap(), "USD")
        .with_notification(
            format!("https://merchant:{SECRET}@merchant.example/hook"),
            "a-valid-notify-secret-0123456789abcdef",
        )
        .with_return_url(format!("https://buyer:{SECRET}@merchant.example/return"));
    let mut texts = Texts::default();
    texts.debug("CreateMerchantPayment", &request);
    let error = request.validate(false).unwrap_err();
    texts.error("validation error", &error);
    assert_clean(&scanner, &texts);
}
