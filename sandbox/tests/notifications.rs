//! Status notifications over real HTTP, received by a local receiver (contract: "Events":
//! "Choosing the notification configuration", "When sent", "Request", "Acknowledgement and
//! retries"; "GET .../notifications", "POST .../notifications/{event_id}/retry", "Limits").

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use storefront_sandbox::seed;

const SECRET: &str = "explicit-secret-0123456789abcdef0123";
const DEFAULT_SECRET: &str = "default-secret-0123456789abcdef01234";

fn with_notify(key: &str, url: &str, secret: &str) -> Value {
    let mut b = body(key);
    b["notify_url"] = json!(url);
    b["notify_secret"] = json!(secret);
    b
}

async fn records(env: &Env, token: &str, order: &str, query: &str) -> harness::Answer {
    env.get(
        &env.api(&format!(
            "/openapi/v1/merchant-payments/{order}/notifications{query}"
        )),
        Some(token),
    )
    .await
}

async fn requeue(env: &Env, token: &str, order: &str, event_id: &str) -> harness::Answer {
    env.post_empty(
        &env.api(&format!(
            "/openapi/v1/merchant-payments/{order}/notifications/{event_id}/retry"
        )),
        Some(token),
    )
    .await
}

/// The delivery record of one event. Uses a fresh token: these tests move the sandbox clock
/// by hours, past the lifetime of earlier tokens.
async fn record_of(env: &Env, _token: &str, order: &str, event_id: &str) -> Value {
    let token = env.merchant_token().await;
    let listed = records(env, &token, order, "").await;
    listed.body["items"]
        .as_array()
        .and_then(|items| items.iter().find(|r| r["event_id"] == event_id).cloned())
        .unwrap_or(Value::Null)
}

/// Drives one failing event through its 10 automatic attempts (advancing the clock by the
/// schedule) and returns its event id; the record is then `failed`.
async fn exhaust(env: &Env, token: &str, order: &str, receiver: &Receiver) -> String {
    let first = receiver.wait_for(1).await;
    let event_id = first[0].header("x-service-event-id");
    for (index, wait) in [0i64, 60, 300, 900, 1800, 3600, 7200, 14_400, 21_600, 28_800]
        .into_iter()
        .enumerate()
    {
        env.advance(wait).await;
        receiver.wait_for_event(&event_id, index + 1).await;
        eventually("the attempt is recorded", || {
            let event_id = event_id.clone();
            async move {
                let r = record_of(env, token, order, &event_id).await;
                r["attempts"] == index + 1
                    && (r["next_attempt_at"].is_string() || r["delivery_status"] == "failed")
            }
        })
        .await;
    }
    event_id
}

fn verify(secret: &str, received: &Received) -> bool {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let mut input = received.header("x-service-timestamp").into_bytes();
    input.push(b'.');
    input.extend_from_slice(&received.body);
    let Some(hex_sig) = received
        .header("x-service-signature")
        .strip_prefix("sha256=")
        .map(str::to_owned)
    else {
        return false;
    };
    let Ok(sig) = hex::decode(&hex_sig) else {
        return false;
    };
    hex_sig == hex_sig.to_lowercase() && ring::hmac::verify(&key, &input, &sig).is_ok()
}

#[derive(Debug, Clone, Copy)]
enum DefaultSetting {
    None,
    Disabled,
    Enabled,
}

#[derive(Debug, Clone, Copy)]
enum Input {
    Omitted,
    EnabledFalse,
    EnabledTrue,
    Pair,
    EnabledTrueWithPair,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Nothing,
    ToDefault,
    ToExplicit,
    Refused,
}

