//! `webhook_verify`: the notification verifier with arbitrary secrets, headers, timestamps and
//! bodies. It never panics; every refusal is a typed [`WebhookError`] with a stable code; and a
//! body signed by [`TestSigner`] at a timestamp within the tolerance is never refused for its
//! headers, timestamp or signature: it verifies, or fails on its content.

use storefront::webhook::{
    DEFAULT_TOLERANCE_SECS, EVENT_TYPE_STATUS_CHANGED, HEADER_EVENT_ID, HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
};
use storefront::{StatusNotification, TestSigner, WebhookError, WebhookVerifier};

use crate::reader::Reader;

/// The secret used when the fuzzed ones are all empty.
const FALLBACK_SECRET: &str = "fuzz-fallback-secret-0123456789abcdef";
/// Latest `now` used for signed deliveries (2100-01-01), so `now + tolerance` stays a plain
/// Unix-seconds text.
const LATEST_NOW: i64 = 4_102_444_800;

/// Input: 1 byte flags, 8 bytes `now`, 2 bytes skew, two secrets, the event-id, timestamp and
/// signature headers (each a chunk, 255 = absent), then the raw body.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let flags = r.u8();
    let now = r.i64();
    let skew = i64::from(i16::from_le_bytes([r.u8(), r.u8()]));
    let secrets = [r.string(), r.string()];
    let event_id = r.opt_string();
    let timestamp = r.opt_string();
    let signature = r.opt_string();
    let body = r.rest();

    let verifier = match WebhookVerifier::new(secrets.iter().map(String::as_str)) {
        Ok(v) => v,
        Err(e) => {
            assert_eq!(e, WebhookError::NoSecrets);
            assert!(secrets.iter().all(String::is_empty));
            WebhookVerifier::new([FALLBACK_SECRET]).expect("one non-empty secret")
        }
    };
    let signing_secret = secrets
        .iter()
        .filter(|s| !s.is_empty())
        .nth(usize::from(flags & 1))
        .or_else(|| secrets.iter().find(|s| !s.is_empty()))
        .map_or(FALLBACK_SECRET, String::as_str);

    // 1. Everything as fuzzed.
    let result = verifier.verify_at(
        now,
        event_id.as_deref(),
        timestamp.as_deref(),
        signature.as_deref(),
        body,
    );
    check(&result, event_id.as_deref(), body);

    // 2. The same through an HTTP header map (header values from arbitrary bytes).
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in [
        (HEADER_EVENT_ID, &event_id),
        (HEADER_TIMESTAMP, &timestamp),
        (HEADER_SIGNATURE, &signature),
    ] {
        if let Some(v) = value
            && let Ok(v) = reqwest::header::HeaderValue::from_bytes(v.as_bytes())
        {
            headers.insert(name, v);
        }
    }
    let _ = verifier.verify_headers(&headers, body);

    // 3. A genuine delivery: the body signed by the test signer at a timestamp within the
    // tolerance of `now`.
    let now = now.rem_euclid(LATEST_NOW);
    let tolerance = DEFAULT_TOLERANCE_SECS as i64;
    let ts = (now + skew.clamp(-tolerance, tolerance)).max(0);
    let sig = TestSigner::new(signing_secret).signature(ts, body);
    // The event id: the body's own `id` when it has one (so decoding can go all the way),
    // otherwise the fuzzed header.
    let body_id = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("id").and_then(|id| id.as_str().map(str::to_owned)));
    let id = match (flags & 2 != 0, body_id) {
        (false, Some(id)) => Some(id),
        _ => event_id.clone().or(Some(String::new())),
    };
    let result = verifier.verify_at(now, id.as_deref(), Some(&ts.to_string()), Some(&sig), body);
    check(&result, id.as_deref(), body);
    if let Err(e) = &result {
        assert!(
            matches!(
                e,
                WebhookError::InvalidBody(_)
                    | WebhookError::EventIdMismatch
                    | WebhookError::UnsupportedEventType(_)
                    | WebhookError::UnsupportedApiVersion(_)
            ),
            "a body signed at {ts} (now {now}) was refused for {e:?}"
        );
    }
    // The same genuine delivery, signed again with a secret the verifier does not have.
    let foreign = format!("{signing_secret}-not-configured");
    if !secrets.contains(&foreign) {
        let sig = TestSigner::new(foreign).signature(ts, body);
        let result =
            verifier.verify_at(now, id.as_deref(), Some(&ts.to_string()), Some(&sig), body);
        assert_eq!(result.err(), Some(WebhookError::SignatureMismatch));
    }
}

/// What holds for any verification result.
fn check(result: &Result<StatusNotification, WebhookError>, event_id: Option<&str>, body: &[u8]) {
    match result {
        Ok(n) => {
            assert_eq!(Some(n.id.as_str()), event_id);
            assert_eq!(n.event_type, EVENT_TYPE_STATUS_CHANGED);
            assert_eq!(n.api_version, storefront::webhook::API_VERSION);
            // The typed notification is what the bindings hand out as JSON: it must encode,
            // and decode to the same value.
            let json = serde_json::to_vec(n).expect("a verified notification encodes");
            let back: StatusNotification =
                serde_json::from_slice(&json).expect("its JSON decodes again");
            assert_eq!(&back, n, "round trip of {}", String::from_utf8_lossy(body));
        }
        Err(e) => {
            assert!(!e.code().is_empty());
            let _ = e.to_string();
        }
    }
}
