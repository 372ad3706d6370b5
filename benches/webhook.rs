//! Webhook verification cost for a 700-byte notification body (see BENCHMARKS.md).
//!
//! `cargo bench --bench webhook`
//!
//! After divan's table, a second pass (only under `cargo bench`, and only without a name
//! filter) times the four figures the ratios are made of alternately, round after round, in
//! the same process: the raw HMAC floor, `verify_raw_at`, `verify_at` and the
//! `standardwebhooks` crate (verify then typed parse), and prints each one's median and its
//! ratios to the floor and to `standardwebhooks`.

use std::hint::black_box as bb;
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use divan::{Bencher, black_box};
use storefront::{StatusNotification, TestSigner, WebhookVerifier};

fn main() {
    divan::main();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filtered = args.iter().any(|a| !a.starts_with('-'));
    if args.iter().any(|a| a == "--bench") && !filtered {
        ratios();
    }
}

const SECRET: &str = "bench-notify-secret-0123456789abcdef0123";
const NOW: i64 = 1_790_000_000;
const EVENT_ID: &str = "evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e";

/// A genuine-looking notification padded to exactly 700 bytes.
fn body() -> Vec<u8> {
    let head = r#"{"id":"evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e","type":"merchant_payment.status_changed","api_version":1,"created_at":"2026-09-21T10:00:05Z","data":{"order_no":"202609211000000000042","external_reference":"shop-order-1001","payment_no":"ch_card_usd","amount_minor":1250,"currency":"USD","currency_decimals":2,"status":"paid","status_version":2,"test_mode":false,"expires_at":"2026-09-21T10:30:00Z","event_id":"pe_b093a5293d502f614e47126f","provider_trade_no":"PT-"#;
    let tail = r#"","occurred_at":"2026-09-21T10:01:00+00:00"}}"#;
    let pad = 700 - head.len() - tail.len();
    let body = format!("{head}{}{tail}", "7".repeat(pad));
    assert_eq!(body.len(), 700);
    body.into_bytes()
}

fn verifier(extra_secrets: usize) -> WebhookVerifier {
    let mut secrets: Vec<String> = (0..extra_secrets)
        .map(|i| format!("rotated-out-secret-{i:02}-aaaaaaaaaaaaaaaaaaaa"))
        .collect();
    secrets.push(SECRET.into());
    WebhookVerifier::new(secrets)
        .unwrap()
        .with_clock(Arc::new(|| NOW))
}

/// A storefront delivery: verifier, timestamp header, signature header, body.
struct Delivery {
    verifier: WebhookVerifier,
    ts: String,
    sig: String,
    body: Vec<u8>,
}

impl Delivery {
    fn new(extra_secrets: usize, signing_secret: &str) -> Self {
        let body = body();
        Delivery {
            verifier: verifier(extra_secrets),
            ts: NOW.to_string(),
            sig: TestSigner::new(signing_secret).signature(NOW, &body),
            body,
        }
    }

    /// Signature and envelope only (the borrowed view).
    fn verify_raw(&self) -> Result<storefront::VerifiedNotification<'_>, storefront::WebhookError> {
        self.verifier.verify_raw_at(
            bb(NOW),
            bb(Some(EVENT_ID)),
            bb(Some(self.ts.as_str())),
            bb(Some(self.sig.as_str())),
            bb(&self.body),
        )
    }

    /// Full verification and typed decode.
    fn verify(&self) -> Result<StatusNotification, storefront::WebhookError> {
        self.verifier.verify_at(
            bb(NOW),
            bb(Some(EVENT_ID)),
            bb(Some(self.ts.as_str())),
            bb(Some(self.sig.as_str())),
            bb(&self.body),
        )
    }
}

/// The raw HMAC floor: `ring::hmac::sign` over the signed input (timestamp, dot, body, already
/// contiguous) with the key already set up, no other work.
struct Floor {
    key: ring::hmac::Key,
    input: Vec<u8>,
}

impl Floor {
    fn new() -> Self {
        let mut input = format!("{NOW}.").into_bytes();
        input.extend_from_slice(&body());
        Floor {
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes()),
            input,
        }
    }

    fn run(&self) -> ring::hmac::Tag {
        ring::hmac::sign(bb(&self.key), bb(&self.input))
    }
}

/// The same body delivered the Standard Webhooks way (`standardwebhooks` crate): a base64
/// `whsec_` secret, headers `webhook-id`, `webhook-timestamp` (now: the crate reads the system
/// clock) and `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`, signed by the
/// crate itself; verification is its `verify` then the same typed parse.
struct Standard {
    webhook: standardwebhooks::Webhook,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

impl Standard {
    fn new() -> Self {
        let secret = format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode(SECRET)
        );
        let webhook = standardwebhooks::Webhook::new(&secret).unwrap();
        let body = body();
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let signature = webhook.sign(EVENT_ID, now, &body).unwrap();
        let mut headers = http::HeaderMap::new();
        headers.insert(
            standardwebhooks::HEADER_WEBHOOK_ID,
            EVENT_ID.parse().unwrap(),
        );
        headers.insert(
            standardwebhooks::HEADER_WEBHOOK_TIMESTAMP,
            now.to_string().parse().unwrap(),
        );
        headers.insert(
            standardwebhooks::HEADER_WEBHOOK_SIGNATURE,
            signature.parse().unwrap(),
        );
        let standard = Standard {
            webhook,
            headers,
            body,
        };
        // It really verifies: a changed byte is refused.
        let mut forged = standard.body.clone();
        forged[10] ^= 1;
        assert!(standard.webhook.verify(&forged, &standard.headers).is_err());
        standard
    }

