//! The merchant-payment state machine over real HTTP (contract: "States and transitions",
//! "Merchant payment object", "Settlement, fees and test channels"), driven through the
//! sandbox checkout controls and the sandbox clock.

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

/// How a row of the table brings a payment into its starting state.
#[derive(Debug, Clone, Copy)]
enum From {
    Pending,
    Review,
    Expired,
    Paid,
    Refunded,
    Chargeback,
}

/// What happens to it.
#[derive(Debug, Clone, Copy)]
enum Act {
    BuyerPaysByCard,
    BuyerStartsSession,
    Force(&'static str),
    ReadAfterExpiry,
}

async fn payment_in(env: &Env, token: &str, from: From, key: &str) -> String {
    let request = short_lived(key);
    let order = order_no(&created(env, token, &request).await);
    let ok = |answer: harness::Answer| assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    match from {
        From::Pending => {}
        From::Review => ok(force(env, &order, "review").await),
        From::Expired => {
            env.advance(61).await;
            assert_eq!(status(env, token, &order).await, "expired");
        }
        From::Paid => ok(pay_by_card(env, &order).await),
        From::Refunded => {
            ok(pay_by_card(env, &order).await);
            ok(force(env, &order, "refunded").await);
        }
        From::Chargeback => {
            ok(pay_by_card(env, &order).await);
            ok(force(env, &order, "chargeback").await);
        }
    }
    order
}

/// The expected end state, or the HTTP status and `error` of a refused transition.
type Outcome = Result<&'static str, (u16, &'static str)>;

/// Every transition of the contract's table, and transitions it does not have (409
/// `payment_conflict` from the platform-side controls, 410 `payment_expired` from the
/// checkout); `status_version` grows by one on each change and only then.
#[tokio::test]
async fn state_machine_table() {
    use Act::*;
    let rows: Vec<(From, Act, Outcome)> = vec![
        (From::Pending, BuyerPaysByCard, Ok("paid")),
        (From::Pending, Force("review"), Ok("review")),
        (
            From::Pending,
            Force("refunded"),
            Err((409, "payment_conflict")),
        ),
        (
            From::Pending,
            Force("chargeback"),
            Err((409, "payment_conflict")),
        ),
        (From::Pending, ReadAfterExpiry, Ok("expired")),
        (From::Review, Force("paid"), Ok("paid")),
        (
            From::Review,
            Force("refunded"),
            Err((409, "payment_conflict")),
        ),
        (
            From::Review,
            BuyerStartsSession,
            Err((409, "payment_conflict")),
        ),
        (From::Expired, Force("paid"), Ok("paid")),
        (
            From::Expired,
            BuyerStartsSession,
            Err((410, "payment_expired")),
        ),
        (
            From::Expired,
            BuyerPaysByCard,
            Err((410, "payment_expired")),
        ),
        (
            From::Expired,
            Force("review"),
            Err((409, "payment_conflict")),
        ),
        (From::Paid, Force("refunded"), Ok("refunded")),
        (From::Paid, Force("chargeback"), Ok("chargeback")),
        (From::Paid, Force("review"), Err((409, "payment_conflict"))),
        (From::Paid, Force("paid"), Err((409, "payment_conflict"))),
        (From::Paid, ReadAfterExpiry, Ok("paid")),
        (
            From::Refunded,
            Force("paid"),
            Err((409, "payment_conflict")),
        ),
        (
            From::Refunded,
            Force("chargeback"),
            Err((409, "payment_conflict")),
        ),
        (
            From::Chargeback,
            Force("refunded"),
            Err((409, "payment_conflict")),
        ),
    ];
    for (index, (from, act, expected)) in rows.into_iter().enumerate() {
        let env = Env::start().await;
        let token = env.merchant_token().await;
        let row = format!("{from:?} --{act:?}-->");
        let order = payment_in(&env, &token, from, &format!("sm-{index}")).await;
        let before = query(&env, &token, &order).await.body;
        let answer = match act {
            BuyerPaysByCard => pay_by_card(&env, &order).await,
            BuyerStartsSession => {
                control(
                    &env,
                    &order,
                    "checkout/session",
                    json!({"payment_no": seed::CHANNEL_CARD_USD}),
                )
                .await
            }
            Force(status) => force(&env, &order, status).await,
            ReadAfterExpiry => {
                set_sweep(&env, false).await;
                env.advance(61).await;
                query(&env, &token, &order).await
            }
        };
        let after = query(&env, &token, &order).await.body;
        let version = |p: &Value| p["status_version"].as_u64().unwrap();
        match expected {
            Ok(status) => {
                assert_eq!(answer.status, StatusCode::OK, "{row}: {}", answer.text);
                assert_eq!(after["status"], status, "{row}");
                let grew = u64::from(before["status"] != after["status"]);
                assert_eq!(version(&after), version(&before) + grew, "{row}");
            }
            Err((code, error)) => {
                assert_eq!(answer.status.as_u16(), code, "{row}: {}", answer.text);
                assert_eq!(answer.error(), error, "{row}");
                assert_eq!(after["status"], before["status"], "{row}: unchanged");
                assert_eq!(version(&after), version(&before), "{row}");
            }
        }
    }
}

