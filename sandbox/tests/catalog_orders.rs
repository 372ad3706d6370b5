//! Catalog orders and catalog payments over real HTTP (contract: "POST {base_url}/openapi/v1/orders",
//! "GET .../orders/{order_no}", "POST/GET .../orders/{order_no}/payment", "Catalog order object",
//! "Catalog order states", Authentication rules 5 and 6).

mod harness;

use harness::Env;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

const UNIT: i64 = 1_0000_0000;

async fn read(env: &Env, token: &str, order_no: &str) -> harness::Answer {
    env.get(
        &env.api(&format!("/openapi/v1/orders/{order_no}")),
        Some(token),
    )
    .await
}

async fn start(env: &Env, token: &str, order_no: &str, payment_no: &str) -> harness::Answer {
    env.post(
        &env.api(&format!("/openapi/v1/orders/{order_no}/payment")),
        Some(token),
        &json!({ "payment_no": payment_no }),
    )
    .await
}

async fn payment_status(env: &Env, token: &str, order_no: &str) -> i64 {
    let answer = env
        .get(
            &env.api(&format!("/openapi/v1/orders/{order_no}/payment")),
            Some(token),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["status"].as_i64().unwrap()
}

async fn stock(env: &Env, gd_no: &str) -> i64 {
    let token = env.merchant_token().await;
    env.get(
        &env.api(&format!("/openapi/v1/products?gd_no={gd_no}")),
        Some(&token),
    )
    .await
    .body["list"][0]["in_stock"]
        .as_i64()
        .unwrap()
}

/// Starts the card payment of `order_no`; returns its `trade_no`.
async fn card_trade(env: &Env, token: &str, order_no: &str) -> String {
    let answer = start(env, token, order_no, seed::CHANNEL_CARD_USD).await;
    answer.body["trade_no"].as_str().unwrap().to_owned()
}

/// POST /_sandbox/catalog/trades/{trade_no}/{action}: the card channel pays or cancels.
async fn trade(env: &Env, trade_no: &str, action: &str) -> harness::Answer {
    env.post_empty(
        &env.control(&format!("/catalog/trades/{trade_no}/{action}")),
        None,
    )
    .await
}

fn is_catalog_time(value: &Value) -> bool {
    let Some(text) = value.as_str() else {
        return false;
    };
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    time::PrimitiveDateTime::parse(text, &format).is_ok()
}

#[tokio::test]
async fn order_creation_returns_order_no_and_the_order_awaits_payment() {
    let env = Env::start().await;
    let token = env.user_token(seed::USER_ALICE).await;
    let answer = env
        .create_order(
            &token,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 2, "payment_no": seed::CHANNEL_CARD_USD}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::CREATED);
    let order_no = answer.body["order_no"]
        .as_str()
        .expect("order_no is a string");
    let order = read(&env, &token, order_no).await;
    assert_eq!(order.status, StatusCode::OK);
    let o = &order.body;
    assert_eq!(o["order_no"], order_no);
    assert_eq!(o["gd_no"], seed::PRODUCT_BEANS);
    assert!(o["title"].is_string() && o["status_label"].is_string());
    assert_eq!(o["quantity"], 2);
    assert_eq!(o["status"], 0);
    assert_eq!(o["currency"], "USD");
    assert_eq!(o["currency_decimals"], 2);
    assert_eq!(o["total_amount"], 25 * UNIT);
    assert_eq!(o["discount_amount"], 0);
    assert_eq!(o["handling_amount"], 25 * UNIT / 100);
    assert_eq!(o["pay_amount"], 25 * UNIT + 25 * UNIT / 100);
    assert_eq!(o["payment_currency"], "USD");
    assert_eq!(o["payment_currency_decimals"], 2);
    assert_eq!(o["payment_subtotal"], 25 * UNIT);
    assert_eq!(o["payment_handling_amount"], 25 * UNIT / 100);
    assert_eq!(o["payment_pay_amount"], 25 * UNIT + 25 * UNIT / 100);
    assert_eq!(o["payment_no"], seed::CHANNEL_CARD_USD);
    assert!(o["payment_name"].is_string());
    assert_eq!(o["payment_methods"], json!([seed::CHANNEL_CARD_USD]));
    assert_eq!(o["trade_no"], "");
    assert!(o["paid_time"].is_null());
    assert!(is_catalog_time(&o["created_at"]), "{}", o["created_at"]);
    assert!(is_catalog_time(&o["updated_at"]));
    assert_eq!(payment_status(&env, &token, order_no).await, 0);
}

