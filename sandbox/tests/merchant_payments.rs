//! Merchant collection over real HTTP: the channel directory, creation (field rules,
//! idempotency), query and the filtered list (contract: "GET .../merchant-payment-channels",
//! "POST .../merchant-payments", "GET .../merchant-payments/{order_no}",
//! "GET .../merchant-payments", "Merchant payment object", "Limits").

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

fn channel<'a>(items: &'a [Value], payment_no: &str) -> Option<&'a Value> {
    items.iter().find(|c| c["payment_no"] == payment_no)
}

#[tokio::test]
async fn channel_directory_lists_usable_channels_with_login_required_and_test_mode() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let answer = env
        .get(
            &env.api("/openapi/v1/merchant-payment-channels"),
            Some(&token),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let items = answer.body["items"].as_array().unwrap();
    let coin = channel(items, seed::CHANNEL_PLATFORM_COIN).expect("platform coin listed");
    assert_eq!(coin["provider"], "platform-coin");
    assert_eq!(coin["owner"], "platform");
    assert_eq!(coin["currency"], seed::PLATFORM_COIN);
    assert_eq!(
        coin["login_required"], true,
        "the platform coin always requires login"
    );
    assert_eq!(coin["test_mode"], false);
    let card = channel(items, seed::CHANNEL_CARD_USD).expect("card listed");
    assert_eq!(card["login_required"], false, "anonymous purchase allowed");
    assert_eq!(card["test_mode"], false);
    assert!(card["name"].is_string());
    let test = channel(items, seed::CHANNEL_CARD_TEST).expect("assigned test channel listed");
    assert_eq!(test["test_mode"], true);
    assert_eq!(
        test["login_required"], true,
        "a test channel with payer restrictions is listed with login_required"
    );
    assert!(
        channel(items, seed::CHANNEL_CARD_EUR_OTHER).is_none(),
        "another merchant's own channel is not listed"
    );
}

#[tokio::test]
async fn channel_directory_follows_merchant_ownership_and_debug_assignment() {
    let env = Env::start().await;
    let other = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let answer = env
        .get(
            &env.api("/openapi/v1/merchant-payment-channels"),
            Some(&other),
        )
        .await;
    let items = answer.body["items"].as_array().unwrap();
    let own = channel(items, seed::CHANNEL_CARD_EUR_OTHER).expect("own channel listed");
    assert_eq!(own["owner"], "merchant");
    assert!(
        channel(items, seed::CHANNEL_CARD_TEST).is_none(),
        "a test channel assigned to another merchant is not listed"
    );
}

#[tokio::test]
async fn merchant_collection_endpoints_accept_only_client_credentials_of_an_active_merchant() {
    let env = Env::start().await;
    let user = env
        .user_token_via(seed::USER_ALICE, seed::MERCHANT_CLIENT_ID, "")
        .await;
    let no_scope = env
        .client_token(seed::CATALOG_CLIENT_ID, seed::CATALOG_CLIENT_SECRET, "")
        .await;
    let inactive = env
        .client_token(seed::INACTIVE_CLIENT_ID, seed::INACTIVE_CLIENT_SECRET, "")
        .await;
    let cases = [
        (
            user.as_str(),
            StatusCode::FORBIDDEN,
            "client_credentials_required",
        ),
        (
            no_scope.as_str(),
            StatusCode::FORBIDDEN,
            "insufficient_scope",
        ),
        (
            inactive.as_str(),
            StatusCode::FORBIDDEN,
            "merchant_inactive",
        ),
        ("not-a-token", StatusCode::UNAUTHORIZED, "invalid_token"),
    ];
    for (token, status, error) in cases {
        let answer = create(&env, token, &body("auth-1")).await;
        assert_eq!((answer.status, answer.error()), (status, error));
        let answer = env
            .get(
                &env.api("/openapi/v1/merchant-payment-channels"),
                Some(token),
            )
            .await;
        assert_eq!((answer.status, answer.error()), (status, error));
    }
}

