//! The signature verifier: several secrets, constant-time HMAC check, two-sided tolerance.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ring::hmac;

use super::{
    API_VERSION, DEFAULT_TOLERANCE_SECS, EVENT_TYPE_STATUS_CHANGED, HEADER_EVENT_ID,
    HEADER_SIGNATURE, HEADER_TIMESTAMP, StatusNotification, WebhookError,
};
use crate::secret::Secret;

/// Source of the current time as Unix seconds (injectable for tests).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

fn system_clock() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

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
    /// body bytes exactly as received, and returns the typed notification.
    ///
    /// Checks, in order: headers present, timestamp within tolerance both ways, signature
    /// format, HMAC by any secret (constant time), body decodes, body `id` equals the event-id
    /// header, event type and `api_version`.
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
        let event_id = event_id.ok_or(WebhookError::MissingHeader(HEADER_EVENT_ID))?;
        let timestamp = timestamp.ok_or(WebhookError::MissingHeader(HEADER_TIMESTAMP))?;
        let signature = signature.ok_or(WebhookError::MissingHeader(HEADER_SIGNATURE))?;

        if timestamp.is_empty()
            || timestamp.len() > 19
            || !timestamp.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(WebhookError::MalformedTimestamp);
        }
        let ts: i64 = timestamp
            .parse()
            .map_err(|_| WebhookError::MalformedTimestamp)?;
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

        let hex_sig = signature
            .strip_prefix("sha256=")
            .ok_or(WebhookError::MalformedSignature)?;
        if hex_sig.len() != 64
            || !hex_sig
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(WebhookError::MalformedSignature);
        }
        let tag = hex::decode(hex_sig).map_err(|_| WebhookError::MalformedSignature)?;
        let mut input = Vec::with_capacity(timestamp.len() + 1 + body.len());
        input.extend_from_slice(timestamp.as_bytes());
        input.push(b'.');
        input.extend_from_slice(body);
        // ring::hmac::verify compares in constant time.
        if !self
            .keys
            .iter()
            .any(|k| hmac::verify(k, &input, &tag).is_ok())
        {
            return Err(WebhookError::SignatureMismatch);
        }

        let n: StatusNotification =
            serde_json::from_slice(body).map_err(|e| WebhookError::InvalidBody(e.to_string()))?;
        if n.id != event_id {
            return Err(WebhookError::EventIdMismatch);
        }
        if n.event_type != EVENT_TYPE_STATUS_CHANGED {
            return Err(WebhookError::UnsupportedEventType(n.event_type));
        }
        if n.api_version != API_VERSION {
            return Err(WebhookError::UnsupportedApiVersion(n.api_version));
        }
        Ok(n)
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
