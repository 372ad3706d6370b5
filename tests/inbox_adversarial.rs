//! What an adversarial review of the inbox and the shared stores tried and found holding
//! (issue 27): kept as tests so it keeps holding, on SQLite and PostgreSQL alike.
//! - a body with a duplicate JSON key is refused, never read one way by the verifier and
//!   another way by the app;
//! - a `status_version` that is not a non-negative integer is refused;
//! - the same notification `id` with another body is acknowledged as a duplicate and the first
//!   body stays (no overwrite through a replayed id);
//! - a flood of deliveries with bad signatures stores nothing, is counted, and leaves the inbox
//!   working;
//! - a `namespace` written as SQL or as a Redis key pattern is data, never code.

#![cfg(all(feature = "store-sqlite", feature = "store-postgres"))]

mod common;

#[allow(dead_code)]
#[path = "../src/store/test_servers.rs"]
mod test_servers;

use std::time::{SystemTime, UNIX_EPOCH};

use storefront::WebhookVerifier;
use storefront::inbox::{Inbox, Receipt, ReceiptOutcome};
use storefront::webhook::TestSigner;
use test_servers::{PostgresServer, ScratchDir};

const SECRET: &str = "whsec_adversarial_0123456789abcdef012345";

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A notification body with `data` given as raw JSON members (so a test can write what
/// serde_json would never produce).
fn raw_body(id: &str, data_members: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"merchant_payment.status_changed","api_version":1,"created_at":"2026-01-01T00:00:00Z","data":{{{data_members}}}}}"#
    )
}

/// The members of a valid `paid` payment's `data`, `status_version` given raw.
fn paid_members(order: &str, version: &str) -> String {
    format!(
        r#""order_no":"{order}","external_reference":"shop-{order}","payment_no":"alipay","amount_minor":1250,"currency":"CNY","currency_decimals":2,"status":"paid","status_version":{version},"test_mode":false,"expires_at":"2030-01-01T00:00:00Z","event_id":"PE-{order}","provider_trade_no":"trade-{order}","occurred_at":"2026-01-01T08:00:00+08:00""#
    )
}

async fn deliver(inbox: &Inbox, id: &str, body: &str, secret: &str) -> Receipt {
    let ts = now();
    let signature = TestSigner::new(secret).signature(ts, body.as_bytes());
    inbox
        .receive(
            Some(id),
            Some(&ts.to_string()),
            Some(&signature),
            body.as_bytes(),
        )
        .await
}

/// Nothing of `order` waits for a worker.
async fn nothing_handed_out(inbox: &Inbox, order: &str) {
    let events = inbox
        .claim(100, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        events.iter().all(|e| e.order_no != order),
        "{order} was handed out: {events:?}"
    );
    for event in &events {
        inbox.release(event).await.unwrap();
    }
}

