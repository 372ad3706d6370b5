//! One conformance suite for every inbox backend, run against real databases (a SQLite file,
//! PostgreSQL from [`crate::store::test_servers`]), through the public [`Inbox`] with signed
//! deliveries ([`TestSigner`]): "store the notification reliably before returning" (never a 2xx
//! for what was not committed), "deduplicate by notification `id`", "a lower version must not
//! overwrite a higher one", "book payments idempotently by `data.event_id`", leases, eight
//! workers racing over shuffled deliveries, completion inside the app's own transaction,
//! retention and replay.

#![cfg(any(feature = "store-sqlite", feature = "store-postgres"))]

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::*;
#[cfg(feature = "store-postgres")]
use crate::store::test_servers::PostgresServer;
#[cfg(feature = "store-sqlite")]
use crate::store::test_servers::ScratchDir;
use crate::webhook::TestSigner;

/// The notification secret of the suite.
const SECRET: &str = "whsec_inbox_conformance_secret";
/// A lease no check outlives.
const LONG: Duration = Duration::from_secs(30);

/// Where the suite runs: each case gets a database of its own.
enum Backend {
    #[cfg(feature = "store-sqlite")]
    Sqlite(ScratchDir),
    #[cfg(feature = "store-postgres")]
    Postgres(PostgresServer),
}

/// One case's database.
struct Db {
    url: String,
    /// The SQLite file (for the app's own transaction).
    #[cfg(feature = "store-sqlite")]
    path: Option<std::path::PathBuf>,
}

fn next() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(feature = "store-postgres")]
async fn pg_connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to the test PostgreSQL");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

impl Backend {
    /// A fresh, empty database.
    async fn fresh(&self) -> Db {
        let n = next();
        match self {
            #[cfg(feature = "store-sqlite")]
            Backend::Sqlite(dir) => {
                let path = dir.path().join(format!("inbox-{n}.db"));
                Db {
                    url: format!("sqlite://{}", path.display()),
                    path: Some(path),
                }
            }
            #[cfg(feature = "store-postgres")]
            Backend::Postgres(server) => {
                let admin = pg_connect(&server.url()).await;
                let name = format!("inbox_case_{n}");
                admin
                    .batch_execute(&format!("CREATE DATABASE {name}"))
                    .await
                    .expect("create a database");
                let base = server.url();
                let url = format!("{}/{name}", &base[..base.rfind('/').expect("a path")]);
                Db {
                    url,
                    #[cfg(feature = "store-sqlite")]
                    path: None,
                }
            }
        }
    }

    /// Runs `completion_sql` for (`id`, `claim`) in one own transaction with an app row; commits
    /// when the first statement changed one row, else rolls back. Returns what it changed.
    async fn complete_in_own_transaction(
        &self,
        db: &Db,
        sql: &str,
        id: &str,
        claim: &str,
        app_row: &str,
    ) -> u64 {
        let statements: Vec<&str> = sql
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(statements.len(), 2, "two completion statements: {sql}");
        match self {
            #[cfg(feature = "store-sqlite")]
            Backend::Sqlite(_) => {
                let path = db.path.clone().expect("a sqlite file");
                let (statements, id, claim, app_row) = (
                    statements.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                    id.to_owned(),
                    claim.to_owned(),
                    app_row.to_owned(),
                );
                tokio::task::spawn_blocking(move || {
                    let mut conn = rusqlite::Connection::open(path).expect("open the file");
                    conn.busy_timeout(Duration::from_secs(5)).expect("busy");
                    conn.execute_batch(
                        "CREATE TABLE IF NOT EXISTS app_bookings (event_id TEXT PRIMARY KEY)",
                    )
                    .expect("app table");
                    let tx = conn
                        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                        .expect("begin");
                    let params = rusqlite::named_params! { ":id": id, ":claim": claim };
                    let changed = tx.execute(&statements[0], params).expect("complete");
                    tx.execute(&statements[1], params).expect("book");
                    tx.execute(
                        "INSERT INTO app_bookings (event_id) VALUES (?1)",
                        [&app_row],
                    )
                    .expect("app row");
                    if changed == 1 {
                        tx.commit().expect("commit");
                    } else {
                        tx.rollback().expect("rollback");
                    }
                    changed as u64
                })
                .await
                .expect("blocking task")
            }
            #[cfg(feature = "store-postgres")]
            Backend::Postgres(_) => {
                let mut client = pg_connect(&db.url).await;
                client
                    .batch_execute(
                        "CREATE TABLE IF NOT EXISTS app_bookings (event_id TEXT PRIMARY KEY)",
                    )
                    .await
                    .expect("app table");
                let tx = client.transaction().await.expect("begin");
                let changed = tx
                    .execute(statements[0], &[&id, &claim])
                    .await
                    .expect("complete");
                tx.execute(statements[1], &[&id, &claim])
                    .await
                    .expect("book");
                tx.execute(
                    "INSERT INTO app_bookings (event_id) VALUES ($1)",
                    &[&app_row],
                )
                .await
                .expect("app row");
                if changed == 1 {
                    tx.commit().await.expect("commit");
                } else {
                    tx.rollback().await.expect("rollback");
                }
                changed
            }
        }
    }

    /// How many app rows the app's transactions committed.
    async fn app_rows(&self, db: &Db) -> i64 {
        match self {
            #[cfg(feature = "store-sqlite")]
            Backend::Sqlite(_) => {
                let path = db.path.clone().expect("a sqlite file");
                tokio::task::spawn_blocking(move || {
                    rusqlite::Connection::open(path)
                        .expect("open")
                        .query_row("SELECT COUNT(*) FROM app_bookings", [], |r| r.get(0))
                        .expect("count")
                })
                .await
                .expect("blocking task")
            }
            #[cfg(feature = "store-postgres")]
            Backend::Postgres(_) => pg_connect(&db.url)
                .await
                .query_one("SELECT COUNT(*) FROM app_bookings", &[])
                .await
                .expect("count")
                .get(0),
        }
    }
}

/// A separate inbox object on `db` (as another process or host would have).
fn inbox(db: &Db) -> Inbox {
    Inbox::open(&db.url, WebhookVerifier::new([SECRET]).expect("verifier")).expect("open")
}

