//! Fee release after a confirmed channel expiry and platform rates over real HTTP (contract:
//! "States and transitions", pending → review: "reserved fee and credit are released once, only
//! after the channel is confirmed expired"; Limits: "The card-provider session has its own
//! minimum lifetime of 30 minutes"; Errors: 422 `currency_rate_unavailable`).

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

const M2: &str = seed::OTHER_MERCHANT_NO;
/// 12.50 EUR at 1.1 coin = 13.75 coin; the fee is 1 %: 0.1375 coin.
const FEE: i64 = 13_750_000;

async fn funds(env: &Env) -> Value {
    env.get(&env.control(&format!("/merchants/{M2}/funds")), None)
        .await
        .body
}

async fn sweep(env: &Env) {
    let answer = env.post_empty(&env.control("/sweep"), None).await;
    assert_eq!(answer.status, StatusCode::OK);
}

fn eur_fixed(key: &str, expires_in: i64) -> Value {
    let mut b = body(key);
    b["currency"] = json!("EUR");
    b["payment_no"] = json!(seed::CHANNEL_CARD_EUR_OTHER);
    b["expires_in"] = json!(expires_in);
    b
}

/// A merchant-own card session started (fee reserved), expired unpaid: the sweep moves the
/// payment to review but keeps the reservation while the card session may still be paid (its
/// 30-minute minimum lifetime); once the channel confirms the session expired, the fee is
/// released exactly once (another payment's reservation is untouched, nothing is charged, and
/// later sweeps release nothing more). An unclear session is never confirmed: its reservation
/// stays.
#[tokio::test]
async fn reserved_fee_is_released_once_only_after_the_channel_confirms_expiry() {
    let env = Env::start().await;
    let token = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    set_sweep(&env, false).await;
    let set = env
        .put_control(
            &format!("/merchants/{M2}/funds"),
            &json!({"available": 0, "credit": 2 * FEE}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK);
    let a = order_no(&created(&env, &token, &eur_fixed("fee-a", 60)).await);
    let b = order_no(&created(&env, &token, &eur_fixed("fee-b", 3600)).await);
    for order in [&a, &b] {
        let started = control(&env, order, "checkout/session", json!({})).await;
        assert_eq!(started.status, StatusCode::OK, "{}", started.text);
    }
    assert_eq!(funds(&env).await["reserved"], 2 * FEE);

    // Expiry: review, but the card session lives 30 minutes: nothing released yet.
    env.advance(61).await;
    sweep(&env).await;
    assert_eq!(status(&env, &token, &a).await, "review");
    assert_eq!(funds(&env).await["reserved"], 2 * FEE, "not at review");
    // (Margins of 30 s: the sandbox clock also runs in real time.)
    env.advance(1800 - 61 - 30).await;
    sweep(&env).await;
    assert_eq!(
        funds(&env).await["reserved"],
        2 * FEE,
        "not before the channel session's minimum lifetime is over"
    );

    // The channel confirms the session expired: released once.
    env.advance(31).await;
    sweep(&env).await;
    let after = funds(&env).await;
    assert_eq!(after["reserved"], FEE, "only a's fee is released: {after}");
    assert_eq!(after["available"], 0, "nothing charged");
    assert_eq!(after["credit"], 2 * FEE, "nothing charged");
    for _ in 0..3 {
        env.advance(60).await;
        sweep(&env).await;
    }
    assert_eq!(funds(&env).await["reserved"], FEE, "released exactly once");
    assert_eq!(status(&env, &env_token(&env).await, &a).await, "review");

    // b's channel response turns unclear: at expiry it goes to review and keeps its reservation.
    assert_eq!(
        control(&env, &b, "checkout/unclear", json!({}))
            .await
            .status,
        StatusCode::OK
    );
    env.advance(3600).await;
    sweep(&env).await;
    sweep(&env).await;
    let token = env_token(&env).await;
    assert_eq!(status(&env, &token, &b).await, "review");
    assert_eq!(
        funds(&env).await["reserved"],
        FEE,
        "an unclear session is not confirmed expired"
    );
}

/// A fresh token of the second merchant (the clock moved past earlier tokens' lifetime).
async fn env_token(env: &Env) -> String {
    env.client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await
}

/// `PUT /_sandbox/rates/{currency}` removes or sets a platform rate: creation in a currency
/// without a rate answers 422 `currency_rate_unavailable` (field `currency`), for an open
/// choice and a fixed channel alike; a payment created before keeps its saved rate (repeat and
/// payment still work); a new rate applies to new payments.
#[tokio::test]
async fn creation_without_a_platform_rate_is_currency_rate_unavailable() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let before = order_no(&created(&env, &token, &body("before")).await);

    let removed = env
        .put_control("/rates/USD", &json!({ "rate": null }))
        .await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.text);
    let rates = env.get(&env.control("/rates"), None).await.body;
    assert!(rates.get("USD").is_none(), "{rates}");
    let mut fixed = body("fixed");
    fixed["payment_no"] = json!(seed::CHANNEL_CARD_USD);
    for request in [body("open"), fixed] {
        let answer = create(&env, &token, &request).await;
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            answer.text
        );
        assert_eq!(answer.error(), "currency_rate_unavailable");
        assert_eq!(answer.body["field"], "currency");
    }
    let repeat = create(&env, &token, &body("before")).await;
    assert_eq!(
        repeat.status,
        StatusCode::CREATED,
        "a repeat is not re-rated"
    );
    assert_eq!(order_no(&repeat.body), before);
    let paid = pay_by_card(&env, &before).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text);
    assert_eq!(
        paid.body["settlement_coin"].to_string().trim_matches('"'),
        "1250000000",
        "12.50 USD at the rate saved at creation"
    );

    let set = env
        .put_control("/rates/USD", &json!({ "rate": 2_0000_0000_i64 }))
        .await;
    assert_eq!(set.status, StatusCode::OK);
    let after = order_no(&created(&env, &token, &body("after")).await);
    let paid = pay_by_card(&env, &after).await;
    assert_eq!(
        paid.body["settlement_coin"].to_string().trim_matches('"'),
        "2500000000",
        "the new rate applies to new payments"
    );

    for (path, rate, code) in [
        ("/rates/USD", json!(0), StatusCode::BAD_REQUEST),
        ("/rates/USD", json!(-1), StatusCode::BAD_REQUEST),
        ("/rates/USD", json!("1"), StatusCode::BAD_REQUEST),
        ("/rates/PLC", json!(null), StatusCode::BAD_REQUEST),
        ("/rates/GBP", json!(1), StatusCode::NOT_FOUND),
    ] {
        let answer = env.put_control(path, &json!({ "rate": rate })).await;
        assert_eq!(answer.status, code, "{path} {rate}: {}", answer.text);
    }
    env.post_empty(&env.control("/reset"), None).await;
    let rates = env.get(&env.control("/rates"), None).await.body;
    assert_eq!(rates["USD"], 1_0000_0000, "reset restores the seeded rates");
}
