//! The reconciler against the sandbox: a mix of paid, expired, review, refunded and chargeback
//! payments, a lost notification, duplicate references, an unknown status, a failing lookup and
//! deliberately wrong local records. Each report is checked against what the sandbox holds (its
//! in-process state), record by record; a run stopped anywhere resumes from its cursor.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use common::{Harness, s};
use futures_util::StreamExt;
use serde_json::{Value, json};
use storefront::reconcile::{MismatchField, ReconcileWindow};
use storefront::{
    CreateMerchantPayment, ErrorKind, LocalRecord, MerchantPaymentStatus, MinorAmount,
    ReconcileCursor, ReconcileFinding, ReconcileOptions, ReconcileReport, Reconciler,
};
use storefront_sandbox::inspect::DeliveryStatus as SbxDelivery;
use time::OffsetDateTime;

const SECRET: &str = "reconcile-notify-secret-0123456789abcdef";

fn usd(amount: &str) -> MinorAmount {
    MinorAmount::parse_decimal(amount, 2).unwrap()
}

/// What the sandbox holds for one payment (read from its state, not through the SDK).
#[derive(Debug, Clone)]
struct Truth {
    order_no: String,
    status: String,
    status_version: u64,
    event_id: Option<String>,
    occurred_at: Option<OffsetDateTime>,
    amount_minor: u64,
    currency: String,
    test_mode: bool,
}

/// The sandbox's payments of the seeded merchant with this reference, newest first.
fn truth(h: &Harness, reference: &str) -> Vec<Truth> {
    // `payments()` is newest first.
    h.sandbox
        .inspect()
        .payments()
        .into_iter()
        .filter(|p| p.merchant_no == s::MERCHANT_NO && p.external_reference == reference)
        .map(|p| Truth {
            order_no: p.order_no,
            status: p.status.as_str().to_owned(),
            status_version: p.status_version,
            event_id: p.event_id,
            occurred_at: p.occurred_at,
            amount_minor: p.amount_minor as u64,
            currency: p.currency,
            test_mode: p.session.as_ref().is_some_and(|s| s.test_mode),
        })
        .collect()
}

fn one(h: &Harness, reference: &str) -> Truth {
    let mut t = truth(h, reference);
    assert_eq!(t.len(), 1, "{reference}: {t:?}");
    t.remove(0)
}

/// Delivery statuses the sandbox holds for a payment.
fn deliveries(h: &Harness, order_no: &str) -> Vec<SbxDelivery> {
    h.sandbox
        .inspect()
        .deliveries(order_no)
        .iter()
        .map(|d| d.status)
        .collect()
}

async fn create(h: &Harness, req: CreateMerchantPayment) -> String {
    h.client
        .create_merchant_payment(&req)
        .await
        .unwrap()
        .payment
        .order_no
}

async fn pay(h: &Harness, order_no: &str, body: Value) {
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/checkout/pay"),
        Some(body),
    )
    .await;
}

async fn force(h: &Harness, order_no: &str, status: &str) {
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/force"),
        Some(json!({ "status": status })),
    )
    .await;
}

fn card() -> Value {
    json!({"payment_no": s::CHANNEL_CARD_USD})
}

fn record(reference: &str, amount: &str) -> LocalRecord {
    LocalRecord {
        external_reference: reference.into(),
        order_no: None,
        expected_amount: usd(amount),
        currency: "USD".into(),
        test_mode: None,
        booked_status_version: None,
        booked_event_id: None,
    }
}

fn booked(mut r: LocalRecord, t: &Truth) -> LocalRecord {
    r.booked_event_id = t.event_id.clone();
    r.booked_status_version = Some(t.status_version);
    r
}

fn with_order(mut r: LocalRecord, order_no: &str) -> LocalRecord {
    r.order_no = Some(order_no.into());
    r
}

type Received = Arc<Mutex<Vec<Value>>>;

/// A notification receiver that refuses (500) until `accept` is set, and stores what it gets.
async fn receiver() -> (String, Arc<AtomicBool>, Received) {
    async fn hook(
        State((accept, got)): State<(Arc<AtomicBool>, Received)>,
        body: Bytes,
    ) -> StatusCode {
        if !accept.load(Ordering::SeqCst) {
            return StatusCode::INTERNAL_SERVER_ERROR;
        }
        got.lock()
            .unwrap()
            .push(serde_json::from_slice(&body).unwrap());
        StatusCode::OK
    }
    let accept = Arc::new(AtomicBool::new(false));
    let got: Received = Arc::default();
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(hook))
        .with_state((accept.clone(), got.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, accept, got)
}

