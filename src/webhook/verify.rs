//! The signature verifier: several secrets, constant-time HMAC check, two-sided tolerance.
//!
//! The work is done over the raw bytes without allocating: the HMAC is fed the timestamp
//! text, `.` and the body in place ([`hmac::Context`]), the 64 hex digits are decoded into a
//! stack array and compared in constant time, then only the envelope (`id`, `type`,
//! `api_version`, `created_at`) is decoded, borrowing from the body; `data` is decoded on
//! request ([`VerifiedNotification::data`]).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ring::hmac;
use serde::Deserialize;
use serde_json::value::RawValue;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

use super::{
    API_VERSION, DEFAULT_TOLERANCE_SECS, EVENT_TYPE_STATUS_CHANGED, HEADER_EVENT_ID,
    HEADER_SIGNATURE, HEADER_TIMESTAMP, NotificationData, StatusNotification, WebhookError,
};
use crate::secret::Secret;

/// Source of the current time as Unix seconds (injectable for tests).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

fn system_clock() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// Length of an HMAC-SHA256 tag in bytes.
const TAG_LEN: usize = 32;

/// Verifies signed status notifications against one or more secrets (rotation: keep old
/// secrets until old notifications finish). Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct WebhookVerifier {
    keys: Arc<Vec<hmac::Key>>,
    tolerance: Duration,
    clock: Clock,
}

impl fmt::Debug for WebhookVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookVerifier")
            .field("secrets", &self.keys.len())
            .field("tolerance", &self.tolerance)
            .finish_non_exhaustive()
    }
}

/// The envelope of a notification body, borrowed from it: what verification checks before
/// handing out a [`VerifiedNotification`]. `data` stays raw JSON text until asked for.
#[derive(Clone, Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(rename = "type", borrow)]
    event_type: Cow<'a, str>,
    api_version: u32,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(borrow)]
    data: &'a RawValue,
}

/// A notification whose signature, timestamp and envelope are verified, borrowing the body
/// bytes it was verified over (contract, Events: verify the raw body before anything else, do
/// not re-serialize it).
///
/// Already checked: the three headers are present, the timestamp is within the tolerance both
/// ways, the signature is `sha256=` and 64 lowercase hex digits and is the HMAC-SHA256 of
/// timestamp, `.`, body by one of the configured secrets (constant-time compare), the body is a
/// JSON object whose `id` equals `X-Service-Event-ID`, whose `type` is
/// `merchant_payment.status_changed`, whose `api_version` is 1 and whose `created_at` is an
/// RFC 3339 time (checked eagerly: it is part of the envelope, so an accepted envelope is whole
/// and only `data` can still fail to decode). `data` is held as raw JSON and decoded by
/// [`VerifiedNotification::data`] or [`VerifiedNotification::decode`].
#[derive(Clone)]
pub struct VerifiedNotification<'a> {
    body: &'a [u8],
    envelope: Envelope<'a>,
}

impl fmt::Debug for VerifiedNotification<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifiedNotification")
            .field("id", &self.id())
            .field("event_type", &self.event_type())
            .field("api_version", &self.api_version())
            .field("created_at", &self.created_at())
            .field("body_len", &self.body.len())
            .finish()
    }
}

impl<'a> VerifiedNotification<'a> {
    /// Notification event number (body `id`, equal to `X-Service-Event-ID`); deduplicate by it.
    pub fn id(&self) -> &str {
        &self.envelope.id
    }

    /// Event type: always `merchant_payment.status_changed` (the only type the contract has).
    pub fn event_type(&self) -> &str {
        &self.envelope.event_type
    }

    /// Notification `api_version`: always [`API_VERSION`] (1).
    pub fn api_version(&self) -> u32 {
        self.envelope.api_version
    }

    /// Notification generation time (not the payment time, which is `data.occurred_at`).
    pub fn created_at(&self) -> OffsetDateTime {
        self.envelope.created_at
    }

