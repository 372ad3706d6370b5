//! Soak: a bounded run of concurrent clients against an in-process sandbox with random faults,
//! ending in an exact reconciliation (issue 10, "Soak"). See docs/soak.md.
//!
//! ```sh
//! cargo run --release --example soak -- --seconds 180 --clients 8
//! cargo run --example soak -- --seconds 20 --clients 4          # the CI smoke variant
//! ```
//!
//! Options: `--seconds N` (load phase, default 120, capped at 3600), `--clients N` (concurrent
//! workers, default 8, capped at 64), `--seed N` (decision stream; default from the clock; printed
//! so a run can be repeated), `--tls` (sandbox over HTTPS with its generated CA), `--misbehave
//! reorder|new-key|double-book` (a deliberate client bug, to show the reconciliation catches it:
//! the run must then FAIL).
//!
//! What runs (loopback only):
//! - the sandbox in-process, and a local notification receiver (axum) that verifies every
//!   notification with the SDK's `WebhookVerifier` (on real time, as deliveries are stamped), deduplicates by
//!   notification `id`, never lets a lower `status_version` overwrite a higher one, and books
//!   each `paid` payment once by `data.event_id`; it also fails on purpose (before and after
//!   storing, and a blackout of some payments until the re-queue phase);
//! - N workers, each with its own SDK client: merchant payments (idempotency key journaled
//!   locally before sending; a create that did not come back is retried later with the same
//!   request), paid through the buyer-action control (card or platform coin), left to expire,
//!   left in review after a started session (some paid late), left pending, a few refunded or
//!   charged back; catalog orders of seeded users paid with the platform coin, each tagged in its
//!   `gift_message` so that every stored order can be traced to the one create that made it;
//! - a fault injector (after-handler drops and 5xx on creates, latency past the attempt timeout,
//!   429 with `Retry-After`, 503 on reads, malformed 2xx), and a clock that keeps moving.
//!
//! At the end: faults stop, delayed handlers finish, unconfirmed creates are retried with their
//! original request, the notification retry schedule is walked on the sandbox clock (1, 5, 15,
//! 30 min, 1, 2, 4, 6, 8 h), exhausted deliveries are re-queued with the SDK, and the books are
//! reconciled against the service (SDK reads) and the sandbox's own state. Any mismatch, panic or
//! missed invariant exits non-zero.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::error::Error as StdError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use futures_util::StreamExt;
use serde_json::{Value, json};
use storefront::{
    Client, Config, CreateMerchantPayment, CreateOrderRequest, DeliveryStatus, Error, ErrorKind,
    ListMerchantPaymentsQuery, MinorAmount, PaymentExpectation, PaymentStatus, RateLimits,
    RetryPolicy, Secret, StatusNotification, TokenFuture, UserSession, UserTokenProvider,
    VersionDecision, WebhookVerifier, status_version_decision,
};
use storefront_sandbox::{Sandbox, SandboxOptions, seed};

type AnyResult<T> = Result<T, Box<dyn StdError + Send + Sync>>;

/// Hard caps: the soak always stops.
const MAX_SECONDS: u64 = 3600;
const MAX_CLIENTS: usize = 64;
/// Time allowed after the load phase for settling, draining and reconciling.
const WRAP_UP_BUDGET: Duration = Duration::from_secs(300);
/// Per-attempt timeout of the soak's clients; latency faults go past it.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(1000);
/// Rate-limit window of the sandbox (sandbox-clock seconds) and of the clients' limiter (real
/// seconds), with the contract's budgets (60 creates, 300 reads, 30 re-queues per window): the
/// soak runs minutes of traffic in seconds. The sandbox clock runs faster than real time here, so
/// the service's window is never longer than the client's.
const RATE_WINDOW_SECONDS: u32 = 1;
/// Longest injected latency (the wait after the load phase outlasts it).
const MAX_FAULT_LATENCY_MS: u64 = 2500;
/// Two notification secrets in use at once (the receiver keeps both).
const NOTIFY_SECRETS: [&str; 2] = [
    "soak-notify-secret-one-0123456789abcdef",
    "soak-notify-secret-two-fedcba9876543210",
];
/// Wallet each buying user starts with (eight-decimal coin), except bob who keeps his 0.5 coin.
const RICH_WALLET: i64 = 10_000_000 * 100_000_000;
const BUYERS: [&str; 3] = [seed::USER_ALICE, seed::USER_CAROL, seed::USER_BOB];
/// Product carrying the per-order tag: gift card, platform coin only, `gift_message` optional.
const TAGGED_PRODUCT: &str = seed::PRODUCT_GIFT_CARD;

static PANICS: AtomicU64 = AtomicU64::new(0);

/// A deliberate client bug (`--misbehave`), to show that the reconciliation catches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Misbehave {
    None,
    /// Re-sends an order create whose outcome is unknown (a blind re-order).
    Reorder,
    /// Retries an unconfirmed merchant-payment create with a new idempotency key.
    NewKey,
    /// Books every `paid` notification, without deduplication.
    DoubleBook,
}

// ------------------------------------------------------------------------------------------
// Small helpers: random numbers, counters, anomalies
// ------------------------------------------------------------------------------------------

/// splitmix64: enough for choosing actions; no extra dependency.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn hash64(seed: u64, text: &str) -> u64 {
    let mut h = seed ^ 0xCBF2_9CE4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x1000_0000_01B3);
    }
    h
}

/// Named counters, and the first errors seen under each label (for a bug report).
#[derive(Default)]
struct Stats(
    Mutex<BTreeMap<String, u64>>,
    Mutex<BTreeMap<String, Vec<String>>>,
);

impl Stats {
    fn example(&self, label: &str, text: String) {
        let mut m = self.1.lock().unwrap();
        let list = m.entry(label.to_owned()).or_default();
        if list.len() < 2 {
            list.push(text);
        }
    }
    fn add(&self, key: &str, n: u64) {
        *self.0.lock().unwrap().entry(key.to_owned()).or_default() += n;
    }
    fn bump(&self, key: &str) {
        self.add(key, 1);
    }
    fn get(&self, key: &str) -> u64 {
        self.0.lock().unwrap().get(key).copied().unwrap_or(0)
    }
    fn with_prefix(&self, prefix: &str) -> Vec<(String, u64)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|s| (s.to_owned(), *v)))
            .collect()
    }
    fn sum_prefix(&self, prefix: &str) -> u64 {
        self.with_prefix(prefix).iter().map(|(_, v)| v).sum()
    }
}

/// Invariant violations, by category, with the first messages kept for the report.
#[derive(Default)]
struct Anomalies {
    counts: Mutex<BTreeMap<&'static str, u64>>,
    messages: Mutex<Vec<String>>,
}

impl Anomalies {
    fn report(&self, category: &'static str, message: String) {
        *self.counts.lock().unwrap().entry(category).or_default() += 1;
        let mut m = self.messages.lock().unwrap();
        if m.len() < 40 {
            m.push(format!("[{category}] {message}"));
        }
    }
    fn count(&self, category: &str) -> u64 {
        self.counts
            .lock()
            .unwrap()
            .get(category)
            .copied()
            .unwrap_or(0)
    }
    fn total(&self) -> u64 {
        self.counts.lock().unwrap().values().sum()
    }
}

// ------------------------------------------------------------------------------------------
// Sandbox control endpoints (not part of the contract: buyers, the clock, faults)
// ------------------------------------------------------------------------------------------

#[derive(Clone)]
struct Control {
    http: reqwest::Client,
    base: String,
}

impl Control {
    fn new(sandbox: &Sandbox) -> AnyResult<Control> {
        let mut roots = rustls::RootCertStore::empty();
        if let Some(pem) = sandbox.ca_pem() {
            use rustls::pki_types::{CertificateDer, pem::PemObject};
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots.add(cert?)?;
            }
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(Control {
            http,
            base: sandbox.control_url(),
        })
    }

    /// Sends a control request; the HTTP status and the JSON answer.
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> AnyResult<(u16, Value)> {
        let url = format!("{}{path}", self.base);
        let mut rb = match method {
            "POST" => self.http.post(&url),
            "PUT" => self.http.put(&url),
            "DELETE" => self.http.delete(&url),
            _ => self.http.get(&url),
        };
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await?;
        let status = resp.status().as_u16();
        let text = resp.text().await?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// A control request that must succeed.
    async fn ok(&self, method: &str, path: &str, body: Option<Value>) -> AnyResult<Value> {
        let (status, v) = self.call(method, path, body).await?;
        if !(200..300).contains(&status) {
            return Err(format!("control {method} {path}: HTTP {status} {v}").into());
        }
        Ok(v)
    }

    async fn advance(&self, seconds: u64) -> AnyResult<()> {
        self.ok(
            "POST",
            "/clock/advance",
            Some(json!({ "seconds": seconds })),
        )
        .await
        .map(|_| ())
    }

    async fn wallet(&self, user: &str) -> AnyResult<i64> {
        let v = self.ok("GET", &format!("/users/{user}"), None).await?;
        v["wallet"]
            .as_i64()
            .ok_or_else(|| format!("no wallet for {user}: {v}").into())
    }
}

/// User tokens minted through the control endpoint (stands in for the authorization-code flow);
/// the SDK asks again when the service refuses one.
struct MintingProvider {
    control: Control,
    user: String,
}

impl UserTokenProvider for MintingProvider {
    fn user_token(&self, _rejected: Option<&Secret>) -> TokenFuture<'_> {
        Box::pin(async move {
            let v = self
                .control
                .ok(
                    "POST",
                    &format!("/users/{}/tokens", self.user),
                    Some(json!({ "client_id": seed::MERCHANT_CLIENT_ID, "expires_in": 86_400 })),
                )
                .await
                .map_err(|e| Error::TokenProvider(e.to_string()))?;
            v["access_token"]
                .as_str()
                .map(Secret::new)
                .ok_or_else(|| Error::TokenProvider("no access_token".into()))
        })
    }
}