/// The configuration table: merchant default (none, disabled, enabled) × creation input →
/// no notification, the default address and secret, the explicit pair, or 400
/// `invalid_notify_config`.
#[tokio::test]
async fn notification_configuration_table() {
    use Expect::*;
    let rows = [
        (DefaultSetting::None, Input::Omitted, Nothing),
        (DefaultSetting::Disabled, Input::Omitted, Nothing),
        (DefaultSetting::Enabled, Input::Omitted, ToDefault),
        (DefaultSetting::Enabled, Input::EnabledFalse, Nothing),
        (DefaultSetting::None, Input::EnabledFalse, Nothing),
        (DefaultSetting::Enabled, Input::EnabledTrue, ToDefault),
        (DefaultSetting::Disabled, Input::EnabledTrue, Refused),
        (DefaultSetting::None, Input::EnabledTrue, Refused),
        (DefaultSetting::Enabled, Input::Pair, ToExplicit),
        (DefaultSetting::None, Input::Pair, ToExplicit),
        (
            DefaultSetting::Disabled,
            Input::EnabledTrueWithPair,
            ToExplicit,
        ),
    ];
    for (index, (default, input, expect)) in rows.into_iter().enumerate() {
        let row = format!("{default:?} + {input:?}");
        let env = Env::start().await;
        let token = env.merchant_token().await;
        let default_receiver = Receiver::start().await;
        let explicit_receiver = Receiver::start().await;
        match default {
            DefaultSetting::None => {}
            DefaultSetting::Disabled => {
                set_default(
                    &env,
                    seed::MERCHANT_NO,
                    &default_receiver.url,
                    DEFAULT_SECRET,
                    false,
                )
                .await
            }
            DefaultSetting::Enabled => {
                set_default(
                    &env,
                    seed::MERCHANT_NO,
                    &default_receiver.url,
                    DEFAULT_SECRET,
                    true,
                )
                .await
            }
        }
        let mut request = body(&format!("cfg-{index}"));
        match input {
            Input::Omitted => {}
            Input::EnabledFalse => request["notify_enabled"] = json!(false),
            Input::EnabledTrue => request["notify_enabled"] = json!(true),
            Input::Pair | Input::EnabledTrueWithPair => {
                request["notify_url"] = json!(explicit_receiver.url);
                request["notify_secret"] = json!(SECRET);
                if matches!(input, Input::EnabledTrueWithPair) {
                    request["notify_enabled"] = json!(true);
                }
            }
        }
        let answer = create(&env, &token, &request).await;
        if expect == Refused {
            assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{row}");
            assert_eq!(answer.error(), "invalid_notify_config", "{row}");
            continue;
        }
        assert_eq!(answer.status, StatusCode::CREATED, "{row}: {}", answer.text);
        assert!(
            !answer.text.contains(SECRET) && !answer.text.contains(DEFAULT_SECRET),
            "{row}"
        );
        let order = order_no(&answer.body);
        let listed = records(&env, &token, &order, "").await;
        let count = listed.body["items"].as_array().unwrap().len();
        match expect {
            Nothing => assert_eq!(count, 0, "{row}: no notification applies"),
            ToDefault => {
                assert_eq!(count, 1, "{row}");
                let got = default_receiver.wait_for(1).await;
                assert!(
                    verify(DEFAULT_SECRET, &got[0]),
                    "{row}: signed with the default secret"
                );
                assert_eq!(explicit_receiver.count(), 0, "{row}");
            }
            ToExplicit => {
                assert_eq!(count, 1, "{row}");
                let got = explicit_receiver.wait_for(1).await;
                assert!(
                    verify(SECRET, &got[0]),
                    "{row}: signed with the given secret"
                );
                assert_eq!(default_receiver.count(), 0, "{row}");
            }
            Refused => unreachable!(),
        }
        assert!(
            !listed.text.contains(SECRET) && !listed.text.contains(DEFAULT_SECRET),
            "{row}"
        );
    }
}

