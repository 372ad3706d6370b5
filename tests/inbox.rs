//! Reconciliation joins the webhook inbox (issue 16), over real HTTP against the sandbox:
//! "notifications complement, not replace, interval-bounded queries and periodic
//! reconciliation". A payment paid at the service whose notifications never arrived enters the
//! inbox's flow through [`Inbox::reconcile`] (marked as found by reconciliation) and the one
//! handler books it once; a payment the inbox already booked is in agreement; a refund the
//! inbox never heard of enters as a newer state, without a second booking.

#![cfg(feature = "store-sqlite")]

mod common;

#[allow(dead_code)]
#[path = "../src/store/test_servers.rs"]
mod test_servers;

use common::{Harness, s};
use serde_json::json;
use storefront::inbox::{EventSource, Inbox};
use storefront::{
    CreateMerchantPayment, LocalRecord, MinorAmount, ReconcileFinding, ReconcileOptions,
    Reconciler, WebhookVerifier,
};

async fn paid_without_notifications(h: &Harness, reference: &str) -> String {
    let created = h
        .client
        .create_merchant_payment(
            &CreateMerchantPayment::new(reference, MinorAmount::new(1250).unwrap(), "USD")
                .with_notify_enabled(false),
        )
        .await
        .unwrap();
    let order_no = created.payment.order_no.clone();
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/checkout/pay"),
        Some(json!({"payment_no": s::CHANNEL_CARD_USD})),
    )
    .await;
    order_no
}

fn record(reference: &str) -> LocalRecord {
    LocalRecord {
        external_reference: reference.into(),
        order_no: None,
        expected_amount: MinorAmount::new(1250).unwrap(),
        currency: "USD".into(),
        test_mode: None,
        booked_status_version: None,
        booked_event_id: None,
    }
}

#[tokio::test]
async fn a_payment_never_notified_is_found_by_reconciliation_and_booked_once() {
    let h = Harness::start().await;
    let dir = test_servers::ScratchDir::new();
    let inbox = Inbox::open(
        &format!("sqlite://{}", dir.path().join("inbox.db").display()),
        WebhookVerifier::new(["whsec_0123456789abcdef0123456789abcdef"]).unwrap(),
    )
    .unwrap();
    let order_no = paid_without_notifications(&h, "recon-inbox-1").await;
    assert!(
        inbox.watermarks().await.unwrap().is_empty(),
        "nothing notified"
    );

    let reconciler = Reconciler::new(&h.client, ReconcileOptions::default());
    let reports = inbox
        .reconcile(&reconciler, vec![record("recon-inbox-1")])
        .await
        .unwrap();
    assert_eq!(reports.len(), 1);
    assert!(
        matches!(reports[0].finding, ReconcileFinding::PaidNotBooked { .. }),
        "{:?}",
        reports[0].finding
    );

    // The one handler gets it, marked as found by reconciliation, and books it once.
    let events = inbox
        .claim(10, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event.source, EventSource::Reconciliation);
    assert_eq!(event.order_no, order_no);
    assert!(event.book && event.event_id.is_some());
    inbox.complete(event).await.unwrap();
    assert_eq!(inbox.status().await.unwrap().booked, 1);

    // Reconciled again (the app still passes its record): in agreement, nothing enters.
    let again = inbox
        .reconcile(&reconciler, vec![record("recon-inbox-1")])
        .await
        .unwrap();
    assert_eq!(
        again.len(),
        1,
        "the app's record and the inbox's are one payment"
    );
    assert_eq!(again[0].finding, ReconcileFinding::InAgreement);
    assert!(
        inbox
            .claim(10, std::time::Duration::from_secs(30))
            .await
            .unwrap()
            .is_empty()
    );

    // A refund the inbox never heard of enters as a newer state, without a second booking.
    h.control(
        "POST",
        &format!("/merchant-payments/{order_no}/force"),
        Some(json!({"status": "refunded"})),
    )
    .await;
    let reversed = inbox.reconcile(&reconciler, vec![]).await.unwrap();
    assert!(
        matches!(reversed[0].finding, ReconcileFinding::BookedNotPaid { .. }),
        "{:?}",
        reversed[0].finding
    );
    let events = inbox
        .claim(10, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].status,
        storefront::MerchantPaymentStatus::Refunded
    );
    assert!(
        !events[0].book,
        "booked once: a refund is not a second booking"
    );
    inbox.complete(&events[0]).await.unwrap();
    let status = inbox.status().await.unwrap();
    assert_eq!((status.booked, status.pending, status.claimed), (1, 0, 0));
}

