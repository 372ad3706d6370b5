//! Debug assignment of test channels over real HTTP (contract: "Settlement, fees and test
//! channels" rules 4 and 5, the channel object's `login_required` and `test_mode`, 403
//! `payment_debug_access_denied`, 403 `login_required`).

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

const M1: &str = seed::MERCHANT_NO;
const M2: &str = seed::OTHER_MERCHANT_NO;

async fn assign(env: &Env, setting: Value) {
    let response = env
        .put_control(&format!("/channels/{}", seed::CHANNEL_CARD_TEST), &setting)
        .await;
    assert_eq!(response.status, StatusCode::OK);
}

/// The test channel as listed for a token, if it is.
async fn listed(env: &Env, token: &str) -> Option<Value> {
    let answer = env
        .get(
            &env.api("/openapi/v1/merchant-payment-channels"),
            Some(token),
        )
        .await;
    answer.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["payment_no"] == seed::CHANNEL_CARD_TEST)
        .cloned()
}

/// Who may start a session on a payment fixed to the test channel.
async fn may_pay(env: &Env, order: &str, user: Option<&str>) -> Result<(), String> {
    let mut b = json!({"payment_no": seed::CHANNEL_CARD_TEST});
    if let Some(u) = user {
        b["user"] = json!(u);
    }
    let answer = control(env, order, "checkout/session", b).await;
    if answer.status == StatusCode::OK {
        Ok(())
    } else {
        Err(answer.error().to_owned())
    }
}

/// Rows: merchants set, payers set → which merchants see and can create on the channel, its
/// `login_required`, and which buyers may pay (only merchants: every buyer of those merchants;
/// only payers: those users under every merchant, login forced; both: both must hold; neither:
/// nothing; several ids: any one matches).
#[tokio::test]
async fn debug_assignment_table() {
    struct Row {
        merchants: &'static [&'static str],
        payers: &'static [&'static str],
        usable_by: &'static [&'static str],
        login_required: bool,
        buyers: &'static [(Option<&'static str>, Result<(), &'static str>)],
    }
    let anyone: &[(Option<&str>, Result<(), &str>)] = &[
        (None, Ok(())),
        (Some(seed::USER_CAROL), Ok(())),
        (Some(seed::USER_ALICE), Ok(())),
    ];
    let only_alice: &[(Option<&str>, Result<(), &str>)] = &[
        (None, Err("login_required")),
        (Some(seed::USER_CAROL), Err("payment_debug_access_denied")),
        (Some(seed::USER_ALICE), Ok(())),
    ];
    let alice_or_carol: &[(Option<&str>, Result<(), &str>)] = &[
        (None, Err("login_required")),
        (Some(seed::USER_BOB), Err("payment_debug_access_denied")),
        (Some(seed::USER_CAROL), Ok(())),
        (Some(seed::USER_ALICE), Ok(())),
    ];
    let rows = [
        Row {
            merchants: &[M1],
            payers: &[],
            usable_by: &[M1],
            login_required: false,
            buyers: anyone,
        },
        Row {
            merchants: &[],
            payers: &[seed::USER_ALICE],
            usable_by: &[M1, M2],
            login_required: true,
            buyers: only_alice,
        },
        Row {
            merchants: &[M1],
            payers: &[seed::USER_ALICE],
            usable_by: &[M1],
            login_required: true,
            buyers: only_alice,
        },
        Row {
            merchants: &[],
            payers: &[],
            usable_by: &[],
            login_required: false,
            buyers: &[],
        },
        Row {
            merchants: &[M2, M1],
            payers: &[seed::USER_CAROL, seed::USER_ALICE],
            usable_by: &[M1, M2],
            login_required: true,
            buyers: alice_or_carol,
        },
    ];
    for (index, row) in rows.iter().enumerate() {
        let name = format!("merchants {:?}, payers {:?}", row.merchants, row.payers);
        let env = Env::start().await;
        assign(
            &env,
            json!({"debug_merchants": row.merchants, "debug_payers": row.payers}),
        )
        .await;
        let tokens = [
            (M1, env.merchant_token().await),
            (
                M2,
                env.client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
                    .await,
            ),
        ];
        for (merchant, token) in &tokens {
            let usable = row.usable_by.contains(merchant);
            let channel = listed(&env, token).await;
            assert_eq!(channel.is_some(), usable, "{name}: listed for {merchant}");
            if let Some(channel) = channel {
                assert_eq!(channel["test_mode"], true);
                assert_eq!(channel["login_required"], row.login_required, "{name}");
            }
            let mut request = body(&format!("debug-{index}-{merchant}"));
            request["payment_no"] = json!(seed::CHANNEL_CARD_TEST);
            let answer = create(&env, token, &request).await;
            if !usable {
                assert_eq!(answer.status, StatusCode::FORBIDDEN, "{name}: {merchant}");
                assert_eq!(answer.error(), "payment_debug_access_denied", "{name}");
                continue;
            }
            assert_eq!(
                answer.status,
                StatusCode::CREATED,
                "{name}: {}",
                answer.text
            );
            for (buyer, expected) in row.buyers {
                // A fresh payment per buyer: the first session locks the method.
                let mut request = body(&format!("debug-{index}-{merchant}-{buyer:?}"));
                request["payment_no"] = json!(seed::CHANNEL_CARD_TEST);
                let order = order_no(&created(&env, token, &request).await);
                let got = may_pay(&env, &order, *buyer).await;
                assert_eq!(
                    got,
                    expected.map_err(str::to_owned),
                    "{name}: {merchant} buyer {buyer:?}"
                );
            }
        }
    }
}