/// Bad notification inputs: how they combine (`invalid_notify_config`), the address
/// (`invalid_notify_url`) and the secret (`invalid_notify_secret`).
#[tokio::test]
async fn notification_input_rules_table() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let good_url = "https://hooks.shop.example/notify";
    let rows: Vec<(&str, Value, &str, Option<&str>)> = vec![
        (
            "disabled with url",
            json!({"notify_enabled": false, "notify_url": good_url, "notify_secret": SECRET}),
            "invalid_notify_config",
            None,
        ),
        (
            "disabled with secret",
            json!({"notify_enabled": false, "notify_secret": SECRET}),
            "invalid_notify_config",
            None,
        ),
        (
            "url without secret",
            json!({"notify_url": good_url}),
            "invalid_notify_config",
            None,
        ),
        (
            "secret without url",
            json!({"notify_secret": SECRET}),
            "invalid_notify_config",
            None,
        ),
        (
            "plain http",
            json!({"notify_url": "http://hooks.shop.example/n", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "fragment",
            json!({"notify_url": "https://hooks.shop.example/n#x", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "user info",
            json!({"notify_url": "https://u:p@hooks.shop.example/n", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "private 10/8",
            json!({"notify_url": "https://10.1.2.3/n", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "private 192.168/16",
            json!({"notify_url": "https://192.168.0.10/n", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "link local",
            json!({"notify_url": "https://169.254.169.254/n", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "private v6",
            json!({"notify_url": "https://[fd00::1]/n", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "internal name",
            json!({"notify_url": "https://intranet/n", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "not a url",
            json!({"notify_url": "hooks", "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "too long",
            json!({"notify_url": format!("https://hooks.shop.example/{}", "a".repeat(2030)), "notify_secret": SECRET}),
            "invalid_notify_url",
            Some("notify_url"),
        ),
        (
            "secret 31 bytes",
            json!({"notify_url": good_url, "notify_secret": "s".repeat(31)}),
            "invalid_notify_secret",
            Some("notify_secret"),
        ),
        (
            "secret 257 bytes",
            json!({"notify_url": good_url, "notify_secret": "s".repeat(257)}),
            "invalid_notify_secret",
            Some("notify_secret"),
        ),
        (
            "secret with space",
            json!({"notify_url": good_url, "notify_secret": format!("{} x", "s".repeat(32))}),
            "invalid_notify_secret",
            Some("notify_secret"),
        ),
        (
            "the OAuth client secret",
            json!({"notify_url": good_url, "notify_secret": seed::MERCHANT_CLIENT_SECRET}),
            "invalid_notify_secret",
            Some("notify_secret"),
        ),
        (
            "enabled not boolean",
            json!({"notify_enabled": "yes"}),
            "invalid_request",
            Some("notify_enabled"),
        ),
    ];
    for (index, (name, extra, error, field)) in rows.into_iter().enumerate() {
        let mut request = body(&format!("in-{index}"));
        for (k, v) in extra.as_object().unwrap() {
            request[k] = v.clone();
        }
        let answer = create(&env, &token, &request).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{name}: {}",
            answer.text
        );
        assert_eq!(answer.error(), error, "{name}");
        assert_eq!(answer.body["field"].as_str(), field, "{name}");
        assert!(
            !answer.text.contains(SECRET),
            "{name}: the secret is never echoed"
        );
    }
    for ok in [32usize, 256] {
        let request = with_notify(&format!("ok-{ok}"), good_url, &"s".repeat(ok));
        assert_eq!(
            create(&env, &token, &request).await.status,
            StatusCode::CREATED
        );
    }
}

/// "The secret never appears in create, query, checkout or delivery-record responses" (nor in
/// the filtered list), before and after payment.
#[tokio::test]
async fn notify_secret_never_appears_in_create_query_list_checkout_or_records() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let answer = create(
        &env,
        &token,
        &with_notify("no-secret", &receiver.url, SECRET),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    assert!(!answer.text.contains(SECRET), "create");
    let order = order_no(&answer.body);
    let checkout_url = answer.body["checkout_url"].as_str().unwrap().to_owned();
    receiver.wait_for(1).await;
    for paid in [false, true] {
        if paid {
            pay_by_card(&env, &order).await;
            receiver.wait_for(2).await;
        }
        let queried = query(&env, &token, &order).await;
        assert_eq!(queried.status, StatusCode::OK);
        assert!(!queried.text.contains(SECRET), "query (paid: {paid})");
        let listed = list(&env, &token, &format!("order_no={order}")).await;
        assert_eq!(listed.body["items"].as_array().unwrap().len(), 1);
        assert!(!listed.text.contains(SECRET), "list (paid: {paid})");
        let recorded = records(&env, &token, &order, "").await;
        assert!(!recorded.body["items"].as_array().unwrap().is_empty());
        assert!(!recorded.text.contains(SECRET), "records (paid: {paid})");
        let page = env.http.get(&checkout_url).send().await.unwrap();
        assert!(page.status().is_success() || page.status().is_redirection());
        let html = page.text().await.unwrap();
        assert!(!html.contains(SECRET), "checkout (paid: {paid})");
    }
}

#[tokio::test]
async fn notification_is_signed_with_headers_and_holds_the_snapshot() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let mut request = with_notify("signed", &receiver.url, SECRET);
    request["return_url"] = json!("https://shop.example/back");
    let before = env.sandbox.shared().clock.now().unix_timestamp();
    let payment = created(&env, &token, &request).await;
    let got = receiver.wait_for(1).await;
    let after = env.sandbox.shared().clock.now().unix_timestamp();
    let n = &got[0];
    assert!(
        verify(SECRET, n),
        "sha256= lowercase hex HMAC of timestamp.body"
    );
    let body = n.json();
    assert_eq!(n.header("x-service-event-id"), body["id"].as_str().unwrap());
    assert_eq!(body["type"], "merchant_payment.status_changed");
    assert_eq!(body["api_version"], 1);
    assert!(
        body["created_at"].as_str().unwrap().ends_with('Z'),
        "UTC RFC 3339"
    );
    let timestamp: i64 = n.header("x-service-timestamp").parse().unwrap();
    assert!(
        (before..=after).contains(&timestamp),
        "Unix seconds (sandbox clock) of this delivery"
    );
    let data = &body["data"];
    for field in [
        "order_no",
        "external_reference",
        "payment_no",
        "amount_minor",
        "currency",
        "currency_decimals",
        "status",
        "status_version",
        "test_mode",
        "expires_at",
        "event_id",
        "provider_trade_no",
        "occurred_at",
    ] {
        assert!(data.get(field).is_some(), "data.{field}");
    }
    assert_eq!(data["order_no"], payment["order_no"]);
    assert_eq!(data["status"], "pending");
    assert_eq!(data["status_version"], 1);
    let raw = String::from_utf8(n.body.to_vec()).unwrap();
    let token_part = payment["checkout_url"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    assert!(!raw.contains(token_part), "no checkout token");
    assert!(!raw.contains("shop.example/back"), "no return address");
    assert!(!raw.contains(SECRET), "no secret");
    assert!(data.get("checkout_url").is_none() && data.get("return_url").is_none());
}

#[tokio::test]
async fn one_notification_per_status_change_with_increasing_status_version() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let order = order_no(&created(&env, &token, &with_notify("each", &receiver.url, SECRET)).await);
    pay_by_card(&env, &order).await;
    force(&env, &order, "refunded").await;
    let got = receiver.wait_for(3).await;
    let mut seen: Vec<(u64, String, Value)> = got
        .iter()
        .map(|r| {
            let b = r.json();
            (
                b["data"]["status_version"].as_u64().unwrap(),
                b["data"]["status"].as_str().unwrap().to_owned(),
                b["data"]["event_id"].clone(),
            )
        })
        .collect();
    seen.sort_by_key(|s| s.0);
    let statuses: Vec<(u64, &str)> = seen.iter().map(|s| (s.0, s.1.as_str())).collect();
    assert_eq!(statuses, vec![(1, "pending"), (2, "paid"), (3, "refunded")]);
    assert!(seen[0].2.is_null());
    assert_eq!(seen[1].2, seen[2].2, "refund keeps the payment event");
    let ids: std::collections::HashSet<String> =
        got.iter().map(|r| r.header("x-service-event-id")).collect();
    assert_eq!(ids.len(), 3, "each notification has its own id");
    assert!(
        !ids.contains(seen[1].2.as_str().unwrap()),
        "id differs from data.event_id"
    );
    let listed = records(&env, &token, &order, "").await;
    let versions: Vec<u64> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status_version"].as_u64().unwrap())
        .collect();
    assert_eq!(
        versions,
        vec![3, 2, 1],
        "records by status version descending"
    );
    let limited = records(&env, &token, &order, "?limit=2").await;
    assert_eq!(limited.body["items"].as_array().unwrap().len(), 2);
    let fallback = records(&env, &token, &order, "?limit=0").await;
    assert_eq!(fallback.body["items"].as_array().unwrap().len(), 3);
}

/// GET .../notifications: "`limit` (default 20, 1 to 100, out of range falls back to 20)" and
/// "Records ordered by status version descending": an invalid or out-of-range limit is not an
/// error (200 with every record), and a limit keeps the highest status versions.
#[tokio::test]
async fn notification_records_limit_invalid_or_out_of_range_falls_back_to_20() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let order = order_no(
        &created(
            &env,
            &token,
            &with_notify("rec-limit", &receiver.url, SECRET),
        )
        .await,
    );
    pay_by_card(&env, &order).await;
    force(&env, &order, "chargeback").await;
    for fallback in ["0", "101", "-1", "abc", "", "2.5"] {
        let answer = records(&env, &token, &order, &format!("?limit={fallback}")).await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "limit {fallback}: {}",
            answer.text
        );
        assert_eq!(
            answer.body["items"].as_array().unwrap().len(),
            3,
            "limit {fallback} falls back to 20"
        );
    }
    let one = records(&env, &token, &order, "?limit=1").await;
    let items = one.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(
        items[0]["status_version"], 3,
        "the highest status version first"
    );
    assert_eq!(items[0]["event"]["data"]["status"], "chargeback");
}

#[tokio::test]
async fn delivery_record_has_attempts_with_started_and_finished_times() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let order =
        order_no(&created(&env, &token, &with_notify("record", &receiver.url, SECRET)).await);
    let got = receiver.wait_for(1).await;
    let event_id = got[0].header("x-service-event-id");
    eventually("the record is delivered", || {
        let (env, token, order) = (&env, &token, &order);
        async move {
            records(env, token, order, "").await.body["items"][0]["delivery_status"] == "delivered"
        }
    })
    .await;
    let record = records(&env, &token, &order, "").await.body["items"][0].clone();
    assert_eq!(record["event_id"], event_id.as_str());
    assert_eq!(record["status_version"], 1);
    assert_eq!(
        record["event"],
        got[0].json(),
        "the snapshot is the delivered body"
    );
    assert_eq!(record["attempts"], 1);
    assert_eq!(record["last_http_status"], 200);
    assert!(record["last_error"].is_null());
    assert!(record["next_attempt_at"].is_null());
    let attempt = &record["delivery_attempts"][0];
    assert!(attempt["started_at"].is_string() && attempt["finished_at"].is_string());
    assert_eq!(attempt["http_status"], 200);
}

/// Any 2xx acknowledges; 3xx (not followed), 4xx and 5xx are failures that schedule a retry.
#[tokio::test]
async fn only_2xx_acknowledges_and_redirects_are_not_followed() {
    for (code, delivered) in [
        (204u16, true),
        (299, true),
        (302, false),
        (307, false),
        (404, false),
        (503, false),
    ] {
        let env = Env::start().await;
        let token = env.merchant_token().await;
        let receiver = Receiver::start().await;
        receiver.answer_always(code);
        let order =
            order_no(&created(&env, &token, &with_notify("ack", &receiver.url, SECRET)).await);
        receiver.wait_for(1).await;
        eventually("the attempt is recorded", || {
            let (env, token, order) = (&env, &token, &order);
            async move { records(env, token, order, "").await.body["items"][0]["attempts"] == 1 }
        })
        .await;
        let record = records(&env, &token, &order, "").await.body["items"][0].clone();
        assert_eq!(record["last_http_status"], code);
        if delivered {
            assert_eq!(record["delivery_status"], "delivered", "{code}");
        } else {
            assert_eq!(record["delivery_status"], "pending", "{code}");
            assert!(record["last_error"].is_string(), "{code}");
            assert!(record["next_attempt_at"].is_string(), "{code}");
        }
        assert_eq!(
            receiver.count(),
            1,
            "{code}: a redirect (Location: the receiver itself) is not followed"
        );
    }
}

/// "Timeout, connection failure, 3xx, 4xx and 5xx all count as failures": a refused connection
/// is a failed attempt (no HTTP status), retried 1 minute later on the schedule.
#[tokio::test]
async fn connection_failure_counts_as_a_failed_attempt_and_is_retried() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    // A loopback port that nobody listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/hook");
    let order = order_no(&created(&env, &token, &with_notify("refused", &url, SECRET)).await);
    eventually("the first attempt is recorded", || {
        let (env, token, order) = (&env, &token, &order);
        async move { records(env, token, order, "").await.body["items"][0]["attempts"] == 1 }
    })
    .await;
    let record = records(&env, &token, &order, "").await.body["items"][0].clone();
    assert_eq!(
        record["delivery_status"], "pending",
        "a failure, not delivered"
    );
    assert!(record["last_http_status"].is_null(), "{record}");
    assert!(record["last_error"].is_string(), "{record}");
    assert!(record["next_attempt_at"].is_string(), "{record}");
    env.advance(60).await;
    eventually("the retry after 1 minute is recorded", || {
        let (env, token, order) = (&env, &token, &order);
        async move { records(env, token, order, "").await.body["items"][0]["attempts"] == 2 }
    })
    .await;
}

/// One delivery waits at most 8 seconds; a receiver slower than that is a failed attempt.
/// (This test takes 8 s of real time: the HTTP timeout is not on the sandbox clock.)
#[tokio::test]
async fn delivery_waits_at_most_8_seconds() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    receiver.answer_slowly(std::time::Duration::from_secs(30));
    let order = order_no(&created(&env, &token, &with_notify("slow", &receiver.url, SECRET)).await);
    receiver.wait_for(1).await;
    eventually("the attempt gives up", || {
        let (env, token, order) = (&env, &token, &order);
        async move { records(env, token, order, "").await.body["items"][0]["attempts"] == 1 }
    })
    .await;
    let record = records(&env, &token, &order, "").await.body["items"][0].clone();
    assert_eq!(record["delivery_status"], "pending");
    assert!(record["last_http_status"].is_null());
    assert!(record["last_error"].as_str().unwrap().contains("timeout"));
    assert!(
        record["next_attempt_at"].is_string(),
        "retried per the schedule"
    );
}

fn parse_time(v: &Value) -> time::OffsetDateTime {
    time::OffsetDateTime::parse(
        v.as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap()
}

/// Issue 17 item 5: by default a delivery is stamped with the real time of the attempt, so a
/// retry made after the sandbox clock moved an hour ahead still verifies against a receiver's
/// real clock (the contract's 5-minute tolerance), while the body keeps sandbox-clock times.
#[tokio::test]
async fn retries_after_the_clock_moved_are_stamped_with_real_time() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    receiver.answer_always(500);
    created(
        &env,
        &token,
        &with_notify("wallclock", &receiver.url, SECRET),
    )
    .await;
    let event_id = receiver.wait_for(1).await[0].header("x-service-event-id");
    env.advance(3600).await;
    let got = receiver.wait_for_event(&event_id, 2).await;
    let real_now = time::OffsetDateTime::now_utc().unix_timestamp();
    for attempt in &got {
        assert!(verify(SECRET, attempt));
        let stamped: i64 = attempt.header("x-service-timestamp").parse().unwrap();
        assert!(
            (real_now - stamped).abs() <= 60,
            "stamped {stamped}, real time {real_now}: a receiver checking 5 minutes accepts it"
        );
    }
}

/// The retry schedule: after the first delivery, failures wait 1 min, 5 min, 15 min, 30 min,
/// 1 h, 2 h, 4 h, 6 h, 8 h; 10 attempts at most; the id and body stay the same and the
/// timestamp is re-signed on each attempt. Then the record is `failed`. (Signed with the sandbox
/// clock here, so that re-signing shows as ten distinct timestamps while the clock is advanced.)
#[tokio::test]
async fn retry_schedule_table() {
    let env = Env::start_with(storefront_sandbox::SandboxOptions {
        delivery_timestamp: storefront_sandbox::clock::DeliveryTimestamp::SandboxClock,
        ..Default::default()
    })
    .await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    receiver.answer_always(500);
    let mut request = with_notify("schedule", &receiver.url, SECRET);
    request["expires_in"] = json!(7200);
    let order = order_no(&created(&env, &token, &request).await);
    let event_id = receiver.wait_for(1).await[0].header("x-service-event-id");
    let schedule = [60i64, 300, 900, 1800, 3600, 7200, 14_400, 21_600, 28_800];
    for (index, wait) in schedule.iter().enumerate() {
        let attempts = index + 1;
        receiver.wait_for_event(&event_id, attempts).await;
        eventually("the attempt is recorded", || {
            let (env, token, order, event_id) = (&env, &token, &order, &event_id);
            async move {
                let r = record_of(env, token, order, event_id).await;
                r["attempts"] == attempts && r["next_attempt_at"].is_string()
            }
        })
        .await;
        let record = record_of(&env, &token, &order, &event_id).await;
        let last = record["delivery_attempts"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        let gap = (parse_time(&record["next_attempt_at"]) - parse_time(&last["finished_at"]))
            .whole_seconds();
        assert!(
            (wait - 1..=*wait).contains(&gap),
            "after attempt {attempts}: wait {gap} s, expected {wait} s"
        );
        assert_eq!(record["delivery_status"], "pending");
        env.advance(*wait).await;
    }
    let got = receiver.wait_for_event(&event_id, 10).await;
    eventually("the tenth attempt is recorded", || {
        let (env, token, order, event_id) = (&env, &token, &order, &event_id);
        async move { record_of(env, token, order, event_id).await["attempts"] == 10 }
    })
    .await;
    let record = record_of(&env, &token, &order, &event_id).await;
    assert_eq!(
        record["delivery_status"], "failed",
        "10 automatic attempts at most"
    );
    assert!(record["next_attempt_at"].is_null());
    assert_eq!(record["last_http_status"], 500);
    assert_eq!(record["delivery_attempts"].as_array().unwrap().len(), 10);
    let first = &got[0];
    let mut timestamps = std::collections::HashSet::new();
    for attempt in &got {
        assert_eq!(attempt.body, first.body, "the body stays the same");
        assert!(verify(SECRET, attempt), "each attempt is signed");
        timestamps.insert(attempt.header("x-service-timestamp"));
    }
    assert_eq!(got.len(), 10);
    assert_eq!(
        timestamps.len(),
        10,
        "the timestamp is re-signed on each attempt"
    );
    let token = env.merchant_token().await;
    let status_now = query(&env, &token, &order).await.body["status"].clone();
    assert_ne!(
        status_now, "paid",
        "failed delivery never confirms or reverses anything"
    );
}

#[tokio::test]
async fn requeue_re_delivers_an_exhausted_notification_with_the_same_id_and_body() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    receiver.answer_always(500);
    let order =
        order_no(&created(&env, &token, &with_notify("requeue", &receiver.url, SECRET)).await);
    let event_id = exhaust(&env, &token, &order, &receiver).await;
    let token = env.merchant_token().await;
    let record = record_of(&env, &token, &order, &event_id).await;
    assert_eq!(record["delivery_status"], "failed");
    let events_before = records(&env, &token, &order, "").await.body["items"]
        .as_array()
        .unwrap()
        .len();
    let status_before = status(&env, &token, &order).await;
    receiver.answer_always(200);
    let answer = requeue(&env, &token, &order, &event_id).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    assert_eq!(answer.body, json!({"accepted": true}));
    let got = receiver.wait_for_event(&event_id, 11).await;
    assert_eq!(got[10].body, got[0].body, "same id, same body");
    eventually("delivered after the re-queue", || {
        let (env, token, order, event_id) = (&env, &token, &order, &event_id);
        async move {
            record_of(env, token, order, event_id).await["delivery_status"] == "delivered"
        }
    })
    .await;
    let listed = records(&env, &token, &order, "").await.body;
    assert_eq!(
        listed["items"].as_array().unwrap().len(),
        events_before,
        "no new event"
    );
    assert_eq!(
        record_of(&env, &token, &order, &event_id).await["attempts"],
        11
    );
    assert_eq!(
        status(&env, &token, &order).await,
        status_before,
        "no status change"
    );
    let again = requeue(&env, &token, &order, &event_id).await;
    assert_eq!(
        again.status,
        StatusCode::ACCEPTED,
        "a delivered one is accepted"
    );
    let record = record_of(&env, &token, &order, &event_id).await;
    assert_eq!(record["delivery_status"], "delivered", "and queues nothing");
    assert!(record["next_attempt_at"].is_null());
    assert_eq!(record["attempts"], 11);
}

#[tokio::test]
async fn requeue_of_a_pending_notification_queues_nothing_extra() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    receiver.answer_always(500);
    let order = order_no(
        &created(
            &env,
            &token,
            &with_notify("pending-rq", &receiver.url, SECRET),
        )
        .await,
    );
    receiver.wait_for(1).await;
    eventually("recorded", || {
        let (env, token, order) = (&env, &token, &order);
        async move {
            records(env, token, order, "").await.body["items"][0]["next_attempt_at"].is_string()
        }
    })
    .await;
    let before = records(&env, &token, &order, "").await.body["items"][0].clone();
    let event_id = before["event_id"].as_str().unwrap();
    let answer = requeue(&env, &token, &order, event_id).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    let after = records(&env, &token, &order, "").await.body["items"][0].clone();
    assert_eq!(
        after["next_attempt_at"], before["next_attempt_at"],
        "schedule unchanged"
    );
    assert_eq!(after["delivery_status"], "pending");
}

#[tokio::test]
async fn delivery_records_keep_the_latest_20_attempts() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    receiver.answer_always(500);
    let order =
        order_no(&created(&env, &token, &with_notify("twenty", &receiver.url, SECRET)).await);
    let event_id = exhaust(&env, &token, &order, &receiver).await;
    let token = env.merchant_token().await;
    for n in 11..=21usize {
        eventually("failed again", || {
            let (env, token, order, event_id) = (&env, &token, &order, &event_id);
            async move {
                let r = record_of(env, token, order, event_id).await;
                r["delivery_status"] == "failed" && r["attempts"] == n - 1
            }
        })
        .await;
        let answer = requeue(&env, &token, &order, &event_id).await;
        assert_eq!(answer.status, StatusCode::ACCEPTED);
        receiver.wait_for_event(&event_id, n).await;
    }
    eventually("21 attempts", || {
        let (env, token, order, event_id) = (&env, &token, &order, &event_id);
        async move { record_of(env, token, order, event_id).await["attempts"] == 21 }
    })
    .await;
    let record = record_of(&env, &token, &order, &event_id).await;
    let kept = record["delivery_attempts"].as_array().unwrap();
    assert_eq!(kept.len(), 20);
    assert_eq!(kept[0]["attempt"], 2, "the oldest attempt was dropped");
    assert_eq!(kept[19]["attempt"], 21);
}

#[tokio::test]
async fn notification_records_and_requeue_are_limited_to_the_merchants_own_payments() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let order = order_no(&created(&env, &token, &with_notify("own", &receiver.url, SECRET)).await);
    let got = receiver.wait_for(1).await;
    let event_id = got[0].header("x-service-event-id");
    let other = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let answer = records(&env, &other, &order, "").await;
    assert_eq!(
        (answer.status, answer.error()),
        (StatusCode::NOT_FOUND, "payment_not_found")
    );
    let answer = requeue(&env, &other, &order, &event_id).await;
    assert_eq!(
        (answer.status, answer.error()),
        (StatusCode::NOT_FOUND, "payment_not_found")
    );
    let answer = requeue(&env, &token, &order, "evt_unknown").await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let read_only = env
        .client_token(
            seed::MERCHANT_CLIENT_ID,
            seed::MERCHANT_CLIENT_SECRET,
            "merchant_payments.read",
        )
        .await;
    let answer = requeue(&env, &read_only, &order, &event_id).await;
    assert_eq!(
        answer.error(),
        "insufficient_scope",
        "re-queue needs merchant_payments.create"
    );
}

#[tokio::test]
async fn configuration_is_fixed_at_creation_and_later_default_changes_affect_only_new_payments() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let first = Receiver::start().await;
    let second = Receiver::start().await;
    set_default(&env, seed::MERCHANT_NO, &first.url, DEFAULT_SECRET, true).await;
    let old = order_no(&created(&env, &token, &body("fixed-old")).await);
    first.wait_for(1).await;
    let new_secret = "rotated-secret-0123456789abcdef0123";
    set_default(&env, seed::MERCHANT_NO, &second.url, new_secret, true).await;
    pay_by_card(&env, &old).await;
    let got = first.wait_for(2).await;
    assert!(
        verify(DEFAULT_SECRET, &got[1]),
        "old payments keep the old address and secret"
    );
    let new = order_no(&created(&env, &token, &body("fixed-new")).await);
    let got = second.wait_for(1).await;
    assert!(verify(new_secret, &got[0]));
    assert_eq!(got[0].json()["data"]["order_no"], new.as_str());
}

#[tokio::test]
async fn a_retry_with_the_same_key_does_not_re_read_the_default() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let first = created(&env, &token, &body("no-reread")).await;
    set_default(&env, seed::MERCHANT_NO, &receiver.url, DEFAULT_SECRET, true).await;
    let again = create(&env, &token, &body("no-reread")).await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(again.body["order_no"], first["order_no"]);
    let order = order_no(&first);
    pay_by_card(&env, &order).await;
    let listed = records(&env, &token, &order, "").await;
    assert_eq!(
        listed.body["items"],
        json!([]),
        "the payment still has no notification"
    );
}

#[tokio::test]
async fn sweep_sends_expired_and_review_notifications() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let mut a = with_notify("sw-expired", &receiver.url, SECRET);
    a["expires_in"] = json!(60);
    let mut b = with_notify("sw-review", &receiver.url, SECRET);
    b["expires_in"] = json!(60);
    created(&env, &token, &a).await;
    let review = order_no(&created(&env, &token, &b).await);
    control(
        &env,
        &review,
        "checkout/session",
        json!({"payment_no": seed::CHANNEL_CARD_USD}),
    )
    .await;
    receiver.wait_for(2).await;
    env.advance(121).await;
    let got = receiver.wait_for(4).await;
    let mut statuses: Vec<String> = got[2..]
        .iter()
        .map(|r| r.json()["data"]["status"].as_str().unwrap().to_owned())
        .collect();
    statuses.sort();
    assert_eq!(statuses, vec!["expired", "review"]);
}

#[tokio::test]
async fn default_notification_control_generates_a_secret_when_none_is_given() {
    let env = Env::start().await;
    let response = env
        .put_control(
            &format!("/merchants/{}/notification-default", seed::MERCHANT_NO),
            &json!({"url": "https://hooks.shop.example/n", "enabled": false}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK);
    let body = response.body;
    assert!(
        body["secret"].as_str().is_some_and(|s| s.len() >= 32),
        "shown once"
    );
    let response = env
        .put_control(
            &format!("/merchants/{}/notification-default", seed::MERCHANT_NO),
            &json!({"url": "http://hooks.shop.example/n", "enabled": true}),
        )
        .await;
    assert_eq!(
        response.status,
        StatusCode::BAD_REQUEST,
        "public targets must be https"
    );
}

#[tokio::test]
async fn attempts_control_lists_every_delivery_attempt_with_headers_and_raw_body() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let order = order_no(&created(&env, &token, &with_notify("log", &receiver.url, SECRET)).await);
    let got = receiver.wait_for(1).await;
    let url = env.control(&format!("/notifications/attempts?order_no={order}"));
    eventually("logged", || {
        let (env, url) = (&env, &url);
        async move {
            env.get(url, None).await.body["items"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        }
    })
    .await;
    let logged = env.get(&url, None).await.body["items"][0].clone();
    assert_eq!(logged["url"], receiver.url.as_str());
    assert_eq!(
        logged["body"],
        String::from_utf8(got[0].body.to_vec()).unwrap()
    );
    assert_eq!(
        logged["headers"]["X-Service-Signature"],
        got[0].header("x-service-signature").as_str()
    );
    assert_eq!(logged["http_status"], 200);
}

/// Work resumes after a worker interruption: events stored while delivery was stopped are
/// delivered, in full, once it runs again.
#[tokio::test]
async fn stored_events_are_delivered_after_a_worker_interruption() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let worker = |enabled: bool| {
        let env = &env;
        async move {
            let response = env
                .put_control("/notifications/worker", &json!({ "enabled": enabled }))
                .await;
            assert_eq!(response.status, StatusCode::OK);
        }
    };
    worker(false).await;
    let order = order_no(
        &created(
            &env,
            &token,
            &with_notify("interrupted", &receiver.url, SECRET),
        )
        .await,
    );
    pay_by_card(&env, &order).await;
    let stored = records(&env, &token, &order, "").await.body;
    let items = stored["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "both events are stored with their changes");
    for record in items {
        assert_eq!(record["delivery_status"], "pending");
        assert_eq!(record["attempts"], 0);
        assert_eq!(record["delivery_attempts"], json!([]));
        assert!(record["next_attempt_at"].is_string());
    }
    worker(true).await;
    let got = receiver.wait_for(2).await;
    let mut versions: Vec<u64> = got
        .iter()
        .map(|r| r.json()["data"]["status_version"].as_u64().unwrap())
        .collect();
    versions.sort_unstable();
    assert_eq!(versions, vec![1, 2]);
}