/// The contract's `data` of a payment at a status and version.
fn data(order_no: &str, status: &str, version: u64, event_id: Option<&str>) -> serde_json::Value {
    let paid = event_id.is_some();
    serde_json::json!({
        "order_no": order_no,
        "external_reference": format!("shop-{order_no}"),
        "payment_no": "alipay",
        "amount_minor": 1250,
        "currency": "CNY",
        "currency_decimals": 2,
        "status": status,
        "status_version": version,
        "test_mode": false,
        "expires_at": "2030-01-01T00:00:00Z",
        "event_id": event_id,
        "provider_trade_no": if paid { Some(format!("trade-{order_no}")) } else { None },
        "occurred_at": if paid { Some("2026-01-01T08:00:00+08:00") } else { None },
    })
}

/// The notification body.
fn body(id: &str, order_no: &str, status: &str, version: u64, event_id: Option<&str>) -> String {
    serde_json::json!({
        "id": id,
        "type": "merchant_payment.status_changed",
        "api_version": 1,
        "created_at": "2026-01-01T00:00:00Z",
        "data": data(order_no, status, version, event_id),
    })
    .to_string()
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// Delivers one signed notification.
async fn deliver(
    inbox: &Inbox,
    id: &str,
    order_no: &str,
    status: &str,
    version: u64,
    event_id: Option<&str>,
) -> Receipt {
    let body = body(id, order_no, status, version, event_id);
    let ts = unix_now();
    let signature = TestSigner::new(SECRET).signature(ts, body.as_bytes());
    inbox
        .receive(
            Some(id),
            Some(&ts.to_string()),
            Some(&signature),
            body.as_bytes(),
        )
        .await
}

/// Delivers one signed notification with the given `data` (any values, as the contract allows
/// them).
async fn deliver_data(inbox: &Inbox, id: &str, data: serde_json::Value) -> Receipt {
    let body = serde_json::json!({
        "id": id,
        "type": "merchant_payment.status_changed",
        "api_version": 1,
        "created_at": "2026-01-01T00:00:00Z",
        "data": data,
    })
    .to_string();
    deliver_raw(inbox, id, body.as_bytes()).await
}

/// Delivers `body` signed as it is.
async fn deliver_raw(inbox: &Inbox, id: &str, body: &[u8]) -> Receipt {
    let ts = unix_now();
    let signature = TestSigner::new(SECRET).signature(ts, body);
    inbox
        .receive(Some(id), Some(&ts.to_string()), Some(&signature), body)
        .await
}

/// The report the inbox's reconciliation makes for `payment` before entering it: the
/// reconciler's classification against the shop's record of it (nothing booked).
fn report_for(payment: &MerchantPayment) -> crate::ReconcileReport {
    let record = LocalRecord {
        external_reference: payment.external_reference.clone(),
        order_no: Some(payment.order_no.clone()),
        expected_amount: payment.amount_minor,
        currency: payment.currency.clone(),
        test_mode: None,
        booked_status_version: None,
        booked_event_id: None,
    };
    crate::ReconcileReport {
        record: record.external_reference.clone(),
        index: 0,
        order_no: Some(payment.order_no.clone()),
        finding: crate::reconcile::classify(&record, payment),
        service_status_version: payment.status_version,
        requeued: 0,
        requeue_error: None,
        cursor: crate::ReconcileCursor::default(),
    }
}

async fn status(inbox: &Inbox) -> InboxStatus {
    inbox.status().await.expect("status")
}

/// The whole suite against one backend.
async fn conformance(backend: &Backend) {
    stored_duplicate_and_rejected(backend).await;
    versions(backend).await;
    booked_once(backend).await;
    refund_and_paid_duplicate(backend).await;
    leases(backend).await;
    completion_in_own_transaction(backend).await;
    purge_and_replay(backend).await;
    concurrent_workers(backend).await;
    nul_and_odd_text_round_trip(backend).await;
    contract_violations_refused_and_reconciled(backend).await;
    body_limit_and_nesting(backend).await;
    namespace_refused(backend).await;
}

/// Every value the contract allows is stored and handed back exactly, on every backend:
/// `external_reference`, `order_no` and `event_id` with U+0000 (which PostgreSQL's `text`
/// refuses), and values that look like the PostgreSQL backend's encoding. Such a payment is
/// handed out, booked once, and reconciled like any other.
async fn nul_and_odd_text_round_trip(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    let odd = [
        ("ORD\0NUL", "shop\0ref", "E\0one"),
        ("\u{1}ORD", "\u{1}6869", "\u{1}E"),
        ("ORD\\x00", "ref\\0 \u{1}", "E\\0"),
    ];
    for (i, (order_no, reference, event_id)) in odd.iter().enumerate() {
        let mut paid = data(order_no, "paid", 2, Some(event_id));
        paid["external_reference"] = (*reference).into();
        let id = format!("nul-{i}");
        let r = deliver_data(&inbox, &id, paid).await;
        assert_eq!(
            (r.status, r.outcome),
            (200, ReceiptOutcome::Stored),
            "{r:?}"
        );
        // Redelivered: deduplicated.
        let mut again = data(order_no, "paid", 2, Some(event_id));
        again["external_reference"] = (*reference).into();
        assert_eq!(
            deliver_data(&inbox, &id, again).await.outcome,
            ReceiptOutcome::Duplicate
        );
    }
    let mut events = inbox.claim(10, LONG).await.expect("claim");
    events.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(events.len(), odd.len(), "{events:?}");
    for (e, (order_no, reference, event_id)) in events.iter().zip(odd) {
        assert_eq!(e.order_no, order_no);
        assert_eq!(e.external_reference, reference);
        assert_eq!(e.event_id.as_deref(), Some(event_id));
        assert!(e.book, "{e:?}");
        let sent: serde_json::Value = serde_json::from_str(&e.body).expect("the body");
        assert_eq!(sent["data"]["external_reference"], reference);
        inbox.complete(e).await.expect("complete");
    }
    let s = status(&inbox).await;
    assert_eq!((s.booked, s.completed, s.duplicate), (3, 3, 0), "{s:?}");
    let marks: BTreeMap<String, (String, Option<String>)> = inbox
        .watermarks()
        .await
        .expect("watermarks")
        .into_iter()
        .map(|w| (w.order_no, (w.external_reference, w.booked_event_id)))
        .collect();
    for (order_no, reference, event_id) in odd {
        assert_eq!(
            marks[order_no],
            (reference.to_owned(), Some(event_id.to_owned())),
            "{order_no:?}"
        );
    }

    // Reconciliation: a payment with U+0000 found paid at the service enters and books; one
    // the inbox booked is in agreement.
    let mut found: MerchantPayment =
        serde_json::from_value(data("R\0NUL", "paid", 4, Some("ER\0"))).expect("a payment");
    found.external_reference = "found\0ref".into();
    let mut report = report_for(&found);
    assert_eq!(report.finding.name(), "paid_not_booked");
    inbox.settle(&mut report).await;
    assert_eq!(
        report.finding.name(),
        "paid_not_booked",
        "{:?}",
        report.finding
    );
    let e = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (
            e[0].id.as_str(),
            e[0].external_reference.as_str(),
            e[0].book
        ),
        ("reconciled:R\0NUL:4", "found\0ref", true)
    );
    assert_eq!(e[0].event_id.as_deref(), Some("ER\0"));
    inbox.complete(&e[0]).await.expect("complete");
    assert_eq!(status(&inbox).await.booked, 4);
    // Replay by id and completion in the app's transaction work with such ids too.
    assert_eq!(
        inbox
            .replay(&Replay::Event("reconciled:R\0NUL:4".into()))
            .await
            .expect("replay"),
        1
    );
    let e = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!((e.len(), e[0].replayed, e[0].book), (1, true, false));
    inbox.release(&e[0]).await.expect("release");
    let e = inbox.claim(5, LONG).await.expect("claim");
    inbox.complete(&e[0]).await.expect("complete");
}