/// GET .../merchant-payment-channels: "200 returns `{"items": [...]}` ...; empty array when no
/// channel is available", and creation without `payment_no` then has no channel to offer
/// (422 `channel_unavailable`).
#[tokio::test]
async fn channel_directory_is_an_empty_array_when_no_channel_is_available() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let directory = env.api("/openapi/v1/merchant-payment-channels");
    let listed = env.get(&directory, Some(&token)).await;
    let channels: Vec<String> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["payment_no"].as_str().unwrap().to_owned())
        .collect();
    assert!(!channels.is_empty(), "the seeded merchant has channels");
    for payment_no in &channels {
        let response = env
            .put_control(
                &format!("/channels/{payment_no}"),
                &json!({"enabled": false}),
            )
            .await;
        assert_eq!(response.status, StatusCode::OK, "{}", response.text);
    }
    let answer = env.get(&directory, Some(&token)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body, json!({"items": []}));
    let answer = create(&env, &token, &body("no-channel")).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer.error(), "channel_unavailable");
}

#[tokio::test]
async fn disabled_channel_is_not_listed_and_cannot_be_used() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let response = env
        .put_control(
            &format!("/channels/{}", seed::CHANNEL_CARD_USD),
            &json!({"enabled": false}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK);
    let answer = env
        .get(
            &env.api("/openapi/v1/merchant-payment-channels"),
            Some(&token),
        )
        .await;
    assert!(
        answer.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["payment_no"] != seed::CHANNEL_CARD_USD)
    );
    let mut request = body("disabled");
    request["payment_no"] = json!(seed::CHANNEL_CARD_USD);
    let answer = create(&env, &token, &request).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer.error(), "channel_unavailable");
}

#[tokio::test]
async fn an_issued_session_may_still_be_paid_after_debug_rights_are_revoked() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("revoked");
    request["payment_no"] = json!(seed::CHANNEL_CARD_TEST);
    let order = order_no(&created(&env, &token, &request).await);
    assert_eq!(may_pay(&env, &order, Some(seed::USER_ALICE)).await, Ok(()));
    assign(&env, json!({"debug_payers": [seed::USER_CAROL]})).await;
    assert_eq!(
        may_pay(&env, &order, Some(seed::USER_ALICE)).await,
        Err("payment_debug_access_denied".to_owned()),
        "re-fetching the channel link checks the buyer again"
    );
    let paid = control(&env, &order, "checkout/pay", json!({})).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text);
    assert_eq!(status(&env, &token, &order).await, "paid");
}