/// Product `buy_limit_num`: "Max per purchase; 0 means unlimited", and `quantity` is "within
/// stock and per-order limit" (both inclusive): G1001 (limit 5) takes 5 but not 6; G1013
/// (limit 0, stock 25) takes its whole stock in one order, then nothing more.
#[tokio::test]
async fn buy_limit_num_is_inclusive_and_0_means_unlimited() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    env.order(&alice, seed::PRODUCT_BEANS, 5, seed::CHANNEL_CARD_USD)
        .await;
    let over = env
        .create_order(
            &alice,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 6, "payment_no": seed::CHANNEL_CARD_USD}),
        )
        .await;
    assert_eq!(over.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(over.error(), "purchase_limit_exceeded");
    assert_eq!(stock(&env, "G1013").await, 25);
    env.order(&alice, "G1013", 25, seed::CHANNEL_CARD_USD).await;
    let more = env
        .create_order(
            &alice,
            json!({"gd_no": "G1013", "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD}),
        )
        .await;
    assert_eq!(more.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        more.error(),
        "insufficient_stock",
        "unlimited per order, not beyond stock"
    );
}

#[tokio::test]
async fn order_creation_reserves_stock() {
    let env = Env::start().await;
    let token = env.user_token(seed::USER_ALICE).await;
    assert_eq!(stock(&env, seed::PRODUCT_BEANS).await, 50);
    env.order(&token, seed::PRODUCT_BEANS, 3, seed::CHANNEL_CARD_USD)
        .await;
    assert_eq!(stock(&env, seed::PRODUCT_BEANS).await, 47);
}

#[tokio::test]
async fn order_endpoints_refuse_client_credentials_tokens() {
    let env = Env::start().await;
    let client = env.merchant_token().await;
    let answer = env
        .create_order(
            &client,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.error(), "insufficient_scope");
    let user = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&user, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
    for answer in [
        read(&env, &client, &order_no).await,
        start(&env, &client, &order_no, seed::CHANNEL_CARD_USD).await,
        env.get(
            &env.api(&format!("/openapi/v1/orders/{order_no}/payment")),
            Some(&client),
        )
        .await,
    ] {
        assert_eq!(answer.status, StatusCode::FORBIDDEN);
        assert_eq!(answer.error(), "insufficient_scope");
    }
}

#[tokio::test]
async fn order_parse_errors_give_400_invalid_request() {
    let env = Env::start().await;
    let token = env.user_token(seed::USER_ALICE).await;
    let beans = seed::PRODUCT_BEANS;
    let card = seed::CHANNEL_CARD_USD;
    for (body, field) in [
        (json!({"quantity": 1, "payment_no": card}), "gd_no"),
        (
            json!({"gd_no": 1001, "quantity": 1, "payment_no": card}),
            "gd_no",
        ),
        (json!({"gd_no": beans, "payment_no": card}), "quantity"),
        (
            json!({"gd_no": beans, "quantity": 0, "payment_no": card}),
            "quantity",
        ),
        (
            json!({"gd_no": beans, "quantity": -2, "payment_no": card}),
            "quantity",
        ),
        (
            json!({"gd_no": beans, "quantity": 1.5, "payment_no": card}),
            "quantity",
        ),
        (
            json!({"gd_no": beans, "quantity": "1", "payment_no": card}),
            "quantity",
        ),
        (json!({"gd_no": beans, "quantity": 1}), "payment_no"),
        (
            json!({"gd_no": beans, "quantity": 1, "payment_no": ""}),
            "payment_no",
        ),
        (
            json!({"gd_no": beans, "quantity": 1, "payment_no": card, "other_ipu": ["x"]}),
            "other_ipu",
        ),
        (
            json!({"gd_no": beans, "quantity": 1, "payment_no": card, "other_ipu": {"a": 1}}),
            "other_ipu",
        ),
    ] {
        let answer = env.create_order(&token, body.clone()).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(answer.error(), "invalid_request", "{body}");
        assert_eq!(answer.body["field"], field, "{body}");
    }
    assert_eq!(
        stock(&env, beans).await,
        50,
        "refused orders reserve nothing"
    );
}

#[tokio::test]
async fn order_unmet_conditions_give_422() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let carol = env.user_token(seed::USER_CAROL).await;
    let gift_inputs = json!({"recipient_email": "a@example.com"});
    for (token, body, error) in [
        (
            &alice,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 6, "payment_no": seed::CHANNEL_CARD_USD}),
            "purchase_limit_exceeded",
        ),
        (
            &alice,
            json!({"gd_no": seed::PRODUCT_LIMITED_MUG, "quantity": 2, "payment_no": seed::CHANNEL_CARD_USD}),
            "insufficient_stock",
        ),
        (
            &alice,
            json!({"gd_no": seed::PRODUCT_DISABLED, "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD}),
            "product_unavailable",
        ),
        (
            &alice,
            json!({"gd_no": "G2001", "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD}),
            "product_unavailable",
        ),
        (
            &alice,
            json!({"gd_no": "G9999", "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD}),
            "product_unavailable",
        ),
        (
            &alice,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": "USD"}),
            "channel_unavailable",
        ),
        (
            &alice,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": "Card (USD)"}),
            "channel_unavailable",
        ),
        (
            &alice,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": seed::CHANNEL_CARD_EUR_OTHER}),
            "channel_unavailable",
        ),
        (
            &alice,
            json!({"gd_no": seed::PRODUCT_GIFT_CARD, "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD, "other_ipu": gift_inputs}),
            "channel_unavailable",
        ),
        (
            &carol,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": seed::CHANNEL_CARD_TEST}),
            "channel_unavailable",
        ),
    ] {
        let answer = env.create_order(token, body.clone()).await;
        assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(answer.error(), error, "{body}");
    }
    assert_eq!(stock(&env, seed::PRODUCT_LIMITED_MUG).await, 1);
    // The test channel's payer restriction admits alice.
    env.order(&alice, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_TEST)
        .await;
}

#[tokio::test]
async fn other_ipu_keys_come_from_other_ipu_cnf_never_labels() {
    let env = Env::start().await;
    let token = env.user_token(seed::USER_ALICE).await;
    let order = |inputs: Value| {
        json!({"gd_no": seed::PRODUCT_GIFT_CARD, "quantity": 1,
               "payment_no": seed::CHANNEL_PLATFORM_COIN, "other_ipu": inputs})
    };
    for inputs in [
        json!({"Recipient email": "a@example.com"}),
        json!({}),
        json!({"recipient_email": "  "}),
        json!({"recipient_email": "a@example.com", "unknown": "x"}),
    ] {
        let answer = env.create_order(&token, order(inputs.clone())).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{inputs}");
        assert_eq!(answer.body["field"], "other_ipu");
    }
    let missing = env
        .create_order(
            &token,
            json!({"gd_no": seed::PRODUCT_GIFT_CARD, "quantity": 1, "payment_no": seed::CHANNEL_PLATFORM_COIN}),
        )
        .await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    for inputs in [
        json!({"recipient_email": "a@example.com"}),
        json!({"recipient_email": "a@example.com", "gift_message": "Enjoy"}),
    ] {
        let answer = env.create_order(&token, order(inputs.clone())).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{inputs}");
    }
    // Products without other_ipu_cnf accept an omitted or empty object.
    let answer = env
        .create_order(
            &token,
            json!({"gd_no": seed::PRODUCT_BEANS, "quantity": 1, "payment_no": seed::CHANNEL_CARD_USD, "other_ipu": {}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::CREATED);
}

#[tokio::test]
async fn order_of_another_user_or_merchant_is_indistinguishable_from_a_missing_one() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
    // Orders are not isolated by client: alice through another client of the same merchant sees it.
    let alice_other_client = env
        .user_token_via(seed::USER_ALICE, seed::MERCHANT_CLIENT_ID, "")
        .await;
    assert_eq!(
        read(&env, &alice_other_client, &order_no).await.status,
        StatusCode::OK
    );

    let missing = read(&env, &alice, "CO20990101999999").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let bob = env.user_token(seed::USER_BOB).await;
    let alice_other_merchant = env
        .user_token_via(seed::USER_ALICE, seed::OTHER_CLIENT_ID, "")
        .await;
    for token in [&bob, &alice_other_merchant] {
        let answer = read(&env, token, &order_no).await;
        assert_eq!(answer.status, missing.status);
        assert_eq!(answer.body, missing.body);
        let status = env
            .get(
                &env.api(&format!("/openapi/v1/orders/{order_no}/payment")),
                Some(token),
            )
            .await;
        assert_eq!(status.status, StatusCode::NOT_FOUND);
        assert_eq!(status.body, missing.body);
        let started = start(&env, token, &order_no, seed::CHANNEL_CARD_USD).await;
        assert_eq!(started.status, StatusCode::NOT_FOUND);
        assert_eq!(started.body, missing.body);
    }
    assert_eq!(payment_status(&env, &alice, &order_no).await, 0);
}

#[tokio::test]
async fn platform_coin_payment_start_debits_the_wallet_during_the_request() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_BEANS, 2, seed::CHANNEL_PLATFORM_COIN)
        .await;
    let order = read(&env, &alice, &order_no).await.body;
    assert_eq!(order["payment_currency"], seed::PLATFORM_COIN);
    assert_eq!(order["payment_currency_decimals"], 8);
    assert_eq!(order["payment_pay_amount"], 25 * UNIT);
    let before = env.sandbox.inspect().wallet(seed::USER_ALICE).unwrap();
    let started = start(&env, &alice, &order_no, seed::CHANNEL_PLATFORM_COIN).await;
    assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
    assert!(started.body["trade_no"].is_string());
    let after = env.sandbox.inspect().wallet(seed::USER_ALICE).unwrap();
    assert_eq!(before - after, 25 * UNIT);
    assert_eq!(payment_status(&env, &alice, &order_no).await, 1);
    let order = read(&env, &alice, &order_no).await.body;
    assert_eq!(order["status"], 1);
    assert!(is_catalog_time(&order["paid_time"]));
    assert_eq!(order["trade_no"], started.body["trade_no"]);
    // Starting again cannot debit twice.
    let again = start(&env, &alice, &order_no, seed::CHANNEL_PLATFORM_COIN).await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        env.sandbox.inspect().wallet(seed::USER_ALICE).unwrap(),
        after
    );
}

#[tokio::test]
async fn platform_coin_payment_with_insufficient_funds_gives_422() {
    let env = Env::start().await;
    let bob = env.user_token(seed::USER_BOB).await;
    let order_no = env
        .order(&bob, seed::PRODUCT_BEANS, 1, seed::CHANNEL_PLATFORM_COIN)
        .await;
    let answer = start(&env, &bob, &order_no, seed::CHANNEL_PLATFORM_COIN).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer.error(), "insufficient_balance");
    assert_eq!(
        env.sandbox.inspect().wallet(seed::USER_BOB).unwrap(),
        seed::BOB_WALLET
    );
    assert_eq!(payment_status(&env, &bob, &order_no).await, 0);
    assert_eq!(read(&env, &bob, &order_no).await.body["trade_no"], "");
}

#[tokio::test]
async fn payment_start_returns_trade_no_relative_redirect_and_unix_expire_time() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
    let now = env.sandbox.shared().clock.now().unix_timestamp();
    let started = start(&env, &alice, &order_no, seed::CHANNEL_CARD_USD).await;
    assert_eq!(started.status, StatusCode::OK);
    let trade_no = started.body["trade_no"].as_str().unwrap();
    let redirect = started.body["redirect"].as_str().unwrap();
    assert!(
        redirect.starts_with('/') && !redirect.starts_with("//"),
        "{redirect}"
    );
    let expire = started.body["expire_time"].as_i64().expect("Unix seconds");
    assert!(expire > now && expire <= now + 3600, "{expire} vs {now}");
    // The relative address resolves against the service origin.
    let page = env
        .get(&format!("{}{redirect}", env.sandbox.origin()), None)
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("Pay"));
    // Starting again continues the same session.
    let again = start(&env, &alice, &order_no, seed::CHANNEL_CARD_USD).await;
    assert_eq!(again.body["trade_no"], trade_no);
    assert_eq!(payment_status(&env, &alice, &order_no).await, 0);
}

#[tokio::test]
async fn payment_start_requires_the_orders_channel_and_a_payable_order() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
    let wrong = start(&env, &alice, &order_no, seed::CHANNEL_PLATFORM_COIN).await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(wrong.error(), "channel_unavailable");
    for body in [json!({}), json!({"payment_no": 3}), json!([1])] {
        let answer = env
            .post(
                &env.api(&format!("/openapi/v1/orders/{order_no}/payment")),
                Some(&alice),
                &body,
            )
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{body}");
    }
}

#[tokio::test]
async fn card_payment_moves_payment_status_to_paid_and_order_through_processing_to_completed() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
    let trade_no = card_trade(&env, &alice, &order_no).await;
    let paid = trade(&env, &trade_no, "pay").await;
    assert_eq!(paid.status, StatusCode::OK);
    assert_eq!(payment_status(&env, &alice, &order_no).await, 1);
    let order = read(&env, &alice, &order_no).await.body;
    assert_eq!(order["status"], 1);
    assert!(is_catalog_time(&order["paid_time"]));
    env.advance(60).await;
    assert_eq!(read(&env, &alice, &order_no).await.body["status"], 3);
    assert_eq!(payment_status(&env, &alice, &order_no).await, 1);
    let cancel = trade(&env, &trade_no, "cancel").await;
    assert_eq!(
        cancel.status,
        StatusCode::CONFLICT,
        "a paid order cannot be cancelled"
    );
}

