//! Notification rules end to end: the sandbox signs and delivers to a local receiver, the SDK's
//! verifier accepts exactly the genuine deliveries and rejects every altered one with its own
//! error; version ordering and the merchant's expectation are checked.

mod common;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use common::hook::{Deliveries, receiver};
use common::{Harness, s};
use serde_json::json;
use storefront::webhook::{HEADER_EVENT_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP};
use storefront::{
    CreateMerchantPayment, MinorAmount, PaymentExpectation, VersionDecision, WebhookError,
    WebhookVerifier, status_version_decision,
};

async fn wait_for(deliveries: &Deliveries, n: usize) -> Vec<(HeaderMap, Bytes)> {
    for _ in 0..200 {
        {
            let d = deliveries.lock().unwrap();
            if d.len() >= n {
                return d.clone();
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("expected {n} deliveries");
}

const SECRET: &str = "per-payment-notify-secret-0123456789abcdef";

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// Creates a merchant payment notifying a fresh receiver and returns its first delivery (the
/// `pending` notification) as received: headers and raw body.
async fn first_delivery(h: &Harness, reference: &str, amount: &str) -> (HeaderMap, Bytes) {
    let (url, deliveries) = receiver().await;
    h.client
        .create_merchant_payment(
            &CreateMerchantPayment::new(
                reference,
                MinorAmount::parse_decimal(amount, 2).unwrap(),
                "USD",
            )
            .with_notification(&url, SECRET),
        )
        .await
        .unwrap();
    wait_for(&deliveries, 1).await.remove(0)
}

/// Events: the sandbox's `pending` and `paid` notifications verify with the payment's secret,
/// carry typed data, increase `status_version`, and match the merchant's expectation.
#[tokio::test]
async fn sandbox_notifications_verify_and_match_the_expectation() {
    let h = Harness::start().await;
    let (url, deliveries) = receiver().await;
    let amount = MinorAmount::parse_decimal("7.25", 2).unwrap();
    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new("hook-order-1", amount, "USD")
                .with_notification(&url, SECRET),
        )
        .await
        .unwrap();
    let order_no = created.payment.order_no.clone();
    wait_for(&deliveries, 1).await;
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/checkout/pay"),
        Some(json!({"payment_no": s::CHANNEL_CARD_USD})),
    )
    .await;
    let got = wait_for(&deliveries, 2).await;

    let verifier = WebhookVerifier::new(["an-older-rotated-secret-aaaaaaaaaaaa", SECRET]).unwrap();
    let expectation = PaymentExpectation {
        external_reference: "hook-order-1".into(),
        amount_minor: amount,
        currency: "USD".into(),
        test_mode: false,
    };
    let mut stored = None;
    let mut statuses = Vec::new();
    for (headers, body) in &got {
        let n = verifier.verify_headers(headers, body).unwrap();
        assert_eq!(n.data.order_no, order_no);
        expectation.check_notification(&n.data).unwrap();
        assert_eq!(
            status_version_decision(stored, n.data.status_version),
            VersionDecision::Apply
        );
        stored = Some(n.data.status_version);
        statuses.push(n.data.status.as_str().to_owned());
        if n.data.status.is_paid() {
            assert!(n.data.event_id.is_some());
            assert!(n.data.occurred_at.is_some());
            assert_ne!(n.data.event_id.as_deref(), Some(n.id.as_str()));
        }
    }
    assert_eq!(statuses, ["pending", "paid"]);
    // An older snapshot arriving late must not overwrite the newer state.
    let first = verifier.verify_headers(&got[0].0, &got[0].1).unwrap();
    assert_eq!(
        status_version_decision(stored, first.data.status_version),
        VersionDecision::Stale
    );
    // A merchant expecting another amount is told which field differs.
    let wrong = PaymentExpectation {
        amount_minor: MinorAmount::new(1).unwrap(),
        ..expectation
    };
    let last = verifier.verify_headers(&got[1].0, &got[1].1).unwrap();
    assert!(matches!(
        wrong.check_notification(&last.data),
        Err(WebhookError::ExpectationMismatch {
            field: "amount_minor",
            ..
        })
    ));
}

/// Events: "compare in constant time; reject timestamps that differ from current time by more
/// than 5 minutes; do not re-serialize"; id equals `X-Service-Event-ID`. Each altered delivery
/// fails with its own error.
#[tokio::test]
async fn altered_deliveries_are_rejected_each_with_its_own_error() {
    let h = Harness::start().await;
    let (headers, body) = first_delivery(&h, "hook-order-2", "1.00").await;
    let id = header(&headers, HEADER_EVENT_ID).unwrap();
    let ts = header(&headers, HEADER_TIMESTAMP).unwrap();
    let sig = header(&headers, HEADER_SIGNATURE).unwrap();
    let ts_num: i64 = ts.parse().unwrap();
    let at = |offset: i64| {
        WebhookVerifier::new([SECRET])
            .unwrap()
            .with_clock(Arc::new(move || ts_num + offset))
    };
    let v = at(0);
    assert!(v.verify(Some(id), Some(ts), Some(sig), &body).is_ok());

    let code = |r: Result<_, WebhookError>| r.unwrap_err().code();
    assert_eq!(
        code(
            WebhookVerifier::new(["wrong-secret-bbbbbbbbbbbbbbbbbbbbbbbbbb"])
                .unwrap()
                .with_clock(Arc::new(move || ts_num))
                .verify(Some(id), Some(ts), Some(sig), &body)
        ),
        "signature_mismatch"
    );
    let mut tampered = body.to_vec();
    let pos = tampered.iter().position(|b| *b == b'1').unwrap();
    tampered[pos] = b'9';
    assert_eq!(
        code(v.verify(Some(id), Some(ts), Some(sig), &tampered)),
        "signature_mismatch"
    );
    let reserialized =
        serde_json::to_vec_pretty(&serde_json::from_slice::<serde_json::Value>(&body).unwrap())
            .unwrap();
    assert_eq!(
        code(v.verify(Some(id), Some(ts), Some(sig), &reserialized)),
        "signature_mismatch"
    );
    assert_eq!(
        code(v.verify(Some("another-id"), Some(ts), Some(sig), &body)),
        "event_id_mismatch"
    );
    assert_eq!(
        code(v.verify(None, Some(ts), Some(sig), &body)),
        "missing_header"
    );
    assert_eq!(
        code(v.verify(Some(id), Some("soon"), Some(sig), &body)),
        "malformed_timestamp"
    );
    assert_eq!(
        code(v.verify(
            Some(id),
            Some(ts),
            Some(&sig.replace("sha256=", "sha1=")),
            &body
        )),
        "malformed_signature"
    );
    let shifted = (ts_num + 1).to_string();
    assert_eq!(
        code(v.verify(Some(id), Some(&shifted), Some(sig), &body)),
        "signature_mismatch"
    );
    // Replayed more than 5 minutes later, or stamped more than 5 minutes ahead of our clock.
    assert_eq!(
        code(at(301).verify(Some(id), Some(ts), Some(sig), &body)),
        "timestamp_too_old"
    );
    assert_eq!(
        code(at(-301).verify(Some(id), Some(ts), Some(sig), &body)),
        "timestamp_in_future"
    );
    assert!(at(300).verify(Some(id), Some(ts), Some(sig), &body).is_ok());
    assert!(
        at(-300)
            .verify(Some(id), Some(ts), Some(sig), &body)
            .is_ok()
    );
}

/// Events: the delivered body never contains the checkout token, return address or secret.
#[tokio::test]
async fn notification_body_carries_no_secrets() {
    let h = Harness::start().await;
    let (url, deliveries) = receiver().await;
    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new(
                "hook-order-3",
                MinorAmount::parse_decimal("1.00", 2).unwrap(),
                "USD",
            )
            .with_notification(&url, SECRET)
            .with_return_url("https://shop.example/return/42"),
        )
        .await
        .unwrap();
    let (_, body) = wait_for(&deliveries, 1).await.remove(0);
    let text = String::from_utf8(body.to_vec()).unwrap();
    let checkout = created.payment.checkout_url.unwrap();
    assert!(!text.contains(checkout.expose()));
    assert!(!text.contains(SECRET));
    assert!(!text.contains("shop.example/return"));
}

