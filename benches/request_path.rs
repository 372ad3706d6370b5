//! Client CPU per request (issue 11 item 4): the SDK's request path against bare reqwest +
//! serde_json, the same GET with the same headers against the same server (see BENCHMARKS.md,
//! "Request path").
//!
//! The sandbox runs in a child process (plain HTTP on loopback), so `getrusage(RUSAGE_SELF)` of
//! this process is the client's CPU alone. Each side sends `GET /openapi/v1/merchant` with the
//! client-credentials token (`Authorization: Bearer`, `Accept: application/json`, the same
//! `User-Agent`), 32 in flight, and decodes the profile into a typed struct; the SDK's side is
//! `Client::merchant_profile` (token cache, in-flight cap, attempt timeout, deadline, retry
//! bookkeeping, size cap, error mapping, tracing span), with its rate limiter off so pacing is
//! not what is measured. The two sides alternate, 21 rounds of 5,000 requests each by default,
//! in one run; the medians and the median of the per-round ratios are printed, then the
//! allocations per request of each side (counted in a separate pass).
//!
//! `cargo bench --bench request_path` (full), `cargo bench --bench request_path -- --smoke`
//! (a few hundred requests, figures printed, nothing asserted). Options from the environment:
//! `REQUEST_PATH_N` requests per side and round, `REQUEST_PATH_ROUNDS`, `REQUEST_PATH_SIDE`
//! (`sdk` or `bare`: only that side, for profiling).

#[path = "support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use storefront::{Client, Config, RateLimits};
use storefront_sandbox::seed;

/// Requests in flight at once.
const IN_FLIGHT: usize = 32;

/// The bare side's copy of the merchant profile (all strings, missing ones empty), decoded the
/// way the SDK decodes its own.
#[derive(Deserialize, Default)]
#[serde(default)]
#[allow(dead_code)]
struct Profile {
    merchant_no: String,
    name: String,
    logo_url: String,
    short_description: String,
    description: String,
    business_scope: String,
    website_url: String,
    contact: String,
}

/// The bare side: one reqwest client, the URL and headers prepared once.
struct Bare {
    http: reqwest::Client,
    url: reqwest::Url,
    authorization: reqwest::header::HeaderValue,
    user_agent: reqwest::header::HeaderValue,
}

impl Bare {
    async fn get(&self) -> Profile {
        let response = self
            .http
            .get(self.url.clone())
            .header(reqwest::header::AUTHORIZATION, self.authorization.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::USER_AGENT, self.user_agent.clone())
            .send()
            .await
            .expect("bare request");
        assert!(response.status().is_success(), "{}", response.status());
        let body = response.bytes().await.expect("bare body");
        serde_json::from_slice(&body).expect("bare decode")
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Sdk,
    Bare,
}

/// Sends `n` requests of `side`, `IN_FLIGHT` at a time; returns the process CPU time and the
/// wall time they took.
async fn run(side: Side, n: usize, sdk: &Client, bare: &Arc<Bare>) -> (Duration, Duration) {
    let cpu = support::process_cpu();
    let wall = Instant::now();
    let mut tasks = Vec::with_capacity(IN_FLIGHT);
    for worker in 0..IN_FLIGHT {
        let count = n / IN_FLIGHT + usize::from(worker < n % IN_FLIGHT);
        let sdk = sdk.clone();
        let bare = bare.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..count {
                let merchant_no = match side {
                    Side::Sdk => {
                        sdk.merchant_profile()
                            .await
                            .expect("sdk request")
                            .merchant_no
                    }
                    Side::Bare => bare.get().await.merchant_no,
                };
                assert_eq!(merchant_no, seed::MERCHANT_NO);
            }
        }));
    }
    for task in tasks {
        task.await.expect("worker");
    }
    (support::process_cpu() - cpu, wall.elapsed())
}

