//! The standalone binary as an app developer's local service (issue 17 items 3 and 5):
//! `--notify-to` sends every payment's notifications, signed, to a receiver the test starts;
//! `storefront-sandbox trigger` drives the running sandbox (pay, refund, advance the clock,
//! redeliver, expire); and deliveries carry the real time of the attempt in
//! `X-Service-Timestamp`, also after the sandbox clock is advanced by an hour.

mod harness;

use harness::{Running, scratch_dir};
mod merchant_payments_support;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use merchant_payments_support::{Received, Receiver};
use ring::hmac;
use serde_json::{Value, json};
use storefront_sandbox::seed;

const BINARY: &str = env!("CARGO_BIN_EXE_storefront-sandbox");

/// Starts the binary with `args` and returns it with its ready file and what it printed up to
/// the end of its start-up banner (the first empty line after the notification lines, or the
/// whole banner).
fn start(args: &[&str], ready: &Path, env: &[(&str, &str)]) -> (Running, Value, String) {
    let mut child = Command::new(BINARY)
        .args(["--port", "0", "--ready-file"])
        .arg(ready)
        .args(args)
        .env_remove("STOREFRONT_NOTIFY_SECRET")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().unwrap();
    let running = Running(child);
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = String::new();
    let ready_json = loop {
        if let Ok(text) = std::fs::read_to_string(ready) {
            break serde_json::from_str::<Value>(&text).expect("the ready file is JSON");
        }
        while let Ok(line) = lines_rx.try_recv() {
            printed.push_str(&line);
            printed.push('\n');
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The ready file is written after the banner.
    while let Ok(line) = lines_rx.recv_timeout(Duration::from_millis(300)) {
        printed.push_str(&line);
        printed.push('\n');
    }
    (running, ready_json, printed)
}

/// Runs `storefront-sandbox trigger --ready-file READY ARGS...`; returns its JSON answer.
fn trigger(ready: &Path, args: &[&str]) -> Value {
    let output = Command::new(BINARY)
        .arg("trigger")
        .arg("--ready-file")
        .arg(ready)
        .args(args)
        .output()
        .expect("trigger runs");
    assert!(
        output.status.success(),
        "trigger {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("trigger prints JSON")
}

fn verify(secret: &str, received: &Received) {
    let timestamp = received.header("x-service-timestamp");
    let mut signed = timestamp.clone().into_bytes();
    signed.push(b'.');
    signed.extend_from_slice(&received.body);
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let expected = format!("sha256={}", hex::encode(hmac::sign(&key, &signed).as_ref()));
    assert_eq!(received.header("x-service-signature"), expected);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let sent: i64 = timestamp.parse().expect("the timestamp is Unix seconds");
    assert!(
        (now - sent).abs() <= 60,
        "X-Service-Timestamp {sent} is the real time of the attempt (now {now})"
    );
}

async fn merchant_token(http: &reqwest::Client, ready: &Value) -> String {
    let answer: Value = http
        .post(ready["token_endpoint"].as_str().unwrap())
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", seed::MERCHANT_CLIENT_ID),
            ("client_secret", seed::MERCHANT_CLIENT_SECRET),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["access_token"].as_str().unwrap().to_owned()
}

async fn create_payment(http: &reqwest::Client, ready: &Value, token: &str, key: &str) -> String {
    let created: Value = http
        .post(format!(
            "{}/openapi/v1/merchant-payments",
            ready["base_url"].as_str().unwrap()
        ))
        .bearer_auth(token)
        .json(&json!({
            "external_reference": format!("order-{key}"),
            "idempotency_key": key,
            "amount_minor": 1250,
            "currency": "USD",
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    created["order_no"]
        .as_str()
        .unwrap_or_else(|| panic!("created: {created}"))
        .to_owned()
}

/// Waits for the first delivery of the event with `status` (events of one payment are sent
/// concurrently, so they may arrive in any order).
async fn delivery_of(receiver: &Receiver, status: &str) -> Received {
    for _ in 0..200 {
        if let Some(found) = receiver
            .received()
            .into_iter()
            .find(|r| event_status(r) == status)
        {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no {status} notification arrived");
}

fn event_status(received: &Received) -> String {
    received.json()["data"]["status"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn notify_to_delivers_signed_notifications_and_trigger_drives_the_sandbox() {
    let receiver = Receiver::start().await;
    let dir = scratch_dir("notify-to");
    let ready_path = dir.join("ready.json");
    let (_running, ready, printed) = start(&["--notify-to", &receiver.url], &ready_path, &[]);
    let secret = printed
        .lines()
        .find_map(|l| l.trim().strip_prefix("export STOREFRONT_NOTIFY_SECRET="))
        .unwrap_or_else(|| panic!("the secret is printed once with the app's line:\n{printed}"))
        .to_owned();
    assert_eq!(printed.matches(&secret).count(), 1, "{printed}");
    assert!(printed.contains(&receiver.url), "{printed}");
    let ready_text = std::fs::read_to_string(&ready_path).unwrap();
    assert!(
        !ready_text.contains(&secret),
        "the notification secret is shown once, not kept in the ready file"
    );

    let http = harness::http_client(None);
    let token = merchant_token(&http, &ready).await;
    let order_no = create_payment(&http, &ready, &token, "cli-1").await;

    let paid = trigger(
        &ready_path,
        &["pay", &order_no, "--channel", seed::CHANNEL_CARD_USD],
    );
    assert_eq!(paid["status"], "paid", "{paid}");
    verify(&secret, &delivery_of(&receiver, "paid").await);

    let refunded = trigger(&ready_path, &["refund", &order_no]);
    assert_eq!(refunded["status"], "refunded", "{refunded}");
    let refund = delivery_of(&receiver, "refunded").await;
    verify(&secret, &refund);

    // An hour of sandbox time later, a redelivery is still signed with the real time.
    let clock = trigger(&ready_path, &["advance", "3600"]);
    assert!(
        clock["offset_seconds"].as_i64().unwrap_or(0) >= 3600,
        "{clock}"
    );
    let event_id = refund.header("x-service-event-id");
    let before = receiver.received_for(&event_id).len();
    let queued = trigger(&ready_path, &["redeliver", &order_no, &event_id]);
    assert_eq!(queued["redelivery"], "queued", "{queued}");
    let again = receiver.wait_for_event(&event_id, before + 1).await;
    let last = again.last().unwrap();
    assert_eq!(last.body, refund.body, "the same stored body is sent again");
    verify(&secret, last);

    // Expire: the clock moves to the payment's expires_at and the sweep runs.
    // (The hour made the first token expire.)
    let token = merchant_token(&http, &ready).await;
    let open = create_payment(&http, &ready, &token, "cli-2").await;
    let expired = trigger(&ready_path, &["expire", &open]);
    assert_eq!(expired["status"], "expired", "{expired}");

    // A refused action exits 1 with the service's error code.
    let output = Command::new(BINARY)
        .args(["trigger", "--ready-file"])
        .arg(&ready_path)
        .args(["refund", "no-such-order"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let mut stderr = String::new();
    output
        .stderr
        .as_slice()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("404"), "{stderr}");
}

#[tokio::test]
async fn notify_to_takes_the_secret_from_the_environment_and_refuses_a_bad_address() {
    let receiver = Receiver::start().await;
    let dir = scratch_dir("notify-secret");
    let ready_path = dir.join("ready.json");
    let chosen = "whsec_cli_test_secret_0123456789abcdef";
    let (_running, ready, printed) = start(
        &["--notify-to", &receiver.url],
        &ready_path,
        &[("STOREFRONT_NOTIFY_SECRET", chosen)],
    );
    assert!(
        !printed.contains(chosen),
        "a chosen secret is never printed"
    );
    let http = harness::http_client(None);
    let token = merchant_token(&http, &ready).await;
    let order_no = create_payment(&http, &ready, &token, "cli-env").await;
    trigger(
        &ready_path,
        &["pay", &order_no, "--channel", seed::CHANNEL_CARD_USD],
    );
    verify(chosen, &delivery_of(&receiver, "paid").await);

    let refused = Command::new(BINARY)
        .args(["--port", "0", "--notify-to", "ftp://example.com/hook"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("invalid_notify_url"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

#[tokio::test]
async fn delivery_timestamp_sandbox_follows_the_sandbox_clock() {
    let receiver = Receiver::start().await;
    let dir = scratch_dir("ts-sandbox");
    let ready_path = dir.join("ready.json");
    let (_running, ready, _) = start(
        &[
            "--notify-to",
            &receiver.url,
            "--delivery-timestamp",
            "sandbox",
        ],
        &ready_path,
        &[(
            "STOREFRONT_NOTIFY_SECRET",
            "whsec_sandbox_clock_secret_0123456789",
        )],
    );
    trigger(&ready_path, &["advance", "7200"]);
    let http = harness::http_client(None);
    let token = merchant_token(&http, &ready).await;
    let order_no = create_payment(&http, &ready, &token, "cli-ts").await;
    trigger(
        &ready_path,
        &["pay", &order_no, "--channel", seed::CHANNEL_CARD_USD],
    );
    let got = delivery_of(&receiver, "paid").await;
    let sent: i64 = got.header("x-service-timestamp").parse().unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(
        sent - now >= 7200 - 60,
        "with --delivery-timestamp sandbox the header follows the advanced clock ({sent} vs {now})"
    );
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn trigger_with_control(control: &str, ready: Option<&Path>) -> (Option<i32>, String) {
    let mut command = Command::new(BINARY);
    command.args(["trigger", "--control", control]);
    if let Some(path) = ready {
        command.arg("--ready-file").arg(path);
    }
    let output = command.args(["advance", "1"]).output().unwrap();
    (
        output.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

#[test]
fn trigger_errors_never_show_a_password_of_the_control_url() {
    let port = closed_port();
    let (code, printed) = trigger_with_control(
        &format!("http://user:hunter2@127.0.0.1:{port}/_sandbox?token=s3cr3tq"),
        None,
    );
    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("did not answer"), "{printed}");
    assert!(printed.contains("[redacted]"), "{printed}");
    for secret in ["hunter2", "s3cr3tq"] {
        assert!(!printed.contains(secret), "{printed}");
    }
    let (code, printed) = trigger_with_control("ftp://user:hunter2@host/_sandbox?k=s3cr3tq", None);
    assert_eq!(code, Some(2), "{printed}");
    assert!(
        !printed.contains("hunter2") && !printed.contains("s3cr3tq"),
        "{printed}"
    );
}
