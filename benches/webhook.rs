//! Webhook verification cost for a 700-byte notification body (see BENCHMARKS.md).
//!
//! `cargo bench --bench webhook`

use std::sync::Arc;

use divan::{Bencher, black_box};
use storefront::{TestSigner, WebhookVerifier};

fn main() {
    divan::main();
}

const SECRET: &str = "bench-notify-secret-0123456789abcdef0123";
const NOW: i64 = 1_790_000_000;

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

/// Full verification: headers, tolerance, HMAC (constant time), typed parse, id check.
#[divan::bench]
fn verify_700b(bencher: Bencher) {
    let body = body();
    let sig = TestSigner::new(SECRET).signature(NOW, &body);
    let v = verifier(0);
    let ts = NOW.to_string();
    bencher.bench_local(|| {
        v.verify(
            black_box(Some("evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e")),
            black_box(Some(ts.as_str())),
            black_box(Some(sig.as_str())),
            black_box(&body),
        )
        .unwrap()
    });
}

/// Same with the matching secret last of three (rotation).
#[divan::bench]
fn verify_700b_third_secret(bencher: Bencher) {
    let body = body();
    let sig = TestSigner::new(SECRET).signature(NOW, &body);
    let v = verifier(2);
    let ts = NOW.to_string();
    bencher.bench_local(|| {
        v.verify(
            black_box(Some("evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e")),
            black_box(Some(ts.as_str())),
            black_box(Some(sig.as_str())),
            black_box(&body),
        )
        .unwrap()
    });
}

/// A forged signature is rejected before any JSON parsing.
#[divan::bench]
fn reject_forged_700b(bencher: Bencher) {
    let body = body();
    let sig = TestSigner::new("not-the-secret-bbbbbbbbbbbbbbbbbbbbbbbb").signature(NOW, &body);
    let v = verifier(0);
    let ts = NOW.to_string();
    bencher.bench_local(|| {
        v.verify(
            black_box(Some("evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e")),
            black_box(Some(ts.as_str())),
            black_box(Some(sig.as_str())),
            black_box(&body),
        )
        .unwrap_err()
    });
}

/// The signer's cost (what the service computes per delivery): key setup, HMAC, hex, `format!`.
#[divan::bench]
fn hmac_sign_700b(bencher: Bencher) {
    let body = body();
    let signer = TestSigner::new(SECRET);
    bencher.bench_local(|| signer.signature(black_box(NOW), black_box(&body)));
}

/// Raw `ring::hmac::sign` over the signed input (timestamp, dot, body) with the key already set
/// up: the cost the verifier pays per configured secret, comparable with the toolchain notes.
#[divan::bench]
fn ring_hmac_raw_700b(bencher: Bencher) {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    let mut input = format!("{NOW}.").into_bytes();
    input.extend_from_slice(&body());
    bencher.bench_local(|| ring::hmac::sign(black_box(&key), black_box(&input)));
}

/// The typed JSON parse alone, for the ratio.
#[divan::bench]
fn parse_700b(bencher: Bencher) {
    let body = body();
    bencher.bench_local(|| {
        serde_json::from_slice::<storefront::StatusNotification>(black_box(&body)).unwrap()
    });
}