/// Notifications that break the contract so that the payment could never be booked are
/// refused with 422 `contract_violation` (counted per rule, never stored, never handed out): a
/// `paid` event without `event_id`, an `event_id` another payment carries, versions 2^63 and
/// 2^63 + 1 (which no store column holds exactly; never clamped). The inbox's reconciliation
/// reports such payments as `needs_attention` with the rule and still enters the others.
async fn contract_violations_refused_and_reconciled(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    let refused = |r: &Receipt| {
        assert_eq!(
            (r.status, r.outcome, r.reason.as_deref()),
            (
                422,
                ReceiptOutcome::ContractViolation,
                Some("contract_violation")
            ),
            "{r:?}"
        );
    };
    // Paid without event_id.
    refused(&deliver(&inbox, "cv-1", "CV1", "paid", 2, None).await);
    // Pending without one is fine.
    assert_eq!(
        deliver(&inbox, "cv-1-p", "CV1", "pending", 1, None)
            .await
            .status,
        200
    );
    // One event_id on two payments: the first owns it, the second is refused (again on
    // every redelivery); the first's own later states keep it.
    assert_eq!(
        deliver(&inbox, "cv-a", "CVA", "paid", 2, Some("EDUP"))
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    refused(&deliver(&inbox, "cv-b", "CVB", "paid", 2, Some("EDUP")).await);
    refused(&deliver(&inbox, "cv-b", "CVB", "paid", 2, Some("EDUP")).await);
    assert_eq!(
        deliver(&inbox, "cv-a", "CVA", "paid", 2, Some("EDUP"))
            .await
            .outcome,
        ReceiptOutcome::Duplicate
    );
    // Versions beyond i64: refused, never clamped; i64::MAX itself is held exactly.
    let top = i64::MAX as u64;
    refused(&deliver(&inbox, "cv-v0", "CVV", "pending", top + 1, None).await);
    refused(&deliver(&inbox, "cv-v1", "CVV", "paid", top + 2, Some("EV")).await);
    assert_eq!(
        deliver(&inbox, "cv-max", "CVM", "paid", top, Some("EM"))
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    let s = status(&inbox).await;
    assert_eq!(
        s.contract_violations,
        BTreeMap::from([
            ("event_id_reused".into(), 2),
            ("missing_event_id".into(), 1),
            ("status_version_out_of_range".into(), 2),
        ]),
        "{s:?}"
    );
    assert!(s.rejected.is_empty(), "{s:?}");
    assert_eq!(s.pending, 3, "only cv-1-p, cv-a and cv-max stored: {s:?}");
    let mut handed: Vec<(String, u64, bool)> = inbox
        .claim(10, LONG)
        .await
        .expect("claim")
        .into_iter()
        .map(|e| (e.id, e.status_version, e.book))
        .collect();
    handed.sort();
    assert_eq!(
        handed,
        vec![
            ("cv-1-p".into(), 1, false),
            ("cv-a".into(), 2, true),
            ("cv-max".into(), top, true)
        ]
    );

    // Reconciliation: each such payment found paid at the service needs attention (never an
    // endless paid_not_booked, never entered), and the sound one after them still enters.
    let payment = |order_no: &str, version: u64, event_id: Option<&str>| -> MerchantPayment {
        serde_json::from_value(data(order_no, "paid", version, event_id)).expect("a payment")
    };
    let cases = [
        (payment("CV1", 2, None), Some("missing_event_id")),
        (payment("CVB", 2, Some("EDUP")), Some("event_id_reused")),
        (
            payment("CVV", top + 2, Some("EV")),
            Some("status_version_out_of_range"),
        ),
        (payment("CVOK", 3, Some("EOK")), None),
    ];
    for (p, reason) in &cases {
        assert_eq!(
            inbox.enter_reconciled(p).await.expect("enter") == ReceiptOutcome::ContractViolation,
            reason.is_some(),
            "{}",
            p.order_no
        );
    }
    // The sound one was entered just now: take it out of the way, then run the reports.
    let e = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(e.len(), 1);
    inbox.release(&e[0]).await.expect("release");
    let mut reports: Vec<_> = cases.iter().map(|(p, _)| report_for(p)).collect();
    for report in &mut reports {
        inbox.settle(report).await;
    }
    for (report, (p, reason)) in reports.iter().zip(&cases) {
        match (&report.finding, reason) {
            (
                crate::ReconcileFinding::NeedsAttention {
                    reason: got,
                    payment,
                },
                Some(want),
            ) => {
                assert_eq!(got, want, "{}", p.order_no);
                assert_eq!(payment.order_no, p.order_no);
            }
            (crate::ReconcileFinding::PaidNotBooked { .. }, None) => {}
            (other, _) => panic!("{}: {other:?}", p.order_no),
        }
    }
    assert_eq!(reports[0].finding.name(), "needs_attention");
    let e = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(e.len(), 1, "only the sound payment entered: {e:?}");
    assert_eq!((e[0].order_no.as_str(), e[0].book), ("CVOK", true));
    inbox.complete(&e[0]).await.expect("complete");
    // Reconciliation's refusals are not deliveries: the counts are unchanged.
    assert_eq!(
        status(&inbox).await.contract_violations,
        s.contract_violations
    );
}

/// One body limit for every binding, enforced by the core before verification: a body above
/// [`MAX_BODY_BYTES`] is answered 413 `body_too_large`, counted, not stored; one of exactly
/// the limit is stored. A body nested absurdly deep (within the limit) is refused as an
/// invalid body (serde_json's recursion limit), never handed out, and does not overflow the
/// stack; one nested 5,000,000 deep is above the limit.
async fn body_limit_and_nesting(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    let body = |id: &str, order_no: &str, pad: usize| {
        let mut text = super::conformance::body(id, order_no, "pending", 1, None);
        text.push_str(&" ".repeat(pad));
        text
    };
    let exact = {
        let base = body("big-1", "BIG", 0);
        body("big-1", "BIG", MAX_BODY_BYTES - base.len())
    };
    assert_eq!(exact.len(), MAX_BODY_BYTES);
    let r = deliver_raw(&inbox, "big-1", exact.as_bytes()).await;
    assert_eq!(
        (r.status, r.outcome),
        (200, ReceiptOutcome::Stored),
        "{r:?}"
    );
    let over = format!("{exact} ");
    let r = deliver_raw(&inbox, "big-2", over.as_bytes()).await;
    assert_eq!(
        (r.status, r.outcome, r.reason.as_deref()),
        (413, ReceiptOutcome::Rejected, Some("body_too_large")),
        "{r:?}"
    );
    assert_eq!(r.status, STATUS_BODY_TOO_LARGE);
    // Unsigned and huge: refused for its size before anything else.
    let huge = vec![b'['; 64 << 20];
    let r = inbox.receive(None, None, None, &huge).await;
    assert_eq!(
        (r.status, r.reason.as_deref()),
        (413, Some("body_too_large"))
    );
    let deep_5m = format!("{}{}", "[".repeat(5_000_000), "]".repeat(5_000_000));
    let r = deliver_raw(&inbox, "deep-5m", deep_5m.as_bytes()).await;
    assert_eq!(
        (r.status, r.reason.as_deref()),
        (413, Some("body_too_large"))
    );

    // Deep nesting within the limit, in an envelope field and inside `data`.
    let nest = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let mut in_envelope: serde_json::Value =
        serde_json::from_str(&body("deep-1", "DEEP", 0)).expect("json");
    in_envelope["extra"] = serde_json::Value::Null;
    let in_envelope = in_envelope
        .to_string()
        .replace("\"extra\":null", &format!("\"extra\":{}", nest(200_000)));
    let mut in_data: serde_json::Value =
        serde_json::from_str(&body("deep-2", "DEEP", 0)).expect("json");
    in_data["data"]["extra"] = serde_json::Value::Null;
    let in_data = in_data
        .to_string()
        .replace("\"extra\":null", &format!("\"extra\":{}", nest(200_000)));
    for (id, text) in [("deep-1", in_envelope), ("deep-2", in_data)] {
        assert!(text.len() <= MAX_BODY_BYTES && text.contains(&nest(1000)));
        let r = deliver_raw(&inbox, id, text.as_bytes()).await;
        assert_eq!(
            (r.status, r.outcome, r.reason.as_deref()),
            (400, ReceiptOutcome::Rejected, Some("invalid_body")),
            "{id}: {r:?}"
        );
    }
    // At the depth limit it is stored; one deeper is refused.
    let mut at_limit: serde_json::Value =
        serde_json::from_str(&body("deep-3", "DEEP3", 0)).expect("json");
    at_limit["data"]["extra"] = serde_json::Value::Null;
    let at_limit = at_limit.to_string().replace(
        "\"extra\":null",
        &format!("\"extra\":\"[[[{{\",\"more\":{}", nest(MAX_BODY_DEPTH - 2)),
    );
    let r = deliver_raw(&inbox, "deep-3", at_limit.as_bytes()).await;
    assert_eq!(
        (r.status, r.outcome),
        (200, ReceiptOutcome::Stored),
        "{r:?}"
    );
    let deeper = at_limit.replace(&nest(MAX_BODY_DEPTH - 2), &nest(MAX_BODY_DEPTH - 1));
    let r = deliver_raw(
        &inbox,
        "deep-4",
        deeper.replace("deep-3", "deep-4").as_bytes(),
    )
    .await;
    assert_eq!(
        (r.status, r.reason.as_deref()),
        (400, Some("invalid_body")),
        "{r:?}"
    );
    let s = status(&inbox).await;
    assert_eq!(s.rejected.get("body_too_large"), Some(&3), "{s:?}");
    assert_eq!(s.rejected.get("invalid_body"), Some(&3), "{s:?}");
    assert_eq!(
        s.pending, 2,
        "the body of exactly the limit, the one at the depth limit: {s:?}"
    );
    let mut e = inbox.claim(5, LONG).await.expect("claim");
    e.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(e.len(), 2);
    assert_eq!(
        (e[0].id.as_str(), e[0].body.len()),
        ("big-1", MAX_BODY_BYTES)
    );
    assert_eq!(e[1].id, "deep-3");
}

/// One rule for both backends: the inbox's tables are not namespaced, so an inbox URL with a
/// `namespace` is a configuration error (never silently one shared inbox); SQLite takes no
/// query parameter at all.
async fn namespace_refused(backend: &Backend) {
    let db = backend.fresh().await;
    let open = |url: String| {
        Inbox::open(&url, WebhookVerifier::new([SECRET]).expect("verifier")).map(|_| ())
    };
    for ns in ["?namespace=shop-a", "?namespace=", "?namespace=shop-b&x=1"] {
        match open(format!("{}{ns}", db.url)) {
            Err(InboxError::Config(text)) => assert!(text.contains("namespace"), "{text}"),
            other => panic!("{ns}: {other:?}"),
        }
    }
    #[cfg(feature = "store-sqlite")]
    if db.path.is_some() {
        assert!(matches!(
            open(format!("{}?mode=ro", db.url)),
            Err(InboxError::Config(_))
        ));
    }
    // Without it, the same database opens.
    open(db.url.clone()).expect("the plain URL opens");
}

/// Stored → 200; the same id again → 200 duplicate, stored once; a bad signature → 400,
/// counted, not stored.
async fn stored_duplicate_and_rejected(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    let r = deliver(&inbox, "n-1", "P1", "pending", 1, None).await;
    assert_eq!(
        (r.status, r.outcome),
        (200, ReceiptOutcome::Stored),
        "{r:?}"
    );
    assert_eq!(r.id.as_deref(), Some("n-1"));
    let r = deliver(&inbox, "n-1", "P1", "pending", 1, None).await;
    assert_eq!(
        (r.status, r.outcome),
        (200, ReceiptOutcome::Duplicate),
        "{r:?}"
    );
    // Another object (another process) sees the same.
    let r = deliver(
        &super::conformance::inbox(&db),
        "n-1",
        "P1",
        "pending",
        1,
        None,
    )
    .await;
    assert_eq!(r.outcome, ReceiptOutcome::Duplicate);
    let s = status(&inbox).await;
    assert_eq!((s.pending, s.stale, s.completed), (1, 0, 0), "{s:?}");

    let forged = body("n-2", "P1", "paid", 2, Some("E-1"));
    let ts = unix_now();
    let signature = TestSigner::new("not-the-secret").signature(ts, forged.as_bytes());
    let r = inbox
        .receive(
            Some("n-2"),
            Some(&ts.to_string()),
            Some(&signature),
            forged.as_bytes(),
        )
        .await;
    assert_eq!(
        (r.status, r.outcome),
        (400, ReceiptOutcome::Rejected),
        "{r:?}"
    );
    assert_eq!(r.reason.as_deref(), Some("signature_mismatch"));
    let r = inbox.receive(None, None, None, forged.as_bytes()).await;
    assert_eq!(r.status, 400);
    let s = status(&inbox).await;
    assert_eq!(s.rejected.get("signature_mismatch"), Some(&1), "{s:?}");
    assert_eq!(s.rejected.get("missing_header"), Some(&1), "{s:?}");
    assert_eq!(s.pending + s.stale + s.completed + s.duplicate, 1, "{s:?}");
    assert!(s.oldest_pending_ms.is_some());
}

/// "A lower version must not overwrite a higher one"; 0 is a real version.
async fn versions(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    // v1 then v2: only v2 is handed out.
    assert_eq!(
        deliver(&inbox, "a-1", "A", "pending", 1, None)
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    assert_eq!(
        deliver(&inbox, "a-2", "A", "paid", 2, Some("EA"))
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    let events = inbox.claim(10, LONG).await.expect("claim");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0].id.as_str(), events[0].status_version),
        ("a-2", 2)
    );
    assert!(events[0].book);
    assert_eq!(events[0].status, MerchantPaymentStatus::Paid);
    assert_eq!(events[0].event_id.as_deref(), Some("EA"));
    assert_eq!(events[0].amount_minor.get(), 1250);
    assert_eq!(events[0].source, EventSource::Notification);
    assert!(events[0].body.contains("\"a-2\""));
    let s = status(&inbox).await;
    assert_eq!((s.stale, s.claimed, s.pending), (1, 1, 0), "{s:?}");
    inbox.complete(&events[0]).await.expect("complete");

    // v2 then v1: both stored (the acknowledgement waits for nothing else); the claim never
    // hands v1 out.
    assert_eq!(
        deliver(&inbox, "b-2", "B", "expired", 2, None)
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    let r = deliver(&inbox, "b-1", "B", "pending", 1, None).await;
    assert_eq!(
        (r.status, r.outcome),
        (200, ReceiptOutcome::Stored),
        "{r:?}"
    );

    // 0 then 1.
    assert_eq!(
        deliver(&inbox, "c-0", "C", "pending", 0, None)
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    assert_eq!(
        deliver(&inbox, "c-1", "C", "review", 1, None).await.outcome,
        ReceiptOutcome::Stored
    );

    // An equal version under another id.
    assert_eq!(
        deliver(&inbox, "d-1", "D", "pending", 1, None)
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    assert_eq!(
        deliver(&inbox, "d-1-again", "D", "pending", 1, None)
            .await
            .outcome,
        ReceiptOutcome::Stored
    );

    let mut handed: Vec<(String, u64)> = inbox
        .claim(10, LONG)
        .await
        .expect("claim")
        .into_iter()
        .map(|e| (e.id, e.status_version))
        .collect();
    handed.sort();
    assert_eq!(
        handed,
        vec![("b-2".into(), 2), ("c-1".into(), 1), ("d-1".into(), 1)]
    );
    let marks: BTreeMap<String, u64> = inbox
        .watermarks()
        .await
        .expect("watermarks")
        .into_iter()
        .map(|w| (w.order_no, w.status_version))
        .collect();
    assert_eq!(
        marks,
        BTreeMap::from([
            ("A".into(), 2),
            ("B".into(), 2),
            ("C".into(), 1),
            ("D".into(), 1)
        ])
    );
    // The equal version under another id is never handed out either (even while D's event is
    // out): stale are a-1, b-1 (below b-2), c-0 (below c-1) and d-1-again.
    assert!(inbox.claim(10, LONG).await.expect("claim").is_empty());
    let s = status(&inbox).await;
    assert_eq!((s.stale, s.pending), (4, 0), "{s:?}");
}

/// "Book payments idempotently by `data.event_id`": a paid event is booked once; a
/// reconciliation at the same version is stale; a replay is handed again without booking.
async fn booked_once(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    deliver(&inbox, "p-1", "P", "pending", 1, None).await;
    deliver(&inbox, "p-2", "P", "paid", 2, Some("EP")).await;
    let events = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(events.len(), 1);
    assert!(events[0].book && !events[0].replayed && events[0].attempts == 0);
    inbox.complete(&events[0]).await.expect("complete");
    let s = status(&inbox).await;
    assert_eq!((s.booked, s.completed, s.stale), (1, 1, 1), "{s:?}");
    // Completing twice: the claim is finished.
    assert!(matches!(
        inbox.complete(&events[0]).await,
        Err(InboxError::LeaseLost(_))
    ));

    let payment: MerchantPayment =
        serde_json::from_value(data("P", "paid", 2, Some("EP"))).expect("a payment");
    assert_eq!(
        inbox.enter_reconciled(&payment).await.expect("reconciled"),
        ReceiptOutcome::Stored
    );
    // The payment already moved to v2 with the app: the reconciliation's v2 is stale.
    assert!(inbox.claim(5, LONG).await.expect("claim").is_empty());
    assert_eq!(status(&inbox).await.stale, 2);
    let marks = inbox.watermarks().await.expect("watermarks");
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0].booked_event_id.as_deref(), Some("EP"));
    assert_eq!(marks[0].local_record().booked_status_version, Some(2));

    assert_eq!(
        inbox
            .replay(&Replay::Event("p-2".into()))
            .await
            .expect("replay"),
        1
    );
    let again = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].id, "p-2");
    assert!(again[0].replayed && !again[0].book, "{:?}", again[0]);
    inbox.complete(&again[0]).await.expect("complete");
    assert_eq!(status(&inbox).await.booked, 1);
    assert!(matches!(
        inbox.replay(&Replay::Event("nope".into())).await,
        Err(InboxError::NotFound(_))
    ));

    // A reconciliation of an unknown paid payment enters the flow and books it once.
    let found: MerchantPayment =
        serde_json::from_value(data("Q", "paid", 3, Some("EQ"))).expect("a payment");
    assert_eq!(
        inbox.enter_reconciled(&found).await.expect("reconciled"),
        ReceiptOutcome::Stored
    );
    let events = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].source, EventSource::Reconciliation);
    assert_eq!(events[0].id, "reconciled:Q:3");
    assert!(events[0].book);
    inbox.complete(&events[0]).await.expect("complete");
    assert_eq!(status(&inbox).await.booked, 2);
}

