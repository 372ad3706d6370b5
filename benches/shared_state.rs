//! What a shared store adds to one admitted call (issue 15): the same sequential merchant-payment
//! channel reads (`Client::list_channels`, drawing on the 300-per-window read budget) through the
//! in-process limiter and through a SQLite file, Redis and PostgreSQL (Debian's servers, started
//! here on loopback on free ports and stopped by process id), in one run, modes alternating per
//! round; printed: the median wall time per call of each mode, its ratio to in-process, and the
//! store round trips per admitted call (the SDK's count of its store operations; for Redis also
//! Redis's own count of script calls from `INFO commandstats`).
//!
//! The sandbox runs in a child process with a 1 s rate-limit window (and the SDK's window is
//! 1 s), and each round sends fewer calls than the budget, then waits out the window, so no
//! call waits for room: the figures are the admission's cost, not pacing.
//!
//! `cargo bench --features server --bench shared_state` (full: 15 rounds of 250 calls per mode),
//! `... -- --smoke` (2 rounds of 50). Options: `SHARED_STATE_N`, `SHARED_STATE_ROUNDS`.

#[path = "support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "../src/store/test_servers.rs"]
mod test_servers;

use std::time::{Duration, Instant};

use storefront::{Client, Config, RateLimits};
use storefront_sandbox::seed;

fn config(info: &support::ServerInfo, shared: Option<&str>) -> Config {
    let c = Config::new(
        &info.base_url,
        &info.token_endpoint,
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
    )
    .with_insecure_loopback(true)
    .with_rate_limits(RateLimits {
        window: Duration::from_secs(1),
        margin: Duration::from_millis(100),
        ..RateLimits::default()
    });
    match shared {
        Some(url) => c.with_shared_state(url),
        None => c,
    }
}

/// `INFO commandstats` calls of EVALSHA/EVAL in Redis (its own count of script round trips).
fn redis_script_calls(port: u16) -> u64 {
    let out = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string(), "INFO", "commandstats"])
        .output()
        .expect("redis-cli");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
        .filter_map(|l| {
            l.split([':', ',']).find_map(|kv| {
                kv.strip_prefix("calls=")
                    .and_then(|n| n.parse::<u64>().ok())
            })
        })
        .sum()
}

fn main() {
    if support::serve_if_child() {
        return;
    }
    let smoke = support::smoke();
    let n = support::env_usize("SHARED_STATE_N", if smoke { 50 } else { 250 });
    let rounds = support::env_usize("SHARED_STATE_ROUNDS", if smoke { 2 } else { 15 });
    assert!(n < 300, "each round stays within the read budget");
    let server = support::ServerChild::spawn_with(false, 1);
    let info = server.info.clone();
    let redis = test_servers::RedisServer::start().expect("redis-server installed");
    let postgres = test_servers::PostgresServer::start().expect("PostgreSQL installed");
    let dir = test_servers::ScratchDir::new();
    let sqlite = format!("sqlite://{}", dir.path().join("bench.db").display());
    let modes: Vec<(&str, Option<String>)> = vec![
        ("in-process", None),
        ("sqlite", Some(sqlite)),
        ("redis", Some(redis.url())),
        ("postgres", Some(postgres.url())),
    ];
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let clients: Vec<Client> = modes
            .iter()
            .map(|(_, url)| Client::new(config(&info, url.as_deref())).expect("client"))
            .collect();
        // Warm-up: token fetched and shared, connections and schemas made, caches settled.
        for client in &clients {
            for _ in 0..20 {
                client.list_channels().await.expect("warm-up call");
            }
        }
        tokio::time::sleep(Duration::from_millis(1200)).await;
        println!(
            "shared_state: sequential GET merchant-payment-channels, {n} calls per mode and round, \
             {rounds} rounds, modes alternating (sandbox in a child process)"
        );
        let mut per_call: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
        let trips_before: Vec<u64> = clients
            .iter()
            .map(|c| c.shared_state_round_trips())
            .collect();
        let redis_before = redis_script_calls(redis.port());
        for round in 0..rounds {
            let mut us = vec![0.0; modes.len()];
            let mut order: Vec<usize> = (0..modes.len()).collect();
            order.rotate_left(round % modes.len());
            for i in order {
                let started = Instant::now();
                for _ in 0..n {
                    clients[i].list_channels().await.expect("call");
                }
                us[i] = started.elapsed().as_secs_f64() * 1e6 / n as f64;
                per_call[i].push(us[i]);
                // Let the 1 s windows (sandbox and SDK) empty before the next mode.
                tokio::time::sleep(Duration::from_millis(1150)).await;
            }
            for i in 0..modes.len() {
                ratios[i].push(us[i] / us[0]);
            }
        }
        let calls = (n * rounds) as f64;
        let redis_trips = (redis_script_calls(redis.port()) - redis_before) as f64;
        println!("| Mode | Median µs per call | Ratio to in-process (median of rounds) | Store round trips per admitted call |");
        println!("|---|---|---|---|");
        for (i, (name, _)) in modes.iter().enumerate() {
            let trips =
                (clients[i].shared_state_round_trips() - trips_before[i]) as f64 / calls;
            let redis_note = if *name == "redis" {
                format!(" (Redis counted {:.2})", redis_trips / calls)
            } else {
                String::new()
            };
            println!(
                "| {name} | {:.1} | {:.2}x | {trips:.2}{redis_note} |",
                support::median(&mut per_call[i]),
                support::median(&mut ratios[i]),
            );
        }
        println!("store round trips per admitted call: see the last column; every call admitted (none waited for room)");
    });
    drop(server);
}
