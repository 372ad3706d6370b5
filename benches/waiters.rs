//! Memory of 10,000 concurrent payment waiters over TLS (issue 11 item 5; see BENCHMARKS.md,
//! "Waiters").
//!
//! The sandbox serves HTTPS from a child process. Each run is a fresh process of this
//! executable, so the allocator starts clean every time: it creates a few catalog orders, opens
//! its first connection, notes its resident size (`VmRSS`, the baseline) and resets the peak
//! (`VmHWM`), then starts `WAITERS` concurrent `UserSession::wait_for_payment` calls spread over
//! the orders (interval 500 ms). While they poll, it samples the established connections to the
//! sandbox. After the waiters have polled for a while, it moves the sandbox clock past the
//! orders' payment window, so every order is cancelled and every waiter ends with the final
//! status (then reads its order). The figure is the peak resident size over the baseline
//! (`VmHWM - baseline`), with the most connections open at once and the distinct connections
//! seen; the driver prints every run and the worst.
//!
//! `cargo bench --bench waiters` (5 runs of 10,000), `cargo bench --bench waiters -- --smoke`
//! (1 run of 500). Options from the environment: `WAITERS` (per run), `WAITERS_RUNS`,
//! `WAITERS_MAX_IN_FLIGHT` (the client's cap; the SDK default when unset), `WAITERS_POLL_SECONDS`
//! (how long the waiters poll before the orders are cancelled).

#[path = "support/mod.rs"]
mod support;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use storefront::{Client, Config, CreateOrderRequest, Error, PaymentStatus};
use storefront_sandbox::seed;

/// Marks a child process that performs one run (the value is the server's address as JSON).
const RUN_ROLE: &str = "STOREFRONT_BENCH_WAITERS_RUN";
/// Catalog orders the waiters of one run share (the seeded stock bounds it; cancelled orders
/// give their stock back for the next run).
const ORDERS: usize = 10;
/// Poll interval of every waiter.
const INTERVAL: Duration = Duration::from_millis(500);

/// What one run measured (one JSON line on the run's stdout).
#[derive(Debug, Serialize, Deserialize)]
struct RunResult {
    waiters: usize,
    max_in_flight: usize,
    baseline_kib: u64,
    peak_kib: u64,
    over_baseline_kib: u64,
    peak_reset: bool,
    waiter_future_bytes: usize,
    max_connections: usize,
    distinct_connections: usize,
    finished_final: usize,
    failed: usize,
    first_error: Option<String>,
    wall_seconds: f64,
}

/// POSTs a control request and returns its JSON.
async fn control(
    http: &reqwest::Client,
    info: &support::ServerInfo,
    path: &str,
    body: serde_json::Value,
) -> serde_json::Value {
    let response = http
        .post(format!("{}{path}", info.control_url))
        .json(&body)
        .send()
        .await
        .expect("control request");
    assert!(response.status().is_success(), "control {path}");
    response.json().await.unwrap_or(serde_json::Value::Null)
}