/// One payment that breaks the contract never stops reconciliation: its `event_id` was
/// already carried by another payment's notification (a "stable unique payment event number"
/// cannot be on two payments), so the inbox refuses it (422) and `Inbox::reconcile` reports it
/// as `needs_attention` with the rule, while the sound paid payment after it still enters and
/// is booked once.
#[tokio::test]
async fn a_payment_breaking_the_contract_needs_attention_and_the_others_still_enter() {
    const SECRET: &str = "whsec_0123456789abcdef0123456789abcdef";
    let h = Harness::start().await;
    let dir = test_servers::ScratchDir::new();
    let inbox = Inbox::open(
        &format!("sqlite://{}", dir.path().join("inbox.db").display()),
        WebhookVerifier::new([SECRET]).unwrap(),
    )
    .unwrap();
    let reused = paid_without_notifications(&h, "recon-attention-1").await;
    let sound = paid_without_notifications(&h, "recon-attention-2").await;
    let event_id = h
        .client
        .get_merchant_payment(&reused)
        .await
        .unwrap()
        .event_id
        .expect("paid: an event_id");

    // Another payment's notification carried that event_id first: it owns it.
    let body = json!({
        "id": "n-other", "type": "merchant_payment.status_changed", "api_version": 1,
        "created_at": "2026-01-01T00:00:00Z",
        "data": {
            "order_no": "OTHER-1", "external_reference": "other", "payment_no": s::CHANNEL_CARD_USD,
            "amount_minor": 1250, "currency": "USD", "currency_decimals": 2, "status": "paid",
            "status_version": 2, "test_mode": false, "expires_at": "2030-01-01T00:00:00Z",
            "event_id": event_id,
        },
    })
    .to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let signature = storefront::webhook::TestSigner::new(SECRET).signature(now, body.as_bytes());
    let r = inbox
        .receive(
            Some("n-other"),
            Some(&now.to_string()),
            Some(&signature),
            body.as_bytes(),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");

    let reconciler = Reconciler::new(&h.client, ReconcileOptions::default());
    let reports = inbox
        .reconcile(
            &reconciler,
            vec![record("recon-attention-1"), record("recon-attention-2")],
        )
        .await
        .expect("one bad payment never fails the run");
    let by_order: std::collections::BTreeMap<_, _> = reports
        .iter()
        .map(|r| (r.order_no.clone().unwrap_or_default(), r.finding.clone()))
        .collect();
    match &by_order[&reused] {
        ReconcileFinding::NeedsAttention { reason, payment } => {
            assert_eq!(reason, "event_id_reused");
            assert_eq!(payment.order_no, reused);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(by_order[&sound], ReconcileFinding::PaidNotBooked { .. }),
        "{:?}",
        by_order[&sound]
    );
    // The sound payment entered (and the other payment's notification waits); the reused one
    // did not.
    let mut events = inbox
        .claim(10, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    events.sort_by(|a, b| a.order_no.cmp(&b.order_no));
    let handed: Vec<(&str, bool)> = events
        .iter()
        .map(|e| (e.order_no.as_str(), e.book))
        .collect();
    assert!(handed.contains(&(sound.as_str(), true)), "{handed:?}");
    assert!(!handed.iter().any(|(o, _)| *o == reused), "{handed:?}");
    for e in &events {
        inbox.complete(e).await.unwrap();
    }

    // Run again: the sound one is in agreement now; the reused one still needs attention,
    // never an endless paid_not_booked.
    let again = inbox
        .reconcile(&reconciler, vec![record("recon-attention-1")])
        .await
        .unwrap();
    let names: Vec<(&str, &str)> = again
        .iter()
        .map(|r| (r.record.as_str(), r.finding.name()))
        .collect();
    assert!(
        names.contains(&("recon-attention-1", "needs_attention")),
        "{names:?}"
    );
    assert!(
        names.contains(&("recon-attention-2", "in_agreement")),
        "{names:?}"
    );
}