async fn run(
    h: &Harness,
    options: ReconcileOptions,
    records: &[LocalRecord],
) -> Vec<ReconcileReport> {
    Reconciler::new(&h.client, options)
        .reconcile(records.to_vec(), None)
        .unwrap()
        .collect()
        .await
}

fn requeue_on() -> ReconcileOptions {
    ReconcileOptions {
        requeue_failed: true,
        ..Default::default()
    }
}

/// Issue 12 item 2: against a mix of payments and local records, every report equals what the
/// sandbox holds; the lost notification is re-queued within the re-queue budget and reaches the
/// receiver; a second run is idempotent (nothing left to re-queue).
#[tokio::test]
async fn report_matches_the_sandbox_record_by_record() {
    let h = Harness::start().await;

    // A paid payment whose notifications all failed (receiver down): automatic attempts are
    // exhausted on the sandbox clock (1 min ... 8 h intervals), the records end `failed`.
    let (url, accept, received) = receiver().await;
    let lost = create(
        &h,
        CreateMerchantPayment::new("r-lost", usd("5.00"), "USD").with_notification(&url, SECRET),
    )
    .await;
    pay(&h, &lost, card()).await;
    for _ in 0..60 {
        let d = deliveries(&h, &lost);
        if d.len() == 2 && d.iter().all(|s| *s == SbxDelivery::Failed) {
            break;
        }
        h.advance_clock(3 * 3600).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        deliveries(&h, &lost),
        [SbxDelivery::Failed, SbxDelivery::Failed],
        "pending and paid notifications failed"
    );
    accept.store(true, Ordering::SeqCst);

    // The rest of the mix (created after the clock jumps, so nothing else expired yet).
    for r in [
        "r-agree",
        "r-agree-ref",
        "r-refunded",
        "r-chargeback",
        "r-amount",
    ] {
        let o = create(&h, CreateMerchantPayment::new(r, usd("3.00"), "USD")).await;
        pay(&h, &o, card()).await;
    }
    let refunded = one(&h, "r-refunded");
    let chargeback = one(&h, "r-chargeback");
    let (agree, agree_ref) = (one(&h, "r-agree"), one(&h, "r-agree-ref"));
    force(&h, &refunded.order_no, "refunded").await;
    force(&h, &chargeback.order_no, "chargeback").await;
    let currency = create(
        &h,
        CreateMerchantPayment::new("r-currency", usd("2.00"), "USD"),
    )
    .await;
    pay(&h, &currency, card()).await;
    let test_channel = create(
        &h,
        CreateMerchantPayment::new("r-testmode", usd("2.00"), "USD")
            .with_payment_no(s::CHANNEL_CARD_TEST),
    )
    .await;
    pay(
        &h,
        &test_channel,
        json!({"payment_no": s::CHANNEL_CARD_TEST, "user": s::USER_ALICE}),
    )
    .await;
    for r in ["r-expired", "r-expired-booked"] {
        create(
            &h,
            CreateMerchantPayment::new(r, usd("1.00"), "USD").with_expires_in(60),
        )
        .await;
    }
    let review = create(
        &h,
        CreateMerchantPayment::new("r-review", usd("1.50"), "USD"),
    )
    .await;
    force(&h, &review, "review").await;
    create(
        &h,
        CreateMerchantPayment::new("r-pending", usd("1.00"), "USD"),
    )
    .await;
    for _ in 0..2 {
        create(&h, CreateMerchantPayment::new("r-dup", usd("1.00"), "USD")).await;
    }
    let unknown = create(
        &h,
        CreateMerchantPayment::new("r-unknown", usd("1.00"), "USD"),
    )
    .await;
    let failing = create(
        &h,
        CreateMerchantPayment::new("r-failing", usd("1.00"), "USD"),
    )
    .await;
    h.advance_clock(120).await;
    h.control("POST", "/sweep", None).await;

    // An unknown future status (the sandbox has none: a fault answers the payment's query with
    // one), and a lookup that keeps failing.
    let mut unknown_body =
        serde_json::to_value(h.client.get_merchant_payment(&unknown).await.unwrap()).unwrap();
    unknown_body["status"] = json!("settled_v2");
    unknown_body["status_version"] = json!(7);
    let get_path = |o: &str| h.api_path(&format!("/openapi/v1/merchant-payments/{o}"));
    h.fault(
        json!({"method": "GET", "path": get_path(&unknown), "status": 200,
        "body": unknown_body, "times": 1000}),
    )
    .await;
    h.fault(json!({"method": "GET", "path": get_path(&failing), "status": 500, "times": 1000}))
        .await;

    // The shop's records: right ones, wrong ones and one the service never saw.
    let expired_booked = one(&h, "r-expired-booked");
    let mut amount_wrong = record("r-amount", "3.10");
    amount_wrong.booked_event_id = None;
    let mut currency_wrong = record("r-currency", "2.00");
    currency_wrong.currency = "EUR".into();
    let mut testmode_wrong = with_order(record("r-testmode", "2.00"), &test_channel);
    testmode_wrong.test_mode = Some(false);
    let mut fake_booking = record("r-expired-booked", "1.00");
    fake_booking.booked_event_id = Some("pev_never_paid".into());
    let records = vec![
        with_order(booked(record("r-agree", "3.00"), &agree), &agree.order_no),
        booked(record("r-agree-ref", "3.00"), &agree_ref),
        record("r-lost", "5.00"),
        record("r-expired", "1.00"),
        fake_booking,
        record("r-review", "1.50"),
        with_order(
            booked(record("r-refunded", "3.00"), &refunded),
            &refunded.order_no,
        ),
        booked(record("r-chargeback", "3.00"), &chargeback),
        amount_wrong,
        currency_wrong,
        testmode_wrong,
        record("r-missing", "9.99"),
        with_order(record("r-missing-order", "9.99"), "999999999999999999999"),
        record("r-pending", "1.00"),
        record("r-dup", "1.00"),
        with_order(record("r-unknown", "1.00"), &unknown),
        with_order(record("r-failing", "1.00"), &failing),
    ];
    let failed_before = deliveries(&h, &lost).len() as u32;

    let reports = run(&h, requeue_on(), &records).await;
    assert_eq!(reports.len(), records.len());
    for (i, (report, rec)) in reports.iter().zip(&records).enumerate() {
        assert_eq!(report.record, rec.external_reference);
        assert_eq!(report.index, i as u64);
        assert_eq!(
            report.cursor,
            ReconcileCursor {
                next_index: i as u64 + 1,
                last_reference: Some(rec.external_reference.clone())
            }
        );
        // Truth: the sandbox's payments for this record.
        let all = truth(&h, &rec.external_reference);
        let t = match &rec.order_no {
            Some(o) => all.iter().find(|t| t.order_no == *o).cloned(),
            None if all.len() == 1 => Some(all[0].clone()),
            None => None,
        };
        check(report, rec, t.as_ref(), &all);
        if report.record != "r-lost" {
            assert_eq!(report.requeued, 0, "{report:?}");
        }
        assert!(report.requeue_error.is_none(), "{report:?}");
    }
    let name = |r: &str| {
        reports
            .iter()
            .find(|x| x.record == r)
            .unwrap()
            .finding
            .name()
    };
    let expected = [
        ("r-agree", "in_agreement"),
        ("r-agree-ref", "in_agreement"),
        ("r-lost", "paid_not_booked"),
        ("r-expired", "in_agreement"),
        ("r-expired-booked", "booked_not_paid"),
        ("r-review", "under_review"),
        ("r-refunded", "booked_not_paid"),
        ("r-chargeback", "booked_not_paid"),
        ("r-amount", "mismatch"),
        ("r-currency", "mismatch"),
        ("r-testmode", "mismatch"),
        ("r-missing", "missing_at_service"),
        ("r-missing-order", "missing_at_service"),
        ("r-pending", "in_agreement"),
        ("r-dup", "ambiguous"),
        ("r-unknown", "unknown_status"),
        ("r-failing", "lookup_failed"),
    ];
    for (r, finding) in expected {
        assert_eq!(name(r), finding, "{r}");
    }
    assert_eq!(one(&h, "r-expired").status, "expired");
    assert_eq!(expired_booked.status, "expired");

    // Re-queue: every failed delivery of the lost payment was re-queued, and the receiver now
    // gets the paid notification carrying the event to book.
    let lost_report = reports.iter().find(|r| r.record == "r-lost").unwrap();
    assert_eq!(lost_report.requeued, failed_before);
    let lost_truth = one(&h, "r-lost");
    let mut got = Vec::new();
    for _ in 0..200 {
        got = received.lock().unwrap().clone();
        if got.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let paid = got
        .iter()
        .find(|n| n["data"]["status"] == "paid")
        .unwrap_or_else(|| panic!("paid notification re-delivered: {got:?}"));
    assert_eq!(paid["data"]["order_no"], json!(lost_truth.order_no));
    assert_eq!(paid["data"]["event_id"], json!(lost_truth.event_id));
    for _ in 0..200 {
        if deliveries(&h, &lost)
            .iter()
            .all(|s| *s == SbxDelivery::Delivered)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        deliveries(&h, &lost),
        [SbxDelivery::Delivered, SbxDelivery::Delivered]
    );

    // Safe to run again: the same findings, nothing left to re-queue, nothing created.
    let creates_before = h
        .requests_to("POST", &h.api_path("/openapi/v1/merchant-payments"))
        .await
        .len();
    let again = run(&h, requeue_on(), &records).await;
    let findings = |r: &[ReconcileReport]| r.iter().map(|x| x.finding.clone()).collect::<Vec<_>>();
    assert_eq!(findings(&again), findings(&reports));
    assert!(again.iter().all(|r| r.requeued == 0));
    assert_eq!(
        h.requests_to("POST", &h.api_path("/openapi/v1/merchant-payments"))
            .await
            .len(),
        creates_before
    );
}

/// Checks one report against the sandbox's truth for its record.
fn check(report: &ReconcileReport, rec: &LocalRecord, t: Option<&Truth>, all: &[Truth]) {
    let ctx = format!("{}: {report:?}", rec.external_reference);
    match &report.finding {
        ReconcileFinding::MissingAtService => {
            assert!(t.is_none() && all.is_empty(), "{ctx}");
            assert_eq!(report.order_no, None, "{ctx}");
            return;
        }
        ReconcileFinding::Ambiguous { order_nos } => {
            assert!(rec.order_no.is_none(), "{ctx}");
            let want: Vec<_> = all.iter().map(|t| t.order_no.clone()).collect();
            assert!(want.len() > 1, "{ctx}");
            assert_eq!(order_nos, &want, "{ctx}");
            return;
        }
        ReconcileFinding::LookupFailed { error } => {
            // The fault answers 500 on every attempt.
            assert_eq!(error.kind, ErrorKind::Api, "{ctx}");
            assert_eq!(error.http_status, Some(500), "{ctx}");
            assert_eq!(error.code.as_deref(), Some("server_error"), "{ctx}");
            return;
        }
        ReconcileFinding::UnknownStatus { status, payment } => {
            // The fault's answer is the truth here: version 7, status `settled_v2`.
            let t = t.expect("payment");
            assert_eq!(status, "settled_v2", "{ctx}");
            assert_eq!(payment.order_no, t.order_no, "{ctx}");
            assert!(!payment.status.is_paid(), "{ctx}");
            assert_eq!(report.service_status_version, Some(7), "{ctx}");
            return;
        }
        _ => {}
    }
    let t = t.unwrap_or_else(|| panic!("one payment: {ctx}"));
    assert_eq!(
        report.order_no.as_deref(),
        Some(t.order_no.as_str()),
        "{ctx}"
    );
    assert_eq!(
        report.service_status_version,
        Some(t.status_version),
        "{ctx}"
    );
    let amount_ok = rec.expected_amount == MinorAmount::new(t.amount_minor).unwrap();
    let currency_ok = rec.currency == t.currency;
    let test_mode_ok = rec.test_mode.is_none_or(|m| m == t.test_mode);
    match &report.finding {
        ReconcileFinding::Mismatch {
            field,
            expected,
            actual,
            ..
        } => match field {
            MismatchField::Amount => {
                assert!(!amount_ok, "{ctx}");
                assert_eq!(expected, &rec.expected_amount.get().to_string(), "{ctx}");
                assert_eq!(actual, &t.amount_minor.to_string(), "{ctx}");
            }
            MismatchField::Currency => {
                assert!(amount_ok && !currency_ok, "{ctx}");
                assert_eq!(
                    (expected.as_str(), actual.as_str()),
                    (rec.currency.as_str(), t.currency.as_str())
                );
            }
            MismatchField::TestMode => {
                assert!(amount_ok && currency_ok && !test_mode_ok, "{ctx}");
                assert_eq!(actual, &t.test_mode.to_string(), "{ctx}");
            }
            other => panic!("unexpected mismatch {other:?}: {ctx}"),
        },
        finding => {
            assert!(amount_ok && currency_ok && test_mode_ok, "{ctx}");
            let booked = rec.booked_event_id.is_some();
            match (t.status.as_str(), booked, finding) {
                ("paid", true, ReconcileFinding::InAgreement) => {
                    assert_eq!(rec.booked_event_id, t.event_id, "{ctx}")
                }
                (
                    "paid",
                    false,
                    ReconcileFinding::PaidNotBooked {
                        event_id,
                        status_version,
                        occurred_at,
                        payment,
                    },
                ) => {
                    assert_eq!(Some(event_id), t.event_id.as_ref(), "{ctx}");
                    assert_eq!(*status_version, Some(t.status_version), "{ctx}");
                    // The wire carries whole seconds.
                    let whole = t.occurred_at.map(|d| d.replace_nanosecond(0).unwrap());
                    assert_eq!(*occurred_at, whole, "{ctx}");
                    assert!(payment.status.is_paid(), "{ctx}");
                }
                (
                    "pending" | "expired" | "review" | "refunded" | "chargeback",
                    true,
                    ReconcileFinding::BookedNotPaid { status, payment },
                ) => {
                    assert_eq!(status.as_str(), t.status, "{ctx}");
                    assert_eq!(payment.event_id, t.event_id, "{ctx}");
                }
                ("review", false, ReconcileFinding::UnderReview { payment }) => {
                    assert_eq!(payment.status, MerchantPaymentStatus::Review, "{ctx}")
                }
                (
                    "pending" | "expired" | "refunded" | "chargeback",
                    false,
                    ReconcileFinding::InAgreement,
                ) => {}
                (status, booked, f) => {
                    panic!("status {status}, booked {booked}: unexpected {f:?}: {ctx}")
                }
            }
        }
    }
}

/// Resumable: a run stopped after N reports and resumed from the last report's cursor (kept as
/// JSON in between) gives exactly the reports of one full run; a cursor that does not fit the
/// records is refused.
#[tokio::test]
async fn a_run_resumes_from_its_cursor() {
    let h = Harness::start().await;
    let paid = create(&h, CreateMerchantPayment::new("c-paid", usd("2.00"), "USD")).await;
    pay(&h, &paid, card()).await;
    create(
        &h,
        CreateMerchantPayment::new("c-pending", usd("1.00"), "USD"),
    )
    .await;
    let review = create(
        &h,
        CreateMerchantPayment::new("c-review", usd("1.00"), "USD"),
    )
    .await;
    force(&h, &review, "review").await;
    for _ in 0..2 {
        create(&h, CreateMerchantPayment::new("c-dup", usd("1.00"), "USD")).await;
    }
    let records: Vec<LocalRecord> = [
        record("c-paid", "2.00"),
        record("c-pending", "1.00"),
        record("c-missing", "1.00"),
        record("c-review", "1.00"),
        record("c-dup", "1.00"),
        with_order(record("c-paid", "2.00"), &paid),
    ]
    .into_iter()
    .collect();
    let full = run(&h, ReconcileOptions::default(), &records).await;
    assert_eq!(full.len(), records.len());

    let reconciler = Reconciler::new(&h.client, ReconcileOptions::default());
    for stop in 0..=records.len() {
        let first: Vec<ReconcileReport> = reconciler
            .reconcile(records.clone(), None)
            .unwrap()
            .take(stop)
            .collect()
            .await;
        let cursor = first.last().map(|r| {
            let saved = serde_json::to_string(&r.cursor).unwrap();
            serde_json::from_str::<ReconcileCursor>(&saved).unwrap()
        });
        let rest: Vec<ReconcileReport> = reconciler
            .reconcile(records.clone(), cursor)
            .unwrap()
            .collect()
            .await;
        let union: Vec<_> = first.into_iter().chain(rest).collect();
        assert_eq!(union, full, "stopped after {stop}");
    }

    // A cursor from another list, or past its end, is refused before any request.
    let wrong = ReconcileCursor {
        next_index: 2,
        last_reference: Some("c-review".into()),
    };
    assert!(reconciler.reconcile(records.clone(), Some(wrong)).is_err());
    let past = ReconcileCursor {
        next_index: 99,
        last_reference: None,
    };
    assert!(reconciler.reconcile(records.clone(), Some(past)).is_err());

    // A time window on `expires_at` leaves the reference's payments outside it out.
    let later = OffsetDateTime::now_utc() + time::Duration::days(3650);
    let windowed = Reconciler::new(
        &h.client,
        ReconcileOptions {
            window: Some(ReconcileWindow {
                from: Some(later),
                to: None,
            }),
            ..Default::default()
        },
    );
    let out: Vec<_> = windowed
        .reconcile(vec![record("c-dup", "1.00")], None)
        .unwrap()
        .collect()
        .await;
    assert_eq!(out[0].finding, ReconcileFinding::MissingAtService);
}