    /// The exact body bytes the signature was verified over, for hosts that decode them with
    /// their own JSON library.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// Decodes `data`, the payment snapshot, now (only `data` is parsed). A `data` that is not
    /// a valid snapshot is [`WebhookError::InvalidBody`]. After this, the contract asks to check
    /// reference, amount, currency and `test_mode` ([`super::PaymentExpectation`]).
    pub fn data(&self) -> Result<NotificationData, WebhookError> {
        serde_json::from_str(self.envelope.data.get())
            .map_err(|e| WebhookError::InvalidBody(e.to_string()))
    }

    /// The whole typed notification (envelope and decoded `data`), as
    /// [`WebhookVerifier::verify`] returns it.
    pub fn decode(&self) -> Result<StatusNotification, WebhookError> {
        let data = self.data()?;
        Ok(StatusNotification {
            id: self.envelope.id.clone().into_owned(),
            event_type: self.envelope.event_type.clone().into_owned(),
            api_version: self.envelope.api_version,
            created_at: self.envelope.created_at,
            data,
        })
    }
}

/// Unix seconds from the `X-Service-Timestamp` text: 1 to 19 ASCII digits, nothing else.
fn parse_timestamp(text: &str) -> Result<i64, WebhookError> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() > 19 {
        return Err(WebhookError::MalformedTimestamp);
    }
    let mut value: i64 = 0;
    for &b in bytes {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return Err(WebhookError::MalformedTimestamp);
        }
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(digit)))
        {
            Some(v) => value = v,
            None => return Err(WebhookError::MalformedTimestamp),
        }
    }
    Ok(value)
}

/// The value of one lowercase hex digit, or 16 for anything else (uppercase included: the
/// contract's format is lowercase).
#[inline(always)]
fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => 16,
    }
}

/// The tag from `X-Service-Signature`: `sha256=` and exactly 64 lowercase hex digits, decoded
/// into a stack array (the header is public: decoding it needs no constant time).
fn parse_signature(header: &str) -> Result<[u8; TAG_LEN], WebhookError> {
    let Some(hex) = header.strip_prefix("sha256=") else {
        return Err(WebhookError::MalformedSignature);
    };
    let hex = hex.as_bytes();
    if hex.len() != 2 * TAG_LEN {
        return Err(WebhookError::MalformedSignature);
    }
    let mut tag = [0u8; TAG_LEN];
    // Any digit outside 0-9a-f sets bit 4 of `invalid`: one check after the loop.
    let mut invalid = 0u8;
    for (out, pair) in tag.iter_mut().zip(hex.chunks_exact(2)) {
        let (hi, lo) = (hex_value(pair[0]), hex_value(pair[1]));
        invalid |= hi | lo;
        *out = (hi << 4) | (lo & 0x0f);
    }
    if invalid & 0x10 != 0 {
        return Err(WebhookError::MalformedSignature);
    }
    Ok(tag)
}

impl WebhookVerifier {
    /// A verifier accepting a signature by any of `secrets`, with the 5-minute tolerance and the
    /// system clock.
    pub fn new<I, S>(secrets: I) -> Result<Self, WebhookError>
    where
        I: IntoIterator<Item = S>,
        S: Into<Secret>,
    {
        let keys: Vec<hmac::Key> = secrets
            .into_iter()
            .map(Into::into)
            .filter(|s: &Secret| !s.is_empty())
            .map(|s| hmac::Key::new(hmac::HMAC_SHA256, s.expose().as_bytes()))
            .collect();
        if keys.is_empty() {
            return Err(WebhookError::NoSecrets);
        }
        Ok(WebhookVerifier {
            keys: Arc::new(keys),
            tolerance: Duration::from_secs(DEFAULT_TOLERANCE_SECS),
            clock: Arc::new(system_clock),
        })
    }