#[tokio::test]
async fn created_payment_is_pending_with_status_version_1() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let order = new_payment(&env, &token, "v1").await;
    let p = query(&env, &token, &order).await.body;
    assert_eq!(
        (p["status"].as_str(), p["status_version"].as_u64()),
        (Some("pending"), Some(1))
    );
}

#[tokio::test]
async fn reading_a_pending_payment_past_expiry_without_session_turns_it_expired() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    set_sweep(&env, false).await;
    let request = short_lived("read-expiry");
    let order = order_no(&created(&env, &token, &request).await);
    assert_eq!(status(&env, &token, &order).await, "pending");
    env.advance(61).await;
    let p = query(&env, &token, &order).await.body;
    assert_eq!(
        p["status"], "expired",
        "the sweep is paused: the read expired it"
    );
    assert_eq!(p["status_version"], 2);
    let listed = list(&env, &token, "external_reference=order-read-expiry").await;
    assert_eq!(listed.body["items"][0]["status"], "expired");
}

#[tokio::test]
async fn listing_a_pending_payment_past_expiry_turns_it_expired() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    set_sweep(&env, false).await;
    let request = short_lived("list-expiry");
    created(&env, &token, &request).await;
    env.advance(61).await;
    let listed = list(&env, &token, "external_reference=order-list-expiry").await;
    assert_eq!(listed.body["items"][0]["status"], "expired");
}

#[tokio::test]
async fn sweep_turns_a_pending_payment_with_a_started_session_into_review() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    set_sweep(&env, false).await;
    let request = short_lived("sweep-review");
    let order = order_no(&created(&env, &token, &request).await);
    let started = control(
        &env,
        &order,
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_CARD_USD}),
    )
    .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.text);
    env.advance(61).await;
    assert_eq!(
        status(&env, &token, &order).await,
        "pending",
        "a read never expires a payment whose channel session was started"
    );
    set_sweep(&env, true).await;
    env.advance(60).await;
    eventually("the sweep moves it to review", || {
        let (env, token, order) = (&env, &token, &order);
        async move { status(env, token, order).await == "review" }
    })
    .await;
    let paid = pay_by_card(&env, &order).await;
    assert_eq!(
        paid.status,
        StatusCode::OK,
        "review → paid on a late confirmation"
    );
    assert_eq!(paid.body["status"], "paid");
}

/// The sweep alone (no payment is read: the delivery records endpoint does not expire
/// payments) turns an expired-due pending payment without session into `expired`.
#[tokio::test]
async fn sweep_expires_a_pending_payment_without_session() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let mut request = short_lived("sweep-expire");
    request["notify_url"] = json!(receiver.url);
    request["notify_secret"] = json!("k".repeat(32));
    let order = order_no(&created(&env, &token, &request).await);
    env.advance(121).await;
    let records_url = env.api(&format!(
        "/openapi/v1/merchant-payments/{order}/notifications"
    ));
    eventually("the sweep expired the payment", || {
        let (env, token, records_url) = (&env, &token, &records_url);
        async move {
            let records = env.get(records_url, Some(token)).await.body;
            records["items"][0]["event"]["data"]["status"] == "expired"
        }
    })
    .await;
}

