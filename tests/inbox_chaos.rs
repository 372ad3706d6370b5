//! The webhook inbox under chaos (issue 16), on SQLite and on PostgreSQL: three receiver
//! processes (this executable run again, see `inbox_chaos/receiver.rs`) behind a round-robin
//! proxy that duplicates deliveries and drops acknowledgements, receivers killed with SIGKILL and
//! restarted at random, and the sandbox's clock advanced so that its retries run, until every
//! notification is delivered. Each receiver stores deliveries in the inbox and handles claimed
//! events in the app's own transaction on the same database (booking, state, completion commit
//! together).
//!
//! Contract rules proved ("Events"):
//! - "store the notification reliably before returning": every notification id a receiver
//!   acknowledged (2xx), also when the acknowledgement was dropped or the receiver was killed
//!   right after, is in the inbox;
//! - "deduplicate by notification `id`" and "notifications may repeat or arrive out of order":
//!   duplicated and re-delivered notifications are stored once and handed to the app once;
//! - "book payments idempotently by `data.event_id`": every paid payment's `event_id` is booked
//!   by the app exactly once (one row, booked once), across workers, kills and lease expiry;
//! - "a lower version must not overwrite a higher one": the app never receives a version at or
//!   below the one it has, and ends at the service's `status_version`, as does the inbox's
//!   watermark;
//! - retries after a failed delivery (1 min, 5 min, 15 min, ... of the service's clock): a
//!   delivery that got no 2xx is delivered again, and the inbox ends with nothing pending or
//!   claimed.
//!
//! The same receiver written with the Python and the PHP wrappers over the C library
//! (`bindings/python/tests/chaos_receiver.py`; `bindings/php/tests/chaos_receiver.php` under
//! `php -S` plus a `php … work` worker, killed and restarted together) passes a smaller run on
//! SQLite (`chaos_python_sqlite`, `chaos_php_sqlite`): only with `STOREFRONT_CHAOS_WRAPPERS=1`
//! (then a missing library or interpreter fails the test), after `cargo build -p storefront
//! --features capi,uniffi`; `STOREFRONT_LIB` defaults to `<target dir>/debug/libstorefront.so`.
//!
//! Size: `STOREFRONT_CHAOS_PAYMENTS` (default 200; the wrappers' runs
//! `STOREFRONT_CHAOS_WRAPPER_PAYMENTS`, default 60), `STOREFRONT_CHAOS_SEED` (default fixed).
//! Each run prints its figures and, when every check held, `inbox chaos [<run>]: passed`.

#![cfg(all(feature = "store-sqlite", feature = "store-postgres"))]

mod common;

#[allow(dead_code)]
#[path = "../src/store/test_servers.rs"]
mod test_servers;

#[path = "inbox_chaos/app.rs"]
mod app;
#[path = "inbox_chaos/proxy.rs"]
mod proxy;
#[path = "inbox_chaos/receiver.rs"]
mod receiver;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Harness, s};
use serde_json::json;
use storefront::inbox::Inbox;
use storefront::{
    CreateMerchantPayment, DeliveryStatus, MerchantPayment, MinorAmount, RateLimits,
    WebhookVerifier,
};
use storefront_sandbox::SandboxOptions;

use app::AppDb;
use proxy::{Proxy, Rng};
use receiver::{Kind, ReceiverProcess, Wrappers};
use test_servers::{PostgresServer, ScratchDir};

const SECRET: &str = "chaos-notify-secret-0123456789abcdef0123";
const RECEIVERS: usize = 3;
/// The whole run (payments, chaos, retries, draining) must end within this (plus 0.1 s per
/// payment above 200).
const DEADLINE: Duration = Duration::from_secs(120);
/// The service's retry waits, plus one second: one clock step per round.
const STEPS: [u64; 9] = [61, 301, 901, 1801, 3601, 7201, 14_401, 21_601, 28_801];

