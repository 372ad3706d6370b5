//! Status notifications: signature verification, the typed notification, version ordering,
//! expectation checks and a test signer.
//!
//! Contract rules (Events): signature input is "the timestamp text, a dot, then the raw HTTP body
//! bytes", HMAC-SHA256, header `X-Service-Signature: sha256=<lowercase hex>`; "compare in
//! constant time; reject timestamps that differ from current time by more than 5 minutes; do not
//! re-serialize the JSON before verification; after verifying, check reference, amount,
//! currency and `test_mode`"; `id` equals header `X-Service-Event-ID`; "a lower version must
//! not overwrite a higher one"; the receiver keeps old secrets until old notifications finish
//! (hence several secrets).
//!
//! ```
//! use storefront::{TestSigner, WebhookVerifier, WebhookError};
//! # let body = br#"{"id":"evt_1","type":"merchant_payment.status_changed","api_version":1,
//! #   "created_at":"2026-11-22T10:00:00Z","data":{"order_no":"MP1","external_reference":"r1",
//! #   "payment_no":"","amount_minor":1250,"currency":"USD","currency_decimals":2,
//! #   "status":"pending","status_version":1,"test_mode":false,
//! #   "expires_at":"2026-11-22T10:30:00Z"}}"#;
//! let secret = "notify-secret-of-this-payment-0123456789";
//! let now = time::OffsetDateTime::now_utc().unix_timestamp();
//! // What the service sends (here produced by the test signer):
//! let signature = TestSigner::new(secret).signature(now, body);
//! // The receiver: verify the raw body bytes before anything else.
//! let verifier = WebhookVerifier::new(["an-older-secret-still-in-use-aaaaaa", secret])?;
//! let n = verifier.verify(Some("evt_1"), Some(&now.to_string()), Some(&signature), body)?;
//! assert_eq!(n.data.order_no, "MP1");
//! assert!(!n.data.status.is_paid());
//! // Cheaper: signature and envelope only, borrowing the body; `data` decoded when asked for
//! // (or the verified bytes handed to the host's own JSON library).
//! let v = verifier.verify_raw(Some("evt_1"), Some(&now.to_string()), Some(&signature), body)?;
//! assert_eq!((v.id(), v.api_version(), v.body()), ("evt_1", 1, &body[..]));
//! assert_eq!(v.data()?, n.data);
//! # Ok::<(), WebhookError>(())
//! ```

mod guard;
mod signer;
mod verify;

pub use guard::{PaymentExpectation, VersionDecision, status_version_decision};
pub use signer::TestSigner;
pub use verify::{Clock, VerifiedNotification, WebhookVerifier};

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::collection::model::MerchantPaymentStatus;
use crate::money::MinorAmount;

/// Header carrying the notification event number (equals body `id`).
pub const HEADER_EVENT_ID: &str = "X-Service-Event-ID";
/// Header carrying the Unix seconds of this delivery.
pub const HEADER_TIMESTAMP: &str = "X-Service-Timestamp";
/// Header carrying `sha256=` and the lowercase hex HMAC-SHA256.
pub const HEADER_SIGNATURE: &str = "X-Service-Signature";
/// The only event type.
pub const EVENT_TYPE_STATUS_CHANGED: &str = "merchant_payment.status_changed";
/// The notification `api_version` this SDK understands.
pub const API_VERSION: u32 = 1;
/// The contract's timestamp tolerance (5 minutes, both directions).
pub const DEFAULT_TOLERANCE_SECS: u64 = 300;