/// A refund (same `event_id`, higher version) is a state change handed out without booking; a
/// paid event booked under another id is completed as a duplicate without being handed out.
async fn refund_and_paid_duplicate(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    deliver(&inbox, "r-2", "R", "paid", 2, Some("ER")).await;
    let e = inbox.claim(1, LONG).await.expect("claim");
    assert!(e[0].book);
    inbox.complete(&e[0]).await.expect("complete");
    deliver(&inbox, "r-3", "R", "refunded", 3, Some("ER")).await;
    let e = inbox.claim(1, LONG).await.expect("claim");
    assert_eq!(e.len(), 1);
    assert_eq!(
        (e[0].id.as_str(), e[0].status.clone(), e[0].book),
        ("r-3", MerchantPaymentStatus::Refunded, false)
    );
    inbox.complete(&e[0]).await.expect("complete");

    deliver(&inbox, "s-2", "S", "paid", 2, Some("ES")).await;
    let e = inbox.claim(1, LONG).await.expect("claim");
    inbox.complete(&e[0]).await.expect("complete");
    assert_eq!(
        deliver(&inbox, "s-3", "S", "paid", 3, Some("ES"))
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    assert!(inbox.claim(5, LONG).await.expect("claim").is_empty());
    let s = status(&inbox).await;
    assert_eq!((s.duplicate, s.booked, s.pending), (1, 2, 0), "{s:?}");
    // The app has that state (paid) already: the duplicate's version is the watermark.
    let mark = inbox
        .watermarks()
        .await
        .expect("watermarks")
        .into_iter()
        .find(|w| w.order_no == "S")
        .expect("S");
    assert_eq!(mark.status_version, 3);

    // Paid, then refunded, both stored before any worker: the paid event is superseded, and
    // the refund is the first event handed out with the payment event, so it carries `book`
    // (the payment is booked once, then reversed), never skipped.
    deliver(&inbox, "t-2", "T", "paid", 2, Some("ET")).await;
    deliver(&inbox, "t-3", "T", "refunded", 3, Some("ET")).await;
    let e = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (e[0].id.as_str(), e[0].status.clone(), e[0].book),
        ("t-3", MerchantPaymentStatus::Refunded, true)
    );
    inbox.complete(&e[0]).await.expect("complete");
    assert_eq!(status(&inbox).await.booked, 3);
}