/// One run's size and receivers.
struct Run {
    backend: &'static str,
    kind: Kind,
    /// The C library, for a wrapper's receivers.
    wrappers: Option<Wrappers>,
    payments: usize,
    /// Kills go on during this many clock rounds after the payments are made.
    chaos_rounds: usize,
    /// A receiver is killed every `kill_every_ms` (a range) while the chaos lasts.
    kill_every_ms: (u64, u64),
}

impl Run {
    /// The Rust receivers' run: `STOREFRONT_CHAOS_PAYMENTS` payments, three chaos rounds.
    fn rust(backend: &'static str) -> Run {
        Run {
            backend,
            kind: Kind::Rust,
            wrappers: None,
            payments: env_u64("STOREFRONT_CHAOS_PAYMENTS", 200) as usize,
            chaos_rounds: 3,
            kill_every_ms: (400, 1200),
        }
    }

    /// A wrapper's smaller run on SQLite (fewer payments, fewer kills), `None` when not asked.
    fn wrapper(test: &str, kind: Kind) -> Option<Run> {
        Some(Run {
            backend: "sqlite",
            kind,
            wrappers: Some(Wrappers::from_env(test, kind)?),
            payments: env_u64("STOREFRONT_CHAOS_WRAPPER_PAYMENTS", 60) as usize,
            chaos_rounds: 3,
            kill_every_ms: (500, 1300),
        })
    }

    /// `sqlite`, `postgres`, `sqlite/python`, `sqlite/php`.
    fn label(&self) -> String {
        match self.kind {
            Kind::Rust => self.backend.to_owned(),
            kind => format!("{}/{}", self.backend, kind.name()),
        }
    }
}

/// The receiver role: does nothing unless this process was started as a receiver.
#[test]
fn chaos_receiver_role() {
    receiver::run_if_child();
}

/// One backend at a time: the machine is small.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_sqlite() {
    let _serial = SERIAL.lock().await;
    let dir = ScratchDir::new();
    let url = format!("sqlite://{}", dir.path().join("inbox.db").display());
    run_chaos(Run::rust("sqlite"), &url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_postgres() {
    let _serial = SERIAL.lock().await;
    let Some(server) = PostgresServer::start() else {
        return;
    };
    run_chaos(Run::rust("postgres"), &server.url()).await;
    drop(server);
}

/// The Python wrapper's receivers (`bindings/python/tests/chaos_receiver.py`), SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_python_sqlite() {
    let Some(run) = Run::wrapper("chaos_python_sqlite", Kind::Python) else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let dir = ScratchDir::new();
    let url = format!("sqlite://{}", dir.path().join("inbox.db").display());
    run_chaos(run, &url).await;
}

/// The PHP wrapper's receivers (`bindings/php/tests/chaos_receiver.php`: `php -S` with two
/// workers and a `php … work` worker per receiver), SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_php_sqlite() {
    let Some(run) = Run::wrapper("chaos_php_sqlite", Kind::Php) else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let dir = ScratchDir::new();
    let url = format!("sqlite://{}", dir.path().join("inbox.db").display());
    run_chaos(run, &url).await;
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The receivers: each slot's process (none while it is down); dropping kills them all.
struct Receivers {
    kind: Kind,
    wrappers: Option<Wrappers>,
    slots: Vec<Option<ReceiverProcess>>,
    db: String,
    kills: u64,
}

impl Receivers {
    fn start(&mut self, i: usize, proxy: &Proxy) {
        let p = ReceiverProcess::spawn(self.kind, self.wrappers.as_ref(), &self.db, SECRET);
        proxy.set_target(i, Some(p.port));
        self.slots[i] = Some(p);
    }

    fn kill(&mut self, i: usize, proxy: &Proxy) {
        if let Some(p) = self.slots[i].take() {
            proxy.set_target(i, None);
            p.kill();
            self.kills += 1;
        }
    }

    fn ensure_all(&mut self, proxy: &Proxy) {
        for i in 0..self.slots.len() {
            if self.slots[i].is_none() {
                self.start(i, proxy);
            }
        }
    }
}