#[tokio::test]
async fn platform_coin_payment_sets_event_id_marker_trade_no_and_settlement() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let order = new_payment(&env, &token, "coin").await;
    let anonymous = control(
        &env,
        &order,
        "checkout/pay",
        json!({"payment_no": seed::CHANNEL_PLATFORM_COIN}),
    )
    .await;
    assert_eq!(anonymous.status, StatusCode::FORBIDDEN);
    assert_eq!(
        anonymous.error(),
        "login_required",
        "the coin wallet is never anonymous"
    );
    let paid = control(
        &env,
        &order,
        "checkout/pay",
        json!({"payment_no": seed::CHANNEL_PLATFORM_COIN, "user": seed::USER_ALICE}),
    )
    .await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text);
    let p = query(&env, &token, &order).await.body;
    assert_eq!(p["status"], "paid");
    assert_eq!(p["status_version"], 2);
    assert_eq!(p["payment_no"], seed::CHANNEL_PLATFORM_COIN);
    assert_eq!(p["test_mode"], false);
    assert_eq!(p["provider_trade_no"], format!("PLATFORM_COIN:{order}"));
    assert!(p["event_id"].as_str().is_some_and(|e| !e.is_empty()));
    assert!(p["occurred_at"].is_string());
    assert_eq!(
        p["settlement_coin"], "1250000000",
        "12.50 USD at the saved rate of 1 coin, eight-decimal fixed point"
    );
    assert_eq!(
        (p["amount_minor"].as_i64(), p["currency"].as_str()),
        (Some(1250), Some("USD"))
    );
}

#[tokio::test]
async fn platform_coin_payment_needs_enough_wallet_balance() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let order = new_payment(&env, &token, "poor").await;
    let answer = control(
        &env,
        &order,
        "checkout/pay",
        json!({"payment_no": seed::CHANNEL_PLATFORM_COIN, "user": seed::USER_BOB}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(status(&env, &token, &order).await, "pending");
}

#[tokio::test]
async fn refund_and_chargeback_keep_the_payment_event_id() {
    for target in ["refunded", "chargeback"] {
        let env = Env::start().await;
        let token = env.merchant_token().await;
        let order = new_payment(&env, &token, target).await;
        pay_by_card(&env, &order).await;
        let paid = query(&env, &token, &order).await.body;
        let answer = force(&env, &order, target).await;
        assert_eq!(answer.status, StatusCode::OK);
        let after = query(&env, &token, &order).await.body;
        assert_eq!(after["status"], target);
        assert_eq!(after["event_id"], paid["event_id"]);
        assert_eq!(after["occurred_at"], paid["occurred_at"]);
        assert_eq!(after["status_version"], 3);
    }
}

#[tokio::test]
async fn expired_payment_turns_paid_on_a_late_verified_payment() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = short_lived("late");
    request["payment_no"] = json!(seed::CHANNEL_CARD_USD);
    let order = order_no(&created(&env, &token, &request).await);
    env.advance(61).await;
    assert_eq!(status(&env, &token, &order).await, "expired");
    let answer = force(&env, &order, "paid").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let p = query(&env, &token, &order).await.body;
    assert_eq!(p["status"], "paid");
    assert_eq!(p["payment_no"], seed::CHANNEL_CARD_USD);
    assert!(p["event_id"].is_string());
    assert_eq!(p["status_version"], 3);
}