#[tokio::test]
async fn create_returns_the_create_fields_of_a_pending_payment() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("create-1");
    request["return_url"] = json!("  https://shop.example/return?x=1#done  ");
    request["description"] = json!("  Two bags of beans  ");
    let before = env.sandbox.shared().clock.now();
    let answer = create(&env, &token, &request).await;
    let after = env.sandbox.shared().clock.now();
    assert_eq!(answer.status, StatusCode::CREATED);
    let p = &answer.body;
    assert!(p["order_no"].is_string());
    assert_eq!(p["external_reference"], "order-create-1");
    assert_eq!(p["payment_no"], "", "empty until the buyer chooses");
    assert_eq!(p["amount_minor"], 1250);
    assert_eq!(p["currency"], "USD");
    assert_eq!(p["currency_decimals"], 2);
    assert_eq!(p["status"], "pending");
    assert_eq!(p["test_mode"], false, "false until a channel is chosen");
    assert_eq!(
        p["return_url"], "https://shop.example/return?x=1#done",
        "trimmed, path, query and fragment kept"
    );
    let checkout = p["checkout_url"].as_str().unwrap();
    assert!(
        checkout.starts_with(&format!("{}/checkout/", env.sandbox.origin())),
        "absolute: {checkout}"
    );
    assert!(!checkout.contains(p["order_no"].as_str().unwrap()));
    let expires = time::OffsetDateTime::parse(
        p["expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("expires_at is RFC 3339");
    let default = time::Duration::seconds(1800);
    let whole_second_before = before.replace_nanosecond(0).unwrap();
    assert!(
        whole_second_before + default <= expires && expires <= after + default,
        "default expiry 1800 s after creation: {expires}"
    );
    assert!(p.get("return_url").is_some());
    assert!(p.get("event_id").is_none());
}

#[tokio::test]
async fn create_omits_return_url_when_not_set_and_each_payment_has_its_own_checkout_token() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let a = created(&env, &token, &body("tok-a")).await;
    let b = created(&env, &token, &body("tok-b")).await;
    assert!(a.get("return_url").is_none());
    assert_ne!(a["checkout_url"], b["checkout_url"]);
    assert_ne!(a["order_no"], b["order_no"]);
}

