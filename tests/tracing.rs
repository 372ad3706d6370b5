//! Hygiene: one tracing span per request attempt with method, path template, status and
//! duration, and never a token, secret, checkout token or resource id in any SDK span or event.

mod common;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::{Harness, s};
use storefront::{CreateMerchantPayment, MinorAmount};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Recorded (name, value) pairs.
type FieldList = Vec<(String, String)>;
/// (target, name, fields) of every span.
type SpanLog = Arc<Mutex<Vec<(String, String, FieldList)>>>;
/// (target, fields) of every event.
type EventLog = Arc<Mutex<Vec<(String, FieldList)>>>;

#[derive(Default, Clone)]
struct Captured {
    spans: SpanLog,
    events: EventLog,
}

struct Capture {
    captured: Captured,
    next: AtomicU64,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.captured.spans.lock().unwrap();
        spans.push((
            attrs.metadata().target().to_owned(),
            attrs.metadata().name().to_owned(),
            fields,
        ));
        self.next.fetch_add(1, Ordering::SeqCst);
        Id::from_u64(spans.len() as u64)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.captured.spans.lock().unwrap();
        if let Some(entry) = spans.get_mut(span.into_u64() as usize - 1) {
            values.record(&mut Fields(&mut entry.2));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        self.captured
            .events
            .lock()
            .unwrap()
            .push((event.metadata().target().to_owned(), fields));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Hygiene rule: spans carry method, path template, status and duration; no SDK span or event
/// contains the client secret, an access token, the checkout URL or a payment number.
#[test]
fn request_spans_have_method_template_status_duration_and_no_secrets() {
    let captured = Captured::default();
    let subscriber = Capture {
        captured: captured.clone(),
        next: AtomicU64::new(0),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (token, order_no, checkout) = tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            let h = Harness::start().await;
            let created = h
                .client
                .create_merchant_payment(&CreateMerchantPayment::new(
                    "trace-ref-1",
                    MinorAmount::new(100).unwrap(),
                    "USD",
                ))
                .await
                .unwrap();
            let order_no = created.payment.order_no.clone();
            h.client.get_merchant_payment(&order_no).await.unwrap();
            let token = h.client.access_token().await.unwrap();
            (
                token.expose().to_owned(),
                order_no,
                created.payment.checkout_url.unwrap().expose().to_owned(),
            )
        })
    });

    let spans = captured.spans.lock().unwrap();
    let ours: Vec<_> = spans
        .iter()
        .filter(|(_, name, _)| name == "storefront.request")
        .collect();
    let get = ours
        .iter()
        .find(|(_, _, f)| field(f, "path") == Some("/openapi/v1/merchant-payments/{order_no}"))
        .expect("a span for the payment query");
    assert_eq!(field(&get.2, "method"), Some("GET"));
    assert_eq!(field(&get.2, "status"), Some("200"));
    assert!(field(&get.2, "duration_ms").is_some());
    assert!(
        ours.iter()
            .any(|(_, _, f)| field(f, "path") == Some("{token_endpoint}"))
    );

    let events = captured.events.lock().unwrap();
    let sdk_text: Vec<String> = spans
        .iter()
        .filter(|(target, _, _)| target.starts_with("storefront"))
        .flat_map(|(_, _, f)| f.iter().map(|(n, v)| format!("{n}={v}")))
        .chain(
            events
                .iter()
                .filter(|(target, _)| target.starts_with("storefront::"))
                .flat_map(|(_, f)| f.iter().map(|(n, v)| format!("{n}={v}"))),
        )
        .collect();
    assert!(!sdk_text.is_empty());
    for text in &sdk_text {
        assert!(!text.contains(&token), "token leaked: {text}");
        assert!(
            !text.contains(s::MERCHANT_CLIENT_SECRET),
            "secret leaked: {text}"
        );
        assert!(!text.contains(&checkout), "checkout URL leaked: {text}");
        assert!(
            !text.contains(&order_no),
            "payment number in a span: {text}"
        );
    }
}