#[tokio::test]
async fn cancelled_payment_gives_status_2_and_releases_stock() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_LIMITED_MUG, 1, seed::CHANNEL_CARD_USD)
        .await;
    assert_eq!(stock(&env, seed::PRODUCT_LIMITED_MUG).await, 0);
    let trade_no = card_trade(&env, &alice, &order_no).await;
    let cancel = trade(&env, &trade_no, "cancel").await;
    assert_eq!(cancel.status, StatusCode::OK);
    assert_eq!(payment_status(&env, &alice, &order_no).await, 2);
    assert_eq!(read(&env, &alice, &order_no).await.body["status"], 2);
    assert_eq!(stock(&env, seed::PRODUCT_LIMITED_MUG).await, 1);
    let pay = trade(&env, &trade_no, "pay").await;
    assert_eq!(pay.status, StatusCode::CONFLICT);
    let restart = start(&env, &alice, &order_no, seed::CHANNEL_CARD_USD).await;
    assert_eq!(restart.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn unpaid_order_is_cancelled_after_its_payment_window() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_LIMITED_MUG, 1, seed::CHANNEL_CARD_USD)
        .await;
    let trade_no = card_trade(&env, &alice, &order_no).await;
    env.advance(30 * 60).await;
    let alice = env.user_token(seed::USER_ALICE).await;
    assert_eq!(payment_status(&env, &alice, &order_no).await, 2);
    assert_eq!(read(&env, &alice, &order_no).await.body["status"], 2);
    assert_eq!(stock(&env, seed::PRODUCT_LIMITED_MUG).await, 1);
    let pay = trade(&env, &trade_no, "pay").await;
    assert_eq!(pay.status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn payment_amounts_are_in_the_payment_currency_at_the_seeded_rates() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    // gd_no, quantity, channel, payment currency, subtotal, handling (payment currency)
    let cases = [
        (
            "G1020",
            1,
            seed::CHANNEL_PLATFORM_COIN,
            "PLC",
            26_4000_0000i64,
            0i64,
        ),
        (
            "G1020",
            1,
            seed::CHANNEL_CARD_USD,
            "USD",
            26_4000_0000,
            2640_0000,
        ),
        (
            "G1022",
            1,
            seed::CHANNEL_PLATFORM_COIN,
            "PLC",
            10_0500_0000,
            0,
        ),
        (
            "G1022",
            2,
            seed::CHANNEL_CARD_USD,
            "USD",
            20_1000_0000,
            2010_0000,
        ),
    ];
    for (gd_no, quantity, channel, currency, subtotal, handling) in cases {
        let order_no = env.order(&alice, gd_no, quantity, channel).await;
        let order = read(&env, &alice, &order_no).await.body;
        assert_eq!(order["payment_currency"], currency, "{gd_no} {channel}");
        assert_eq!(order["payment_subtotal"], subtotal, "{gd_no} {channel}");
        assert_eq!(
            order["payment_handling_amount"], handling,
            "{gd_no} {channel}"
        );
        assert_eq!(
            order["payment_pay_amount"],
            subtotal + handling,
            "{gd_no} {channel}"
        );
    }
}