// ------------------------------------------------------------------------------------------
// The merchant's local books (stand-in for its database)
// ------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CreateState {
    /// Journaled, request in flight.
    Sending,
    /// The service answered with the payment.
    Created,
    /// The answer did not come back (or was unusable): to be retried with the same request.
    Unconfirmed,
    /// A definite rejection of the request.
    Rejected,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Pay,
    Expire,
    SessionThenReview,
    Pending,
}

#[derive(Debug, Clone)]
struct PaidBy {
    event_id: String,
    channel: String,
    user: Option<String>,
}

struct LocalPayment {
    request: CreateMerchantPayment,
    state: CreateState,
    order_no: Option<String>,
    create_calls: u32,
    rejected: Option<String>,
    plan: Plan,
    paid_by: Option<PaidBy>,
    forced: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OrderState {
    Sending,
    Created,
    Unknown,
    Rejected,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StartState {
    NotStarted,
    Paid,
    StartedNotPaid,
    UnknownThenPaid,
    UnknownThenUnpaid,
    Rejected,
}

#[derive(Clone)]
struct LocalOrder {
    tag: String,
    user: String,
    state: OrderState,
    order_no: Option<String>,
    rejected: Option<String>,
    start: StartState,
}

#[derive(Default)]
struct Ledger {
    payments: Vec<LocalPayment>,
    by_reference: HashMap<String, usize>,
    outbox: Vec<String>,
    orders: Vec<LocalOrder>,
    by_tag: HashMap<String, usize>,
}

// ------------------------------------------------------------------------------------------
// Notification receiver
// ------------------------------------------------------------------------------------------

struct Booking {
    event_id: String,
    order_no: String,
    notification_id: String,
    amount_minor: MinorAmount,
}

#[derive(Default)]
struct Book {
    seen_ids: HashSet<String>,
    /// Highest applied (status_version, status, notification id) per payment.
    latest: HashMap<String, (u64, String, String)>,
    bookings: Vec<Booking>,
    booked: HashMap<String, usize>,
}

struct Receiver {
    verifier: WebhookVerifier,
    book: Mutex<Book>,
    ledger: Arc<Mutex<Ledger>>,
    stats: Arc<Stats>,
    anomalies: Arc<Anomalies>,
    rng: Mutex<Rng>,
    /// Random receiver failures while the load runs.
    faults_on: AtomicBool,
    /// Blacked-out payments fail every delivery until this is set (the re-queue phase).
    blackout_over: AtomicBool,
    seed: u64,
    double_book: bool,
}

impl Receiver {
    fn blacked_out(&self, order_no: &str) -> bool {
        !self.blackout_over.load(Ordering::SeqCst) && hash64(self.seed, order_no) % 100 < 3
    }
}

async fn receive(State(r): State<Arc<Receiver>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    r.stats.bump("notify.received");
    // Verify over the raw bytes before anything else.
    let n: StatusNotification = match r.verifier.verify_headers(&headers, &body) {
        Ok(n) => n,
        Err(e) => {
            r.stats.bump(&format!("notify.rejected.{}", e.code()));
            if matches!(
                e.code(),
                "signature_mismatch" | "invalid_body" | "event_id_mismatch" | "malformed_signature"
            ) {
                r.anomalies
                    .report("notification", format!("verification failed: {e}"));
            }
            return StatusCode::BAD_REQUEST;
        }
    };
    r.stats.bump("notify.verified");
    if r.blacked_out(&n.data.order_no) {
        r.stats.bump("notify.receiver_fault.blackout");
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let (fail_before, fail_after) = if r.faults_on.load(Ordering::SeqCst) {
        let mut rng = r.rng.lock().unwrap();
        let x = rng.below(1000);
        (x < 40, (40..70).contains(&x))
    } else {
        (false, false)
    };
    if fail_before {
        r.stats.bump("notify.receiver_fault.before_store");
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    // After verifying: reference, amount, currency and test_mode against the merchant's books.
    let expectation = {
        let ledger = r.ledger.lock().unwrap();
        ledger
            .by_reference
            .get(&n.data.external_reference)
            .map(|&i| PaymentExpectation {
                external_reference: ledger.payments[i].request.external_reference.clone(),
                amount_minor: ledger.payments[i].request.amount_minor,
                currency: ledger.payments[i].request.currency.clone(),
                test_mode: false,
            })
    };
    match expectation {
        None => r.anomalies.report(
            "lost",
            format!(
                "notification for a reference the merchant never journaled: {}",
                n.data.external_reference
            ),
        ),
        Some(e) => {
            if let Err(err) = e.check_notification(&n.data) {
                r.anomalies.report(
                    "notification",
                    format!("{}: {err}", n.data.external_reference),
                );
            }
        }
    }
    // Store reliably (here: in memory, under the lock) before acknowledging.
    {
        let mut book = r.book.lock().unwrap();
        if !book.seen_ids.insert(n.id.clone()) && !r.double_book {
            r.stats.bump("notify.duplicate_id_absorbed");
        } else {
            let stored = book.latest.get(&n.data.order_no).cloned();
            match status_version_decision(stored.as_ref().map(|s| s.0), n.data.status_version) {
                VersionDecision::Apply => {
                    book.latest.insert(
                        n.data.order_no.clone(),
                        (
                            n.data.status_version,
                            n.data.status.to_string(),
                            n.id.clone(),
                        ),
                    );
                }
                VersionDecision::Stale => r.stats.bump("notify.stale_ignored"),
                VersionDecision::Duplicate if stored.as_ref().is_some_and(|s| s.2 == n.id) => {
                    r.stats.bump("notify.duplicate_id_absorbed");
                }
                VersionDecision::Duplicate => {
                    r.anomalies.report(
                        "notification",
                        format!(
                            "two notification ids ({} and {}) for version {} of {}",
                            stored.map(|s| s.2).unwrap_or_default(),
                            n.id,
                            n.data.status_version,
                            n.data.order_no
                        ),
                    );
                }
            }
            if n.data.status.is_paid() {
                match &n.data.event_id {
                    None => r.anomalies.report(
                        "notification",
                        format!("paid notification without event_id for {}", n.data.order_no),
                    ),
                    Some(event_id) => match book.booked.get(event_id) {
                        Some(&i) if !r.double_book => {
                            r.stats.bump("notify.paid_repeat_absorbed");
                            if book.bookings[i].order_no != n.data.order_no {
                                r.anomalies.report(
                                    "double_booking",
                                    format!(
                                        "event {event_id} seen for {} and {}",
                                        book.bookings[i].order_no, n.data.order_no
                                    ),
                                );
                            }
                        }
                        _ => {
                            let i = book.bookings.len();
                            book.bookings.push(Booking {
                                event_id: event_id.clone(),
                                order_no: n.data.order_no.clone(),
                                notification_id: n.id.clone(),
                                amount_minor: n.data.amount_minor,
                            });
                            book.booked.insert(event_id.clone(), i);
                            r.stats.bump("notify.booked");
                        }
                    },
                }
            }
        }
    }
    if fail_after {
        r.stats.bump("notify.receiver_fault.after_store");
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    StatusCode::NO_CONTENT
}

async fn start_receiver(receiver: Arc<Receiver>) -> AnyResult<String> {
    let app = axum::Router::new()
        .route("/hooks/soak", axum::routing::post(receive))
        .with_state(receiver);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hooks/soak", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(url)
}

// ------------------------------------------------------------------------------------------
// Shared context
// ------------------------------------------------------------------------------------------

struct Ctx {
    sandbox: Sandbox,
    control: Control,
    ledger: Arc<Mutex<Ledger>>,
    stats: Arc<Stats>,
    anomalies: Arc<Anomalies>,
    receiver: Arc<Receiver>,
    receiver_url: String,
    running: AtomicBool,
    seed: u64,
    misbehave: Misbehave,
}

impl Ctx {
    fn running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    fn api(&self, route: &str) -> String {
        format!("{}{route}", seed::API_PREFIX)
    }

    /// Installs a fault and counts it by kind.
    async fn fault(&self, kind: &str, spec: Value) {
        match self.control.call("POST", "/faults", Some(spec)).await {
            Ok((201, _)) | Ok((200, _)) => self.stats.bump(&format!("fault.{kind}")),
            Ok((status, v)) => self.anomalies.report(
                "harness",
                format!("fault {kind} refused: HTTP {status} {v}"),
            ),
            Err(e) => self
                .anomalies
                .report("harness", format!("fault {kind} not installed: {e}")),
        }
    }

    fn client_config(&self, retry_after_cap: Duration) -> Config {
        let mut c = Config::new(
            self.sandbox.base_url(),
            self.sandbox.token_endpoint(),
            seed::MERCHANT_CLIENT_ID,
            seed::MERCHANT_CLIENT_SECRET,
        )
        .with_userinfo_endpoint(self.sandbox.userinfo_endpoint())
        .with_user_agent("storefront-soak/1")
        .with_attempt_timeout(ATTEMPT_TIMEOUT)
        .with_overall_deadline(Duration::from_secs(10))
        .with_retry_policy(RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(500),
            max_retry_after: retry_after_cap,
        })
        .with_rate_limits(RateLimits {
            window: Duration::from_secs(RATE_WINDOW_SECONDS.into()),
            margin: Duration::from_millis(100),
            ..RateLimits::default()
        })
        // Only so the local receiver may be plain http://127.0.0.1; the real service requires
        // public HTTPS.
        .with_insecure_loopback(true);
        if let Some(pem) = self.sandbox.ca_pem() {
            c = c.with_root_ca_pem(pem);
        }
        c
    }

    fn session(&self, client: &Client, user: &str) -> UserSession {
        let provider: Arc<dyn UserTokenProvider> = Arc::new(MintingProvider {
            control: self.control.clone(),
            user: user.to_owned(),
        });
        client.user(provider)
    }
}

fn error_label(e: &Error) -> String {
    match e.code() {
        Some(code) if !code.as_str().is_empty() => {
            format!("{}.{}", e.kind().as_str(), code.as_str())
        }
        _ => match e.status() {
            Some(s) => format!("{}.http{s}", e.kind().as_str()),
            None => e.kind().as_str().to_owned(),
        },
    }
}

/// A definite rejection of a merchant-payment create (nothing was created); anything else may
/// have been processed and is retried later with the same request.
fn definite_rejection(e: &Error) -> Option<String> {
    match e {
        Error::Api(a) if matches!(a.status, 400 | 403 | 404 | 409 | 422) => {
            Some(a.error.to_string())
        }
        Error::Validation { field, .. } => Some(format!("validation.{field}")),
        _ => None,
    }
}

// ------------------------------------------------------------------------------------------
// Workers
// ------------------------------------------------------------------------------------------

struct Worker {
    id: usize,
    ctx: Arc<Ctx>,
    client: Client,
    sessions: Vec<(String, UserSession)>,
    rng: Rng,
    payments: u64,
    orders: u64,
    /// Payments with a started session, to pay late (after review) sometimes.
    late: Vec<String>,
}

const CURRENCIES: [(&str, u32); 6] = [
    ("USD", 2),
    ("USD", 2),
    ("USD", 2),
    ("EUR", 2),
    ("JPY", 0),
    (seed::PLATFORM_COIN, 8),
];

impl Worker {
    async fn run(mut self) {
        while self.ctx.running() {
            self.merchant_cycle().await;
            if self.rng.chance(0.3) {
                self.catalog_cycle().await;
            }
            if !self.late.is_empty() && self.rng.chance(0.15) {
                let i = self.rng.below(self.late.len() as u64) as usize;
                let order_no = self.late.swap_remove(i);
                self.pay(
                    &order_no,
                    seed::CHANNEL_PLATFORM_COIN,
                    Some(seed::USER_ALICE),
                    "late",
                )
                .await;
            }
            if self.rng.chance(0.3) {
                self.retry_one_unconfirmed().await;
            }
            if self.rng.chance(0.05) {
                match self.client.list_channels().await {
                    Ok(_) => self.ctx.stats.bump("channels.read.ok"),
                    Err(e) => self
                        .ctx
                        .stats
                        .bump(&format!("channels.read.err.{}", error_label(&e))),
                }
            }
            let pause = self.rng.range(40, 200);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
    }

    /// Creates one merchant payment and does what its plan says.
    async fn merchant_cycle(&mut self) {
        self.payments += 1;
        let ctx = self.ctx.clone();
        let reference = format!("soak-{}-w{}-p{}", ctx.seed, self.id, self.payments);
        let (currency, decimals) = *self.rng.pick(&CURRENCIES);
        let amount = MinorAmount::new(self.rng.range(100, 99_999)).expect("positive amount");
        let plan = match self.rng.below(100) {
            0..=34 => Plan::Pay,
            35..=54 => Plan::Expire,
            55..=64 => Plan::SessionThenReview,
            _ => Plan::Pending,
        };
        let secret = NOTIFY_SECRETS[self.rng.below(2) as usize];
        let mut request = CreateMerchantPayment::new(&reference, amount, currency)
            .with_description("Soak order")
            .with_notification(&ctx.receiver_url, secret)
            .expect_currency_decimals(decimals);
        request = match plan {
            Plan::Expire | Plan::SessionThenReview => request.with_expires_in(60),
            Plan::Pending => request.with_expires_in(7200),
            Plan::Pay => request,
        };
        // Journal the request (and with it the idempotency key) before sending it.
        {
            let mut ledger = ctx.ledger.lock().unwrap();
            let i = ledger.payments.len();
            ledger.payments.push(LocalPayment {
                request: request.clone(),
                state: CreateState::Sending,
                order_no: None,
                create_calls: 0,
                rejected: None,
                plan,
                paid_by: None,
                forced: None,
            });
            ledger.by_reference.insert(reference.clone(), i);
        }
        let Some(order_no) = create_payment(&ctx, &self.client, &reference).await else {
            return;
        };
        match plan {
            Plan::Pay => {
                let (channel, user) = if currency == "USD" && self.rng.chance(0.4) {
                    (seed::CHANNEL_CARD_USD, None)
                } else {
                    let user = match self.rng.below(10) {
                        0..=4 => seed::USER_ALICE,
                        5..=8 => seed::USER_CAROL,
                        _ => seed::USER_BOB,
                    };
                    (seed::CHANNEL_PLATFORM_COIN, Some(user))
                };
                let paid = self.pay(&order_no, channel, user, "now").await;
                if paid && self.rng.chance(0.05) {
                    let status = if self.rng.chance(0.5) {
                        "refunded"
                    } else {
                        "chargeback"
                    };
                    let path = format!("/merchant-payments/{order_no}/force");
                    match ctx
                        .control
                        .call("POST", &path, Some(json!({ "status": status })))
                        .await
                    {
                        Ok((200, _)) => {
                            ctx.stats.bump(&format!("mp.forced.{status}"));
                            let mut ledger = ctx.ledger.lock().unwrap();
                            let i = ledger.by_reference[&reference];
                            ledger.payments[i].forced = Some(if status == "refunded" {
                                "refunded"
                            } else {
                                "chargeback"
                            });
                        }
                        Ok((s, v)) => ctx
                            .stats
                            .bump(&format!("mp.force_refused.{s}.{}", v["error"])),
                        Err(_) => ctx.stats.bump("mp.force_failed"),
                    }
                }
            }
            Plan::SessionThenReview => {
                let path = format!("/merchant-payments/{order_no}/checkout/session");
                let body =
                    json!({ "payment_no": seed::CHANNEL_PLATFORM_COIN, "user": seed::USER_ALICE });
                match ctx.control.call("POST", &path, Some(body)).await {
                    Ok((200, _)) => {
                        ctx.stats.bump("mp.session_started");
                        self.late.push(order_no.clone());
                    }
                    Ok((s, v)) => ctx.stats.bump(&format!(
                        "mp.session_refused.{s}.{}",
                        v["error"].as_str().unwrap_or("")
                    )),
                    Err(_) => ctx.stats.bump("mp.session_failed"),
                }
            }
            Plan::Expire | Plan::Pending => {}
        }
        // Reads under faults: the query must match what the merchant asked for.
        if self.rng.chance(0.3) {
            let path = ctx.api(&format!("/openapi/v1/merchant-payments/{order_no}"));
            if self.rng.chance(0.2) {
                self.arm_read_fault(&path).await;
            }
            match self.client.get_merchant_payment(&order_no).await {
                Ok(p) => {
                    ctx.stats.bump("mp.read.ok");
                    let e = PaymentExpectation {
                        external_reference: reference.clone(),
                        amount_minor: amount,
                        currency: currency.to_owned(),
                        test_mode: false,
                    };
                    if let Err(err) = e.check_payment(&p) {
                        ctx.anomalies
                            .report("mismatch", format!("query of {order_no}: {err}"));
                    }
                }
                Err(e) => ctx.stats.bump(&format!("mp.read.err.{}", error_label(&e))),
            }
        }
        if self.rng.chance(0.1) {
            match self
                .client
                .list_merchant_payments(&ListMerchantPaymentsQuery::by_external_reference(
                    &reference,
                ))
                .await
            {
                Ok(items) => {
                    ctx.stats.bump("mp.list.ok");
                    if items.len() != 1 {
                        ctx.anomalies.report(
                            "duplicate",
                            format!(
                                "{reference}: {} payments listed during the run",
                                items.len()
                            ),
                        );
                    }
                }
                Err(e) => ctx.stats.bump(&format!("mp.list.err.{}", error_label(&e))),
            }
        }
    }

    /// A read fault on one payment's own path: 503, malformed 2xx, or latency past the timeout.
    async fn arm_read_fault(&mut self, path: &str) {
        let (kind, spec) = match self.rng.below(3) {
            0 => (
                "read_503",
                json!({"method": "GET", "path": path, "status": 503,
                       "body": {"error": "rate_limit_unavailable"}, "times": self.rng.range(1, 2)}),
            ),
            1 => (
                "read_malformed_2xx",
                json!({"method": "GET", "path": path, "status": 200, "malformed_body": true}),
            ),
            _ => (
                "read_latency",
                json!({"method": "GET", "path": path, "latency_ms": self.rng.range(1200, MAX_FAULT_LATENCY_MS)}),
            ),
        };
        self.ctx.fault(kind, spec).await;
    }

    /// The buyer pays at the checkout (sandbox buyer action). True when the payment is paid.
    async fn pay(&mut self, order_no: &str, channel: &str, user: Option<&str>, when: &str) -> bool {
        let ctx = self.ctx.clone();
        let path = format!("/merchant-payments/{order_no}/checkout/pay");
        let mut body = json!({ "payment_no": channel });
        if let Some(u) = user {
            body["user"] = json!(u);
        }
        match ctx.control.call("POST", &path, Some(body)).await {
            Ok((200, v)) => {
                let event_id = v["event_id"].as_str().unwrap_or_default().to_owned();
                if v["status"] != "paid" || event_id.is_empty() {
                    ctx.anomalies.report(
                        "mismatch",
                        format!("pay of {order_no} answered {} without event", v["status"]),
                    );
                    return false;
                }
                ctx.stats.bump(&format!("mp.pay.{when}.ok"));
                let reference = v["external_reference"].as_str().unwrap_or_default();
                let mut ledger = ctx.ledger.lock().unwrap();
                if let Some(&i) = ledger.by_reference.get(reference) {
                    ledger.payments[i].paid_by = Some(PaidBy {
                        event_id,
                        channel: channel.to_owned(),
                        user: user.map(str::to_owned),
                    });
                }
                true
            }
            Ok((s, v)) => {
                ctx.stats.bump(&format!(
                    "mp.pay.{when}.refused.{s}.{}",
                    v["error"].as_str().unwrap_or("")
                ));
                false
            }
            Err(_) => {
                ctx.stats.bump(&format!("mp.pay.{when}.control_failed"));
                false
            }
        }
    }

    async fn retry_one_unconfirmed(&mut self) {
        let reference = {
            let mut ledger = self.ctx.ledger.lock().unwrap();
            if ledger.outbox.is_empty() {
                return;
            }
            let i = self.rng.below(ledger.outbox.len() as u64) as usize;
            ledger.outbox.swap_remove(i)
        };
        self.ctx.stats.bump("mp.create.retry_later");
        create_payment(&self.ctx, &self.client, &reference).await;
    }

    /// A catalog order of a seeded user, tagged, paid with the platform coin most of the time.
    async fn catalog_cycle(&mut self) {
        self.orders += 1;
        let ctx = self.ctx.clone();
        let tag = format!("soak-{}-w{}-o{}", ctx.seed, self.id, self.orders);
        let which = match self.rng.below(10) {
            0..=4 => 0,
            5..=8 => 1,
            _ => 2,
        };
        let (user, session) = self.sessions[which].clone();
        let mut inputs = BTreeMap::new();
        inputs.insert(
            "recipient_email".to_owned(),
            "friend@example.com".to_owned(),
        );
        inputs.insert("gift_message".to_owned(), tag.clone());
        let request = CreateOrderRequest::new(
            TAGGED_PRODUCT,
            self.rng.range(1, 2) as u32,
            seed::CHANNEL_PLATFORM_COIN,
        )
        .with_other_ipu(inputs);
        let index = {
            let mut ledger = ctx.ledger.lock().unwrap();
            let i = ledger.orders.len();
            ledger.orders.push(LocalOrder {
                tag: tag.clone(),
                user: user.clone(),
                state: OrderState::Sending,
                order_no: None,
                rejected: None,
                start: StartState::NotStarted,
            });
            ledger.by_tag.insert(tag.clone(), i);
            i
        };
        let result = session.create_order(&request).await;
        let order_no = {
            let mut ledger = ctx.ledger.lock().unwrap();
            let o = &mut ledger.orders[index];
            match result {
                Ok(created) => {
                    ctx.stats.bump("order.create.ok");
                    o.state = OrderState::Created;
                    o.order_no = Some(created.order_no.clone());
                    Some(created.order_no)
                }
                Err(e) if e.kind() == ErrorKind::OutcomeUnknown => {
                    // Never re-order: the order may exist.
                    ctx.stats.bump("order.create.outcome_unknown");
                    o.state = OrderState::Unknown;
                    None
                }
                Err(Error::Api(a)) if matches!(a.status, 400 | 403 | 404 | 409 | 410 | 422) => {
                    ctx.stats
                        .bump(&format!("order.create.rejected.{}", a.error));
                    o.state = OrderState::Rejected;
                    o.rejected = Some(a.error.to_string());
                    None
                }
                Err(e) => {
                    // Not a definite rejection: counted as unknown, never re-sent.
                    ctx.stats
                        .bump(&format!("order.create.other_error.{}", error_label(&e)));
                    o.state = OrderState::Unknown;
                    None
                }
            }
        };
        let order_no = match order_no {
            None if ctx.misbehave == Misbehave::Reorder
                && ctx.ledger.lock().unwrap().orders[index].state == OrderState::Unknown =>
            {
                // The bug this soak must catch: ordering again after an unknown outcome.
                match session.create_order(&request).await {
                    Ok(created) => {
                        let mut ledger = ctx.ledger.lock().unwrap();
                        ledger.orders[index].state = OrderState::Created;
                        ledger.orders[index].order_no = Some(created.order_no.clone());
                        Some(created.order_no)
                    }
                    Err(_) => None,
                }
            }
            other => other,
        };
        let Some(order_no) = order_no else { return };
        if !self.rng.chance(0.75) {
            return;
        }
        let path = ctx.api(&format!("/openapi/v1/orders/{order_no}/payment"));
        if self.rng.chance(0.2) {
            let (kind, spec) = match self.rng.below(4) {
                0 => (
                    "start_after_handler_drop",
                    json!({"method": "POST", "path": path, "after_handler": true, "drop_connection": true}),
                ),
                1 => (
                    "start_after_handler_5xx",
                    json!({"method": "POST", "path": path, "after_handler": true, "status": 502}),
                ),
                2 => (
                    "start_latency_past_timeout",
                    json!({"method": "POST", "path": path, "latency_ms": self.rng.range(1200, MAX_FAULT_LATENCY_MS)}),
                ),
                _ => (
                    "start_5xx",
                    json!({"method": "POST", "path": path, "status": 503,
                           "body": {"error": "rate_limit_unavailable"}}),
                ),
            };
            ctx.fault(kind, spec).await;
        }
        let start = match session
            .start_payment(&order_no, seed::CHANNEL_PLATFORM_COIN)
            .await
        {
            Ok(_) => {
                ctx.stats.bump("order.start.ok");
                match session
                    .wait_for_payment(
                        &order_no,
                        Duration::from_millis(100),
                        Duration::from_secs(5),
                    )
                    .await
                {
                    Ok(o) if o.payment_status() == PaymentStatus::Paid => StartState::Paid,
                    Ok(o) => {
                        ctx.stats
                            .bump(&format!("order.wait.ended.{}", o.payment_status().code()));
                        StartState::StartedNotPaid
                    }
                    Err(e) => {
                        ctx.stats
                            .bump(&format!("order.wait.err.{}", error_label(&e)));
                        StartState::StartedNotPaid
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::OutcomeUnknown => {
                // The contract's advice: read the payment status, do not start again blindly.
                ctx.stats.bump("order.start.outcome_unknown");
                match session.payment_status(&order_no).await {
                    Ok(PaymentStatus::Paid) => StartState::UnknownThenPaid,
                    Ok(_) => StartState::UnknownThenUnpaid,
                    Err(e) => {
                        ctx.stats
                            .bump(&format!("order.status.err.{}", error_label(&e)));
                        StartState::UnknownThenUnpaid
                    }
                }
            }
            Err(e) => {
                ctx.stats
                    .bump(&format!("order.start.rejected.{}", error_label(&e)));
                StartState::Rejected
            }
        };
        ctx.ledger.lock().unwrap().orders[index].start = start;
    }
}

/// Sends (or re-sends, with the journaled request and its key) a merchant-payment create and
/// records the outcome. The payment number when created.
async fn create_payment(ctx: &Ctx, client: &Client, reference: &str) -> Option<String> {
    let (request, index) = {
        let mut ledger = ctx.ledger.lock().unwrap();
        let i = *ledger.by_reference.get(reference)?;
        ledger.payments[i].create_calls += 1;
        let mut request = ledger.payments[i].request.clone();
        if ctx.misbehave == Misbehave::NewKey && ledger.payments[i].create_calls > 1 {
            // The bug this soak must catch: a retry under a new key.
            request = request.with_idempotency_key(storefront::generate_idempotency_key());
        }
        (request, i)
    };
    let result = client.create_merchant_payment(&request).await;
    let mut ledger = ctx.ledger.lock().unwrap();
    let local = &mut ledger.payments[index];
    match result {
        Ok(created) => {
            if created.idempotency_key != request.idempotency_key()
                || (ctx.misbehave == Misbehave::None
                    && created.idempotency_key != local.request.idempotency_key())
            {
                ctx.anomalies.report(
                    "mismatch",
                    format!("{reference}: create used another idempotency key"),
                );
            }
            if let Some(prev) = &local.order_no
                && *prev != created.payment.order_no
            {
                ctx.anomalies.report(
                    "duplicate",
                    format!(
                        "{reference}: same key gave {prev} and {}",
                        created.payment.order_no
                    ),
                );
            }
            ctx.stats.bump(if local.create_calls == 1 {
                "mp.create.ok_first_call"
            } else {
                "mp.create.ok_after_retry_later"
            });
            local.state = CreateState::Created;
            local.order_no = Some(created.payment.order_no.clone());
            Some(created.payment.order_no)
        }
        Err(e) => {
            if let Some(code) = definite_rejection(&e) {
                if code == "payment_conflict" {
                    ctx.anomalies.report(
                        "mismatch",
                        format!("{reference}: payment_conflict for an unchanged request"),
                    );
                }
                ctx.stats.bump(&format!("mp.create.rejected.{code}"));
                local.state = CreateState::Rejected;
                local.rejected = Some(code);
            } else {
                if e.kind() == ErrorKind::ResponseMismatch {
                    ctx.anomalies
                        .report("mismatch", format!("{reference}: {e}"));
                }
                let label = format!("mp.create.unconfirmed.{}", error_label(&e));
                ctx.stats.bump(&label);
                ctx.stats.example(&label, format!("{e:?}"));
                if local.state != CreateState::Created {
                    local.state = CreateState::Unconfirmed;
                }
                ledger.outbox.push(reference.to_owned());
            }
            None
        }
    }
}

// ------------------------------------------------------------------------------------------
// Fault injector and clock
// ------------------------------------------------------------------------------------------

async fn fault_injector(ctx: Arc<Ctx>, mut rng: Rng) {
    let creates = ctx.api("/openapi/v1/merchant-payments");
    let orders = ctx.api("/openapi/v1/orders");
    let channels = ctx.api("/openapi/v1/merchant-payment-channels");
    while ctx.running() {
        tokio::time::sleep(Duration::from_millis(rng.range(100, 400))).await;
        if !ctx.running() {
            break;
        }
        let times = rng.range(1, 2);
        let latency = rng.range(1200, MAX_FAULT_LATENCY_MS);
        let (kind, spec) = match rng.below(16) {
            0 => (
                "mp_create_after_handler_drop",
                json!({"method": "POST", "path": creates, "after_handler": true, "drop_connection": true, "times": times}),
            ),
            1 => (
                "mp_create_after_handler_5xx",
                json!({"method": "POST", "path": creates, "after_handler": true, "status": *rng.pick(&[500, 502, 503]), "times": times}),
            ),
            2 => (
                "mp_create_5xx",
                json!({"method": "POST", "path": creates, "status": 500, "times": times}),
            ),
            3 => (
                "mp_create_latency_past_timeout",
                json!({"method": "POST", "path": creates, "latency_ms": latency, "times": times}),
            ),
            4 => (
                "mp_create_after_handler_latency",
                json!({"method": "POST", "path": creates, "after_handler": true, "latency_ms": latency}),
            ),
            5 => (
                "mp_create_429_retry_after",
                json!({"method": "POST", "path": creates, "status": 429, "headers": {"Retry-After": "1"}, "times": times}),
            ),
            6 => (
                "mp_create_malformed_2xx",
                json!({"method": "POST", "path": creates, "status": 201, "malformed_body": true, "after_handler": rng.chance(0.5)}),
            ),
            7 => (
                "order_create_after_handler_drop",
                json!({"method": "POST", "path": orders, "after_handler": true, "drop_connection": true}),
            ),
            8 => (
                "order_create_after_handler_5xx",
                json!({"method": "POST", "path": orders, "after_handler": true, "status": 500}),
            ),
            9 => (
                "order_create_5xx",
                json!({"method": "POST", "path": orders, "status": 503, "body": {"error": "rate_limit_unavailable"}}),
            ),
            10 => (
                "order_create_latency_past_timeout",
                json!({"method": "POST", "path": orders, "latency_ms": latency}),
            ),
            11 => (
                "order_create_429_retry_after",
                json!({"method": "POST", "path": orders, "status": 429, "headers": {"Retry-After": "1"}, "after_handler": rng.chance(0.5)}),
            ),
            12 => (
                "order_create_malformed_2xx",
                json!({"method": "POST", "path": orders, "status": 201, "malformed_body": true, "after_handler": rng.chance(0.5)}),
            ),
            13 => (
                "list_503",
                json!({"method": "GET", "path": creates, "status": 503, "body": {"error": "rate_limit_unavailable"}, "times": times}),
            ),
            14 => (
                "channels_503",
                json!({"method": "GET", "path": channels, "status": 503, "times": times}),
            ),
            _ => (
                "token_503",
                json!({"method": "POST", "path": seed::TOKEN_PATH, "status": 503, "body": {"error": "temporarily_unavailable"}}),
            ),
        };
        // Token requests are rare (one per token lifetime for the shared client): a token fault
        // is added only when none is waiting, or they would pile up into an endpoint that is
        // down for good.
        if kind == "token_503" && token_fault_pending(&ctx).await {
            continue;
        }
        ctx.fault(kind, spec).await;
    }
}

async fn token_fault_pending(ctx: &Ctx) -> bool {
    match ctx.control.call("GET", "/faults", None).await {
        Ok((200, Value::Array(faults))) => faults.iter().any(|f| f["path"] == seed::TOKEN_PATH),
        _ => true,
    }
}

/// Keeps the sandbox clock moving: expiry, sweeps, review, token lifetimes, rate windows and
/// notification retries all run on it.
async fn clock_mover(ctx: Arc<Ctx>, mut rng: Rng) {
    while ctx.running() {
        tokio::time::sleep(Duration::from_millis(rng.range(700, 1300))).await;
        let by = rng.range(15, 75);
        match ctx.control.advance(by).await {
            Ok(()) => ctx.stats.add("clock.advanced_seconds", by),
            Err(e) => ctx.anomalies.report("harness", format!("clock: {e}")),
        }
    }
}

// ------------------------------------------------------------------------------------------
// Wrap-up: settle, drain, re-queue
// ------------------------------------------------------------------------------------------

/// Delivery records that are due, in flight, pending overall and failed; the earliest next
/// attempt of a pending record (seconds from the sandbox's now).
fn delivery_state(sandbox: &Sandbox) -> (usize, usize, usize, Option<i64>) {
    use storefront_sandbox::inspect::DeliveryStatus as S;
    let view = sandbox.inspect();
    let now = view.now();
    let (mut busy, mut pending, mut failed, mut next) = (0, 0, 0, None::<i64>);
    for r in view.all_deliveries() {
        match r.status {
            S::Pending => {
                pending += 1;
                if r.in_flight || r.next_attempt_at.is_some_and(|at| at <= now) {
                    busy += 1;
                } else if let Some(at) = r.next_attempt_at {
                    let secs = (at - now).whole_seconds().max(0);
                    next = Some(next.map_or(secs, |n: i64| n.min(secs)));
                }
            }
            S::Failed => failed += 1,
            S::Delivered => {}
        }
    }
    (busy, pending, failed, next)
}

/// Waits until no delivery is due or in flight.
async fn quiesce(sandbox: &Sandbox) {
    let started = Instant::now();
    loop {
        let (busy, ..) = delivery_state(sandbox);
        if busy == 0 || started.elapsed() > Duration::from_secs(60) {
            // Let the last acknowledgements settle.
            tokio::time::sleep(Duration::from_millis(50)).await;
            if delivery_state(sandbox).0 == 0 || started.elapsed() > Duration::from_secs(60) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Walks the retry schedule on the sandbox clock until no delivery is pending.
async fn drain(ctx: &Ctx) -> AnyResult<u32> {
    const SCHEDULE: [u64; 9] = [60, 300, 900, 1800, 3600, 7200, 14_400, 21_600, 28_800];
    let mut steps = 0;
    quiesce(&ctx.sandbox).await;
    for step in SCHEDULE {
        ctx.control.advance(step).await?;
        steps += 1;
        quiesce(&ctx.sandbox).await;
    }
    // Records further along their schedule: jump to each next due attempt.
    for _ in 0..40 {
        let (_, pending, _, next) = delivery_state(&ctx.sandbox);
        if pending == 0 {
            break;
        }
        ctx.control.advance(next.unwrap_or(60) as u64 + 1).await?;
        steps += 1;
        quiesce(&ctx.sandbox).await;
    }
    Ok(steps)
}

/// Runs an SDK call; a 429 moves the sandbox clock past its `Retry-After` and tries again.
async fn past_rate_limit<T, F, Fut>(ctx: &Ctx, mut call: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    let mut tries = 0;
    loop {
        match call().await {
            Err(e) if e.status() == Some(429) && tries < 30 => {
                tries += 1;
                let secs = e.retry_after().map_or(60, |d| d.as_secs().max(1));
                let _ = ctx.control.advance(secs).await;
            }
            Err(e)
                if matches!(e.kind(), ErrorKind::Transport | ErrorKind::DeadlineExceeded)
                    && tries < 30 =>
            {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}

// ------------------------------------------------------------------------------------------
// Reconciliation
// ------------------------------------------------------------------------------------------

struct TruthPayment {
    order_no: String,
    reference: String,
    status: String,
    status_version: u64,
    event_id: Option<String>,
    session_user: Option<String>,
    session_channel: Option<String>,
    settlement: Option<i64>,
}

fn truth_payments(sandbox: &Sandbox) -> Vec<TruthPayment> {
    sandbox
        .inspect()
        .payments()
        .into_iter()
        .filter(|p| p.merchant_no == seed::MERCHANT_NO)
        .map(|p| TruthPayment {
            order_no: p.order_no,
            reference: p.external_reference,
            status: p.status.as_str().to_owned(),
            status_version: p.status_version,
            event_id: p.event_id,
            session_user: p.session.as_ref().and_then(|s| s.user.clone()),
            session_channel: p.session.as_ref().map(|s| s.payment_no.clone()),
            settlement: p.settlement_coin,
        })
        .collect()
}

fn truth_keys(sandbox: &Sandbox) -> HashMap<String, String> {
    sandbox
        .inspect()
        .idempotency_keys(seed::MERCHANT_NO)
        .into_iter()
        .collect()
}

struct TruthOrder {
    order_no: String,
    user: String,
    tag: Option<String>,
    paid: bool,
    pay_amount: i64,
}

fn truth_orders(sandbox: &Sandbox) -> Vec<TruthOrder> {
    sandbox
        .inspect()
        .catalog_orders()
        .into_iter()
        .filter(|o| o.merchant_no == seed::MERCHANT_NO)
        .map(|o| TruthOrder {
            tag: o.inputs.get("gift_message").cloned(),
            order_no: o.order_no,
            user: o.user_id,
            paid: o.paid_at.is_some(),
            pay_amount: o.payment_pay_amount,
        })
        .collect()
}

#[derive(Default)]
struct Summary {
    payments_journaled: usize,
    payments_created: usize,
    payments_rejected: usize,
    paid_at_service: usize,
    by_status: BTreeMap<String, usize>,
    bookings: usize,
    orders_journaled: usize,
    orders_created: usize,
    orders_unknown: usize,
    orders_unknown_stored: usize,
    orders_rejected: usize,
    orders_paid: usize,
    requeued: u64,
    drain_steps: u32,
    wallet_lines: Vec<String>,
    catalog_lines: Vec<String>,
}

async fn reconcile(ctx: &Arc<Ctx>, summary: &mut Summary) -> AnyResult<()> {
    let a = &ctx.anomalies;
    let client = Client::new(ctx.client_config(Duration::ZERO))?;
    let truth = truth_payments(&ctx.sandbox);
    let keys = truth_keys(&ctx.sandbox);

    // Local journal snapshot.
    struct Local {
        reference: String,
        key: String,
        state: CreateState,
        order_no: Option<String>,
        amount: MinorAmount,
        currency: String,
        plan: Plan,
        paid_by: Option<PaidBy>,
        forced: Option<&'static str>,
        rejected: Option<String>,
    }
    let locals: Vec<Local> = {
        let ledger = ctx.ledger.lock().unwrap();
        ledger
            .payments
            .iter()
            .map(|p| Local {
                reference: p.request.external_reference.clone(),
                key: p.request.idempotency_key().to_owned(),
                state: p.state,
                order_no: p.order_no.clone(),
                amount: p.request.amount_minor,
                currency: p.request.currency.clone(),
                plan: p.plan,
                paid_by: p.paid_by.clone(),
                forced: p.forced,
                rejected: p.rejected.clone(),
            })
            .collect()
    };
    summary.payments_journaled = locals.len();
    let local_by_ref: HashMap<&str, &Local> =
        locals.iter().map(|l| (l.reference.as_str(), l)).collect();
    let local_keys: HashSet<&str> = locals.iter().map(|l| l.key.as_str()).collect();

    // 1. The sandbox's truth against the journal: one payment per reference, nothing unknown.
    let mut truth_by_ref: HashMap<&str, Vec<&TruthPayment>> = HashMap::new();
    for t in &truth {
        truth_by_ref
            .entry(t.reference.as_str())
            .or_default()
            .push(t);
        *summary.by_status.entry(t.status.clone()).or_default() += 1;
    }
    for (reference, list) in &truth_by_ref {
        if list.len() > 1 {
            a.report(
                "duplicate",
                format!("{reference}: {} payments stored", list.len()),
            );
        }
        match local_by_ref.get(reference) {
            None => a.report(
                "lost",
                format!("{reference}: stored by the service, unknown to the merchant"),
            ),
            Some(l) => {
                if l.order_no.as_deref() != Some(list[0].order_no.as_str()) {
                    a.report(
                        "lost",
                        format!(
                            "{reference}: stored as {} but the merchant holds {:?} ({:?})",
                            list[0].order_no, l.order_no, l.state
                        ),
                    );
                }
            }
        }
    }
    for (key, order_no) in &keys {
        if !local_keys.contains(key.as_str()) {
            a.report(
                "lost",
                format!("idempotency key {key} ({order_no}) not in the journal"),
            );
        }
    }
    for l in &locals {
        match l.state {
            CreateState::Created => summary.payments_created += 1,
            CreateState::Rejected => {
                summary.payments_rejected += 1;
                if truth_by_ref.contains_key(l.reference.as_str()) {
                    a.report(
                        "lost",
                        format!(
                            "{}: rejected ({:?}) yet stored by the service",
                            l.reference, l.rejected
                        ),
                    );
                }
            }
            s => a.report(
                "lost",
                format!("{}: still {s:?} after the retries", l.reference),
            ),
        }
    }

    // 2. Every created payment through the SDK: query, list by reference, delivery records.
    let results = futures_util::stream::iter(locals.iter().filter(|l| l.order_no.is_some()))
        .map(|l| {
            let client = client.clone();
            async move {
                let order_no = l.order_no.clone().unwrap_or_default();
                let got = past_rate_limit(ctx, || client.get_merchant_payment(&order_no)).await;
                let query = ListMerchantPaymentsQuery {
                    external_reference: Some(l.reference.clone()),
                    order_no: None,
                    limit: Some(100),
                };
                let listed = past_rate_limit(ctx, || client.list_merchant_payments(&query)).await;
                let records = past_rate_limit(ctx, || {
                    client.list_notification_records(&order_no, Some(100))
                })
                .await;
                (l, got, listed, records)
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    let mut service_event: HashMap<String, (String, Option<String>)> = HashMap::new();
    for (l, got, listed, records) in results {
        let order_no = l.order_no.clone().unwrap_or_default();
        match got {
            Ok(p) => {
                let e = PaymentExpectation {
                    external_reference: l.reference.clone(),
                    amount_minor: l.amount,
                    currency: l.currency.clone(),
                    test_mode: false,
                };
                if let Err(err) = e.check_payment(&p) {
                    a.report("mismatch", format!("{order_no}: {err}"));
                }
                if p.status.is_paid() {
                    summary.paid_at_service += 1;
                }
                let has_event = matches!(p.status.as_str(), "paid" | "refunded" | "chargeback");
                if has_event != p.event_id.is_some() {
                    a.report(
                        "mismatch",
                        format!(
                            "{order_no}: status {} with event {:?}",
                            p.status, p.event_id
                        ),
                    );
                }
                if let Some(paid) = &l.paid_by {
                    if p.event_id.as_deref() != Some(paid.event_id.as_str()) {
                        a.report(
                            "mismatch",
                            format!(
                                "{order_no}: paid at checkout as {} but the service says {:?}",
                                paid.event_id, p.event_id
                            ),
                        );
                    }
                    let expected = l.forced.unwrap_or("paid");
                    if p.status.as_str() != expected {
                        a.report(
                            "mismatch",
                            format!("{order_no}: expected {expected}, service says {}", p.status),
                        );
                    }
                } else if p.event_id.is_some() {
                    a.report(
                        "mismatch",
                        format!("{order_no}: paid without a buyer payment ({:?})", l.plan),
                    );
                }
                service_event.insert(order_no.clone(), (p.status.to_string(), p.event_id));
            }
            Err(e) => a.report("reconcile", format!("query {order_no}: {e}")),
        }
        match listed {
            Ok(items) if items.len() == 1 && items[0].order_no == order_no => {}
            Ok(items) => a.report(
                "duplicate",
                format!(
                    "{}: list by reference gives {:?}",
                    l.reference,
                    items.iter().map(|p| p.order_no.clone()).collect::<Vec<_>>()
                ),
            ),
            Err(e) => a.report("reconcile", format!("list {}: {e}", l.reference)),
        }
        match records {
            Ok(recs) => {
                if recs.is_empty() {
                    a.report("notification", format!("{order_no}: no delivery record"));
                }
                for r in recs {
                    if r.delivery_status != DeliveryStatus::Delivered {
                        a.report(
                            "notification",
                            format!(
                                "{order_no}: record {} v{} is {} after the drain",
                                r.event_id, r.status_version, r.delivery_status
                            ),
                        );
                    }
                }
            }
            Err(e) => a.report("reconcile", format!("records {order_no}: {e}")),
        }
    }

    // 3. The receiver's books: one booking per payment event, none for unpaid payments, and the
    //    latest applied version equal to the service's.
    {
        let book = ctx.receiver.book.lock().unwrap();
        summary.bookings = book.bookings.len();
        let mut per_event: HashMap<&str, usize> = HashMap::new();
        for b in &book.bookings {
            *per_event.entry(b.event_id.as_str()).or_default() += 1;
            match service_event.get(&b.order_no) {
                Some((_, Some(ev))) if *ev == b.event_id => {}
                None => a.report(
                    "reconcile",
                    format!(
                        "booking {} for {}: payment not read",
                        b.event_id, b.order_no
                    ),
                ),
                other => a.report(
                    "double_booking",
                    format!(
                        "booking {} (notification {}, {}) for {} which the service shows as {:?}",
                        b.event_id, b.notification_id, b.amount_minor, b.order_no, other
                    ),
                ),
            }
        }
        for (ev, n) in &per_event {
            if *n != 1 {
                a.report("double_booking", format!("event {ev} booked {n} times"));
            }
        }
        for (order_no, (status, ev)) in &service_event {
            if let Some(ev) = ev
                && !per_event.contains_key(ev.as_str())
            {
                a.report(
                    "booking",
                    format!("{order_no} ({status}) event {ev} never booked"),
                );
            }
        }
        for t in &truth {
            match book.latest.get(&t.order_no) {
                Some((v, s, _)) if *v == t.status_version && *s == t.status => {}
                other => a.report(
                    "notification",
                    format!(
                        "{}: receiver holds {:?}, service v{} {}",
                        t.order_no,
                        other.map(|o| (o.0, o.1.clone())),
                        t.status_version,
                        t.status
                    ),
                ),
            }
        }
    }

    // 4. Catalog: every stored order traced to exactly one create; wallets debited once.
    let orders = truth_orders(&ctx.sandbox);
    let local_orders: Vec<LocalOrder> = ctx.ledger.lock().unwrap().orders.clone();
    summary.orders_journaled = local_orders.len();
    let mut stored_by_tag: HashMap<&str, Vec<&TruthOrder>> = HashMap::new();
    for o in &orders {
        match o.tag.as_deref() {
            Some(tag) => stored_by_tag.entry(tag).or_default().push(o),
            None => a.report("lost", format!("order {} without a tag", o.order_no)),
        }
    }
    let local_tags: HashSet<&str> = local_orders.iter().map(|o| o.tag.as_str()).collect();
    for (tag, list) in &stored_by_tag {
        if list.len() > 1 {
            a.report(
                "duplicate",
                format!("order create {tag} stored {} times", list.len()),
            );
        }
        if !local_tags.contains(tag) {
            a.report("lost", format!("order {tag} stored but never journaled"));
        }
    }
    let mut per_user: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for LocalOrder {
        tag,
        user,
        state,
        order_no,
        start,
        rejected,
    } in &local_orders
    {
        let stored = stored_by_tag.get(tag.as_str()).map_or(0, Vec::len);
        let entry = per_user.entry(user.as_str()).or_default();
        match state {
            OrderState::Created => {
                summary.orders_created += 1;
                entry.0 += 1;
                let same = stored_by_tag
                    .get(tag.as_str())
                    .is_some_and(|l| l.iter().any(|o| Some(&o.order_no) == order_no.as_ref()));
                if !same {
                    a.report("lost", format!("order {tag} ({order_no:?}) not stored"));
                }
            }
            OrderState::Unknown => {
                summary.orders_unknown += 1;
                entry.1 += 1;
                summary.orders_unknown_stored += stored.min(1);
            }
            OrderState::Rejected => {
                summary.orders_rejected += 1;
                if stored > 0 {
                    a.report(
                        "lost",
                        format!("order {tag} rejected ({rejected:?}) yet stored"),
                    );
                }
            }
            OrderState::Sending => a.report("harness", format!("order {tag} still sending")),
        }
        entry.2 += stored;
        if let Some(no) = order_no {
            let paid = orders.iter().any(|o| &o.order_no == no && o.paid);
            let locally_paid = matches!(start, StartState::Paid | StartState::UnknownThenPaid);
            if locally_paid && !paid {
                a.report(
                    "mismatch",
                    format!("order {no} seen paid, not paid at the service"),
                );
            }
            if matches!(start, StartState::NotStarted | StartState::Rejected) && paid {
                a.report(
                    "mismatch",
                    format!("order {no} paid without a payment start"),
                );
            }
        }
    }
    for (user, (ok, unknown, stored)) in &per_user {
        // No duplicate: stored ≤ successes + unknowns; the tags resolve every unknown, so
        // stored == successes + the unknowns that reached the service.
        let resolved = local_orders
            .iter()
            .filter(|o| o.user == *user && o.state == OrderState::Unknown)
            .filter(|o| stored_by_tag.contains_key(o.tag.as_str()))
            .count();
        if *stored > ok + unknown || *stored != ok + resolved {
            a.report(
                "duplicate",
                format!(
                    "{user}: {stored} orders stored for {ok} created + {unknown} unknown ({resolved} of them stored)"
                ),
            );
        }
        summary.catalog_lines.push(format!(
            "{user}: stored {stored} = created {ok} + unknown-but-stored {resolved} (unknown {unknown})"
        ));
    }
    // SDK read of every created order (user sessions with fresh tokens).
    let sessions: HashMap<&str, UserSession> = BUYERS
        .iter()
        .map(|u| (*u, ctx.session(&client, u)))
        .collect();
    let reads = futures_util::stream::iter(
        local_orders
            .iter()
            .filter_map(|o| o.order_no.clone().map(|no| (o.user.clone(), no))),
    )
    .map(|(user, no)| {
        let session = sessions[user.as_str()].clone();
        async move {
            let r = past_rate_limit(ctx, || session.get_order(&no)).await;
            (no, r)
        }
    })
    .buffer_unordered(8)
    .collect::<Vec<_>>()
    .await;
    for (no, r) in reads {
        let truth = orders.iter().find(|o| o.order_no == no);
        match (r, truth) {
            (Ok(order), Some(t)) => {
                let paid = matches!(order.status.code(), 1 | 3);
                if paid != t.paid || order.payment_pay_amount.raw() != t.pay_amount {
                    a.report(
                        "mismatch",
                        format!("order {no}: SDK read differs from the service"),
                    );
                }
                if paid {
                    summary.orders_paid += 1;
                }
            }
            (Err(e), _) => a.report("reconcile", format!("get order {no}: {e}")),
            (Ok(_), None) => a.report("lost", format!("order {no} read but not stored")),
        }
    }
    // Wallets: the debit of each user equals its paid catalog orders plus its platform-coin
    // merchant payments, each once.
    let initial = ctx.stats.with_prefix("wallet.initial.");
    for (user, start) in initial {
        let now = ctx.control.wallet(&user).await?;
        let catalog: i64 = orders
            .iter()
            .filter(|o| o.user == user && o.paid)
            .map(|o| o.pay_amount)
            .sum();
        let collection: i64 = truth
            .iter()
            .filter(|t| {
                t.event_id.is_some()
                    && t.session_user.as_deref() == Some(user.as_str())
                    && t.session_channel.as_deref() == Some(seed::CHANNEL_PLATFORM_COIN)
            })
            .map(|t| t.settlement.unwrap_or(0))
            .sum();
        let local_collection: usize = locals
            .iter()
            .filter(|l| {
                l.paid_by.as_ref().is_some_and(|p| {
                    p.user.as_deref() == Some(user.as_str())
                        && p.channel == seed::CHANNEL_PLATFORM_COIN
                })
            })
            .count();
        let truth_collection = truth
            .iter()
            .filter(|t| {
                t.event_id.is_some()
                    && t.session_user.as_deref() == Some(user.as_str())
                    && t.session_channel.as_deref() == Some(seed::CHANNEL_PLATFORM_COIN)
            })
            .count();
        if local_collection != truth_collection {
            a.report(
                "wallet",
                format!("{user}: {local_collection} coin payments paid locally, {truth_collection} at the service"),
            );
        }
        let debit = start as i64 - now;
        if debit != catalog + collection {
            a.report(
                "wallet",
                format!(
                    "{user}: debited {debit}, paid orders {catalog} + coin payments {collection}"
                ),
            );
        }
        summary.wallet_lines.push(format!(
            "{user}: debited {} coin = catalog {} + collection {}",
            fmt_coin(debit),
            fmt_coin(catalog),
            fmt_coin(collection)
        ));
    }
    Ok(())
}

fn fmt_coin(raw: i64) -> String {
    storefront::FixedPoint8::from_raw(raw)
        .to_decimal_string(8)
        .unwrap_or_else(|_| raw.to_string())
}

// ------------------------------------------------------------------------------------------
// Main flow
// ------------------------------------------------------------------------------------------

struct Args {
    seconds: u64,
    clients: usize,
    seed: u64,
    tls: bool,
    misbehave: Misbehave,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        seconds: 120,
        clients: 8,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 % 1_000_000_007)
            .unwrap_or(1),
        tls: false,
        misbehave: Misbehave::None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a number"))
        };
        match a.as_str() {
            "--seconds" => args.seconds = value("--seconds")?,
            "--clients" => args.clients = value("--clients")? as usize,
            "--seed" => args.seed = value("--seed")?,
            "--tls" => args.tls = true,
            "--misbehave" => {
                args.misbehave = match it.next().as_deref() {
                    Some("reorder") => Misbehave::Reorder,
                    Some("new-key") => Misbehave::NewKey,
                    Some("double-book") => Misbehave::DoubleBook,
                    _ => return Err("--misbehave needs reorder, new-key or double-book".into()),
                }
            }
            "-h" | "--help" => {
                return Err("usage: soak [--seconds N] [--clients N] [--seed N] [--tls] [--misbehave reorder|new-key|double-book]".into());
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    args.seconds = args.seconds.clamp(1, MAX_SECONDS);
    args.clients = args.clients.clamp(1, MAX_CLIENTS);
    Ok(args)
}

async fn run(args: &Args) -> AnyResult<bool> {
    let started = Instant::now();
    let sandbox = Sandbox::start_with(SandboxOptions {
        tls: args.tls,
        rate_limit_window_seconds: RATE_WINDOW_SECONDS,
        ..Default::default()
    })
    .await?;
    let control = Control::new(&sandbox)?;
    let stats = Arc::new(Stats::default());
    let anomalies = Arc::new(Anomalies::default());
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    // Deliveries carry the real time of the attempt, so the receiver checks timestamps on its
    // ordinary clock while this run moves the sandbox clock forward.
    let verifier = WebhookVerifier::new(NOTIFY_SECRETS)?;
    let receiver = Arc::new(Receiver {
        verifier,
        book: Mutex::new(Book::default()),
        ledger: ledger.clone(),
        stats: stats.clone(),
        anomalies: anomalies.clone(),
        rng: Mutex::new(Rng::new(args.seed ^ 0xAAAA)),
        faults_on: AtomicBool::new(true),
        blackout_over: AtomicBool::new(false),
        seed: args.seed,
        double_book: args.misbehave == Misbehave::DoubleBook,
    });
    let receiver_url = start_receiver(receiver.clone()).await?;
    for user in [seed::USER_ALICE, seed::USER_CAROL] {
        control
            .ok(
                "PUT",
                &format!("/users/{user}/wallet"),
                Some(json!({ "wallet": RICH_WALLET })),
            )
            .await?;
    }
    for user in BUYERS {
        let w = control.wallet(user).await?;
        stats.add(&format!("wallet.initial.{user}"), w as u64);
    }
    let ctx = Arc::new(Ctx {
        sandbox,
        control,
        ledger,
        stats,
        anomalies,
        receiver,
        receiver_url,
        running: AtomicBool::new(true),
        seed: args.seed,
        misbehave: args.misbehave,
    });
    println!(
        "soak: {} s, {} clients, seed {}, sandbox {}{}",
        args.seconds,
        args.clients,
        args.seed,
        ctx.sandbox.origin(),
        match args.misbehave {
            Misbehave::None => String::new(),
            m => format!(" (deliberate client bug: {m:?})"),
        }
    );

    // --- load phase ------------------------------------------------------------------------
    let mut tasks = Vec::new();
    // One merchant client shared by every worker, as a merchant server shares it between its
    // requests: one token cache, one rate limiter, one pool of connections.
    let shared_client = Client::new(ctx.client_config(Duration::from_secs(2)))?;
    for id in 0..args.clients {
        let client = shared_client.clone();
        let sessions = BUYERS
            .iter()
            .map(|u| (u.to_string(), ctx.session(&client, u)))
            .collect();
        let worker = Worker {
            id,
            ctx: ctx.clone(),
            client,
            sessions,
            rng: Rng::new(args.seed.wrapping_add(1 + id as u64)),
            payments: 0,
            orders: 0,
            late: Vec::new(),
        };
        tasks.push(tokio::spawn(worker.run()));
    }
    let injector = tokio::spawn(fault_injector(ctx.clone(), Rng::new(args.seed ^ 0xFA17)));
    let clock = tokio::spawn(clock_mover(ctx.clone(), Rng::new(args.seed ^ 0xC10C)));
    let load_end = Instant::now() + Duration::from_secs(args.seconds);
    while Instant::now() < load_end {
        let left = load_end.saturating_duration_since(Instant::now());
        tokio::time::sleep(left.min(Duration::from_secs(10))).await;
        let ledger = ctx.ledger.lock().unwrap();
        println!(
            "  t+{:>4}s  payments {:>6}  orders {:>5}  faults {:>5}  notifications {:>6}  bookings {:>5}",
            started.elapsed().as_secs(),
            ledger.payments.len(),
            ledger.orders.len(),
            ctx.stats.sum_prefix("fault."),
            ctx.stats.get("notify.verified"),
            ctx.stats.get("notify.booked"),
        );
    }
    ctx.running.store(false, Ordering::SeqCst);
    for t in tasks {
        if let Err(e) = t.await
            && e.is_panic()
        {
            ctx.anomalies.report("panic", "a worker panicked".into());
        }
    }
    for t in [injector, clock] {
        if let Err(e) = t.await
            && e.is_panic()
        {
            ctx.anomalies
                .report("panic", "a background task panicked".into());
        }
    }
    let load_secs = started.elapsed().as_secs();

    // --- wrap-up ---------------------------------------------------------------------------
    // Stop faults; let handlers delayed by latency faults finish.
    ctx.control.ok("DELETE", "/faults", None).await?;
    ctx.receiver.faults_on.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(MAX_FAULT_LATENCY_MS + 500)).await;
    // Creates whose answer never came back: the same request with the same key.
    let settle_client = Client::new(ctx.client_config(Duration::ZERO))?;
    for _round in 0..20 {
        let pending: Vec<String> = std::mem::take(&mut ctx.ledger.lock().unwrap().outbox);
        if pending.is_empty() {
            break;
        }
        let unique: HashSet<String> = pending.into_iter().collect();
        for reference in unique {
            let state = {
                let l = ctx.ledger.lock().unwrap();
                l.payments[l.by_reference[&reference]].state
            };
            if state == CreateState::Created {
                continue;
            }
            ctx.stats.bump("mp.create.retry_at_end");
            if create_payment(&ctx, &settle_client, &reference)
                .await
                .is_none()
                && ctx.ledger.lock().unwrap().outbox.contains(&reference)
            {
                // Probably the create rate limit: move the clock past its window.
                ctx.control.advance(60).await?;
            }
        }
    }
    // Notifications: walk the retry schedule, re-queue what is exhausted, drain again.
    let mut steps = drain(&ctx).await?;
    ctx.receiver.blackout_over.store(true, Ordering::SeqCst);
    let created: Vec<String> = {
        let l = ctx.ledger.lock().unwrap();
        l.payments
            .iter()
            .filter_map(|p| p.order_no.clone())
            .collect()
    };
    let exhausted: Vec<(String, String)> = {
        let view = ctx.sandbox.inspect();
        created
            .iter()
            .flat_map(|no| {
                view.deliveries(no)
                    .into_iter()
                    .filter(|r| r.status == storefront_sandbox::inspect::DeliveryStatus::Failed)
                    .map(|r| (no.clone(), r.event_id))
            })
            .collect()
    };
    for (order_no, event_id) in &exhausted {
        // Through the SDK's delivery records and re-queue, as a merchant would.
        let records = past_rate_limit(&ctx, || {
            settle_client.list_notification_records(order_no, Some(100))
        })
        .await;
        let failed = records.as_ref().is_ok_and(|rs| {
            rs.iter()
                .any(|r| &r.event_id == event_id && r.delivery_status == DeliveryStatus::Failed)
        });
        if !failed {
            ctx.anomalies.report(
                "notification",
                format!(
                    "{order_no}: exhausted record {event_id} not listed as failed: {records:?}"
                ),
            );
        }
        match past_rate_limit(&ctx, || {
            settle_client.retry_notification(order_no, event_id)
        })
        .await
        {
            Ok(r) if r.accepted => ctx.stats.bump("notify.requeued"),
            Ok(_) => ctx.anomalies.report(
                "notification",
                format!("re-queue of {event_id} not accepted"),
            ),
            Err(e) => ctx
                .anomalies
                .report("notification", format!("re-queue of {event_id}: {e}")),
        }
    }
    quiesce(&ctx.sandbox).await;
    steps += drain(&ctx).await?;
    let mut summary = Summary {
        requeued: ctx.stats.get("notify.requeued"),
        drain_steps: steps,
        ..Summary::default()
    };
    reconcile(&ctx, &mut summary).await?;

    print_summary(&ctx, args, &summary, load_secs, started.elapsed().as_secs());
    Ok(ctx.anomalies.total() == 0 && PANICS.load(Ordering::SeqCst) == 0)
}

fn print_summary(ctx: &Ctx, args: &Args, s: &Summary, load_secs: u64, total_secs: u64) {
    let st = &ctx.stats;
    let an = &ctx.anomalies;
    println!();
    println!(
        "soak summary (seed {}, {} clients, load {} s, total {} s, sandbox clock +{} s)",
        args.seed,
        args.clients,
        load_secs,
        total_secs,
        ctx.sandbox.shared().clock.offset_seconds()
    );
    println!("operations:");
    println!(
        "  merchant payments  journaled {}, created {} (first call {}, retried later {}), rejected {}",
        s.payments_journaled,
        s.payments_created,
        st.get("mp.create.ok_first_call"),
        st.get("mp.create.ok_after_retry_later"),
        s.payments_rejected
    );
    println!(
        "                     unconfirmed creates {} (retried with the same key: during the run {}, at the end {})",
        st.sum_prefix("mp.create.unconfirmed."),
        st.get("mp.create.retry_later"),
        st.get("mp.create.retry_at_end")
    );
    println!(
        "                     paid at checkout {} (late, after review {}), refused {}, refunded {}, charged back {}",
        st.get("mp.pay.now.ok") + st.get("mp.pay.late.ok"),
        st.get("mp.pay.late.ok"),
        st.sum_prefix("mp.pay.now.refused.") + st.sum_prefix("mp.pay.late.refused."),
        st.get("mp.forced.refunded"),
        st.get("mp.forced.chargeback")
    );
    println!(
        "                     reads {} ok / {} failed, lists {} ok / {} failed",
        st.get("mp.read.ok"),
        st.sum_prefix("mp.read.err."),
        st.get("mp.list.ok"),
        st.sum_prefix("mp.list.err.")
    );
    let statuses: Vec<String> = s
        .by_status
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!("                     final states: {}", statuses.join(", "));
    println!(
        "  catalog orders     journaled {}, created {}, outcome unknown {} (stored {}, not stored {}), rejected {}, paid {}",
        s.orders_journaled,
        s.orders_created,
        s.orders_unknown,
        s.orders_unknown_stored,
        s.orders_unknown - s.orders_unknown_stored,
        s.orders_rejected,
        s.orders_paid
    );
    println!(
        "                     payment starts ok {}, outcome unknown {}, rejected {}",
        st.get("order.start.ok"),
        st.get("order.start.outcome_unknown"),
        st.sum_prefix("order.start.rejected.")
    );
    for line in &s.catalog_lines {
        println!("  orders per user    {line}");
    }
    for line in &s.wallet_lines {
        println!("  wallet             {line}");
    }
    println!(
        "  clock              advanced {} s during the load; drain steps {}",
        st.get("clock.advanced_seconds"),
        s.drain_steps
    );
    let faults = st.with_prefix("fault.");
    println!(
        "faults injected: {} in all",
        faults.iter().map(|(_, v)| v).sum::<u64>()
    );
    for (k, v) in &faults {
        println!("  {k:<36} {v}");
    }
    let errors: Vec<String> = st
        .with_prefix("mp.create.unconfirmed.")
        .into_iter()
        .chain(st.with_prefix("order.create.other_error."))
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if !errors.is_empty() {
        println!("  seen by the SDK: {}", errors.join(", "));
    }
    if an.total() > 0 {
        for (label, texts) in st.1.lock().unwrap().iter() {
            for t in texts {
                println!("  example {label}: {t}");
            }
        }
    }
    let refusals: Vec<String> = [
        "mp.pay.now.refused.",
        "mp.pay.late.refused.",
        "order.create.rejected.",
        "order.start.rejected.",
    ]
    .iter()
    .flat_map(|p| {
        st.with_prefix(p).into_iter().map(move |(k, v)| {
            format!(
                "{}{k} {v}",
                p.trim_end_matches("refused.").trim_end_matches("rejected.")
            )
        })
    })
    .collect();
    if !refusals.is_empty() {
        println!("definite refusals (nothing done): {}", refusals.join(", "));
    }
    println!(
        "notifications: received {}, verified {}, rejected {}, duplicates absorbed {}, stale ignored {}, receiver faults {}, re-queued {}",
        st.get("notify.received"),
        st.get("notify.verified"),
        st.sum_prefix("notify.rejected."),
        st.get("notify.duplicate_id_absorbed"),
        st.get("notify.stale_ignored"),
        st.sum_prefix("notify.receiver_fault."),
        s.requeued
    );
    println!(
        "bookings: {} (payments paid at the service now {}, with a payment event {})",
        s.bookings,
        s.paid_at_service,
        s.by_status.get("paid").unwrap_or(&0)
            + s.by_status.get("refunded").unwrap_or(&0)
            + s.by_status.get("chargeback").unwrap_or(&0)
    );
    println!(
        "outcome-unknowns: order creates {}, payment starts {}",
        st.get("order.create.outcome_unknown") + st.sum_prefix("order.create.other_error."),
        st.get("order.start.outcome_unknown")
    );
    println!("duplicates: {}", an.count("duplicate"));
    println!("lost: {}", an.count("lost"));
    println!("double bookings: {}", an.count("double_booking"));
    println!(
        "panics: {}",
        PANICS.load(Ordering::SeqCst) + an.count("panic")
    );
    let others = an.total()
        - an.count("duplicate")
        - an.count("lost")
        - an.count("double_booking")
        - an.count("panic");
    println!("other mismatches: {others}");
    for m in an.messages.lock().unwrap().iter() {
        println!("  {m}");
    }
}

fn main() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        default_hook(info);
    }));
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let budget = Duration::from_secs(args.seconds) + WRAP_UP_BUDGET;
    let outcome = runtime.block_on(async { tokio::time::timeout(budget, run(&args)).await });
    runtime.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(Ok(true)) => println!("RESULT: PASS"),
        Ok(Ok(false)) => {
            println!("RESULT: FAIL (seed {} reproduces the decisions)", args.seed);
            std::process::exit(1);
        }
        Ok(Err(e)) => {
            eprintln!("RESULT: ERROR {e} (seed {})", args.seed);
            std::process::exit(1);
        }
        Err(_) => {
            eprintln!(
                "RESULT: ERROR the soak did not finish within {} s (seed {})",
                budget.as_secs(),
                args.seed
            );
            std::process::exit(3);
        }
    }
}
