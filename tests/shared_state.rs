//! One budget and one token per OAuth client across processes (issue 15), over real HTTP
//! against the sandbox and real stores: a SQLite file, `redis-server` and a PostgreSQL cluster
//! from Debian's packages, each started on loopback on a free port and stopped by process id.
//!
//! Contract rules proved here: "Create merchant payment: 60 per client per minute", "Query,
//! filtered list, channel directory: 300 per client per minute, shared" are per client, across
//! every process of the shop (several `Client` values, each as a worker process would have,
//! share one budget through the store and earn no 429); "429 rate_limited: wait per the
//! `Retry-After` header" applies to the client; "manage lifetime by `expires_in`" (a token is
//! never sent after its stated expiry, in-process and shared); the client-credentials token is
//! fetched once for all workers. A store that fails never fails a call.

#![cfg(all(
    feature = "store-sqlite",
    feature = "store-redis",
    feature = "store-postgres"
))]

mod common;

#[allow(dead_code)]
#[path = "../src/store/test_servers.rs"]
mod test_servers;

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Harness, merchant_config, s};
use serde_json::Value;
use storefront::{
    Client, Config, CreateMerchantPayment, LimitClass, MinorAmount, RateLimits, RetryPolicy,
};
use storefront_sandbox::SandboxOptions;
use test_servers::{PostgresServer, RedisServer, ScratchDir};

/// The sandbox's windows and the SDK's, in seconds: the contract's budgets over a short window
/// so that a burst of two windows takes seconds.
const WINDOW_S: u32 = 5;

fn sandbox_options(token_lifetime: Option<i64>) -> SandboxOptions {
    SandboxOptions {
        rate_limit_window_seconds: WINDOW_S,
        token_lifetime_seconds: token_lifetime,
        ..SandboxOptions::default()
    }
}

/// A worker's configuration: the sandbox's merchant client, the contract's budgets over the
/// test window, no SDK retries (a 429 would show as a failed call), and the store.
fn worker_config(h: &Harness, shared_state: Option<&str>) -> Config {
    let mut c = merchant_config(&h.sandbox)
        .with_rate_limits(RateLimits {
            window: Duration::from_secs(WINDOW_S.into()),
            ..RateLimits::default()
        })
        .with_retry_policy(RetryPolicy::none())
        .with_overall_deadline(Duration::from_secs(60));
    if let Some(url) = shared_state {
        c = c.with_shared_state(url);
    }
    c
}

/// `workers` clients (one per process in a shop), `per_worker` creates each, all at once.
/// Returns how many calls failed.
async fn burst(
    h: &Harness,
    shared_state: Option<&str>,
    workers: usize,
    per_worker: usize,
) -> usize {
    let clients: Vec<Client> = (0..workers)
        .map(|_| Client::new(worker_config(h, shared_state)).unwrap())
        .collect();
    let mut calls = Vec::new();
    for (w, client) in clients.iter().enumerate() {
        for i in 0..per_worker {
            let client = client.clone();
            calls.push(tokio::spawn(async move {
                let request = CreateMerchantPayment::new(
                    format!("burst-{w}-{i}"),
                    MinorAmount::new(100).unwrap(),
                    "USD",
                );
                client.create_merchant_payment(&request).await
            }));
        }
    }
    let mut failed = 0;
    for call in calls {
        if let Err(e) = call.await.unwrap() {
            eprintln!("failed: {e:?}");
            failed += 1;
        }
    }
    failed
}

fn statuses(requests: &[Value]) -> Vec<u64> {
    requests
        .iter()
        .filter_map(|r| r["status"].as_u64())
        .collect()
}

/// The figures for one store: 120 creates from 4 workers at once get 0 answers of 429,
/// 1 token request, 120 payments.
async fn one_budget_one_token(url: &str) {
    let h = Harness::start_with_options(sandbox_options(None), |c| c).await;
    assert_eq!(
        burst(&h, Some(url), 4, 30).await,
        0,
        "every create succeeds"
    );
    let creates = statuses(
        &h.requests_to("POST", &h.api_path("/openapi/v1/merchant-payments"))
            .await,
    );
    assert_eq!(creates.len(), 120, "each create sent once");
    assert!(creates.iter().all(|s| *s == 201), "no 429: {creates:?}");
    assert_eq!(
        h.requests_to("POST", s::TOKEN_PATH).await.len(),
        1,
        "one token request for four workers"
    );
    let status = Client::new(worker_config(&h, Some(url)))
        .unwrap()
        .shared_state()
        .await;
    assert!(status.available, "{status:?}");
    let stored = status.stored.expect("the store answered");
    assert!(stored.token_shared, "{stored:?}");
    let create = stored
        .windows
        .iter()
        .find(|w| w.class == LimitClass::Create)
        .unwrap();
    assert!(create.in_window <= 60, "{create:?}");
}

