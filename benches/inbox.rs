//! The webhook inbox's cost (issue 16): notifications received, stored and acknowledged per
//! second over HTTP on loopback, through `Inbox::receive_headers` against a hand-written receiver
//! doing the least a correct one does (verify, then `INSERT … ON CONFLICT (id) DO NOTHING`, then
//! 200), on SQLite (WAL) and on PostgreSQL (Debian's server, started here on loopback); then the
//! cost of `claim` + `complete` per event.
//!
//! Both receivers are axum handlers in this process, each on its own port; 8 senders post
//! signed notifications (each id new) with reqwest; the four modes alternate per round, so a
//! shared machine's load hits them alike. Both receivers run their SQLite statements on a
//! blocking thread (an async receiver must not block its runtime) and their PostgreSQL
//! statements on one tokio-postgres connection.
//!
//! `cargo bench --features server --bench inbox` (full: 9 rounds of 2,000 notifications per
//! mode), `... -- --smoke` (1 round of 200). Options: `INBOX_BENCH_N`, `INBOX_BENCH_ROUNDS`.

#[path = "support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "../src/store/test_servers.rs"]
mod test_servers;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use storefront::WebhookVerifier;
use storefront::inbox::Inbox;
use storefront::webhook::TestSigner;

const SECRET: &str = "whsec_bench_0123456789abcdef0123456789abcdef";
const SENDERS: usize = 8;

/// The hand-written receiver's store.
enum Hand {
    Sqlite(Arc<Mutex<rusqlite::Connection>>),
    Postgres(Arc<tokio_postgres::Client>),
}

struct HandReceiver {
    verifier: WebhookVerifier,
    store: Hand,
}

/// Verify, insert once, 200: what a careful shop writes by hand.
async fn hand(
    State(r): State<Arc<HandReceiver>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, &'static str) {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    let id = match r.verifier.verify_raw(
        get("x-service-event-id"),
        get("x-service-timestamp"),
        get("x-service-signature"),
        &body,
    ) {
        Ok(v) => v.id().to_owned(),
        Err(_) => return (StatusCode::BAD_REQUEST, "refused"),
    };
    let text = String::from_utf8_lossy(&body).into_owned();
    let stored = match &r.store {
        Hand::Sqlite(conn) => {
            let conn = conn.clone();
            tokio::task::spawn_blocking(move || {
                conn.lock().expect("lock").execute(
                    "INSERT INTO hand_events (id, body) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING",
                    rusqlite::params![id, text],
                )
            })
            .await
            .map(|r| r.is_ok())
            .unwrap_or(false)
        }
        Hand::Postgres(client) => client
            .execute(
                "INSERT INTO hand_events (id, body) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
                &[&id, &text],
            )
            .await
            .is_ok(),
    };
    if stored {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "retry")
    }
}

async fn inbox(
    State(inbox): State<Arc<Inbox>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let receipt = inbox.receive_headers(&headers, &body).await;
    (
        StatusCode::from_u16(receipt.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        receipt.body(),
    )
}

async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, router).await.expect("serve") });
    url
}

/// A notification body for payment `n` (each payment one `paid` event).
fn body(id: &str, n: u64) -> String {
    serde_json::json!({
        "id": id,
        "type": "merchant_payment.status_changed",
        "api_version": 1,
        "created_at": "2026-11-26T00:00:00Z",
        "data": {
            "order_no": format!("P{n}"), "external_reference": format!("shop-{n}"),
            "payment_no": "card", "amount_minor": 1250, "currency": "USD",
            "currency_decimals": 2, "status": "paid", "status_version": 2,
            "test_mode": false, "expires_at": "2030-01-01T00:00:00Z",
            "event_id": format!("E{n}"), "provider_trade_no": format!("T{n}"),
            "occurred_at": "2026-11-26T00:00:00Z"
        }
    })
    .to_string()
}

/// Posts `n` fresh notifications to `url` from `SENDERS` tasks; returns the wall time.
async fn send(http: &reqwest::Client, url: &str, n: usize, next: &Arc<AtomicU64>) -> Duration {
    let signer = Arc::new(TestSigner::new(SECRET));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for s in 0..SENDERS {
        let count = n / SENDERS + usize::from(s < n % SENDERS);
        let (http, url, next, signer) =
            (http.clone(), url.to_owned(), next.clone(), signer.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..count {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let id = format!("N{k}");
                let body = body(&id, k);
                let ts = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .expect("clock")
                    .as_secs() as i64;
                let mut request = http.post(&url).body(body.clone());
                for (name, value) in signer.headers(&id, ts, body.as_bytes()) {
                    request = request.header(name, value);
                }
                let answer = request.send().await.expect("send");
                assert_eq!(
                    answer.status(),
                    200,
                    "{}",
                    answer.text().await.unwrap_or_default()
                );
            }
        }));
    }
    for t in tasks {
        t.await.expect("sender");
    }
    started.elapsed()
}