/// Leases: an abandoned claim is taken again after its lease, and the first claimant's
/// completion is refused; one payment's events are never out at once.
async fn leases(backend: &Backend) {
    let db = backend.fresh().await;
    let (first, second) = (inbox(&db), inbox(&db));
    deliver(&first, "l-1", "L", "pending", 1, None).await;
    let lost = first
        .claim(1, Duration::from_millis(200))
        .await
        .expect("claim");
    assert_eq!(lost.len(), 1);
    assert!(second.claim(1, LONG).await.expect("claim").is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = status(&second).await;
    assert_eq!(
        (s.pending, s.claimed),
        (1, 0),
        "a lapsed claim waits: {s:?}"
    );
    let taken = second.claim(1, LONG).await.expect("claim");
    assert_eq!(taken.len(), 1);
    assert_eq!((taken[0].id.as_str(), taken[0].attempts), ("l-1", 1));
    assert_ne!(taken[0].claim, lost[0].claim);
    assert!(matches!(
        first.complete(&lost[0]).await,
        Err(InboxError::LeaseLost(id)) if id == "l-1"
    ));
    assert!(matches!(
        first.release(&lost[0]).await,
        Err(InboxError::LeaseLost(_))
    ));
    second.complete(&taken[0]).await.expect("complete");

    // v2 waits while v1 is out, until v1 is completed.
    deliver(&first, "m-1", "M", "pending", 1, None).await;
    let m1 = first.claim(5, LONG).await.expect("claim");
    assert_eq!(m1.len(), 1);
    deliver(&first, "m-2", "M", "review", 2, None).await;
    assert!(second.claim(5, LONG).await.expect("claim").is_empty());
    first.complete(&m1[0]).await.expect("complete");
    let m2 = second.claim(5, LONG).await.expect("claim");
    assert_eq!(m2.len(), 1);
    assert_eq!(m2[0].id, "m-2");
    // Released, it waits again at once.
    second.release(&m2[0]).await.expect("release");
    let m2 = first.claim(5, LONG).await.expect("claim");
    assert_eq!((m2[0].id.as_str(), m2[0].attempts), ("m-2", 1));
    first.complete(&m2[0]).await.expect("complete");

    // ... or until v1's lease runs out (v1 is then stale: v2 supersedes it).
    deliver(&first, "n-1", "N", "pending", 1, None).await;
    let n1 = first
        .claim(5, Duration::from_millis(200))
        .await
        .expect("claim");
    assert_eq!(n1.len(), 1);
    deliver(&first, "n-2", "N", "review", 2, None).await;
    assert!(second.claim(5, LONG).await.expect("claim").is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let n2 = second.claim(5, LONG).await.expect("claim");
    assert_eq!(n2.len(), 1);
    assert_eq!(n2[0].id, "n-2");
    assert!(matches!(
        first.complete(&n1[0]).await,
        Err(InboxError::LeaseLost(_))
    ));
    second.complete(&n2[0]).await.expect("complete");
    assert!(matches!(
        first
            .complete(&InboxEvent {
                id: "missing".into(),
                ..n2[0].clone()
            })
            .await,
        Err(InboxError::NotFound(_))
    ));
}

/// `completion_sql` in the app's own transaction on the same database: the completion, the
/// booking and the app's row commit together; a stale claim token changes nothing.
async fn completion_in_own_transaction(backend: &Backend) {
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    let sql = inbox.completion_sql();
    deliver(&inbox, "t-2", "T", "paid", 2, Some("ET")).await;
    let e = inbox.claim(1, LONG).await.expect("claim");
    assert!(e[0].book);
    let changed = backend
        .complete_in_own_transaction(&db, sql, &e[0].id, &e[0].claim, "ET")
        .await;
    assert_eq!(changed, 1);
    let s = status(&inbox).await;
    assert_eq!((s.completed, s.booked, s.claimed), (1, 1, 0), "{s:?}");
    assert_eq!(backend.app_rows(&db).await, 1);
    let marks = inbox.watermarks().await.expect("watermarks");
    assert_eq!(marks[0].booked_event_id.as_deref(), Some("ET"));

    // A stale claim token (the lease was lost): nothing changes, the app rolls back.
    deliver(&inbox, "u-2", "U", "paid", 2, Some("EU")).await;
    let e = inbox.claim(1, LONG).await.expect("claim");
    let changed = backend
        .complete_in_own_transaction(&db, sql, &e[0].id, "stale-claim-token", "EU")
        .await;
    assert_eq!(changed, 0);
    let s = status(&inbox).await;
    assert_eq!((s.completed, s.booked, s.claimed), (1, 1, 1), "{s:?}");
    assert_eq!(backend.app_rows(&db).await, 1);
    // The real claimant still completes it.
    inbox.complete(&e[0]).await.expect("complete");
    assert_eq!(status(&inbox).await.booked, 2);
}

/// Retention deletes finished rows but keeps watermarks and bookings (a very late duplicate is
/// then stale); a replay by time range hands completed events out again.
async fn purge_and_replay(backend: &Backend) {
    retention_by_default(backend).await;
    let db = backend.fresh().await;
    let inbox = inbox(&db);
    deliver(&inbox, "v-1", "V", "pending", 1, None).await;
    deliver(&inbox, "w-2", "W", "paid", 2, Some("EW")).await;
    for e in inbox.claim(5, LONG).await.expect("claim") {
        inbox.complete(&e).await.expect("complete");
    }
    deliver(&inbox, "x-1", "X", "pending", 1, None).await;

    let now = unix_ms();
    let none = inbox
        .replay(&Replay::Received {
            from_ms: 0,
            to_ms: now - 3_600_000,
        })
        .await
        .expect("replay");
    assert_eq!(none, 0);
    let n = inbox
        .replay(&Replay::Received {
            from_ms: now - 60_000,
            to_ms: now + 60_000,
        })
        .await
        .expect("replay");
    assert_eq!(n, 2);
    let mut again = inbox.claim(5, LONG).await.expect("claim");
    again.sort_by(|a, b| a.id.cmp(&b.id));
    let ids: Vec<(&str, bool, bool)> = again
        .iter()
        .map(|e| (e.id.as_str(), e.replayed, e.book))
        .collect();
    assert_eq!(
        ids,
        vec![
            ("v-1", true, false),
            ("w-2", true, false),
            ("x-1", false, false)
        ]
    );
    for e in &again {
        if e.id != "x-1" {
            inbox.complete(e).await.expect("complete");
        }
    }
    inbox.release(&again[2]).await.expect("release");

    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(inbox.purge(DEFAULT_RETENTION).await.expect("purge"), 0);
    assert_eq!(inbox.purge(Duration::ZERO).await.expect("purge"), 2);
    let s = status(&inbox).await;
    assert_eq!(
        (s.completed, s.pending, s.booked, s.stale),
        (0, 1, 1, 0),
        "{s:?}"
    );
    let marks: BTreeMap<String, (u64, Option<String>)> = inbox
        .watermarks()
        .await
        .expect("watermarks")
        .into_iter()
        .map(|w| (w.order_no, (w.status_version, w.booked_event_id)))
        .collect();
    assert_eq!(marks.len(), 3);
    assert_eq!(marks["W"], (2, Some("EW".into())));
    // A very late redelivery of a notification whose row was purged is stored again, and never
    // handed out again (its version was handed out under its id before).
    assert_eq!(
        deliver(&inbox, "w-2", "W", "paid", 2, Some("EW"))
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    let left = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, "x-1");
}

/// "Retention of completed rows": a claiming inbox deletes finished rows past its retention
/// by itself (the first claim, then once an hour), keeping watermarks and bookings.
async fn retention_by_default(backend: &Backend) {
    let db = backend.fresh().await;
    let first = inbox(&db);
    deliver(&first, "k-2", "K", "paid", 2, Some("EK")).await;
    let e = first.claim(5, LONG).await.expect("claim");
    first.complete(&e[0]).await.expect("complete");
    assert_eq!(status(&first).await.completed, 1);
    // A worker started with a zero retention: its first claim purges the finished row (a few
    // milliseconds later, so the row is strictly older than the retention on the store's clock).
    tokio::time::sleep(Duration::from_millis(20)).await;
    let worker = inbox(&db).with_retention(Duration::ZERO);
    assert!(worker.claim(5, LONG).await.expect("claim").is_empty());
    let s = status(&worker).await;
    assert_eq!((s.completed, s.booked), (0, 1), "{s:?}");
    assert_eq!(worker.watermarks().await.expect("watermarks").len(), 1);
}

/// A small deterministic shuffle (xorshift).
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        items.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}

/// What a worker was handed.
#[derive(Debug, Clone)]
struct Handed {
    id: String,
    order_no: String,
    version: u64,
    book: bool,
    event_id: Option<String>,
}

/// Eight workers, each with its own inbox object, receive 200 shuffled events of 50 payments
/// (4 versions each) and claim and complete concurrently: every event handed at most once, each
/// payment's handed versions strictly increase and end at its highest, every paid event booked
/// exactly once.
async fn concurrent_workers(backend: &Backend) {
    const WORKERS: usize = 8;
    const PAYMENTS: usize = 50;
    let db = backend.fresh().await;
    let statuses = ["pending", "review", "expired", "paid"];
    let mut deliveries: Vec<(String, String, &'static str, u64, Option<String>)> = Vec::new();
    for p in 0..PAYMENTS {
        for (i, status) in statuses.iter().enumerate() {
            let order = format!("K{p:02}");
            let paid = *status == "paid";
            deliveries.push((
                format!("k-{p}-{}", i + 1),
                order.clone(),
                status,
                i as u64 + 1,
                paid.then(|| format!("EK{p}")),
            ));
        }
    }
    shuffle(&mut deliveries, 0x9e37_79b9_7f4a_7c15);
    let deliveries = Arc::new(deliveries);
    let log = Arc::new(std::sync::Mutex::new(Vec::<Handed>::new()));
    let received = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for w in 0..WORKERS {
        let inbox = inbox(&db);
        let (deliveries, log, received) = (
            Arc::clone(&deliveries),
            Arc::clone(&log),
            Arc::clone(&received),
        );
        tasks.push(tokio::spawn(async move {
            let mine: Vec<_> = deliveries.iter().skip(w).step_by(WORKERS).collect();
            let mut mine = mine.into_iter();
            loop {
                // Receive a few, then work a little.
                for (id, order, status, version, event_id) in mine.by_ref().take(3) {
                    let r = deliver(&inbox, id, order, status, *version, event_id.as_deref()).await;
                    assert_eq!(r.status, 200, "{r:?}");
                    received.fetch_add(1, Ordering::SeqCst);
                }
                let events = inbox.claim(3, LONG).await.expect("claim");
                for e in &events {
                    log.lock().expect("log").push(Handed {
                        id: e.id.clone(),
                        order_no: e.order_no.clone(),
                        version: e.status_version,
                        book: e.book,
                        event_id: e.event_id.clone(),
                    });
                }
                for e in &events {
                    inbox.complete(e).await.expect("complete");
                }
                if events.is_empty() && received.load(Ordering::SeqCst) == deliveries.len() {
                    let s = inbox.status().await.expect("status");
                    if s.pending == 0 && s.claimed == 0 {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("worker");
    }
    let log = log.lock().expect("log").clone();
    let mut ids = HashSet::new();
    for h in &log {
        assert!(ids.insert(h.id.clone()), "{} handed twice", h.id);
    }
    let mut per_payment: BTreeMap<&str, Vec<&Handed>> = BTreeMap::new();
    for h in &log {
        per_payment.entry(h.order_no.as_str()).or_default().push(h);
    }
    assert_eq!(per_payment.len(), PAYMENTS);
    for (order, handed) in &per_payment {
        let versions: Vec<u64> = handed.iter().map(|h| h.version).collect();
        assert!(
            versions.windows(2).all(|w| w[0] < w[1]),
            "{order}: handed out of order: {versions:?}"
        );
        assert_eq!(versions.last(), Some(&4), "{order}: {versions:?}");
        let booked: Vec<_> = handed.iter().filter(|h| h.book).collect();
        assert_eq!(booked.len(), 1, "{order}: {handed:?}");
        assert!(booked[0].event_id.is_some());
    }
    let s = status(&inbox(&db)).await;
    assert_eq!(s.booked, PAYMENTS as u64, "{s:?}");
    assert_eq!(s.completed as usize, log.len(), "{s:?}");
    assert_eq!(
        (s.completed + s.stale + s.duplicate) as usize,
        deliveries.len(),
        "{s:?}"
    );
}

#[cfg(feature = "store-sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_inbox_conformance() {
    let backend = Backend::Sqlite(ScratchDir::new());
    conformance(&backend).await;
}

#[cfg(feature = "store-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_inbox_conformance() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let backend = Backend::Postgres(server);
    conformance(&backend).await;
}

/// "Store the notification reliably before returning": a store that cannot commit answers 503
/// (the service delivers again), never a 2xx; its errors never carry the URL's password.
#[cfg(feature = "store-postgres")]
#[tokio::test]
async fn postgres_unreachable_answers_503() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let db = Db {
        url: format!("postgres://shop:hunter2-secret@127.0.0.1:{port}/shop"),
        #[cfg(feature = "store-sqlite")]
        path: None,
    };
    let inbox = inbox(&db);
    assert_eq!(inbox.backend(), "postgres");
    assert!(!format!("{inbox:?}").contains("hunter2"));
    let r = deliver(&inbox, "z-1", "Z", "paid", 1, Some("EZ")).await;
    assert_eq!(
        (r.status, r.outcome),
        (503, ReceiptOutcome::StoreFailed),
        "{r:?}"
    );
    assert_eq!(r.reason.as_deref(), Some("store"));
    assert!(!r.body().contains("hunter2"));
    // Reconciliation reports a payment it could not enter as needing attention (the others go
    // on), never fails the run for it.
    let found: MerchantPayment =
        serde_json::from_value(data("Z", "paid", 3, Some("EZ"))).expect("a payment");
    let mut report = report_for(&found);
    inbox.settle(&mut report).await;
    match &report.finding {
        crate::ReconcileFinding::NeedsAttention { reason, .. } => {
            assert_eq!(reason, "inbox_store")
        }
        other => panic!("{other:?}"),
    }
    let err = inbox.status().await.expect_err("nothing listens");
    assert!(matches!(err, InboxError::Store(_)), "{err:?}");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert!(!err.to_string().contains("shop:"), "{err}");

    let bad = Inbox::open(
        "postgres://shop:hunter2-secret@127.0.0.1:99999999/shop",
        WebhookVerifier::new([SECRET]).expect("verifier"),
    );
    match bad {
        Err(InboxError::Config(text)) => assert!(!text.contains("hunter2"), "{text}"),
        other => panic!("a bad URL is a configuration error: {other:?}"),
    }
}

/// A store that comes back is used again by the same object (reconnect after an error).
#[cfg(feature = "store-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_reconnects_after_a_restart() {
    let Some(mut server) = PostgresServer::start() else {
        return;
    };
    let db = Db {
        url: server.url(),
        #[cfg(feature = "store-sqlite")]
        path: None,
    };
    let inbox = inbox(&db);
    assert_eq!(
        deliver(&inbox, "y-1", "Y", "pending", 1, None)
            .await
            .outcome,
        ReceiptOutcome::Stored
    );
    server.stop();
    let r = deliver(&inbox, "y-2", "Y", "review", 2, None).await;
    assert_eq!(r.status, 503, "{r:?}");
    server.restart();
    let r = deliver(&inbox, "y-2", "Y", "review", 2, None).await;
    assert_eq!(
        (r.status, r.outcome),
        (200, ReceiptOutcome::Stored),
        "{r:?}"
    );
    let s = status(&inbox).await;
    assert_eq!((s.pending, s.stale), (2, 0), "{s:?}");
    // The claim hands out y-2 only and keeps y-1 as stale.
    let handed = inbox.claim(5, LONG).await.expect("claim");
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].id, "y-2");
    assert_eq!(status(&inbox).await.stale, 1);
}