/// SQLite, one host: the embedded default under php-fpm and gunicorn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_workers_share_one_budget_and_one_token() {
    let dir = ScratchDir::new();
    let path = dir.path().join("storefront.db");
    one_budget_one_token(&format!("sqlite://{}", path.display())).await;
    // The token is a secret at rest: only the owner may read the file.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
}

/// Redis, many hosts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_workers_share_one_budget_and_one_token() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    one_budget_one_token(&redis.url()).await;
}

/// PostgreSQL, many hosts without Redis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_workers_share_one_budget_and_one_token() {
    let Some(pg) = PostgresServer::start() else {
        return;
    };
    one_budget_one_token(&pg.url()).await;
}

/// The control: the same burst without a shared store earns 429s and one token request per
/// worker (what the issue measured), so the figures above are the store's doing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_shared_store_the_burst_earns_429s() {
    let h = Harness::start_with_options(sandbox_options(None), |c| c).await;
    let failed = burst(&h, None, 4, 30).await;
    assert!(failed > 0, "each worker admitted its own 60");
    let creates = statuses(
        &h.requests_to("POST", &h.api_path("/openapi/v1/merchant-payments"))
            .await,
    );
    assert!(creates.contains(&429), "{creates:?}");
    assert_eq!(h.requests_to("POST", s::TOKEN_PATH).await.len(), 4);
}

/// A 429's `Retry-After` pauses the client in every worker: one worker's 429 makes the other
/// wait too, so the other never sends into the pause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_pauses_every_worker() {
    let dir = ScratchDir::new();
    let url = format!("sqlite://{}", dir.path().join("sf.db").display());
    let h = Harness::start_with_options(sandbox_options(None), |c| c).await;
    let a = Client::new(worker_config(&h, Some(&url))).unwrap();
    let b = Client::new(worker_config(&h, Some(&url))).unwrap();
    a.authenticate().await.unwrap();
    h.fault(serde_json::json!({"method": "GET", "path": h.api_path("/openapi/v1/merchant-payment-channels"),
        "status": 429, "headers": {"Retry-After": "2"}, "body": {"error": "rate_limited"}}))
        .await;
    let err = a.list_channels().await.unwrap_err();
    assert_eq!(err.status(), Some(429));
    let status = b.shared_state().await.stored.unwrap();
    let read = status
        .windows
        .iter()
        .find(|w| w.class == LimitClass::Read)
        .unwrap();
    assert!(
        read.paused_for_ms.is_some_and(|ms| ms > 0 && ms <= 2000),
        "{read:?}"
    );
    // B waits out the pause instead of sending into it (a lower bound on its wait: noise only
    // makes it longer); B's call then succeeds.
    let left = Duration::from_millis(read.paused_for_ms.unwrap());
    let started = tokio::time::Instant::now();
    b.list_channels().await.unwrap();
    assert!(
        started.elapsed() + Duration::from_millis(50) >= left,
        "B sent within the pause: {:?} < {left:?}",
        started.elapsed()
    );
    let reads = h
        .requests_to("GET", &h.api_path("/openapi/v1/merchant-payment-channels"))
        .await;
    assert_eq!(statuses(&reads), vec![429, 200]);
}