#[tokio::test]
async fn wholesale_price_is_computed_by_the_platform() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    for (quantity, total, discount) in [(1, 12, 0), (3, 36, 3), (10, 120, 20)] {
        let order_no = env
            .order(
                &alice,
                seed::PRODUCT_WHOLESALE_TEA,
                quantity,
                seed::CHANNEL_PLATFORM_COIN,
            )
            .await;
        let order = read(&env, &alice, &order_no).await.body;
        assert_eq!(order["total_amount"], total * UNIT, "{quantity}");
        assert_eq!(order["discount_amount"], discount * UNIT, "{quantity}");
        assert_eq!(order["pay_amount"], (total - discount) * UNIT, "{quantity}");
    }
}

#[tokio::test]
async fn a_person_can_pay_a_card_order_on_the_relative_redirect_page() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(&alice, seed::PRODUCT_BEANS, 1, seed::CHANNEL_CARD_USD)
        .await;
    let trade = start(&env, &alice, &order_no, seed::CHANNEL_CARD_USD)
        .await
        .body;
    let page_url = format!(
        "{}{}",
        env.sandbox.origin(),
        trade["redirect"].as_str().unwrap()
    );
    let page = env.get(&page_url, None).await;
    let action = format!("{}/pay", trade["redirect"].as_str().unwrap());
    assert!(
        page.text.contains(&format!("action=\"{action}\"")),
        "{}",
        page.text
    );
    let paid = env
        .post_empty(&format!("{}{action}", env.sandbox.origin()), None)
        .await;
    assert_eq!(paid.status, StatusCode::SEE_OTHER);
    assert_eq!(
        paid.headers["location"],
        trade["redirect"].as_str().unwrap()
    );
    assert_eq!(payment_status(&env, &alice, &order_no).await, 1);
    let page = env.get(&page_url, None).await;
    assert!(page.text.contains("Status: Paid"));
    assert!(!page.text.contains("<form"));
}

