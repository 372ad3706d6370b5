//! Rate limits over real HTTP (contract: "Limits"): 60 merchant-payment creations, 300 shared
//! reads and 30 notification re-queues per client per minute; 180 checkout reads and 30
//! checkout payment starts per IP per minute; 429 `rate_limited` with `Retry-After`; windows
//! on the sandbox clock.

mod harness;

use std::net::{IpAddr, Ipv4Addr};

use harness::Env;
use reqwest::StatusCode;
use serde_json::json;
use storefront_sandbox::limits::{Bucket, RateLimiter};
use storefront_sandbox::seed;

/// One request of a rate-limited endpoint, sent by `http` with `token`; `n` numbers the call.
#[derive(Clone, Copy, Debug)]
enum Call {
    Create,
    Channels,
    List,
    Query,
    Requeue,
    CheckoutRead,
    CheckoutStart,
}

struct Ctx {
    order_no: String,
    checkout_url: String,
}

async fn send(
    env: &Env,
    http: &reqwest::Client,
    token: &str,
    ctx: &Ctx,
    call: Call,
    n: usize,
) -> harness::Answer {
    let api = |p: &str| env.api(p);
    let request = match call {
        Call::Create => http
            .post(api("/openapi/v1/merchant-payments"))
            .bearer_auth(token)
            .json(&json!({
                "external_reference": format!("limit-{n}"),
                "idempotency_key": format!("limit-key-{n}"),
                "amount_minor": 100,
                "currency": "USD",
            })),
        Call::Channels => http
            .get(api("/openapi/v1/merchant-payment-channels"))
            .bearer_auth(token),
        Call::List => http
            .get(api(&format!(
                "/openapi/v1/merchant-payments?order_no={}",
                ctx.order_no
            )))
            .bearer_auth(token),
        Call::Query => http
            .get(api(&format!(
                "/openapi/v1/merchant-payments/{}",
                ctx.order_no
            )))
            .bearer_auth(token),
        Call::Requeue => http
            .post(api(&format!(
                "/openapi/v1/merchant-payments/{}/notifications/evt-none/retry",
                ctx.order_no
            )))
            .bearer_auth(token),
        Call::CheckoutRead => http.get(&ctx.checkout_url),
        Call::CheckoutStart => http
            .post(format!("{}/pay", ctx.checkout_url))
            .form(&[("method", "")]),
    };
    harness::answer(request.send().await.expect("answered")).await
}

/// Sends `limit` requests cycling through `calls` (none refused), then one more (refused with
/// 429 `rate_limited` and a `Retry-After` of 1 to 60 seconds). Returns the Retry-After.
async fn exhaust(
    env: &Env,
    http: &reqwest::Client,
    token: &str,
    ctx: &Ctx,
    calls: &[Call],
    limit: usize,
) -> i64 {
    for n in 0..limit {
        let call = calls[n % calls.len()];
        let answer = send(env, http, token, ctx, call, n).await;
        assert_ne!(
            answer.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{call:?} #{n} was refused before the limit"
        );
    }
    let refused = send(env, http, token, ctx, calls[0], limit).await;
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{calls:?} #{limit}"
    );
    assert_eq!(refused.error(), "rate_limited");
    let retry_after: i64 = refused.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    retry_after
}

async fn context(env: &Env) -> Ctx {
    let token = env.merchant_token().await;
    let created = env
        .post(
            &env.api("/openapi/v1/merchant-payments"),
            Some(&token),
            &json!({"external_reference": "limits-ctx", "idempotency_key": "limits-ctx",
                    "amount_minor": 500, "currency": "USD"}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    Ctx {
        order_no: created.body["order_no"].as_str().unwrap().to_owned(),
        checkout_url: created.body["checkout_url"].as_str().unwrap().to_owned(),
    }
}

/// Per-client budgets: refused at the limit, another client unaffected, admitted again once
/// the sandbox clock has moved by `Retry-After`.
#[tokio::test]
async fn per_client_limits_refuse_with_429_rate_limited_and_retry_after() {
    let table: &[(&str, &[Call], usize)] = &[
        ("create merchant payment", &[Call::Create], 60),
        (
            "query, filtered list and channel directory, shared",
            &[Call::Channels, Call::List, Call::Query],
            300,
        ),
        ("notification retry", &[Call::Requeue], 30),
    ];
    for (name, calls, limit) in table {
        let env = Env::start().await;
        let ctx = context(&env).await;
        env.http
            .delete(env.control("/limits"))
            .send()
            .await
            .unwrap();
        let token = env.merchant_token().await;
        let retry_after = exhaust(&env, &env.http, &token, &ctx, calls, *limit).await;
        // Another client has its own budget.
        let other = env
            .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
            .await;
        let answer = send(&env, &env.http, &other, &ctx, calls[0], 10_000).await;
        assert_ne!(
            answer.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{name}: other client"
        );
        // Still refused until the window has moved on.
        let answer = send(&env, &env.http, &token, &ctx, calls[0], 10_001).await;
        assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS, "{name}");
        env.advance(retry_after).await;
        let answer = send(&env, &env.http, &token, &ctx, calls[0], 10_002).await;
        assert_ne!(
            answer.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{name}: after Retry-After"
        );
    }
}

/// Per-IP checkout budgets: a second loopback address (127.0.0.2) has its own budget.
#[tokio::test]
async fn per_ip_checkout_limits_refuse_with_429_rate_limited_and_retry_after() {
    let table: &[(&str, Call, usize)] = &[
        ("checkout read", Call::CheckoutRead, 180),
        ("checkout payment start", Call::CheckoutStart, 30),
    ];
    for (name, call, limit) in table {
        let env = Env::start().await;
        let ctx = context(&env).await;
        env.http
            .delete(env.control("/limits"))
            .send()
            .await
            .unwrap();
        let retry_after = exhaust(&env, &env.http, "", &ctx, &[*call], *limit).await;
        let elsewhere = reqwest::Client::builder()
            .tls_backend_preconfigured(
                rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                    rustls::crypto::ring::default_provider(),
                ))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth(),
            )
            .redirect(reqwest::redirect::Policy::none())
            .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
            .build()
            .unwrap();
        let answer = send(&env, &elsewhere, "", &ctx, *call, 0).await;
        assert_ne!(
            answer.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{name}: another IP"
        );
        env.advance(retry_after).await;
        let answer = send(&env, &env.http, "", &ctx, *call, 0).await;
        assert_ne!(
            answer.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{name}: after Retry-After"
        );
    }
}

/// The limiter itself: limits per bucket, a sliding window, refused requests not counted.
#[test]
fn rate_limiter_budgets_match_the_contract_table() {
    let start = time::OffsetDateTime::UNIX_EPOCH;
    for (bucket, limit) in [
        (Bucket::MerchantCreate, 60),
        (Bucket::MerchantRead, 300),
        (Bucket::NotificationRetry, 30),
        (Bucket::CheckoutRead, 180),
        (Bucket::CheckoutStart, 30),
    ] {
        assert_eq!(bucket.limit(), limit);
        let mut limiter = RateLimiter::default();
        for _ in 0..limit {
            limiter.hit(bucket, "k", start).unwrap();
        }
        let refused = limiter
            .hit(bucket, "k", start + time::Duration::seconds(59))
            .unwrap_err();
        assert_eq!(refused.status.as_u16(), 429);
        assert_eq!(refused.error, "rate_limited");
        assert_eq!(refused.retry_after, Some(1));
        limiter
            .hit(bucket, "k", start + time::Duration::seconds(60))
            .unwrap();
    }
}