/// "Manage lifetime by `expires_in`": a token granted for 3 s is not sent 4 s after the grant
/// (it used to be reused for 5 s whatever `expires_in` said, and 20 calls went out with it
/// and were answered 401). In-process first, then shared by two workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_lived_token_is_never_sent_after_its_expiry() {
    let dir = ScratchDir::new();
    let url = format!("sqlite://{}", dir.path().join("sf.db").display());
    for shared in [None, Some(url.as_str())] {
        let h = Harness::start_with_options(sandbox_options(Some(3)), |c| c).await;
        let a = Client::new(worker_config(&h, shared)).unwrap();
        let b = Client::new(worker_config(&h, shared)).unwrap();
        let granted = a.authenticate().await.unwrap();
        assert_eq!(granted.expires_in, 3);
        tokio::time::sleep(Duration::from_secs(4)).await;
        let calls: Vec<_> = (0..20)
            .map(|i| {
                let c = if i % 2 == 0 { a.clone() } else { b.clone() };
                tokio::spawn(async move { c.list_channels().await })
            })
            .collect();
        for call in calls {
            call.await.unwrap().unwrap();
        }
        let reads = h
            .requests_to("GET", &h.api_path("/openapi/v1/merchant-payment-channels"))
            .await;
        assert_eq!(statuses(&reads), vec![200; 20], "shared: {shared:?}");
        let tokens = h.requests_to("POST", s::TOKEN_PATH).await.len();
        // In-process each worker fetches its own token after the expiry; shared, one fetch
        // serves both.
        let expected = if shared.is_some() { 2 } else { 3 };
        assert_eq!(tokens, expected, "shared: {shared:?}");
        // Let the sandbox's data directory go before the next round.
        drop(h);
        if shared.is_some() {
            std::fs::remove_file(dir.path().join("sf.db")).ok();
        }
    }
}

/// Warnings the SDK logs (a minimal tracing subscriber for the current thread).
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        use std::fmt::Write;
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, m: &tracing::Metadata<'_>) -> bool {
        *m.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = String::new();
        event.record(&mut Message(&mut text));
        self.0.lock().unwrap().push(text);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Redis stopped in the middle of a burst: no call fails because of it, one warning is logged
/// for the outage, and once Redis is back the budget is shared through it again.
#[tokio::test]
async fn redis_stopped_mid_burst_fails_no_call_and_is_used_again_when_back() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    let h = Harness::start_with_options(sandbox_options(None), |c| c).await;
    let url = format!("{}?timeout_ms=200", redis.url());
    let a = Client::new(worker_config(&h, Some(&url))).unwrap();
    let b = Client::new(worker_config(&h, Some(&url))).unwrap();
    let reads = |c: &Client, n: usize| {
        (0..n)
            .map(|_| {
                let c = c.clone();
                tokio::spawn(async move { c.list_channels().await })
            })
            .collect::<Vec<_>>()
    };
    let mut calls = reads(&a, 20);
    calls.extend(reads(&b, 20));
    // Stop Redis while the burst runs.
    tokio::time::sleep(Duration::from_millis(5)).await;
    redis.stop();
    calls.extend(reads(&a, 20));
    calls.extend(reads(&b, 20));
    for call in calls {
        call.await
            .unwrap()
            .expect("no call fails because the store did");
    }
    let outage: Vec<String> = warnings
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|w| w.contains("shared state store unavailable"))
        .cloned()
        .collect();
    assert_eq!(
        outage.len(),
        2,
        "one warning per client for the outage: {outage:?}"
    );
    assert!(!a.shared_state().await.available);

    redis.restart();
    // After the probe interval the store is asked again; both workers admit through it.
    tokio::time::sleep(storefront::PROBE_INTERVAL + Duration::from_millis(100)).await;
    a.list_channels().await.unwrap();
    b.list_channels().await.unwrap();
    let status = a.shared_state().await;
    assert!(status.available, "{status:?}");
    let read = status
        .stored
        .unwrap()
        .windows
        .into_iter()
        .find(|w| w.class == LimitClass::Read)
        .unwrap();
    assert_eq!(
        read.in_window, 2,
        "both workers' reads counted in the store again"
    );
    let back = warnings
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|w| w.contains("store is back"))
        .count();
    assert_eq!(back, 2, "one 'back' line per client");
}

/// A store that cannot be reached at all (nothing listens) never fails a call either, and the
/// client reports the store unavailable.
#[tokio::test]
async fn an_unreachable_store_never_fails_a_call() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let h = Harness::start_with_options(sandbox_options(None), |c| c).await;
    for url in [
        format!("redis://127.0.0.1:{port}/0?timeout_ms=200"),
        format!("postgres://postgres@127.0.0.1:{port}/postgres?timeout_ms=200"),
        "sqlite:///nonexistent-dir/for/sure/sf.db".to_owned(),
    ] {
        let client = Client::new(worker_config(&h, Some(&url))).unwrap();
        client.list_channels().await.unwrap();
        client
            .create_merchant_payment(&CreateMerchantPayment::new(
                "unreachable-store",
                MinorAmount::new(100).unwrap(),
                "USD",
            ))
            .await
            .unwrap();
        let status = client.shared_state().await;
        assert!(!status.available, "{url}: {status:?}");
    }
}