/// Every case on one inbox.
async fn held(inbox: &Inbox) {
    // Duplicate keys: in `data` (status twice) and at the top (id twice).
    let twice = raw_body(
        "dup-1",
        &format!(r#"{},"status":"refunded""#, paid_members("DUP1", "2")),
    );
    let r = deliver(inbox, "dup-1", &twice, SECRET).await;
    assert!((400..500).contains(&r.status), "duplicate data key: {r:?}");
    nothing_handed_out(inbox, "DUP1").await;
    let top = raw_body("dup-2", &paid_members("DUP2", "2")).replacen(
        r#"{"id":"dup-2","#,
        r#"{"id":"dup-2","id":"dup-3","#,
        1,
    );
    let r = deliver(inbox, "dup-2", &top, SECRET).await;
    assert!((400..500).contains(&r.status), "duplicate id key: {r:?}");
    nothing_handed_out(inbox, "DUP2").await;

    // status_version values that are not a non-negative integer.
    for (n, version) in ["-1", "1.5", "\"2\"", "1e30", "null", "2.0e0", "[2]"]
        .iter()
        .enumerate()
    {
        let order = format!("VER{n}");
        let id = format!("ver-{n}");
        let r = deliver(
            inbox,
            &id,
            &raw_body(&id, &paid_members(&order, version)),
            SECRET,
        )
        .await;
        assert!((400..500).contains(&r.status), "version {version}: {r:?}");
        nothing_handed_out(inbox, &order).await;
    }

    // The same id with another body: a duplicate, the first body stays.
    let first = raw_body("same-1", &paid_members("SAME", "2"));
    let r = deliver(inbox, "same-1", &first, SECRET).await;
    assert_eq!((r.status, r.outcome), (200, ReceiptOutcome::Stored));
    let other = first.replace(r#""amount_minor":1250"#, r#""amount_minor":1"#);
    let r = deliver(inbox, "same-1", &other, SECRET).await;
    assert_eq!((r.status, r.outcome), (200, ReceiptOutcome::Duplicate));
    let events = inbox
        .claim(100, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    let same: Vec<_> = events.iter().filter(|e| e.order_no == "SAME").collect();
    assert_eq!(same.len(), 1, "{events:?}");
    assert_eq!(same[0].amount_minor.get(), 1250);
    assert_eq!(same[0].body, first);
    for event in &events {
        inbox.complete(event).await.unwrap();
    }

    // A flood of bad signatures: refused, counted, nothing stored; the inbox still works.
    let before = inbox.status().await.unwrap();
    for n in 0..300 {
        let id = format!("flood-{n}");
        let body = raw_body(&id, &paid_members(&format!("FLOOD{n}"), "2"));
        let r = deliver(inbox, &id, &body, "whsec_not_the_secret_0123456789abcdef").await;
        assert_eq!((r.status, r.outcome), (400, ReceiptOutcome::Rejected));
    }
    let after = inbox.status().await.unwrap();
    assert_eq!(after.pending, before.pending);
    assert_eq!(
        after
            .rejected
            .get("signature_mismatch")
            .copied()
            .unwrap_or(0)
            - before
                .rejected
                .get("signature_mismatch")
                .copied()
                .unwrap_or(0),
        300
    );
    let r = deliver(
        inbox,
        "after-flood",
        &raw_body("after-flood", &paid_members("AFTER", "2")),
        SECRET,
    )
    .await;
    assert_eq!((r.status, r.outcome), (200, ReceiptOutcome::Stored));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_held_still_holds_on_sqlite() {
    let dir = ScratchDir::new();
    let inbox = Inbox::open(
        &format!("sqlite://{}", dir.path().join("inbox.db").display()),
        WebhookVerifier::new([SECRET]).unwrap(),
    )
    .unwrap();
    held(&inbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_held_still_holds_on_postgres() {
    let Some(server) = PostgresServer::start() else {
        panic!("PostgreSQL is not installed: run .ci/install-servers.sh");
    };
    let inbox = Inbox::open(&server.url(), WebhookVerifier::new([SECRET]).unwrap()).unwrap();
    held(&inbox).await;
}

/// The read calls in the store's current window for `client`'s namespace (the store must answer).
async fn read_calls(client: &storefront::Client) -> u32 {
    let status = client.shared_state().await;
    assert!(status.available, "{status:?}");
    status
        .stored
        .expect("the store answered")
        .windows
        .into_iter()
        .find(|w| w.class == storefront::LimitClass::Read)
        .expect("a read window")
        .in_window
}

/// A `namespace` written as SQL (quotes, a statement terminator, a comment) or as a Redis key
/// pattern is part of a key, never code: the store keeps working, the sentinel table survives,
/// and two such namespaces do not share a budget with the plain one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_is_data_never_code() {
    let Some(pg) = PostgresServer::start() else {
        panic!("PostgreSQL is not installed: run .ci/install-servers.sh");
    };
    let Some(redis) = test_servers::RedisServer::start() else {
        panic!("Redis is not installed: run .ci/install-servers.sh");
    };
    let (admin, connection) = tokio_postgres::connect(&pg.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    admin
        .batch_execute("CREATE TABLE sentinel (x int); INSERT INTO sentinel VALUES (1)")
        .await
        .unwrap();
    let h = common::Harness::start().await;
    let hostile = "x'); DROP TABLE sentinel; --*?[a]\\";
    let encoded: String = url::form_urlencoded::byte_serialize(hostile.as_bytes()).collect();
    for base in [pg.url(), redis.url()] {
        let url = format!("{base}?namespace={encoded}");
        let client = storefront::Client::new(
            common::merchant_config(&h.sandbox).with_shared_state(url.as_str()),
        )
        .unwrap();
        client.list_channels().await.unwrap();
        assert!(read_calls(&client).await >= 1, "{base}");
        // The plain namespace saw none of those calls.
        let plain = storefront::Client::new(
            common::merchant_config(&h.sandbox).with_shared_state(format!("{base}?namespace=x")),
        )
        .unwrap();
        assert_eq!(read_calls(&plain).await, 0, "{base}");
    }
    let row = admin
        .query_one("SELECT count(*) FROM sentinel", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 1);
}