    fn run(&self) -> StatusNotification {
        self.webhook
            .verify(bb(&self.body), bb(&self.headers))
            .unwrap();
        serde_json::from_slice::<StatusNotification>(bb(&self.body)).unwrap()
    }
}

/// The floor: raw `ring::hmac::sign` over timestamp + `.` + body, key already set up (what the
/// verifier pays per configured secret).
#[divan::bench]
fn ring_hmac_raw_700b(bencher: Bencher) {
    let floor = Floor::new();
    bencher.bench_local(|| floor.run());
}

/// `verify_raw_at`: headers, tolerance, signature format, HMAC (constant time), envelope
/// (`id`, `type`, `api_version`, `created_at`); `data` left undecoded.
#[divan::bench]
fn verify_raw_700b(bencher: Bencher) {
    let d = Delivery::new(0, SECRET);
    bencher.bench_local(|| d.verify_raw().map(|n| black_box(n).api_version()).unwrap());
}

/// `verify_at`: everything `verify_raw_at` does, then the typed decode of `data`.
#[divan::bench]
fn verify_700b(bencher: Bencher) {
    let d = Delivery::new(0, SECRET);
    bencher.bench_local(|| d.verify().unwrap());
}

/// `verify_at` with the matching secret last of three (rotation).
#[divan::bench]
fn verify_700b_third_secret(bencher: Bencher) {
    let d = Delivery::new(2, SECRET);
    bencher.bench_local(|| d.verify().unwrap());
}

/// A forged signature is rejected before any JSON parsing.
#[divan::bench]
fn reject_forged_700b(bencher: Bencher) {
    let d = Delivery::new(0, "not-the-secret-bbbbbbbbbbbbbbbbbbbbbbbb");
    bencher.bench_local(|| d.verify_raw().map(|_| ()).unwrap_err());
}

/// `standardwebhooks` 1.0.1: its `verify` on the same body, then the same typed parse.
#[divan::bench]
fn standardwebhooks_700b(bencher: Bencher) {
    let s = Standard::new();
    bencher.bench_local(|| s.run());
}

/// The signer's cost (what the service computes per delivery): key setup, HMAC, hex, `format!`.
#[divan::bench]
fn hmac_sign_700b(bencher: Bencher) {
    let body = body();
    let signer = TestSigner::new(SECRET);
    bencher.bench_local(|| signer.signature(black_box(NOW), black_box(&body)));
}

/// The typed JSON parse of the whole body alone.
#[divan::bench]
fn parse_700b(bencher: Bencher) {
    let body = body();
    bencher.bench_local(|| serde_json::from_slice::<StatusNotification>(black_box(&body)).unwrap());
}

/// Rounds of the alternating pass, and calls per timed batch: short batches (0.1 to 1 ms), so
/// that on a shared machine most of them run without being preempted and the median is the
/// cost of the code, not of the wait.
const ROUNDS: usize = 2_000;
const BATCH: u32 = 100;

/// Nanoseconds per call of `f` over one batch.
fn batch_ns<T>(mut f: impl FnMut() -> T) -> f64 {
    let start = Instant::now();
    for _ in 0..BATCH {
        bb(f());
    }
    start.elapsed().as_nanos() as f64 / f64::from(BATCH)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The ratio pass: floor, raw, full and standardwebhooks timed alternately batch after batch
/// (so they share the machine's load), medians per figure, ratios of the medians.
fn ratios() {
    let floor = Floor::new();
    let d = Delivery::new(0, SECRET);
    let standard = Standard::new();
    let mut times: [Vec<f64>; 4] = Default::default();
    for _ in 0..ROUNDS {
        times[0].push(batch_ns(|| floor.run()));
        times[1].push(batch_ns(|| {
            d.verify_raw().map(|n| n.api_version()).unwrap()
        }));
        times[2].push(batch_ns(|| d.verify().unwrap()));
        times[3].push(batch_ns(|| standard.run()));
    }
    let [floor_ns, raw_ns, full_ns, std_ns] = times.map(median);
    println!();
    println!("ratios: {ROUNDS} alternating rounds of {BATCH} calls, medians per call");
    for (name, ns) in [
        ("ring_hmac_raw (floor)", floor_ns),
        ("verify_raw_at", raw_ns),
        ("verify_at", full_ns),
        ("standardwebhooks+parse", std_ns),
    ] {
        println!(
            "  {name:<24} {:>7.3} us   {:>5.2} x floor   standardwebhooks / this {:>5.2}",
            ns / 1000.0,
            ns / floor_ns,
            std_ns / ns
        );
    }
}