#[tokio::test]
async fn method_is_locked_after_the_first_channel_session() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let order = new_payment(&env, &token, "lock").await;
    let session = |payment_no: &'static str| {
        let (env, order) = (&env, &order);
        async move {
            control(
                env,
                order,
                "checkout/session",
                json!({"payment_no": payment_no, "user": seed::USER_ALICE}),
            )
            .await
        }
    };
    let first = session(seed::CHANNEL_CARD_USD).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(
        first.body["payment_no"],
        seed::CHANNEL_CARD_USD,
        "the query shows the real channel"
    );
    assert_eq!(
        session(seed::CHANNEL_CARD_USD).await.status,
        StatusCode::OK,
        "refresh continues"
    );
    let other = session(seed::CHANNEL_PLATFORM_COIN).await;
    assert_eq!(other.status, StatusCode::CONFLICT);
    assert_eq!(other.error(), "payment_conflict");
}

#[tokio::test]
async fn unclear_channel_response_keeps_the_payment_and_blocks_another_method() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let request = short_lived("unclear");
    let order = order_no(&created(&env, &token, &request).await);
    control(
        &env,
        &order,
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_CARD_USD}),
    )
    .await;
    let unclear = control(&env, &order, "checkout/unclear", json!({})).await;
    assert_eq!(unclear.status, StatusCode::OK, "{}", unclear.text);
    let same = control(
        &env,
        &order,
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_CARD_USD}),
    )
    .await;
    assert_eq!(same.status, StatusCode::ACCEPTED);
    assert_eq!(same.error(), "provider_result_pending");
    let other = control(
        &env,
        &order,
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_PLATFORM_COIN, "user": seed::USER_ALICE}),
    )
    .await;
    assert_eq!(other.error(), "payment_conflict");
    assert_eq!(status(&env, &token, &order).await, "pending");
    env.advance(121).await;
    eventually("an unclear session goes to review at expiry", || {
        let (env, token, order) = (&env, &token, &order);
        async move { status(env, token, order).await == "review" }
    })
    .await;
}

#[tokio::test]
async fn test_channel_is_payable_only_by_its_assigned_logged_in_payer() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("test-channel");
    request["payment_no"] = json!(seed::CHANNEL_CARD_TEST);
    let order = order_no(&created(&env, &token, &request).await);
    let start = |user: Option<&'static str>| {
        let (env, order) = (&env, &order);
        async move {
            let mut b = json!({"payment_no": seed::CHANNEL_CARD_TEST});
            if let Some(u) = user {
                b["user"] = json!(u);
            }
            control(env, order, "checkout/session", b).await
        }
    };
    let anonymous = start(None).await;
    assert_eq!(
        (anonymous.status, anonymous.error()),
        (StatusCode::FORBIDDEN, "login_required")
    );
    let carol = start(Some(seed::USER_CAROL)).await;
    assert_eq!(
        (carol.status, carol.error()),
        (StatusCode::FORBIDDEN, "payment_debug_access_denied"),
        "a self-reported or other buyer grants nothing"
    );
    let alice = start(Some(seed::USER_ALICE)).await;
    assert_eq!(alice.status, StatusCode::OK, "{}", alice.text);
    assert_eq!(alice.body["test_mode"], true);
    assert_eq!(alice.body["payment_no"], seed::CHANNEL_CARD_TEST);
}

#[tokio::test]
async fn fixed_channel_payment_cannot_be_paid_with_another_channel() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("fixed");
    request["payment_no"] = json!(seed::CHANNEL_CARD_USD);
    let order = order_no(&created(&env, &token, &request).await);
    let answer = control(
        &env,
        &order,
        "checkout/pay",
        json!({"payment_no": seed::CHANNEL_PLATFORM_COIN, "user": seed::USER_ALICE}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer.error(), "channel_unavailable");
    let answer = control(&env, &order, "checkout/pay", json!({})).await;
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "the only method is used: {}",
        answer.text
    );
    assert_eq!(answer.body["payment_no"], seed::CHANNEL_CARD_USD);
}

#[tokio::test]
async fn choosing_a_method_never_extends_expiry() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let created_payment = created(&env, &token, &body("no-extend")).await;
    let order = order_no(&created_payment);
    env.advance(600).await;
    control(
        &env,
        &order,
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_CARD_USD}),
    )
    .await;
    let p = query(&env, &token, &order).await.body;
    assert_eq!(p["expires_at"], created_payment["expires_at"]);
}