/// Every field rule of POST /merchant-payments: status, `error` and `field`.
#[tokio::test]
async fn create_field_rules_table() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let long = |n: usize| "x".repeat(n);
    let secret = "s".repeat(32);
    let hook = "https://hooks.shop.example/notify";
    type Edit = Box<dyn Fn(&mut Value)>;
    let set = |name: &'static str, value: Value| -> Edit {
        Box::new(move |b: &mut Value| b[name] = value.clone())
    };
    let remove = |name: &'static str| -> Edit {
        Box::new(move |b: &mut Value| {
            b.as_object_mut().unwrap().remove(name);
        })
    };
    let cases: Vec<(&str, Edit, u16, &str, Option<&str>)> = vec![
        (
            "missing external_reference",
            remove("external_reference"),
            400,
            "invalid_request",
            Some("external_reference"),
        ),
        (
            "blank external_reference",
            set("external_reference", json!("   ")),
            400,
            "invalid_request",
            Some("external_reference"),
        ),
        (
            "external_reference over 191 bytes",
            set("external_reference", json!(long(192))),
            400,
            "invalid_request",
            Some("external_reference"),
        ),
        (
            "missing idempotency_key",
            remove("idempotency_key"),
            400,
            "invalid_request",
            Some("idempotency_key"),
        ),
        (
            "idempotency_key over 128 bytes",
            set("idempotency_key", json!(long(129))),
            400,
            "invalid_request",
            Some("idempotency_key"),
        ),
        (
            "missing amount",
            remove("amount_minor"),
            400,
            "invalid_request",
            Some("amount_minor"),
        ),
        (
            "zero amount",
            set("amount_minor", json!(0)),
            400,
            "invalid_request",
            Some("amount_minor"),
        ),
        (
            "negative amount",
            set("amount_minor", json!(-5)),
            400,
            "invalid_request",
            Some("amount_minor"),
        ),
        (
            "fractional amount",
            set("amount_minor", json!(12.5)),
            400,
            "invalid_request",
            Some("amount_minor"),
        ),
        (
            "amount as string",
            set("amount_minor", json!("1250")),
            400,
            "invalid_request",
            Some("amount_minor"),
        ),
        (
            "amount above 2^53-1",
            set("amount_minor", json!(9_007_199_254_740_992_i64)),
            400,
            "invalid_request",
            Some("amount_minor"),
        ),
        (
            "amount not representable at eight decimals",
            set("amount_minor", json!(9_007_199_254_740_991_i64)),
            400,
            "invalid_request",
            Some("amount_minor"),
        ),
        (
            "lowercase currency",
            set("currency", json!("usd")),
            400,
            "invalid_request",
            Some("currency"),
        ),
        (
            "currency not enabled",
            set("currency", json!("GBP")),
            400,
            "invalid_request",
            Some("currency"),
        ),
        (
            "description over 500 bytes",
            set("description", json!(long(501))),
            400,
            "invalid_request",
            Some("description"),
        ),
        (
            "expires_in below 60",
            set("expires_in", json!(59)),
            400,
            "invalid_expires_in",
            Some("expires_in"),
        ),
        (
            "expires_in above 7200",
            set("expires_in", json!(7201)),
            400,
            "invalid_expires_in",
            Some("expires_in"),
        ),
        (
            "expires_in as string",
            set("expires_in", json!("600")),
            400,
            "invalid_expires_in",
            Some("expires_in"),
        ),
        (
            "expires_in fractional",
            set("expires_in", json!(600.5)),
            400,
            "invalid_expires_in",
            Some("expires_in"),
        ),
        (
            "return_url http",
            set("return_url", json!("http://shop.example/r")),
            400,
            "invalid_return_url",
            Some("return_url"),
        ),
        (
            "return_url relative",
            set("return_url", json!("/return")),
            400,
            "invalid_return_url",
            Some("return_url"),
        ),
        (
            "return_url user info",
            set("return_url", json!("https://u:p@shop.example/r")),
            400,
            "invalid_return_url",
            Some("return_url"),
        ),
        (
            "return_url backslash",
            set("return_url", json!("https://shop.example\\r")),
            400,
            "invalid_return_url",
            Some("return_url"),
        ),
        (
            "return_url inner space",
            set("return_url", json!("https://shop.example/a b")),
            400,
            "invalid_return_url",
            Some("return_url"),
        ),
        (
            "return_url over 2048 bytes",
            set(
                "return_url",
                json!(format!("https://shop.example/{}", long(2040))),
            ),
            400,
            "invalid_return_url",
            Some("return_url"),
        ),
        (
            "unknown channel",
            set("payment_no", json!("ch_nope")),
            422,
            "channel_unavailable",
            Some("payment_no"),
        ),
        (
            "another merchant's channel",
            set("payment_no", json!(seed::CHANNEL_CARD_EUR_OTHER)),
            422,
            "channel_unavailable",
            Some("payment_no"),
        ),
        (
            "channel does not accept the currency",
            set("payment_no", json!(seed::CHANNEL_CARD_USD)).and(set("currency", json!("EUR"))),
            422,
            "channel_unavailable",
            Some("payment_no"),
        ),
        (
            "notify_url without secret",
            set("notify_url", json!(hook)),
            400,
            "invalid_notify_config",
            None,
        ),
        (
            "notify_url http public",
            set("notify_url", json!("http://hooks.shop.example/n"))
                .and(set("notify_secret", json!(secret))),
            400,
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "notify_secret 31 bytes",
            set("notify_url", json!(hook)).and(set("notify_secret", json!(long(31)))),
            400,
            "invalid_notify_secret",
            Some("notify_secret"),
        ),
    ];
    for (name, edit, status, error, field) in cases {
        let mut request = body(&format!("rules-{name}"));
        edit(&mut request);
        let answer = create(&env, &token, &request).await;
        assert_eq!(answer.status.as_u16(), status, "{name}: {}", answer.text);
        assert_eq!(answer.error(), error, "{name}: {}", answer.text);
        assert_eq!(
            answer.body["field"].as_str(),
            field,
            "{name}: {}",
            answer.text
        );
        if status == 400 && error != "invalid_request" {
            assert!(answer.body["error_description"].is_string(), "{name}");
        }
    }
}

