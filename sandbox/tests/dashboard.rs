//! The developer's dashboard (`GET /_sandbox/`, `GET /_sandbox/payments/{order_no}`) over plain
//! HTTP: payments with their status timeline, notification attempts as sent, catalog orders,
//! faults and limits; no secret on any page; and the two controls its buttons needed
//! (`.../notifications/{event_id}/redeliver`, `.../expire`).

mod harness;
mod merchant_payments_support;

use harness::Env;
use merchant_payments_support::*;
use reqwest::StatusCode;
use serde_json::json;
use storefront_sandbox::seed;

const SECRET: &str = "dashboard-notify-secret-0123456789abcdef";
const DEFAULT_SECRET: &str = "dashboard-default-secret-0123456789abcd";

/// A dashboard page: 200 HTML that loads nothing from elsewhere.
async fn page(env: &Env, path: &str) -> String {
    let url = format!("{}{path}", env.sandbox.origin());
    let answer = env.get(&url, None).await;
    assert_eq!(answer.status, StatusCode::OK, "{path}: {}", answer.text);
    let header = |name: &str| {
        answer
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(header("content-type"), "text/html; charset=utf-8", "{path}");
    assert_eq!(header("cache-control"), "no-store", "{path}");
    assert!(
        header("content-security-policy").starts_with("default-src 'none'"),
        "{path}"
    );
    // The only things the page loads are the sandbox's own style sheet and script (the CSP
    // allows no inline ones); anything else would come from elsewhere.
    let own_assets = [
        r#"<link rel="stylesheet" href="/_sandbox/dashboard.css">"#,
        r#"<script src="/_sandbox/dashboard.js"></script>"#,
    ];
    assert!(
        own_assets.iter().all(|tag| answer.text.contains(tag)),
        "{path} loads its own style sheet and script"
    );
    let text = own_assets
        .iter()
        .fold(answer.text.clone(), |text, tag| text.replace(tag, ""));
    for external in ["http://", "https://", "//cdn", "<link", "src="] {
        let outside_payload = text
            .lines()
            .filter(|l| !l.contains("127.0.0.1"))
            .any(|l| l.contains(external));
        assert!(!outside_payload, "{path} refers to {external}");
    }
    answer.text
}

/// Whether `text` holds anything shaped like a checkout token (`ct_` and 48 hex digits).
fn holds_checkout_token(text: &str) -> bool {
    text.match_indices("ct_").any(|(at, _)| {
        let rest = &text[at + 3..];
        rest.len() >= 48 && rest[..48].bytes().all(|b| b.is_ascii_hexdigit())
    })
}

fn with_notify(key: &str, url: &str) -> serde_json::Value {
    let mut b = body(key);
    b["notify_url"] = json!(url);
    b["notify_secret"] = json!(SECRET);
    b
}

/// A paid then refunded payment shows three timeline entries (version, status, why) and the
/// three delivery attempts with their headers, signature, raw body and the receiver's answer.
#[tokio::test]
async fn a_payment_page_shows_the_timeline_and_every_attempt() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let order = order_no(&created(&env, &token, &with_notify("dash-1", &receiver.url)).await);
    receiver.wait_for(1).await;
    assert_eq!(pay_by_card(&env, &order).await.status, StatusCode::OK);
    receiver.wait_for(2).await;
    assert_eq!(force(&env, &order, "refunded").await.status, StatusCode::OK);
    let got = receiver.wait_for(3).await;
    // The attempt is logged once the receiver's answer is in.
    eventually("three attempts logged", || async {
        let text = page(&env, &format!("/_sandbox/payments/{order}")).await;
        text.matches(r#"class="attempt""#).count() == 3
    })
    .await;

    let text = page(&env, &format!("/_sandbox/payments/{order}")).await;
    for (version, status, why) in [
        (1, "pending", "created by the merchant"),
        (2, "paid", "ch_card_usd confirmed the payment"),
        (3, "refunded", "platform confirmed a refund"),
    ] {
        let row = format!(r#"data-version="{version}" data-status="{status}""#);
        assert!(text.contains(&row), "{row} in {text}");
        assert!(text.contains(why), "{why} in {text}");
    }
    for received in &got {
        let event_id = received.header("x-service-event-id");
        let status = received.json()["data"]["status"]
            .as_str()
            .unwrap()
            .to_owned();
        let row = format!(
            r#"class="attempt" data-event-id="{event_id}" data-event-status="{status}" data-http-status="200""#
        );
        assert!(text.contains(&row), "{row} in {text}");
        let signature = received.header("x-service-signature");
        assert!(
            text.contains(&format!("X-Service-Signature: {signature}")),
            "{signature}"
        );
        let timestamp = received.header("x-service-timestamp");
        assert!(text.contains(&format!("X-Service-Timestamp: {timestamp}")));
        let raw = String::from_utf8(received.body.to_vec()).unwrap();
        let escaped = raw.replace('"', "&quot;");
        assert!(text.contains(&escaped), "the raw body as sent: {raw}");
        assert!(text.contains(&format!(
            r#"data-event-id="{event_id}" data-delivery-status="delivered""#
        )));
    }
    assert!(text.contains("HTTP 200"));
    assert!(text.contains(&receiver.url));

    // The overview lists it (with its status) and its attempts; both spellings of the prefix.
    for path in ["/_sandbox/", "/_sandbox"] {
        let overview = page(&env, path).await;
        assert!(
            overview.contains(&format!(
                r#"data-order-no="{order}" data-status="refunded""#
            )),
            "{overview}"
        );
        assert!(overview.contains(&format!(r#"href="/_sandbox/payments/{order}""#)));
        assert_eq!(overview.matches(r#"class="attempt""#).count(), 3);
    }

    // An unknown payment: 404 in the control error shape.
    let missing = env
        .get(&env.control("/payments/20990101000000000000"), None)
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.error(), "payment_not_found");
}

/// The overview shows catalog orders and their trades, pending faults, rate-limit windows and
/// the clock.
#[tokio::test]
async fn the_overview_shows_catalog_orders_faults_limits_and_the_clock() {
    let env = Env::start().await;
    let user = env.user_token(seed::USER_ALICE).await;
    let order = env.order(&user, "G1001", 2, seed::CHANNEL_CARD_USD).await;
    let started = env
        .post(
            &env.api(&format!("/openapi/v1/orders/{order}/payment")),
            Some(&user),
            &json!({ "payment_no": seed::CHANNEL_CARD_USD }),
        )
        .await;
    let trade_no = started.body["trade_no"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", started.text))
        .to_owned();
    let fault = env
        .post(
            &env.control("/faults"),
            None,
            &json!({"method": "GET", "path": "/api/openapi/v1/products", "status": 429, "times": 2}),
        )
        .await;
    assert_eq!(fault.status, StatusCode::CREATED);
    let token = env.merchant_token().await;
    new_payment(&env, &token, "dash-limits").await;
    env.advance(30).await;

    let text = page(&env, "/_sandbox/").await;
    assert!(text.contains(&order), "{text}");
    assert!(text.contains(&trade_no), "{text}");
    assert!(text.contains("0 awaiting payment"), "{text}");
    assert!(text.contains(&format!(
        r#"data-url="/_sandbox/catalog/trades/{trade_no}/pay""#
    )));
    assert!(text.contains("/api/openapi/v1/products"), "{text}");
    assert!(text.contains("answer 429"), "{text}");
    assert!(text.contains("merchant_create"), "{text}");
    assert!(text.contains(seed::MERCHANT_CLIENT_ID), "{text}");
    assert!(text.contains("(real time +30 s)"), "{text}");
}

/// No page prints a secret: not the merchant default notification secret, not a payment's
/// notification secret, not a checkout token (nor any checkout address), not an access token,
/// not a client secret.
#[tokio::test]
async fn no_dashboard_page_prints_a_secret() {
    let env = Env::start().await;
    let receiver = Receiver::start().await;
    set_default(&env, seed::MERCHANT_NO, &receiver.url, DEFAULT_SECRET, true).await;
    // A generated default secret, answered once.
    let other = Receiver::start().await;
    let generated = env
        .put_control(
            &format!(
                "/merchants/{}/notification-default",
                seed::OTHER_MERCHANT_NO
            ),
            &json!({ "url": other.url, "enabled": true }),
        )
        .await;
    let generated_secret = generated.body["secret"].as_str().unwrap().to_owned();

    let token = env.merchant_token().await;
    let user_token = env.user_token(seed::USER_ALICE).await;
    let other_token = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let by_default = created(&env, &token, &body("dash-secret-default")).await;
    let explicit = created(
        &env,
        &token,
        &with_notify("dash-secret-explicit", &receiver.url),
    )
    .await;
    let with_session = created(&env, &token, &body("dash-secret-session")).await;
    let in_other = created(&env, &other_token, &body("dash-secret-other")).await;
    let session = control(
        &env,
        &order_no(&with_session),
        "checkout/session",
        json!({ "payment_no": seed::CHANNEL_CARD_USD }),
    )
    .await;
    assert_eq!(session.status, StatusCode::OK, "{}", session.text);
    pay_by_card(&env, &order_no(&by_default)).await;
    let order = env
        .order(&user_token, "G1001", 1, seed::CHANNEL_CARD_USD)
        .await;
    let _ = env
        .post(
            &env.api(&format!("/openapi/v1/orders/{order}/payment")),
            Some(&user_token),
            &json!({ "payment_no": seed::CHANNEL_CARD_USD }),
        )
        .await;
    receiver.wait_for(4).await;
    other.wait_for(1).await;

    let payments = [&by_default, &explicit, &with_session, &in_other];
    let sample = by_default["checkout_url"].as_str().unwrap();
    assert!(
        holds_checkout_token(sample),
        "the check sees a token: {sample}"
    );
    let mut secrets = vec![
        DEFAULT_SECRET.to_owned(),
        SECRET.to_owned(),
        generated_secret,
        token.clone(),
        user_token.clone(),
        other_token.clone(),
    ];
    for payment in payments {
        let url = payment["checkout_url"].as_str().unwrap();
        secrets.push(url.to_owned());
        secrets.push(url.rsplit('/').next().unwrap().to_owned());
    }
    for secret in [
        seed::MERCHANT_CLIENT_SECRET,
        seed::CATALOG_CLIENT_SECRET,
        seed::OTHER_CLIENT_SECRET,
        seed::INACTIVE_CLIENT_SECRET,
        seed::UNBOUND_CLIENT_SECRET,
    ] {
        secrets.push(secret.to_owned());
    }

    let mut paths = vec!["/_sandbox/".to_owned(), "/_sandbox".to_owned()];
    paths.extend(
        payments
            .iter()
            .map(|p| format!("/_sandbox/payments/{}", order_no(p))),
    );
    let origin = env.sandbox.origin();
    for path in &paths {
        let text = page(&env, path).await;
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "{path} prints a secret");
        }
        assert!(
            !holds_checkout_token(&text) && !text.contains(&format!("{origin}/checkout/")),
            "{path} prints a checkout address"
        );
    }
    // The pages are not empty of what they should show.
    let overview = page(&env, "/_sandbox/").await;
    for payment in payments {
        assert!(overview.contains(&order_no(payment)));
    }
    assert!(overview.contains(&order));
}

/// Redeliver now: a delivered event is sent once more right away (a manual attempt); a pending
/// one whose retry is scheduled later is sent now; an unknown event is 404.
#[tokio::test]
async fn redeliver_sends_an_event_again_now() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let receiver = Receiver::start().await;
    let order =
        order_no(&created(&env, &token, &with_notify("dash-redeliver", &receiver.url)).await);
    let first = receiver.wait_for(1).await;
    let event_id = first[0].header("x-service-event-id");
    let redeliver = |event: String| {
        let env = &env;
        let order = order.clone();
        async move {
            env.post(
                &env.control(&format!(
                    "/merchant-payments/{order}/notifications/{event}/redeliver"
                )),
                None,
                &json!({}),
            )
            .await
        }
    };
    eventually("the first attempt is finished", || async {
        let r = env
            .get(
                &env.api(&format!(
                    "/openapi/v1/merchant-payments/{order}/notifications"
                )),
                Some(&token),
            )
            .await;
        r.body["items"][0]["delivery_status"] == "delivered"
    })
    .await;
    let answer = redeliver(event_id.clone()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(answer.body["redelivery"], "queued");
    let again = receiver.wait_for_event(&event_id, 2).await;
    assert_eq!(again[1].body, first[0].body, "the same bytes again");
    eventually("the record counts two attempts, delivered", || async {
        let r = env
            .get(
                &env.api(&format!(
                    "/openapi/v1/merchant-payments/{order}/notifications"
                )),
                Some(&token),
            )
            .await;
        r.body["items"][0]["attempts"] == 2 && r.body["items"][0]["delivery_status"] == "delivered"
    })
    .await;

    // A failing receiver: the paid event waits a minute for its retry; redeliver sends it now.
    receiver.answer_always(500);
    pay_by_card(&env, &order).await;
    let paid = receiver.wait_for(3).await;
    let paid_event = paid[2].header("x-service-event-id");
    eventually("the retry is scheduled", || async {
        let r = env
            .get(
                &env.api(&format!(
                    "/openapi/v1/merchant-payments/{order}/notifications"
                )),
                Some(&token),
            )
            .await;
        r.body["items"][0]["next_attempt_at"].is_string()
    })
    .await;
    receiver.answer_always(200);
    let answer = redeliver(paid_event.clone()).await;
    assert_eq!(answer.body["redelivery"], "advanced", "{}", answer.text);
    receiver.wait_for_event(&paid_event, 2).await;

    let unknown = redeliver("evt_unknown".to_owned()).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.error(), "payment_not_found");
}

/// Expire: the clock moves to the payment's expires_at and the sweep runs, so a payment without
/// a channel session is expired (and one with a session goes to review); the timeline says why.
#[tokio::test]
async fn expire_moves_the_clock_to_expires_at() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let plain = new_payment(&env, &token, "dash-expire").await;
    let expire = |order: String| {
        let env = &env;
        async move {
            env.post(
                &env.control(&format!("/merchant-payments/{order}/expire")),
                None,
                &json!({}),
            )
            .await
        }
    };
    let answer = expire(plain.clone()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let advanced = answer.body["advanced_seconds"].as_i64().unwrap();
    assert!((1790..=1800).contains(&advanced), "{}", answer.text);
    assert_eq!(answer.body["status"], "expired");
    assert_eq!(answer.body["status_version"], 2);
    assert_eq!(status(&env, &token, &plain).await, "expired");
    let text = page(&env, &format!("/_sandbox/payments/{plain}")).await;
    assert!(text.contains(r#"data-version="2" data-status="expired""#));
    assert!(text.contains("sweep: expires_at reached with no channel session started"));

    // Already due: the clock does not move.
    assert_eq!(expire(plain).await.body["advanced_seconds"], 0);

    let token = env.merchant_token().await;
    let started = new_payment(&env, &token, "dash-expire-session").await;
    control(
        &env,
        &started,
        "checkout/session",
        json!({ "payment_no": seed::CHANNEL_CARD_USD }),
    )
    .await;
    let answer = expire(started.clone()).await;
    assert_eq!(answer.body["status"], "review", "{}", answer.text);
    let text = page(&env, &format!("/_sandbox/payments/{started}")).await;
    assert!(text.contains("sweep: expires_at reached while the ch_card_usd session was undecided"));

    let unknown = expire("20990101000000000000".to_owned()).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.error(), "payment_not_found");
}

#[tokio::test]
async fn the_dashboard_runs_no_inline_script_or_style() {
    let env = Env::start().await;
    let page = env.get(&env.control("/"), None).await;
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(csp.contains("style-src 'self'"), "{csp}");
    assert!(!page.text.contains("<style"), "no inline style sheet");
    let scripts: Vec<&str> = page.text.split("<script").skip(1).collect();
    assert!(!scripts.is_empty());
    for script in scripts {
        let (tag, rest) = script.split_once('>').unwrap();
        assert!(tag.contains("src="), "<script{tag}>");
        assert!(
            rest.starts_with("</script>"),
            "the script element has no body"
        );
    }
    for (path, kind) in [
        ("/dashboard.js", "text/javascript"),
        ("/dashboard.css", "text/css"),
    ] {
        let asset = env.get(&env.control(path), None).await;
        assert_eq!(asset.status, StatusCode::OK, "{path}");
        let content_type = asset.headers["content-type"].to_str().unwrap();
        assert!(content_type.starts_with(kind), "{content_type}");
        assert!(!asset.text.is_empty());
    }
}