#[tokio::test]
async fn merchant_forbidding_anonymous_purchase_makes_every_channel_require_login() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let response = env
        .put_control(
            &format!("/merchants/{M1}/anonymous-purchase"),
            &json!({"allowed": false}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK);
    let answer = env
        .get(
            &env.api("/openapi/v1/merchant-payment-channels"),
            Some(&token),
        )
        .await;
    let card = answer.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["payment_no"] == seed::CHANNEL_CARD_USD)
        .cloned()
        .unwrap();
    assert_eq!(card["login_required"], true);
    let order = new_payment(&env, &token, "no-anonymous").await;
    let anonymous = pay_by_card(&env, &order).await;
    assert_eq!(
        (anonymous.status, anonymous.error()),
        (StatusCode::FORBIDDEN, "login_required")
    );
    let logged_in = control(
        &env,
        &order,
        "checkout/pay",
        json!({"payment_no": seed::CHANNEL_CARD_USD, "user": seed::USER_BOB}),
    )
    .await;
    assert_eq!(logged_in.status, StatusCode::OK, "{}", logged_in.text);
}

async fn funds(env: &Env, merchant: &str) -> Value {
    env.get(&env.control(&format!("/merchants/{merchant}/funds")), None)
        .await
        .body
}

/// Merchant-own channels: the platform fee is checked at creation, checked again and reserved
/// when payment starts, and charged (available coin first, then credit) on confirmation;
/// otherwise 422 `merchant_fee_funding_unavailable`.
#[tokio::test]
async fn merchant_fee_funding_is_checked_at_creation_and_reserved_at_payment_start() {
    let env = Env::start().await;
    let token = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let set = |available: i64, credit: i64| {
        let env = &env;
        async move {
            let response = env
                .put_control(
                    &format!("/merchants/{M2}/funds"),
                    &json!({"available": available, "credit": credit}),
                )
                .await;
            assert_eq!(response.status, StatusCode::OK);
        }
    };
    let eur = |key: &str, fixed: bool| {
        let mut b = body(key);
        b["currency"] = json!("EUR");
        if fixed {
            b["payment_no"] = json!(seed::CHANNEL_CARD_EUR_OTHER);
        }
        b
    };
    set(0, 0).await;
    let refused = create(&env, &token, &eur("fee-none", true)).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.error(), "merchant_fee_funding_unavailable");
    let open_choice = created(&env, &token, &eur("fee-choice", false)).await;
    let refused_method = control(
        &env,
        &order_no(&open_choice),
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_CARD_EUR_OTHER}),
    )
    .await;
    assert_eq!(
        refused_method.error(),
        "channel_unavailable",
        "an unfundable merchant-own channel is not offered"
    );

    // 12.50 EUR at 1.1 coin = 13.75 coin; the fee is 1 %: 0.1375 coin.
    let fee = 13_750_000_i64;
    set(0, 20_000_000).await;
    let a = order_no(&created(&env, &token, &eur("fee-a", true)).await);
    let b = order_no(&created(&env, &token, &eur("fee-b", true)).await);
    let start = |order: String| {
        let env = &env;
        async move { control(env, &order, "checkout/session", json!({})).await }
    };
    assert_eq!(start(a.clone()).await.status, StatusCode::OK);
    assert_eq!(funds(&env, M2).await["reserved"], fee);
    let second = start(b.clone()).await;
    assert_eq!(
        second.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "checked again at start"
    );
    assert_eq!(second.error(), "merchant_fee_funding_unavailable");
    let paid = control(&env, &a, "checkout/pay", json!({})).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text);
    assert!(
        paid.body.get("settlement_coin").is_none(),
        "merchant-own channels are not credited"
    );
    let after = funds(&env, M2).await;
    assert_eq!(after["reserved"], 0);
    assert_eq!(after["available"], 0);
    assert_eq!(
        after["credit"],
        20_000_000 - fee,
        "charged from credit when no coin is available"
    );
}