fn main() {
    if support::serve_if_child() {
        return;
    }
    let smoke = support::smoke();
    let n = support::env_usize("INBOX_BENCH_N", if smoke { 200 } else { 2_000 });
    let rounds = support::env_usize("INBOX_BENCH_ROUNDS", if smoke { 1 } else { 9 });
    let postgres = test_servers::PostgresServer::start().expect("PostgreSQL installed");
    let dir = test_servers::ScratchDir::new();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let verifier = || WebhookVerifier::new([SECRET]).expect("verifier");
        // The four receivers.
        let sqlite_inbox = Arc::new(
            Inbox::open(
                &format!("sqlite://{}", dir.path().join("inbox.db").display()),
                verifier(),
            )
            .expect("inbox"),
        );
        let pg_inbox = Arc::new(Inbox::open(&postgres.url(), verifier()).expect("inbox"));
        let conn = rusqlite::Connection::open(dir.path().join("hand.db")).expect("sqlite");
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
             CREATE TABLE hand_events (id TEXT PRIMARY KEY, body TEXT NOT NULL);",
        )
        .expect("schema");
        let (pg, connection) = tokio_postgres::connect(&postgres.url(), tokio_postgres::NoTls)
            .await
            .expect("postgres");
        tokio::spawn(connection);
        pg.batch_execute("CREATE TABLE hand_events (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
            .await
            .expect("schema");
        let hand_sqlite = Arc::new(HandReceiver {
            verifier: verifier(),
            store: Hand::Sqlite(Arc::new(Mutex::new(conn))),
        });
        let hand_pg = Arc::new(HandReceiver {
            verifier: verifier(),
            store: Hand::Postgres(Arc::new(pg)),
        });
        let modes = [
            (
                "inbox sqlite",
                serve(axum::Router::new().route("/", post(inbox)).with_state(sqlite_inbox.clone())).await,
            ),
            (
                "hand-written sqlite",
                serve(axum::Router::new().route("/", post(hand)).with_state(hand_sqlite)).await,
            ),
            (
                "inbox postgres",
                serve(axum::Router::new().route("/", post(inbox)).with_state(pg_inbox.clone())).await,
            ),
            (
                "hand-written postgres",
                serve(axum::Router::new().route("/", post(hand)).with_state(hand_pg)).await,
            ),
        ];
        let http = support::reqwest_client(None);
        let next = Arc::new(AtomicU64::new(0));
        for (_, url) in &modes {
            send(&http, url, SENDERS * 8, &next).await; // warm-up: schema, connections
        }
        println!(
            "inbox: {n} notifications per mode and round, {SENDERS} senders, {rounds} rounds, modes alternating"
        );
        let mut per: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
        let mut ratios: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for round in 0..rounds {
            let mut us = [0.0f64; 4];
            let mut order: Vec<usize> = (0..modes.len()).collect();
            order.rotate_left(round % modes.len());
            for i in order {
                let wall = send(&http, &modes[i].1, n, &next).await;
                us[i] = wall.as_secs_f64() * 1e6 / n as f64;
                per[i].push(us[i]);
            }
            ratios[0].push(us[0] / us[1]);
            ratios[1].push(us[2] / us[3]);
        }
        println!("| Receiver | Median µs per notification (wall, {SENDERS} senders) | Notifications per second |");
        println!("|---|---|---|");
        for (i, (name, _)) in modes.iter().enumerate() {
            let m = support::median(&mut per[i]);
            println!("| {name} | {m:.1} | {:.0} |", 1e6 / m);
        }
        println!(
            "ratio inbox / hand-written (median of rounds): sqlite {:.2}x, postgres {:.2}x",
            support::median(&mut ratios[0]),
            support::median(&mut ratios[1])
        );
        // claim + complete: every stored event of each inbox, 100 per claim.
        for (name, inbox) in [("sqlite", &sqlite_inbox), ("postgres", &pg_inbox)] {
            let started = Instant::now();
            let mut handled = 0u64;
            loop {
                let events = inbox
                    .claim(100, Duration::from_secs(30))
                    .await
                    .expect("claim");
                if events.is_empty() {
                    break;
                }
                for event in &events {
                    inbox.complete(event).await.expect("complete");
                }
                handled += events.len() as u64;
            }
            let per_event = started.elapsed().as_secs_f64() * 1e6 / handled.max(1) as f64;
            println!(
                "claim + complete ({name}): {handled} events, {per_event:.1} µs per event (claims of 100, one complete per event)"
            );
        }
    });
}