    /// Replaces the clock (for tests and for servers with their own time source).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Replaces the tolerance (the contract's is 5 minutes).
    pub fn with_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Verifies a delivery given its three header values (`None` when absent) and the raw
    /// body bytes exactly as received, and returns the typed notification
    /// ([`WebhookVerifier::verify_raw`] then [`VerifiedNotification::decode`]).
    ///
    /// Checks, in order: headers present, timestamp within tolerance both ways, signature
    /// format, HMAC by any secret (constant time), body envelope decodes, body `id` equals the
    /// event-id header, event type and `api_version`, then `data` decodes.
    pub fn verify(
        &self,
        event_id: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<StatusNotification, WebhookError> {
        self.verify_at((self.clock)(), event_id, timestamp, signature, body)
    }

    /// [`WebhookVerifier::verify`] with the current time given as Unix seconds instead of the
    /// verifier's clock (for callers with their own time source, such as the bindings).
    pub fn verify_at(
        &self,
        now: i64,
        event_id: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<StatusNotification, WebhookError> {
        self.verify_raw_at(now, event_id, timestamp, signature, body)?
            .decode()
    }

    /// [`WebhookVerifier::verify_raw_at`] at the verifier's clock.
    pub fn verify_raw<'a>(
        &self,
        event_id: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &'a [u8],
    ) -> Result<VerifiedNotification<'a>, WebhookError> {
        self.verify_raw_at((self.clock)(), event_id, timestamp, signature, body)
    }

    /// Verifies a delivery over the raw body bytes without allocating for the signature, and
    /// decodes only the envelope (borrowing from `body`); `data` is decoded on request.
    ///
    /// Contract rules (Events), checked in this order, each failure its own
    /// [`WebhookError`]: the three headers are present; `X-Service-Timestamp` is Unix seconds
    /// no more than the tolerance (5 minutes) before or after `now`; `X-Service-Signature` is
    /// `sha256=` and 64 lowercase hex digits; it equals the HMAC-SHA256 of the timestamp text,
    /// `.` and the body bytes (not re-serialized) under any configured secret (rotation),
    /// compared in constant time; the body is a notification envelope; its `id` equals
    /// `X-Service-Event-ID`; `type` is `merchant_payment.status_changed`; `api_version` is 1.
    pub fn verify_raw_at<'a>(
        &self,
        now: i64,
        event_id: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &'a [u8],
    ) -> Result<VerifiedNotification<'a>, WebhookError> {
        // `let else`, not `ok_or(..)`: an eagerly built error would be dropped on every call.
        let Some(event_id) = event_id else {
            return Err(WebhookError::MissingHeader(HEADER_EVENT_ID));
        };
        let Some(timestamp) = timestamp else {
            return Err(WebhookError::MissingHeader(HEADER_TIMESTAMP));
        };
        let Some(signature) = signature else {
            return Err(WebhookError::MissingHeader(HEADER_SIGNATURE));
        };

        let ts = parse_timestamp(timestamp)?;
        let tol = self.tolerance.as_secs();
        if now > ts && now.abs_diff(ts) > tol {
            return Err(WebhookError::TimestampTooOld {
                age_secs: now.abs_diff(ts),
            });
        }
        if ts > now && ts.abs_diff(now) > tol {
            return Err(WebhookError::TimestampInFuture {
                ahead_secs: ts.abs_diff(now),
            });
        }

        let tag = parse_signature(signature)?;
        if !self
            .keys
            .iter()
            .any(|key| signed_by(key, timestamp.as_bytes(), body, &tag))
        {
            return Err(WebhookError::SignatureMismatch);
        }

        // JSON text is UTF-8: checked once over the whole body, so the parser need not check
        // each string again.
        let text = std::str::from_utf8(body)
            .map_err(|e| WebhookError::InvalidBody(format!("body is not UTF-8: {e}")))?;
        let envelope: Envelope<'a> =
            serde_json::from_str(text).map_err(|e| WebhookError::InvalidBody(e.to_string()))?;
        if envelope.id != event_id {
            return Err(WebhookError::EventIdMismatch);
        }
        if envelope.event_type != EVENT_TYPE_STATUS_CHANGED {
            return Err(WebhookError::UnsupportedEventType(
                envelope.event_type.into_owned(),
            ));
        }
        if envelope.api_version != API_VERSION {
            return Err(WebhookError::UnsupportedApiVersion(envelope.api_version));
        }
        Ok(VerifiedNotification { body, envelope })
    }

    /// [`WebhookVerifier::verify`] with the headers read from an HTTP header map (axum, hyper
    /// and reqwest share this type). A header that is not valid text counts as malformed.
    pub fn verify_headers(
        &self,
        headers: &reqwest::header::HeaderMap,
        body: &[u8],
    ) -> Result<StatusNotification, WebhookError> {
        let get = |name: &'static str| -> Result<Option<&str>, ()> {
            match headers.get(name) {
                None => Ok(None),
                Some(v) => v.to_str().map(Some).map_err(|_| ()),
            }
        };
        let event_id = get(HEADER_EVENT_ID).map_err(|_| WebhookError::EventIdMismatch)?;
        let timestamp = get(HEADER_TIMESTAMP).map_err(|_| WebhookError::MalformedTimestamp)?;
        let signature = get(HEADER_SIGNATURE).map_err(|_| WebhookError::MalformedSignature)?;
        self.verify(event_id, timestamp, signature, body)
    }
}

