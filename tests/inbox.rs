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