async fn run_chaos(run: Run, url: &str) {
    let started = Instant::now();
    // The proxy's plain-HTTP client still needs a provider with `rustls-no-provider`.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let backend = run.label();
    let backend = backend.as_str();
    let n = run.payments;
    let seed = env_u64("STOREFRONT_CHAOS_SEED", 0x5eed_c4a0);
    let deadline = DEADLINE + Duration::from_millis(100 * n.saturating_sub(200) as u64);
    eprintln!(
        "inbox chaos [{backend}]: {n} payments, {} receivers, seed {seed:#x}",
        run.kind.name()
    );

    let h = Arc::new(
        Harness::start_with_options(
            SandboxOptions {
                rate_limit_window_seconds: 1,
                token_lifetime_seconds: Some(31_536_000),
                ..SandboxOptions::default()
            },
            |c| {
                c.with_rate_limits(RateLimits {
                    window: Duration::from_secs(1),
                    ..RateLimits::default()
                })
            },
        )
        .await,
    );

    // PHP's receivers fork; their orphans are ours to wait for (dropped after the receivers).
    let _subreaper = (run.kind == Kind::Php).then(receiver::Subreaper::set);

    // The inbox's tables and the app's, before any receiver runs. The inbox first: it creates
    // the SQLite file private (0600), which the app's driver would create with its umask.
    let inbox = Inbox::open(url, WebhookVerifier::new([SECRET]).unwrap()).expect("inbox");
    inbox.status().await.expect("inbox tables");
    let mut app = AppDb::connect(url).await.expect("app database");
    app.create_schema().await.expect("app tables");

    let proxy = Arc::new(Proxy::start(RECEIVERS, seed, 0.2, 0.15).await);
    let receivers = Arc::new(Mutex::new(Receivers {
        kind: run.kind,
        wrappers: run.wrappers.clone(),
        slots: (0..RECEIVERS).map(|_| None).collect(),
        db: url.to_owned(),
        kills: 0,
    }));
    {
        let (r, p) = (Arc::clone(&receivers), Arc::clone(&proxy));
        tokio::task::spawn_blocking(move || r.lock().unwrap().ensure_all(&p))
            .await
            .unwrap();
    }

    // Chaos: a receiver killed (SIGKILL) every 0.4-1.2 s (the wrappers' 0.5-1.3 s), restarted
    // 0.2-0.8 s later.
    let (kill_lo, kill_hi) = run.kill_every_ms;
    let stop_chaos = Arc::new(AtomicBool::new(false));
    let chaos = {
        let (r, p, stop) = (
            Arc::clone(&receivers),
            Arc::clone(&proxy),
            Arc::clone(&stop_chaos),
        );
        tokio::spawn(async move {
            let mut rng = Rng::new(seed ^ 0xc4a0);
            while !stop.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(rng.range(kill_lo, kill_hi))).await;
                let i = rng.range(0, RECEIVERS as u64) as usize;
                let (r2, p2) = (Arc::clone(&r), Arc::clone(&p));
                tokio::task::spawn_blocking(move || r2.lock().unwrap().kill(i, &p2))
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(rng.range(200, 800))).await;
                let (r2, p2) = (Arc::clone(&r), Arc::clone(&p));
                tokio::task::spawn_blocking(move || r2.lock().unwrap().ensure_all(&p2))
                    .await
                    .unwrap();
            }
        })
    };

    // Payments: created (pending), paid at once, some refunded or charged back.
    let forced = Arc::new(AtomicU64::new(0));
    let mut set = tokio::task::JoinSet::new();
    let permits = Arc::new(tokio::sync::Semaphore::new(8));
    let mut plan = Rng::new(seed ^ 0x9a7);
    for k in 0..n {
        let after_paid = match plan.range(0, 10) {
            0..=1 => Some("refunded"),
            2 => Some("chargeback"),
            _ => None,
        };
        let (h, proxy_url, permits, forced) = (
            Arc::clone(&h),
            proxy.url.clone(),
            Arc::clone(&permits),
            Arc::clone(&forced),
        );
        let reference = format!("chaos-{}-{k}", backend.replace('/', "-"));
        set.spawn(async move {
            let _permit = permits.acquire_owned().await.unwrap();
            let created = h
                .client
                .create_merchant_payment(
                    &CreateMerchantPayment::new(
                        reference,
                        MinorAmount::new(100 + k as u64).unwrap(),
                        "USD",
                    )
                    .with_notification(&proxy_url, SECRET),
                )
                .await
                .expect("payment created");
            let order_no = created.payment.order_no;
            h.control(
                "POST",
                &format!("/merchant-payments/{order_no}/checkout/pay"),
                Some(json!({"payment_no": s::CHANNEL_CARD_USD})),
            )
            .await;
            if let Some(status) = after_paid {
                h.control(
                    "POST",
                    &format!("/merchant-payments/{order_no}/force"),
                    Some(json!({ "status": status })),
                )
                .await;
                forced.fetch_add(1, Ordering::Relaxed);
            }
            order_no
        });
    }
    let mut orders = Vec::with_capacity(n);
    while let Some(done) = set.join_next().await {
        orders.push(done.expect("payment task"));
    }
    orders.sort();
    eprintln!(
        "inbox chaos [{backend}]: payments made in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Rounds: wait for the deliveries in flight, then advance the clock past the next retry,
    // until every record is delivered.
    let mut waiting: BTreeSet<String> = orders.iter().cloned().collect();
    let mut records: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut rounds = 0usize;
    let mut advanced = 0u64;
    loop {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let mut failed = Vec::new();
        for order_no in waiting.clone() {
            let list = h
                .client
                .list_notification_records(&order_no, None)
                .await
                .expect("notification records");
            if list
                .iter()
                .all(|r| r.delivery_status == DeliveryStatus::Delivered)
            {
                records.insert(
                    order_no.clone(),
                    list.iter().map(|r| r.event_id.clone()).collect(),
                );
                waiting.remove(&order_no);
            } else if let Some(r) = list
                .iter()
                .find(|r| r.delivery_status == DeliveryStatus::Failed)
            {
                failed.push((order_no.clone(), r.event_id.clone()));
            }
        }
        assert!(
            failed.is_empty(),
            "records failed after every automatic attempt: {failed:?}"
        );
        if waiting.is_empty() {
            break;
        }
        assert!(
            started.elapsed() < deadline,
            "[{backend}] {} payments still have undelivered notifications after {rounds} clock \
             rounds ({} s advanced): {:?}",
            waiting.len(),
            advanced,
            waiting.iter().take(5).collect::<Vec<_>>()
        );
        let step = STEPS[rounds.min(STEPS.len() - 1)];
        // Deliveries carry the real time of the attempt, so receivers checking timestamps on
        // their own clock accept the retries however far the sandbox clock moved.
        h.advance_clock(step).await;
        advanced += step;
        rounds += 1;
        if rounds == run.chaos_rounds {
            stop_chaos.store(true, Ordering::SeqCst);
        }
    }
    stop_chaos.store(true, Ordering::SeqCst);
    chaos.await.unwrap();
    {
        let (r, p) = (Arc::clone(&receivers), Arc::clone(&proxy));
        tokio::task::spawn_blocking(move || r.lock().unwrap().ensure_all(&p))
            .await
            .unwrap();
    }

    // The workers drain the inbox.
    let status = loop {
        let status = inbox.status().await.expect("inbox status");
        if status.pending == 0 && status.claimed == 0 {
            break status;
        }
        assert!(
            started.elapsed() < deadline,
            "[{backend}] the inbox did not drain: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    // The service's view of every payment.
    let mut service: BTreeMap<String, MerchantPayment> = BTreeMap::new();
    for order_no in &orders {
        let p = h
            .client
            .get_merchant_payment(order_no)
            .await
            .expect("payment");
        service.insert(order_no.clone(), p);
    }
    let watermarks: BTreeMap<String, _> = inbox
        .watermarks()
        .await
        .expect("watermarks")
        .into_iter()
        .map(|w| (w.order_no.clone(), w))
        .collect();
    let snap = app.snapshot().await.expect("app tables");
    let attempts = h.notification_attempts().await.len();
    let stats = &proxy.shared.stats;
    let acked = stats.acked.lock().unwrap().clone();
    let kills = receivers.lock().unwrap().kills;

    eprintln!(
        "inbox chaos [{backend}]: {n} payments ({} refunded or charged back), {} notifications; \
         {} delivery attempts by the sandbox, {} deliveries through the proxy, {} forwarded, \
         {} duplicated, {} acknowledgements dropped, {} not forwarded (receiver down); \
         {} receiver kills (SIGKILL), {} events claimed again after a lost lease; {rounds} clock rounds ({advanced} s); receipts {:?}; \
         inbox {status:?}; {:.1} s",
        forced.load(Ordering::Relaxed),
        records.values().map(Vec::len).sum::<usize>(),
        attempts,
        stats.deliveries.load(Ordering::Relaxed),
        stats.forwarded.load(Ordering::Relaxed),
        stats.duplicates.load(Ordering::Relaxed),
        stats.dropped_acks.load(Ordering::Relaxed),
        stats.forward_failures.load(Ordering::Relaxed),
        kills,
        snap.reclaimed,
        stats.outcomes.lock().unwrap(),
        started.elapsed().as_secs_f64()
    );

    // Stored before acknowledged: nothing acknowledged is missing.
    let missing: Vec<_> = acked
        .iter()
        .filter(|id| !snap.inbox_ids.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "[{backend}] acknowledged but not in the inbox: {missing:?}"
    );
    for (order_no, ids) in &records {
        for id in ids {
            assert!(
                snap.inbox_ids.contains(id),
                "[{backend}] notification {id} of {order_no} was delivered but is not in the inbox"
            );
        }
    }

    // Booked once per payment event; versions never went back and end at the service's.
    let mut paid = 0u64;
    for (order_no, payment) in &service {
        let version = payment.status_version.unwrap_or(0);
        let event_id = payment
            .event_id
            .as_deref()
            .unwrap_or_else(|| panic!("[{backend}] {order_no} was paid but has no event_id"));
        paid += 1;
        let booking = snap.bookings.get(event_id);
        assert_eq!(
            booking,
            Some(&(order_no.clone(), 1)),
            "[{backend}] {order_no}: payment event {event_id} must be booked exactly once"
        );
        let wm = watermarks
            .get(order_no)
            .unwrap_or_else(|| panic!("[{backend}] no watermark for {order_no}"));
        assert_eq!(
            (wm.status_version, wm.status.as_str()),
            (version, payment.status.as_str()),
            "[{backend}] {order_no}: inbox watermark"
        );
        assert_eq!(
            wm.booked_event_id.as_deref(),
            Some(event_id),
            "[{backend}] {order_no}: booked event"
        );
        let (status, app_version, regressions, _handled) = snap
            .states
            .get(order_no)
            .unwrap_or_else(|| panic!("[{backend}] the app has no state for {order_no}"));
        assert_eq!(
            (status.as_str(), *app_version),
            (payment.status.as_str(), version as i64),
            "[{backend}] {order_no}: the app's state"
        );
        assert_eq!(
            *regressions, 0,
            "[{backend}] {order_no}: the app was handed a version at or below its own"
        );
    }
    assert_eq!(
        snap.bookings.len() as u64,
        paid,
        "[{backend}] one booking per paid payment, none else"
    );
    assert_eq!(status.booked, paid, "[{backend}] the inbox's bookings");
    assert_eq!((status.pending, status.claimed), (0, 0));

    // Every child is killed and waited for.
    stop_chaos.store(true, Ordering::SeqCst);
    drop(receivers);
    eprintln!(
        "inbox chaos [{backend}]: passed ({n} payments, {kills} kills, {:.1} s)",
        started.elapsed().as_secs_f64()
    );
}