fn main() {
    if support::serve_if_child() {
        return;
    }
    let smoke = support::smoke();
    // Short rounds, many of them: the two sides alternate often, so a shared machine's load
    // changes hit both alike.
    let n = support::env_usize("REQUEST_PATH_N", if smoke { 320 } else { 5_000 });
    let rounds = support::env_usize("REQUEST_PATH_ROUNDS", if smoke { 1 } else { 21 });
    let only = match std::env::var("REQUEST_PATH_SIDE").as_deref() {
        Ok("sdk") => Some(Side::Sdk),
        Ok("bare") => Some(Side::Bare),
        _ => None,
    };
    let server = support::ServerChild::spawn(false);
    let info = server.info.clone();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let config = Config::new(
            &info.base_url,
            &info.token_endpoint,
            seed::MERCHANT_CLIENT_ID,
            seed::MERCHANT_CLIENT_SECRET,
        )
        .with_insecure_loopback(true)
        .with_rate_limits(RateLimits {
            enabled: false,
            ..RateLimits::default()
        });
        // The SDK sends `SDK_USER_AGENT`; the bare side sends the same.
        let user_agent = storefront::SDK_USER_AGENT;
        let sdk = Client::new(config).expect("client");
        let token = sdk.access_token().await.expect("token");
        let bare = Arc::new(Bare {
            http: support::reqwest_client(None),
            url: format!("{}/openapi/v1/merchant", info.base_url)
                .parse()
                .expect("url"),
            authorization: format!("Bearer {}", token.expose())
                .parse()
                .expect("header"),
            user_agent: user_agent.parse().expect("header"),
        });
        // Warm-up: connections opened, token cached, allocator and caches settled.
        let warm = (n / 4).max(IN_FLIGHT * 4);
        run(Side::Sdk, warm, &sdk, &bare).await;
        run(Side::Bare, warm, &sdk, &bare).await;

        println!(
            "request_path: GET /openapi/v1/merchant, {IN_FLIGHT} in flight, {n} requests per side \
             and round, {rounds} rounds (client process CPU, server in a child process)"
        );
        let mut per_side: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut ratios = Vec::new();
        for round in 0..rounds {
            let order = if round % 2 == 0 {
                [Side::Sdk, Side::Bare]
            } else {
                [Side::Bare, Side::Sdk]
            };
            let mut us = [0.0f64; 2];
            for side in order {
                if only.is_some_and(|o| o != side) {
                    continue;
                }
                let (cpu, wall) = run(side, n, &sdk, &bare).await;
                let per_request = cpu.as_secs_f64() * 1e6 / n as f64;
                let index = usize::from(side == Side::Bare);
                us[index] = per_request;
                per_side[index].push(per_request);
                println!(
                    "  round {round} {side:?}: {per_request:.2} µs CPU/request, \
                     {:.0} requests/s wall",
                    n as f64 / wall.as_secs_f64()
                );
            }
            if only.is_none() {
                ratios.push(us[0] / us[1]);
            }
        }
        // Allocations per request, counted in a separate pass (not during the timed rounds).
        let counted = (n / 4).max(IN_FLIGHT);
        let mut allocations = [0.0f64; 2];
        for side in [Side::Sdk, Side::Bare] {
            support::count_allocations(true);
            run(side, counted, &sdk, &bare).await;
            let count = support::count_allocations(false);
            allocations[usize::from(side == Side::Bare)] = count as f64 / counted as f64;
        }
        println!(
            "request_path: allocations per request (whole process, {counted} requests): \
             storefront {:.1}, bare {:.1}",
            allocations[0], allocations[1]
        );
        if only.is_none() {
            let sdk_median = support::median(&mut per_side[0]);
            let bare_median = support::median(&mut per_side[1]);
            println!(
                "request_path: storefront {sdk_median:.2} µs/request, bare reqwest + serde_json \
                 {bare_median:.2} µs/request, ratio of medians {:.3}, median of per-round ratios \
                 {:.3} (target <= 1.10)",
                sdk_median / bare_median,
                support::median(&mut ratios)
            );
        }
    });
    drop(server);
}