#[tokio::test]
async fn stock_of_an_order_that_lapsed_unpaid_is_listed_again() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    env.order(&alice, seed::PRODUCT_LIMITED_MUG, 1, seed::CHANNEL_CARD_USD)
        .await;
    assert_eq!(stock(&env, seed::PRODUCT_LIMITED_MUG).await, 0);
    env.advance(30 * 60).await;
    assert_eq!(stock(&env, seed::PRODUCT_LIMITED_MUG).await, 1);
}

#[tokio::test]
async fn wallet_controls_read_and_set_the_platform_coin_balance() {
    let env = Env::start().await;
    let bob = env.user_token(seed::USER_BOB).await;
    let wallet = env.get(&env.control("/users/bob"), None).await;
    assert_eq!(wallet.body["wallet"], seed::BOB_WALLET);
    let set = env
        .put_control("/users/bob/wallet", &json!({"wallet": 100 * UNIT}))
        .await;
    assert_eq!(set.status, StatusCode::OK);
    let negative = env
        .put_control("/users/bob/wallet", &json!({"wallet": -1}))
        .await;
    assert_eq!(negative.status, StatusCode::BAD_REQUEST);
    let order_no = env
        .order(&bob, seed::PRODUCT_BEANS, 1, seed::CHANNEL_PLATFORM_COIN)
        .await;
    let started = start(&env, &bob, &order_no, seed::CHANNEL_PLATFORM_COIN).await;
    assert_eq!(started.status, StatusCode::OK);
    let wallet = env.get(&env.control("/users/bob"), None).await;
    assert_eq!(wallet.body["wallet"], 100 * UNIT - 12_5000_0000);
    assert_eq!(
        env.get(&env.control("/users/mallory"), None).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn reset_restores_the_seeded_world_but_not_the_clock() {
    let env = Env::start().await;
    let alice = env.user_token(seed::USER_ALICE).await;
    let order_no = env
        .order(
            &alice,
            seed::PRODUCT_LIMITED_MUG,
            1,
            seed::CHANNEL_PLATFORM_COIN,
        )
        .await;
    start(&env, &alice, &order_no, seed::CHANNEL_PLATFORM_COIN).await;
    env.advance(10).await;
    let reset = env.post_empty(&env.control("/reset"), None).await;
    assert_eq!(reset.status, StatusCode::OK);
    // Tokens, orders, stock and wallets are back to the seed; the clock keeps its offset.
    assert_eq!(
        read(&env, &alice, &order_no).await.status,
        StatusCode::UNAUTHORIZED
    );
    let alice = env.user_token(seed::USER_ALICE).await;
    assert_eq!(
        read(&env, &alice, &order_no).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(stock(&env, seed::PRODUCT_LIMITED_MUG).await, 1);
    let wallet = env.get(&env.control("/users/alice"), None).await;
    assert_eq!(wallet.body["wallet"], seed::ALICE_WALLET);
    assert_eq!(
        env.get(&env.control("/clock"), None).await.body["offset_seconds"],
        10
    );
}