/// Combining edits of a table row.
trait And {
    fn and(self, other: Self) -> Self;
}

impl And for Box<dyn Fn(&mut Value)> {
    fn and(self, other: Self) -> Self {
        Box::new(move |b: &mut Value| {
            self(b);
            other(b);
        })
    }
}

#[tokio::test]
async fn invalid_expires_in_and_invalid_return_url_carry_field_and_description() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("fields-1");
    request["expires_in"] = json!(30);
    let answer = create(&env, &token, &request).await;
    assert_eq!(answer.error(), "invalid_expires_in");
    assert_eq!(answer.body["field"], "expires_in");
    assert!(answer.body["error_description"].as_str().unwrap().len() > 5);
    let mut request = body("fields-2");
    request["return_url"] = json!("ftp://shop.example/");
    let answer = create(&env, &token, &request).await;
    assert_eq!(answer.error(), "invalid_return_url");
    assert_eq!(answer.body["field"], "return_url");
    assert!(answer.body["error_description"].is_string());
}

/// The "Limits" table counts bytes, inclusive: `external_reference` 191, `idempotency_key`
/// 128, `description` 500, `return_url` and `notify_url` 2048, `notify_secret` 32 to 256,
/// `expires_in` 60 to 7200. A value exactly at a limit is accepted; one byte more (here a
/// two-byte character that keeps the character count within the limit) is refused.
#[tokio::test]
async fn create_limits_are_inclusive_and_counted_in_bytes() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    // 2-byte UTF-8 character: `n` of them are `2 * n` bytes but only `n` characters.
    let wide = |bytes: usize| "é".repeat(bytes / 2);
    let url_of = |bytes: usize| {
        let prefix = "https://hooks.shop.example/";
        format!("{prefix}{}", "a".repeat(bytes - prefix.len()))
    };
    let accepted: Vec<(&str, &str, Value)> = vec![
        (
            "external_reference",
            "ext-191",
            json!(format!("{}a", wide(190))),
        ),
        ("idempotency_key", "k", json!("k".repeat(128))),
        ("description", "desc-500", json!(wide(500))),
        ("return_url", "ret-2048", json!(url_of(2048))),
        ("expires_in", "exp-60", json!(60)),
        ("expires_in", "exp-7200", json!(7200)),
    ];
    for (name, key, value) in accepted {
        let mut request = body(key);
        request[name] = value;
        let answer = create(&env, &token, &request).await;
        assert_eq!(
            answer.status,
            StatusCode::CREATED,
            "{name} at its limit: {}",
            answer.text
        );
    }
    for (key, secret) in [("sec-32", "s".repeat(32)), ("sec-256", "s".repeat(256))] {
        let mut request = body(key);
        request["notify_url"] = json!(url_of(2048));
        request["notify_secret"] = json!(secret);
        let answer = create(&env, &token, &request).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{key}: {}", answer.text);
    }
    let refused: Vec<(&str, Value, &str)> = vec![
        ("external_reference", json!(wide(192)), "invalid_request"),
        ("idempotency_key", json!(wide(130)), "invalid_request"),
        ("description", json!(wide(502)), "invalid_request"),
        ("return_url", json!(url_of(2049)), "invalid_return_url"),
        ("expires_in", json!(59), "invalid_expires_in"),
        ("expires_in", json!(7201), "invalid_expires_in"),
    ];
    for (name, value, error) in refused {
        let mut request = body("over");
        request[name] = value;
        let answer = create(&env, &token, &request).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{name} over its limit"
        );
        assert_eq!(answer.error(), error, "{name}");
        assert_eq!(answer.body["field"], name, "{name}");
    }
    let mut request = body("over-url");
    request["notify_url"] = json!(url_of(2049));
    request["notify_secret"] = json!("s".repeat(32));
    let answer = create(&env, &token, &request).await;
    assert_eq!(answer.error(), "invalid_notify_url");
    let mut request = body("over-secret");
    request["notify_url"] = json!(url_of(100));
    request["notify_secret"] = json!(wide(258));
    let answer = create(&env, &token, &request).await;
    assert_eq!(
        answer.error(),
        "invalid_notify_secret",
        "129 characters but 258 bytes"
    );
}