/// `data` of a notification: the payment snapshot at that status. Never contains the checkout
/// token, the return address or the notification secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationData {
    /// Payment number.
    pub order_no: String,
    /// Merchant business reference.
    pub external_reference: String,
    /// Channel (empty until chosen).
    #[serde(default)]
    pub payment_no: String,
    /// Amount in minor units.
    pub amount_minor: MinorAmount,
    /// Currency.
    pub currency: String,
    /// Currency precision (0 to [`crate::MAX_SCALE`]; a larger one is a body error).
    #[serde(deserialize_with = "crate::money::bounds::decimals")]
    pub currency_decimals: u32,
    /// Status at this notification (only `paid` confirms payment).
    pub status: MerchantPaymentStatus,
    /// Per-payment version: apply only if higher than what is stored.
    pub status_version: u64,
    /// Whether the channel is a test channel.
    pub test_mode: bool,
    /// Expiry of the payment.
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// Stable payment event number (differs from the notification `id`); book payments by it.
    #[serde(default)]
    pub event_id: Option<String>,
    /// Channel transaction number.
    #[serde(default)]
    pub provider_trade_no: Option<String>,
    /// Payment time (the payment time is this, not `created_at`).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub occurred_at: Option<OffsetDateTime>,
}

/// A verified status notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusNotification {
    /// Notification event number; deduplicate by it.
    pub id: String,
    /// Always `merchant_payment.status_changed`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// 1.
    pub api_version: u32,
    /// Notification generation time (not the payment time).
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// The snapshot.
    pub data: NotificationData,
}

/// Why a notification was rejected; each failure has its own variant and stable
/// [`WebhookError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// The verifier was built without any (non-empty) secret.
    #[error("no signing secret configured")]
    NoSecrets,
    /// A required header is absent.
    #[error("missing header {0}")]
    MissingHeader(&'static str),
    /// `X-Service-Timestamp` is not Unix seconds.
    #[error("malformed X-Service-Timestamp")]
    MalformedTimestamp,
    /// The timestamp is more than the tolerance in the past.
    #[error("timestamp too old ({age_secs} s)")]
    TimestampTooOld {
        /// How far in the past.
        age_secs: u64,
    },
    /// The timestamp is more than the tolerance in the future.
    #[error("timestamp in the future ({ahead_secs} s)")]
    TimestampInFuture {
        /// How far in the future.
        ahead_secs: u64,
    },
    /// `X-Service-Signature` is not `sha256=` and 64 lowercase hex digits.
    #[error("malformed X-Service-Signature")]
    MalformedSignature,
    /// No configured secret produces this signature.
    #[error("signature does not match")]
    SignatureMismatch,
    /// The body is not a valid notification object.
    #[error("invalid notification body: {0}")]
    InvalidBody(String),
    /// Body `id` differs from `X-Service-Event-ID`.
    #[error("X-Service-Event-ID does not match the body id")]
    EventIdMismatch,
    /// `type` is not `merchant_payment.status_changed`.
    #[error("unsupported event type {0:?}")]
    UnsupportedEventType(String),
    /// `api_version` is not 1.
    #[error("unsupported api_version {0}")]
    UnsupportedApiVersion(u32),
    /// The payment does not match what the merchant expects.
    #[error("{field} does not match: expected {expected}, got {actual}")]
    ExpectationMismatch {
        /// `external_reference`, `amount_minor`, `currency` or `test_mode`.
        field: &'static str,
        /// Expected value.
        expected: String,
        /// Received value.
        actual: String,
    },
}

impl WebhookError {
    /// Stable snake_case code, used across the FFI boundary.
    pub fn code(&self) -> &'static str {
        match self {
            WebhookError::NoSecrets => "no_secrets",
            WebhookError::MissingHeader(_) => "missing_header",
            WebhookError::MalformedTimestamp => "malformed_timestamp",
            WebhookError::TimestampTooOld { .. } => "timestamp_too_old",
            WebhookError::TimestampInFuture { .. } => "timestamp_in_future",
            WebhookError::MalformedSignature => "malformed_signature",
            WebhookError::SignatureMismatch => "signature_mismatch",
            WebhookError::InvalidBody(_) => "invalid_body",
            WebhookError::EventIdMismatch => "event_id_mismatch",
            WebhookError::UnsupportedEventType(_) => "unsupported_event_type",
            WebhookError::UnsupportedApiVersion(_) => "unsupported_api_version",
            WebhookError::ExpectationMismatch { .. } => "expectation_mismatch",
        }
    }
}