/// Refuses the first delivery with 500, acknowledges every later one.
async fn record_after_one_failure(
    State((d, seen)): State<(Deliveries, Arc<std::sync::atomic::AtomicUsize>)>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    d.lock().unwrap().push((headers, body));
    if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    }
}

/// Events: "Notifications may repeat"; "The notification id and body stay the same; the
/// timestamp is re-signed on each attempt"; receivers "deduplicate by notification `id`; book
/// payments idempotently by `data.event_id`". A redelivery after a failed attempt verifies,
/// carries the same `id` and byte-identical body under a new timestamp, so deduplicating by
/// the verified `id` recognises it; `data.event_id` (the payment event) is not that id.
#[tokio::test]
async fn redelivery_keeps_the_notification_id_so_receivers_deduplicate_by_id() {
    let h = Harness::start().await;
    let deliveries: Deliveries = Arc::default();
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(record_after_one_failure))
        .with_state((deliveries.clone(), Arc::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let amount = MinorAmount::parse_decimal("4.00", 2).unwrap();
    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new("hook-order-4", amount, "USD")
                .with_notification(&url, SECRET),
        )
        .await
        .unwrap();
    wait_for(&deliveries, 1).await;
    // The retry is scheduled from when the sandbox recorded the failed attempt: wait for that
    // record before moving its clock past the first retry interval (1 minute).
    let order_no = &created.payment.order_no;
    for _ in 0..200 {
        let records = h
            .client
            .list_notification_records(order_no, None)
            .await
            .unwrap();
        if records.first().is_some_and(|r| r.attempts >= 1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // Deliveries are stamped with the real time of the attempt: let a real second pass so the
    // retry's timestamp differs and re-signing shows.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    h.advance_clock(61).await;
    let got = wait_for(&deliveries, 2).await;
    let (first, second) = (&got[0], &got[1]);
    assert_eq!(first.1, second.1, "the body stays byte-identical");
    let (ts1, ts2) = (
        header(&first.0, HEADER_TIMESTAMP).unwrap(),
        header(&second.0, HEADER_TIMESTAMP).unwrap(),
    );
    assert_ne!(ts1, ts2, "the timestamp is re-signed on each attempt");
    assert_ne!(
        header(&first.0, HEADER_SIGNATURE),
        header(&second.0, HEADER_SIGNATURE)
    );

    let verified: Vec<_> = got[..2]
        .iter()
        .map(|(headers, body)| {
            // The ordinary (real) clock accepts both, although the sandbox clock moved.
            WebhookVerifier::new([SECRET])
                .unwrap()
                .verify_headers(headers, body)
                .unwrap()
        })
        .collect();
    assert_eq!(
        verified[0].id, verified[1].id,
        "deduplicate by notification id"
    );
    assert_eq!(verified[0], verified[1]);
    assert_eq!(verified[0].data.order_no, created.payment.order_no);

    // Paid: a new notification id, and a payment event id distinct from it to book by.
    h.control(
        "POST",
        &format!(
            "/merchant-payments/{}/checkout/pay",
            created.payment.order_no
        ),
        Some(json!({"payment_no": s::CHANNEL_CARD_USD})),
    )
    .await;
    let got = wait_for(&deliveries, 3).await;
    let paid = WebhookVerifier::new([SECRET])
        .unwrap()
        .verify_headers(&got[2].0, &got[2].1)
        .unwrap();
    assert!(paid.data.status.is_paid());
    assert_ne!(paid.id, verified[0].id);
    let event_id = paid
        .data
        .event_id
        .clone()
        .expect("paid carries data.event_id");
    assert_ne!(event_id, paid.id);
    let queried = h
        .client
        .get_merchant_payment(&created.payment.order_no)
        .await
        .unwrap();
    assert_eq!(queried.event_id.as_deref(), Some(event_id.as_str()));
}

/// Events: "after verifying, check reference, amount, currency and `test_mode`"; the paid
/// return page's backend "queries the payment and checks amount, currency and `event_id`".
/// Each field of the merchant's expectation is compared, on the verified notification and on
/// the queried payment alike, and a difference names its field.
#[tokio::test]
async fn expectation_checks_reference_amount_currency_and_test_mode() {
    let h = Harness::start().await;
    let (url, deliveries) = receiver().await;
    let amount = MinorAmount::parse_decimal("5.50", 2).unwrap();
    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new("hook-order-5", amount, "USD")
                .with_notification(&url, SECRET),
        )
        .await
        .unwrap();
    let got = wait_for(&deliveries, 1).await;
    let n = WebhookVerifier::new([SECRET])
        .unwrap()
        .verify_headers(&got[0].0, &got[0].1)
        .unwrap();
    let queried = h
        .client
        .get_merchant_payment(&created.payment.order_no)
        .await
        .unwrap();
    let expected = PaymentExpectation {
        external_reference: "hook-order-5".into(),
        amount_minor: amount,
        currency: "USD".into(),
        test_mode: false,
    };
    expected.check_notification(&n.data).unwrap();
    expected.check_payment(&queried).unwrap();
    let altered = [
        (
            PaymentExpectation {
                external_reference: "hook-order-6".into(),
                ..expected.clone()
            },
            "external_reference",
        ),
        (
            PaymentExpectation {
                amount_minor: MinorAmount::new(551).unwrap(),
                ..expected.clone()
            },
            "amount_minor",
        ),
        (
            PaymentExpectation {
                currency: "EUR".into(),
                ..expected.clone()
            },
            "currency",
        ),
        (
            PaymentExpectation {
                test_mode: true,
                ..expected.clone()
            },
            "test_mode",
        ),
    ];
    for (expectation, field) in altered {
        for result in [
            expectation.check_notification(&n.data),
            expectation.check_payment(&queried),
        ] {
            match result {
                Err(WebhookError::ExpectationMismatch { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}

/// The borrowed path (`verify_raw_at`) over a real sandbox delivery: it accepts the genuine
/// bytes (by either rotated secret, at both tolerance edges), hands back exactly those bytes and
/// the same notification as the typed path, and refuses every alteration with the same error
/// as the typed path. Bodies the sandbox would never send (another type, another
/// `api_version`, a malformed `data`) are re-signed with the payment's secret.
#[tokio::test]
async fn raw_path_verifies_sandbox_deliveries_and_refuses_each_alteration() {
    let h = Harness::start().await;
    let (headers, body) = first_delivery(&h, "hook-order-raw", "3.10").await;
    let id = header(&headers, HEADER_EVENT_ID).unwrap();
    let ts = header(&headers, HEADER_TIMESTAMP).unwrap();
    let sig = header(&headers, HEADER_SIGNATURE).unwrap();
    let now: i64 = ts.parse().unwrap();
    let v = WebhookVerifier::new(["an-older-rotated-secret-cccccccccccc", SECRET]).unwrap();

    let n = v
        .verify_raw_at(now, Some(id), Some(ts), Some(sig), &body)
        .unwrap();
    assert_eq!(n.id(), id);
    assert_eq!(
        n.event_type(),
        storefront::webhook::EVENT_TYPE_STATUS_CHANGED
    );
    assert_eq!(n.api_version(), storefront::webhook::API_VERSION);
    assert!(std::ptr::eq(n.body(), &body[..]));
    let typed = v
        .verify_at(now, Some(id), Some(ts), Some(sig), &body)
        .unwrap();
    assert_eq!(n.decode().unwrap(), typed);
    assert_eq!(n.data().unwrap(), typed.data);
    assert_eq!(n.created_at(), typed.created_at);
    for edge in [-300, 300] {
        assert!(
            v.verify_raw_at(now + edge, Some(id), Some(ts), Some(sig), &body)
                .is_ok()
        );
    }

    // Each alteration: the raw path and the typed path give the same error code.
    let refused = |now: i64, id: Option<&str>, ts: Option<&str>, sig: Option<&str>, b: &[u8]| {
        let raw = v.verify_raw_at(now, id, ts, sig, b).unwrap_err().code();
        assert_eq!(raw, v.verify_at(now, id, ts, sig, b).unwrap_err().code());
        raw
    };
    let mut tampered = body.to_vec();
    let pos = tampered.iter().position(|b| *b == b'3').unwrap();
    tampered[pos] = b'4';
    assert_eq!(
        refused(now, Some(id), Some(ts), Some(sig), &tampered),
        "signature_mismatch"
    );
    let mut bad_sig = sig.as_bytes().to_vec();
    let last = bad_sig.len() - 1;
    bad_sig[last] = if bad_sig[last] == b'0' { b'1' } else { b'0' };
    let bad_sig = String::from_utf8(bad_sig).unwrap();
    assert_eq!(
        refused(now, Some(id), Some(ts), Some(&bad_sig), &body),
        "signature_mismatch"
    );
    let upper = format!("sha256={}", sig["sha256=".len()..].to_uppercase());
    assert_eq!(
        refused(now, Some(id), Some(ts), Some(&upper), &body),
        "malformed_signature"
    );
    let short = &sig[..sig.len() - 2];
    assert_eq!(
        refused(now, Some(id), Some(ts), Some(short), &body),
        "malformed_signature"
    );
    let long = format!("{sig}ab");
    assert_eq!(
        refused(now, Some(id), Some(ts), Some(&long), &body),
        "malformed_signature"
    );
    assert_eq!(
        refused(now + 301, Some(id), Some(ts), Some(sig), &body),
        "timestamp_too_old"
    );
    assert_eq!(
        refused(now - 301, Some(id), Some(ts), Some(sig), &body),
        "timestamp_in_future"
    );
    assert_eq!(
        refused(now, Some("evt_other"), Some(ts), Some(sig), &body),
        "event_id_mismatch"
    );
    assert_eq!(
        refused(now, None, Some(ts), Some(sig), &body),
        "missing_header"
    );
    assert_eq!(
        refused(now, Some(id), None, Some(sig), &body),
        "missing_header"
    );
    assert_eq!(
        refused(now, Some(id), Some(ts), None, &body),
        "missing_header"
    );
    let only_other_secret = WebhookVerifier::new(["an-older-rotated-secret-cccccccccccc"]).unwrap();
    assert_eq!(
        only_other_secret
            .verify_raw_at(now, Some(id), Some(ts), Some(sig), &body)
            .unwrap_err(),
        WebhookError::SignatureMismatch
    );

    // Re-signed variants: envelope faults are refused by the raw path; a malformed `data` only
    // when it is decoded.
    let text = String::from_utf8(body.to_vec()).unwrap();
    let signer = storefront::TestSigner::new(SECRET);
    let resigned = |t: &str| (signer.signature(now, t.as_bytes()), t.as_bytes().to_vec());
    let (s1, b1) = resigned(&text.replace(
        "merchant_payment.status_changed",
        "merchant_payment.created",
    ));
    assert_eq!(
        refused(now, Some(id), Some(ts), Some(&s1), &b1),
        "unsupported_event_type"
    );
    let (s2, b2) = resigned(&text.replace("\"api_version\":1", "\"api_version\":2"));
    assert_eq!(
        refused(now, Some(id), Some(ts), Some(&s2), &b2),
        "unsupported_api_version"
    );
    let (s3, b3) = resigned(&text.replace("\"currency\":\"USD\"", "\"currency\":840"));
    assert_ne!(b3, body.to_vec(), "the body names its currency");
    let n3 = v
        .verify_raw_at(now, Some(id), Some(ts), Some(&s3), &b3)
        .unwrap();
    assert_eq!(n3.body(), &b3[..]);
    assert_eq!(n3.data().unwrap_err().code(), "invalid_body");
    assert_eq!(n3.decode().unwrap_err().code(), "invalid_body");
    assert_eq!(
        v.verify_at(now, Some(id), Some(ts), Some(&s3), &b3)
            .unwrap_err()
            .code(),
        "invalid_body"
    );
}