#[tokio::test]
async fn amount_limits_accept_the_largest_representable_amounts() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("max-plc");
    request["currency"] = json!(seed::PLATFORM_COIN);
    request["amount_minor"] = json!(9_007_199_254_740_991_i64);
    let p = created(&env, &token, &request).await;
    assert_eq!(p["amount_minor"], 9_007_199_254_740_991_i64);
    assert_eq!(p["currency_decimals"], 8);
    let mut request = body("jpy");
    request["currency"] = json!("JPY");
    request["amount_minor"] = json!(1200);
    let p = created(&env, &token, &request).await;
    assert_eq!(p["currency_decimals"], 0);
}

/// The idempotency table: same key and identical normalized parameters → 201 with the same
/// payment; any changed parameter → 409 `payment_conflict`; keys are per merchant.
#[tokio::test]
async fn idempotency_table() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let secret_a = "a".repeat(40);
    let secret_b = "b".repeat(40);
    let mut base = body("idem");
    base["description"] = json!("Beans");
    base["return_url"] = json!("https://shop.example/return");
    base["notify_url"] = json!("https://hooks.shop.example/n");
    base["notify_secret"] = json!(secret_a);
    let first = created(&env, &token, &base).await;
    let with = |name: &str, value: Value| {
        let mut b = base.clone();
        b[name] = value;
        b
    };
    let without = |name: &str| {
        let mut b = base.clone();
        b.as_object_mut().unwrap().remove(name);
        b
    };
    let cases: Vec<(&str, Value, u16)> = vec![
        ("identical", base.clone(), 201),
        (
            "explicit default expiry equals omitted",
            with("expires_in", json!(1800)),
            201,
        ),
        (
            "description trimmed equals",
            with("description", json!("  Beans ")),
            201,
        ),
        (
            "return_url trimmed equals",
            with("return_url", json!(" https://shop.example/return ")),
            201,
        ),
        (
            "empty payment_no equals omitted",
            with("payment_no", json!("")),
            201,
        ),
        ("changed amount", with("amount_minor", json!(1251)), 409),
        ("changed currency", with("currency", json!("EUR")), 409),
        (
            "changed channel",
            with("payment_no", json!(seed::CHANNEL_CARD_USD)),
            409,
        ),
        (
            "changed external_reference",
            with("external_reference", json!("other")),
            409,
        ),
        (
            "changed description",
            with("description", json!("Tea")),
            409,
        ),
        ("removed description", without("description"), 409),
        ("changed expiry", with("expires_in", json!(600)), 409),
        (
            "changed return_url",
            with("return_url", json!("https://shop.example/other")),
            409,
        ),
        (
            "changed notify_url",
            with("notify_url", json!("https://hooks.shop.example/m")),
            409,
        ),
        (
            "changed notify_secret",
            with("notify_secret", json!(secret_b)),
            409,
        ),
    ];
    for (name, request, status) in cases {
        let answer = create(&env, &token, &request).await;
        assert_eq!(answer.status.as_u16(), status, "{name}: {}", answer.text);
        if status == 201 {
            assert_eq!(answer.body["order_no"], first["order_no"], "{name}");
            assert_eq!(answer.body["checkout_url"], first["checkout_url"], "{name}");
        } else {
            assert_eq!(answer.error(), "payment_conflict", "{name}");
            assert!(
                !answer.text.contains(&secret_b),
                "the conflict never echoes a secret"
            );
        }
    }
    let other = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let mut elsewhere = base.clone();
    elsewhere["currency"] = json!("EUR");
    elsewhere.as_object_mut().unwrap().remove("payment_no");
    let theirs = created(&env, &other, &elsewhere).await;
    assert_ne!(
        theirs["order_no"], first["order_no"],
        "different merchants have separate idempotency spaces"
    );
}