/// One run in this process (see the module documentation).
async fn one_run(info: support::ServerInfo, waiters: usize, poll: Duration) -> RunResult {
    let ca = info.ca_pem.clone().expect("the sandbox serves TLS");
    let mut config = Config::new(
        &info.base_url,
        &info.token_endpoint,
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
    )
    .with_root_ca_pem(ca.clone());
    if let Ok(cap) = std::env::var("WAITERS_MAX_IN_FLIGHT") {
        config = config.with_max_in_flight(cap.parse().expect("WAITERS_MAX_IN_FLIGHT"));
    }
    let client = Client::new(config).expect("client");
    let max_in_flight = client.config().max_in_flight;
    let http = support::reqwest_client(Some(&ca));
    let token = control(
        &http,
        &info,
        &format!("/users/{}/tokens", seed::USER_ALICE),
        serde_json::json!({ "client_id": seed::MERCHANT_CLIENT_ID }),
    )
    .await["access_token"]
        .as_str()
        .expect("user token")
        .to_owned();
    let user = client.user(token);
    let mut orders = Vec::with_capacity(ORDERS);
    for _ in 0..ORDERS {
        let order = user
            .create_order(&CreateOrderRequest::new(
                seed::PRODUCT_BEANS,
                1,
                seed::CHANNEL_PLATFORM_COIN,
            ))
            .await
            .expect("order");
        orders.push(order.order_no);
    }
    // First connection and TLS session, token state, allocator warmed up.
    for order in &orders {
        assert_eq!(
            user.payment_status(order).await.expect("status"),
            PaymentStatus::AwaitingPayment
        );
    }

    let baseline_kib = support::status_kib("VmRSS");
    let peak_reset = support::reset_peak_rss();
    let stop = Arc::new(AtomicBool::new(false));
    let max_connections = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let stop = stop.clone();
        let max_connections = max_connections.clone();
        let port = info.port;
        std::thread::spawn(move || {
            let mut seen = HashSet::new();
            while !stop.load(Ordering::Relaxed) {
                // A socket can be listed twice when the kernel's table changes during the read.
                let open: HashSet<u16> = support::connections_to(port).into_iter().collect();
                max_connections.fetch_max(open.len(), Ordering::Relaxed);
                seen.extend(open);
                std::thread::sleep(Duration::from_millis(10));
            }
            seen.len()
        })
    };

    // The size of one waiter's future (what each spawned task holds besides tokio's header).
    let waiter_future_bytes =
        std::mem::size_of_val(&user.wait_for_payment(&orders[0], INTERVAL, Duration::ZERO));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(waiters);
    for i in 0..waiters {
        let user = user.clone();
        let order = orders[i % orders.len()].clone();
        tasks.push(tokio::spawn(async move {
            user.wait_for_payment(&order, INTERVAL, Duration::from_secs(300))
                .await
        }));
    }
    tokio::time::sleep(poll).await;
    // Past the payment window: every order is cancelled, every waiter sees status 2.
    control(
        &http,
        &info,
        "/clock/advance",
        serde_json::json!({ "seconds": 31 * 60 }),
    )
    .await;
    let mut finished_final = 0;
    let mut failed = 0;
    let mut first_error: Option<Error> = None;
    for task in tasks {
        match task.await.expect("waiter") {
            Ok(outcome) if outcome.payment_status() == PaymentStatus::Cancelled => {
                finished_final += 1
            }
            Ok(_) => failed += 1,
            Err(e) => {
                failed += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    let wall_seconds = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let distinct_connections = sampler.join().expect("sampler");
    let peak_kib = support::status_kib("VmHWM");
    RunResult {
        waiters,
        max_in_flight,
        baseline_kib,
        peak_kib,
        over_baseline_kib: peak_kib.saturating_sub(baseline_kib),
        peak_reset,
        waiter_future_bytes,
        max_connections: max_connections.load(Ordering::Relaxed),
        distinct_connections,
        finished_final,
        failed,
        first_error: first_error.map(|e| format!("{e:?}")),
        wall_seconds,
    }
}

fn main() {
    if support::serve_if_child() {
        return;
    }
    let smoke = support::smoke();
    let waiters = support::env_usize("WAITERS", if smoke { 500 } else { 10_000 });
    let poll = Duration::from_secs(support::env_usize(
        "WAITERS_POLL_SECONDS",
        if smoke { 1 } else { 3 },
    ) as u64);
    if let Ok(info) = std::env::var(RUN_ROLE) {
        let info: support::ServerInfo = serde_json::from_str(&info).expect("server info");
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let result = rt.block_on(one_run(info, waiters, poll));
        println!("{}", serde_json::to_string(&result).expect("result"));
        return;
    }

    let runs = support::env_usize("WAITERS_RUNS", if smoke { 1 } else { 5 });
    let server = support::ServerChild::spawn(true);
    let info = serde_json::to_string(&server.info).expect("server info");
    println!(
        "waiters: {waiters} concurrent wait_for_payment over TLS (HTTP/1.1), {ORDERS} orders, \
         interval {INTERVAL:?}, cancelled after {poll:?} of polling; {runs} runs, each a fresh \
         process; resident memory over the baseline taken after the first requests"
    );
    let mut worst: Option<RunResult> = None;
    let mut all_final = true;
    for run in 0..runs {
        let mut child = Command::new(std::env::current_exe().expect("current exe"))
            .env(RUN_ROLE, &info)
            .env("WAITERS", waiters.to_string())
            .env("WAITERS_POLL_SECONDS", poll.as_secs().to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run child");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("run result");
        let status = child.wait().expect("run child ends");
        assert!(status.success(), "run {run} failed: {status}");
        let result: RunResult = serde_json::from_str(&line).expect("run result line");
        println!(
            "  run {run}: +{:.1} MiB over a {:.1} MiB baseline (peak {:.1} MiB{}), at most {} \
             connections open, {} distinct, cap {} in flight, {} waiters ended with the final \
             status, {} failed{}, {:.1} s, {} bytes per waiter future",
            result.over_baseline_kib as f64 / 1024.0,
            result.baseline_kib as f64 / 1024.0,
            result.peak_kib as f64 / 1024.0,
            if result.peak_reset {
                ""
            } else {
                ", peak counted from process start"
            },
            result.max_connections,
            result.distinct_connections,
            result.max_in_flight,
            result.finished_final,
            result.failed,
            result
                .first_error
                .as_deref()
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default(),
            result.wall_seconds,
            result.waiter_future_bytes,
        );
        all_final &= result.finished_final == result.waiters;
        if worst
            .as_ref()
            .is_none_or(|w| result.over_baseline_kib > w.over_baseline_kib)
        {
            worst = Some(result);
        }
    }
    if let Some(w) = worst {
        println!(
            "waiters: worst run +{:.1} MiB over baseline with {} waiters ({} connections at \
             most; target < 64 MiB)",
            w.over_baseline_kib as f64 / 1024.0,
            w.waiters,
            w.max_connections
        );
    }
    drop(server);
    assert!(all_final, "every waiter ends with the cancelled status");
}