/// Whether `tag` is the HMAC of `timestamp`, `.`, `body` under `key`: the parts are fed in place
/// (no copy of the signed input) and the tags compared in constant time.
fn signed_by(key: &hmac::Key, timestamp: &[u8], body: &[u8], tag: &[u8; TAG_LEN]) -> bool {
    let mut ctx = hmac::Context::with_key(key);
    ctx.update(timestamp);
    ctx.update(b".");
    ctx.update(body);
    let computed = ctx.sign();
    // Four 64-bit words compared with `subtle` (no early exit, no data-dependent branch).
    let words = |bytes: &[u8]| -> [u64; TAG_LEN / 8] {
        let mut w = [0u64; TAG_LEN / 8];
        for (word, chunk) in w.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            *word = u64::from_ne_bytes(b);
        }
        w
    };
    bool::from(words(computed.as_ref()).ct_eq(&words(tag)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::TestSigner;

    const NOW: i64 = 1_790_000_000;

    fn body(id: &str) -> Vec<u8> {
        format!(
            r#"{{"id":"{id}","type":"merchant_payment.status_changed","api_version":1,
            "created_at":"2026-09-21T10:00:00Z","data":{{"order_no":"MP1","external_reference":"r1",
            "payment_no":"ch_card_usd","amount_minor":1250,"currency":"USD","currency_decimals":2,
            "status":"paid","status_version":2,"test_mode":false,"expires_at":"2026-09-21T10:30:00Z",
            "event_id":"PE1","provider_trade_no":"PT1","occurred_at":"2026-09-21T10:01:00+02:00"}}}}"#
        )
        .into_bytes()
    }

    fn verifier(secrets: &[&str]) -> WebhookVerifier {
        WebhookVerifier::new(secrets.iter().copied())
            .unwrap()
            .with_clock(Arc::new(|| NOW))
    }

    fn sign(secret: &str, ts: i64, body: &[u8]) -> String {
        TestSigner::new(secret).signature(ts, body)
    }

    #[test]
    fn accepts_a_valid_signature_by_any_rotated_secret() {
        let b = body("N1");
        let v = verifier(&[
            "old-secret-aaaaaaaaaaaaaaaaaaaaaaaaa",
            "new-secret-bbbbbbbbbbbbbbbbbbbbbbbbb",
        ]);
        for s in [
            "old-secret-aaaaaaaaaaaaaaaaaaaaaaaaa",
            "new-secret-bbbbbbbbbbbbbbbbbbbbbbbbb",
        ] {
            let n = v
                .verify(
                    Some("N1"),
                    Some(&NOW.to_string()),
                    Some(&sign(s, NOW, &b)),
                    &b,
                )
                .unwrap();
            assert_eq!(n.data.event_id.as_deref(), Some("PE1"));
            assert!(n.data.status.is_paid());
        }
    }

    /// A genuinely signed body whose precision is absurd (issue 10 item 5: 4294967295 was
    /// accepted) is a body error, never an amount an app would format or book.
    #[test]
    fn signed_body_with_absurd_precision_is_refused() {
        let s = "secret-dddddddddddddddddddddddddddddd";
        let b = String::from_utf8(body("N9"))
            .unwrap()
            .replace(
                r#""currency_decimals":2"#,
                r#""currency_decimals":4294967295"#,
            )
            .into_bytes();
        let err = verifier(&[s])
            .verify(
                Some("N9"),
                Some(&NOW.to_string()),
                Some(&sign(s, NOW, &b)),
                &b,
            )
            .unwrap_err();
        assert!(matches!(err, WebhookError::InvalidBody(_)), "{err:?}");
    }

    #[test]
    fn each_malformed_input_has_its_own_error() {
        let s = "secret-cccccccccccccccccccccccccccccc";
        let v = verifier(&[s]);
        let b = body("N1");
        let ts = NOW.to_string();
        let good = sign(s, NOW, &b);
        let check = |id: Option<&str>, t: Option<&str>, sig: Option<&str>, body: &[u8]| {
            v.verify(id, t, sig, body).unwrap_err().code()
        };
        assert_eq!(check(None, Some(&ts), Some(&good), &b), "missing_header");
        assert_eq!(check(Some("N1"), None, Some(&good), &b), "missing_header");
        assert_eq!(check(Some("N1"), Some(&ts), None, &b), "missing_header");
        assert_eq!(
            check(Some("N1"), Some("12a"), Some(&good), &b),
            "malformed_timestamp"
        );
        let old = (NOW - 301).to_string();
        assert_eq!(
            check(Some("N1"), Some(&old), Some(&sign(s, NOW - 301, &b)), &b),
            "timestamp_too_old"
        );
        let future = (NOW + 301).to_string();
        assert_eq!(
            check(Some("N1"), Some(&future), Some(&sign(s, NOW + 301, &b)), &b),
            "timestamp_in_future"
        );
        let edge = (NOW + 300).to_string();
        assert!(
            v.verify(Some("N1"), Some(&edge), Some(&sign(s, NOW + 300, &b)), &b)
                .is_ok()
        );
        assert_eq!(
            check(Some("N1"), Some(&ts), Some(&good.to_uppercase()), &b),
            "malformed_signature"
        );
        assert_eq!(
            check(Some("N1"), Some(&ts), Some(&good[7..]), &b),
            "malformed_signature"
        );
        assert_eq!(
            check(Some("N1"), Some(&ts), Some("sha256=abc"), &b),
            "malformed_signature"
        );
        let wrong = sign("another-secret-dddddddddddddddddddd", NOW, &b);
        assert_eq!(
            check(Some("N1"), Some(&ts), Some(&wrong), &b),
            "signature_mismatch"
        );
        // Body re-serialized (whitespace changed) no longer verifies.
        let reser =
            serde_json::to_vec(&serde_json::from_slice::<serde_json::Value>(&b).unwrap()).unwrap();
        assert_eq!(
            check(Some("N1"), Some(&ts), Some(&good), &reser),
            "signature_mismatch"
        );
        // Signature over another timestamp.
        assert_eq!(
            check(Some("N1"), Some(&(NOW - 1).to_string()), Some(&good), &b),
            "signature_mismatch"
        );
        assert_eq!(
            check(Some("N2"), Some(&ts), Some(&good), &b),
            "event_id_mismatch"
        );
        let junk = b"not json".to_vec();
        assert_eq!(
            check(Some("N1"), Some(&ts), Some(&sign(s, NOW, &junk)), &junk),
            "invalid_body"
        );
        let other_type = String::from_utf8(b.clone())
            .unwrap()
            .replace("status_changed", "created")
            .into_bytes();
        assert_eq!(
            check(
                Some("N1"),
                Some(&ts),
                Some(&sign(s, NOW, &other_type)),
                &other_type
            ),
            "unsupported_event_type"
        );
        let v2 = String::from_utf8(b.clone())
            .unwrap()
            .replace("\"api_version\":1", "\"api_version\":2")
            .into_bytes();
        assert_eq!(
            check(Some("N1"), Some(&ts), Some(&sign(s, NOW, &v2)), &v2),
            "unsupported_api_version"
        );
    }

    /// Every rejection of the contract through the raw (borrowed) path.
    #[test]
    fn raw_path_rejects_each_fault() {
        let s = "secret-eeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
        let v = verifier(&["rotated-out-ffffffffffffffffffffffff", s]);
        let b = body("N1");
        let ts = NOW.to_string();
        let good = sign(s, NOW, &b);
        let code = |id: Option<&str>, t: Option<&str>, sig: Option<&str>, body: &[u8]| {
            v.verify_raw_at(NOW, id, t, sig, body).unwrap_err().code()
        };
        // Genuine, by either secret (rotation).
        for secret in ["rotated-out-ffffffffffffffffffffffff", s] {
            let n = v
                .verify_raw_at(NOW, Some("N1"), Some(&ts), Some(&sign(secret, NOW, &b)), &b)
                .unwrap();
            assert_eq!(n.id(), "N1");
        }
        // Missing headers.
        assert_eq!(code(None, Some(&ts), Some(&good), &b), "missing_header");
        assert_eq!(code(Some("N1"), None, Some(&good), &b), "missing_header");
        assert_eq!(code(Some("N1"), Some(&ts), None, &b), "missing_header");
        // Timestamp text.
        for t in [
            "",
            "12a",
            "-1",
            "+1",
            " 1",
            "99999999999999999999",
            "9999999999999999999",
        ] {
            assert_eq!(
                code(Some("N1"), Some(t), Some(&good), &b),
                "malformed_timestamp",
                "{t:?}"
            );
        }
        // Both tolerance edges: 300 s is accepted, 301 s is not, in both directions.
        for (at, expected) in [
            (NOW - 300, None),
            (NOW + 300, None),
            (NOW - 301, Some("timestamp_too_old")),
            (NOW + 301, Some("timestamp_in_future")),
        ] {
            let r = v.verify_raw_at(
                NOW,
                Some("N1"),
                Some(&at.to_string()),
                Some(&sign(s, at, &b)),
                &b,
            );
            assert_eq!(r.err().map(|e| e.code()), expected, "at {at}");
        }
        // One body byte changed.
        let mut tampered = b.clone();
        let i = tampered.iter().position(|&c| c == b'M').unwrap();
        tampered[i] = b'X';
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&good), &tampered),
            "signature_mismatch"
        );
        // One signature digit changed (still well-formed).
        let mut sig = good.clone().into_bytes();
        let last = sig.len() - 1;
        sig[last] = if sig[last] == b'0' { b'1' } else { b'0' };
        let sig = String::from_utf8(sig).unwrap();
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&sig), &b),
            "signature_mismatch"
        );
        // Format: uppercase hex, lengths 63 and 65, missing or wrong prefix, non-hex digit.
        let upper = format!("sha256={}", good[7..].to_uppercase());
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&upper), &b),
            "malformed_signature"
        );
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&good[..good.len() - 1]), &b),
            "malformed_signature"
        );
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&format!("{good}0")), &b),
            "malformed_signature"
        );
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&good[7..]), &b),
            "malformed_signature"
        );
        let sha1 = format!("sha1={}", &good[7..]);
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&sha1), &b),
            "malformed_signature"
        );
        let non_hex = format!("{}g", &good[..good.len() - 1]);
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&non_hex), &b),
            "malformed_signature"
        );
        // Signed by a secret the verifier does not have.
        let foreign = sign("another-secret-gggggggggggggggggggg", NOW, &b);
        assert_eq!(
            code(Some("N1"), Some(&ts), Some(&foreign), &b),
            "signature_mismatch"
        );
        // Envelope checks after the signature.
        assert_eq!(
            code(Some("N2"), Some(&ts), Some(&good), &b),
            "event_id_mismatch"
        );
        let signed = |body: &[u8]| code(Some("N1"), Some(&ts), Some(&sign(s, NOW, body)), body);
        let text = String::from_utf8(b.clone()).unwrap();
        let other_type = text.replace("status_changed", "created");
        assert_eq!(signed(other_type.as_bytes()), "unsupported_event_type");
        let v2 = text.replace("\"api_version\":1", "\"api_version\":2");
        assert_eq!(signed(v2.as_bytes()), "unsupported_api_version");
        assert_eq!(signed(b"not json"), "invalid_body");
        // `created_at` is part of the envelope and checked eagerly.
        let bad_created = text.replace("2026-09-21T10:00:00Z", "yesterday");
        assert_eq!(signed(bad_created.as_bytes()), "invalid_body");
        let no_data = text[..text.find(",\"data\"").unwrap()].to_string() + "}";
        assert_eq!(signed(no_data.as_bytes()), "invalid_body");
    }

    /// A body whose signature and envelope are fine but whose `data` is not a snapshot:
    /// verification over the raw bytes succeeds, `data()` and `decode()` refuse it, and so does
    /// the typed `verify`.
    #[test]
    fn malformed_data_fails_only_when_decoded() {
        let s = "secret-hhhhhhhhhhhhhhhhhhhhhhhhhhhhhh";
        let v = verifier(&[s]);
        let b = String::from_utf8(body("N1"))
            .unwrap()
            .replace("\"amount_minor\":1250", "\"amount_minor\":\"1250\"")
            .into_bytes();
        let ts = NOW.to_string();
        let sig = sign(s, NOW, &b);
        let n = v
            .verify_raw_at(NOW, Some("N1"), Some(&ts), Some(&sig), &b)
            .unwrap();
        assert_eq!(n.id(), "N1");
        assert_eq!(n.event_type(), EVENT_TYPE_STATUS_CHANGED);
        assert_eq!(n.api_version(), API_VERSION);
        assert!(matches!(n.data(), Err(WebhookError::InvalidBody(_))));
        assert!(matches!(n.decode(), Err(WebhookError::InvalidBody(_))));
        assert_eq!(
            v.verify_at(NOW, Some("N1"), Some(&ts), Some(&sig), &b)
                .unwrap_err()
                .code(),
            "invalid_body"
        );
    }

    /// The borrowed view hands back the very bytes it verified, and its lazy decode equals the
    /// typed parse of the whole body.
    #[test]
    fn raw_view_borrows_the_body_and_decodes_like_the_typed_parse() {
        let s = "secret-iiiiiiiiiiiiiiiiiiiiiiiiiiiiii";
        let v = verifier(&[s]);
        // An escaped id (`\u0031` is `1`) is decoded, not borrowed, and still matches.
        let b = String::from_utf8(body("N\\u0031")).unwrap().into_bytes();
        let ts = NOW.to_string();
        let sig = sign(s, NOW, &b);
        let n = v
            .verify_raw_at(NOW, Some("N1"), Some(&ts), Some(&sig), &b)
            .unwrap();
        assert!(std::ptr::eq(n.body(), b.as_slice()));
        assert_eq!(n.body(), b.as_slice());
        assert_eq!(n.id(), "N1");
        let whole: StatusNotification = serde_json::from_slice(&b).unwrap();
        assert_eq!(n.created_at(), whole.created_at);
        assert_eq!(n.data().unwrap(), whole.data);
        assert_eq!(n.decode().unwrap(), whole);
        assert_eq!(
            v.verify(Some("N1"), Some(&ts), Some(&sig), &b).unwrap(),
            whole
        );
        let debug = format!("{n:?}");
        assert!(
            debug.contains("N1") && !debug.contains("order_no"),
            "{debug}"
        );
    }

    #[test]
    fn needs_at_least_one_secret() {
        assert_eq!(
            WebhookVerifier::new(Vec::<String>::new()).unwrap_err(),
            WebhookError::NoSecrets
        );
        assert_eq!(
            WebhookVerifier::new([""]).unwrap_err(),
            WebhookError::NoSecrets
        );
    }
}