#[tokio::test]
async fn idempotent_repeat_returns_the_same_payment_after_it_changed() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let first = created(&env, &token, &body("repeat-paid")).await;
    let order = order_no(&first);
    assert_eq!(pay_by_card(&env, &order).await.status, StatusCode::OK);
    let again = created(&env, &token, &body("repeat-paid")).await;
    assert_eq!(again["order_no"], first["order_no"]);
    assert_eq!(again["status"], "paid");
}

#[tokio::test]
async fn query_returns_the_payment_with_status_version_and_confirmation_fields() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let order = new_payment(&env, &token, "query-1").await;
    let answer = query(&env, &token, &order).await;
    assert_eq!(answer.status, StatusCode::OK);
    let p = &answer.body;
    assert_eq!(p["order_no"], order.as_str());
    assert_eq!(p["status"], "pending");
    assert_eq!(p["status_version"], 1);
    assert!(p["occurred_at"].is_null());
    assert!(p.get("event_id").is_none(), "omitted until confirmed");
    assert!(p.get("provider_trade_no").is_none());
    assert!(p.get("settlement_coin").is_none());
    assert!(p["checkout_url"].is_string());
}

#[tokio::test]
async fn unknown_or_other_merchants_payment_is_payment_not_found() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let order = new_payment(&env, &token, "mine").await;
    let other = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    for (who, number) in [(&other, order.as_str()), (&token, "99999999999999")] {
        let answer = query(&env, who, number).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        assert_eq!(answer.error(), "payment_not_found");
    }
    let listed = list(&env, &other, &format!("order_no={order}")).await;
    assert_eq!(listed.body["items"], json!([]));
}

#[tokio::test]
async fn list_filters_by_reference_and_order_no_newest_first_with_limit_fallback() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut orders = Vec::new();
    for i in 0..3 {
        let mut request = body(&format!("list-{i}"));
        request["external_reference"] = json!("shared-ref");
        orders.push(order_no(&created(&env, &token, &request).await));
    }
    let answer = list(&env, &token, "external_reference=shared-ref").await;
    assert_eq!(answer.status, StatusCode::OK);
    let numbers: Vec<&str> = answer.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["order_no"].as_str().unwrap())
        .collect();
    assert_eq!(
        numbers,
        vec![&orders[2], &orders[1], &orders[0]],
        "newest first"
    );
    for fallback in ["0", "101", "abc", "-1"] {
        let answer = list(
            &env,
            &token,
            &format!("external_reference=shared-ref&limit={fallback}"),
        )
        .await;
        assert_eq!(
            answer.body["items"].as_array().unwrap().len(),
            3,
            "limit {fallback} → 20"
        );
    }
    let answer = list(&env, &token, "external_reference=shared-ref&limit=2").await;
    assert_eq!(answer.body["items"].as_array().unwrap().len(), 2);
    let answer = list(&env, &token, &format!("order_no={}", orders[1])).await;
    assert_eq!(answer.body["items"].as_array().unwrap().len(), 1);
    let answer = list(
        &env,
        &token,
        &format!("order_no={}&external_reference=shared-ref", orders[1]),
    )
    .await;
    assert_eq!(answer.body["items"].as_array().unwrap().len(), 1);
    let answer = list(
        &env,
        &token,
        &format!("order_no={}&external_reference=other", orders[1]),
    )
    .await;
    assert_eq!(answer.body["items"], json!([]), "both filters must match");
    let answer = list(&env, &token, "").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), "invalid_request");
    let answer = list(&env, &token, "limit=5").await;
    assert_eq!(
        answer.error(),
        "invalid_request",
        "limit alone is not a filter"
    );
}

#[tokio::test]
async fn list_limit_defaults_to_20() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for i in 0..22 {
        let mut request = body(&format!("many-{i}"));
        request["external_reference"] = json!("many");
        created(&env, &token, &request).await;
    }
    let answer = list(&env, &token, "external_reference=many").await;
    assert_eq!(answer.body["items"].as_array().unwrap().len(), 20);
    let answer = list(&env, &token, "external_reference=many&limit=100").await;
    assert_eq!(answer.body["items"].as_array().unwrap().len(), 22);
}

/// "`limit`: default 20, range 1 to 100; invalid or out of range falls back to 20": an
/// out-of-range value is not clamped to 100 or 1 (with 22 matches every fallback gives 20).
#[tokio::test]
async fn list_limit_out_of_range_falls_back_to_20_not_clamped() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for i in 0..22 {
        let mut request = body(&format!("clamp-{i}"));
        request["external_reference"] = json!("clamp");
        created(&env, &token, &request).await;
    }
    for fallback in ["0", "101", "1000", "-5", "abc", "", "1.5"] {
        let answer = list(
            &env,
            &token,
            &format!("external_reference=clamp&limit={fallback}"),
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "limit {fallback}: {}",
            answer.text
        );
        assert_eq!(
            answer.body["items"].as_array().unwrap().len(),
            20,
            "limit {fallback} falls back to 20"
        );
    }
    let answer = list(&env, &token, "external_reference=clamp&limit=1").await;
    assert_eq!(
        answer.body["items"].as_array().unwrap().len(),
        1,
        "1 is in range"
    );
}

#[tokio::test]
async fn currency_must_be_supported_by_a_channel_and_platform_coin_pays_other_currencies() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let mut request = body("jpy-coin");
    request["currency"] = json!("JPY");
    request["payment_no"] = json!(seed::CHANNEL_PLATFORM_COIN);
    let p = created(&env, &token, &request).await;
    assert_eq!(p["currency"], "JPY", "the order currency stays unchanged");
    let mut request = body("fixed-test");
    request["payment_no"] = json!(seed::CHANNEL_CARD_TEST);
    let p = created(&env, &token, &request).await;
    assert_eq!(p["payment_no"], "", "empty until the buyer starts paying");
    assert_eq!(p["test_mode"], false);
}

#[tokio::test]
async fn test_channel_not_assigned_to_the_merchant_is_payment_debug_access_denied() {
    let env = Env::start().await;
    let other = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let mut request = body("debug-denied");
    request["payment_no"] = json!(seed::CHANNEL_CARD_TEST);
    let answer = create(&env, &other, &request).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.error(), "payment_debug_access_denied");
}

#[tokio::test]
async fn malformed_create_bodies_are_refused_and_store_nothing() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let url = env.api("/openapi/v1/merchant-payments");
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("application/json", b"{not json".to_vec()),
        ("application/json", b"[1,2]".to_vec()),
        ("text/plain", serde_json::to_vec(&body("ct")).unwrap()),
        ("application/json", vec![0xff, 0xfe, b'{', b'}']),
    ];
    for (content_type, bytes) in bodies {
        let response = env
            .http
            .post(&url)
            .bearer_auth(&token)
            .header("Content-Type", content_type)
            .body(bytes)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
    let answer = list(&env, &token, "external_reference=order-ct").await;
    assert_eq!(answer.body["items"], json!([]));
}

#[tokio::test]
async fn order_numbers_end_in_random_digits() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let create = |key: &'static str| {
        let body = json!({
            "external_reference": format!("order-{key}"),
            "idempotency_key": key,
            "amount_minor": 1250,
            "currency": "USD",
        });
        let url = env.api("/openapi/v1/merchant-payments");
        let token = token.clone();
        let env = &env;
        async move {
            let created = env.post(&url, Some(&token), &body).await;
            assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
            created.body["order_no"].as_str().unwrap().to_owned()
        }
    };
    let a = create("random-1").await;
    let b = create("random-2").await;
    for order_no in [&a, &b] {
        assert_eq!(order_no.len(), 14 + 7 + 16, "{order_no}");
        assert!(order_no.bytes().all(|c| c.is_ascii_digit()), "{order_no}");
    }
    // Sequence numbers follow each other; the random tails do not.
    let tail = |o: &str| o[21..].parse::<u64>().unwrap();
    assert_ne!(tail(&a), tail(&b));
    assert_ne!(tail(&a) + 1, tail(&b));
}
