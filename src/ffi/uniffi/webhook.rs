//! Webhook verification and its helpers, all synchronous (a receiver verifies before it
//! stores and acknowledges).
//!
//! Contract rules: the signature is `sha256=` + lowercase hex HMAC-SHA256 over the timestamp
//! text, a dot and the raw body bytes (never re-serialized), compared in constant time, by any
//! of the secrets still in use (rotation); the timestamp may differ from now by at most 5
//! minutes in either direction; `X-Service-Event-ID` equals the body `id`; after verifying, check
//! reference, amount, currency and `test_mode`; a lower `status_version` never overwrites a
//! higher one.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

use crate::webhook::{
    self as core, NotificationData as CoreData, PaymentExpectation as CoreExpectation,
    TestSigner as CoreSigner, VersionDecision as CoreDecision, WebhookVerifier as CoreVerifier,
};

use super::collection::{MerchantPayment, MerchantPaymentStatus};
use super::ints::{int, long};
use super::money::minor;
use super::secret::Secret;

/// Why a notification was rejected; each failure has its own case (Kotlin
/// `WebhookException.SignatureMismatch`, ...). Reject the delivery with a non-2xx status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum WebhookError {
    /// The verifier has no non-empty secret.
    #[error("no signing secret configured")]
    NoSecrets,
    /// A required header is absent.
    #[error("missing header {header}")]
    MissingHeader {
        /// The header name.
        header: String,
    },
    /// `X-Service-Timestamp` is not Unix seconds.
    #[error("malformed X-Service-Timestamp")]
    MalformedTimestamp,
    /// The timestamp is more than the tolerance in the past.
    #[error("timestamp too old ({age_seconds} s)")]
    TimestampTooOld {
        /// How far in the past.
        age_seconds: i64,
    },
    /// The timestamp is more than the tolerance in the future.
    #[error("timestamp in the future ({ahead_seconds} s)")]
    TimestampInFuture {
        /// How far in the future.
        ahead_seconds: i64,
    },
    /// `X-Service-Signature` is not `sha256=` and 64 lowercase hex digits.
    #[error("malformed X-Service-Signature")]
    MalformedSignature,
    /// No configured secret produces this signature.
    #[error("signature does not match")]
    SignatureMismatch,
    /// The body is not a valid notification object.
    #[error("invalid notification body: {detail}")]
    InvalidBody {
        /// What is wrong.
        detail: String,
    },
    /// Body `id` differs from `X-Service-Event-ID`.
    #[error("X-Service-Event-ID does not match the body id")]
    EventIdMismatch,
    /// `type` is not `merchant_payment.status_changed`.
    #[error("unsupported event type {event_type}")]
    UnsupportedEventType {
        /// The type received.
        event_type: String,
    },
    /// `api_version` is not 1.
    #[error("unsupported api_version {api_version}")]
    UnsupportedApiVersion {
        /// The version received.
        api_version: i32,
    },
    /// The payment does not match the merchant's expectation.
    #[error("{field} does not match: expected {expected}, got {actual}")]
    ExpectationMismatch {
        /// `external_reference`, `amount_minor`, `currency` or `test_mode`.
        field: String,
        /// Expected value.
        expected: String,
        /// Received value.
        actual: String,
    },
}

impl From<core::WebhookError> for WebhookError {
    fn from(e: core::WebhookError) -> Self {
        use core::WebhookError as C;
        match e {
            C::NoSecrets => WebhookError::NoSecrets,
            C::MissingHeader(h) => WebhookError::MissingHeader {
                header: h.to_owned(),
            },
            C::MalformedTimestamp => WebhookError::MalformedTimestamp,
            C::TimestampTooOld { age_secs } => WebhookError::TimestampTooOld {
                age_seconds: long(age_secs),
            },
            C::TimestampInFuture { ahead_secs } => WebhookError::TimestampInFuture {
                ahead_seconds: long(ahead_secs),
            },
            C::MalformedSignature => WebhookError::MalformedSignature,
            C::SignatureMismatch => WebhookError::SignatureMismatch,
            C::InvalidBody(detail) => WebhookError::InvalidBody { detail },
            C::EventIdMismatch => WebhookError::EventIdMismatch,
            C::UnsupportedEventType(event_type) => {
                WebhookError::UnsupportedEventType { event_type }
            }
            C::UnsupportedApiVersion(api_version) => WebhookError::UnsupportedApiVersion {
                api_version: int(api_version),
            },
            C::ExpectationMismatch {
                field,
                expected,
                actual,
            } => WebhookError::ExpectationMismatch {
                field: field.to_owned(),
                expected,
                actual,
            },
        }
    }
}

/// `data` of a notification: the payment snapshot at that status (no checkout token, return
/// address or secret).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct NotificationData {
    /// Payment number.
    pub order_no: String,
    /// Merchant business reference.
    pub external_reference: String,
    /// Channel (empty until chosen).
    pub payment_no: String,
    /// Amount in minor units.
    pub amount_minor: i64,
    /// Currency.
    pub currency: String,
    /// Currency precision.
    pub currency_decimals: i32,
    /// Status at this notification (only `Paid` confirms payment).
    pub status: MerchantPaymentStatus,
    /// Apply only if higher than what is stored (see `statusVersionDecision`).
    pub status_version: i64,
    /// Whether the channel is a test channel.
    pub test_mode: bool,
    /// Expiry of the payment.
    pub expires_at: OffsetDateTime,
    /// Stable payment event number (not the notification `id`); book payments by it.
    pub event_id: Option<String>,
    /// Channel transaction number.
    pub provider_trade_no: Option<String>,
    /// Payment time (this, not `created_at`).
    pub occurred_at: Option<OffsetDateTime>,
}

impl From<CoreData> for NotificationData {
    fn from(d: CoreData) -> Self {
        NotificationData {
            order_no: d.order_no,
            external_reference: d.external_reference,
            payment_no: d.payment_no,
            amount_minor: long(d.amount_minor.get()),
            currency: d.currency,
            currency_decimals: int(d.currency_decimals),
            status: d.status.into(),
            status_version: long(d.status_version),
            test_mode: d.test_mode,
            expires_at: d.expires_at,
            event_id: d.event_id,
            provider_trade_no: d.provider_trade_no,
            occurred_at: d.occurred_at,
        }
    }
}

/// A verified status notification.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StatusNotification {
    /// Notification event number; deduplicate by it.
    pub id: String,
    /// Always `merchant_payment.status_changed`.
    pub event_type: String,
    /// 1.
    pub api_version: i32,
    /// Notification generation time (not the payment time).
    pub created_at: OffsetDateTime,
    /// The snapshot.
    pub data: NotificationData,
}

impl From<core::StatusNotification> for StatusNotification {
    fn from(n: core::StatusNotification) -> Self {
        StatusNotification {
            id: n.id,
            event_type: n.event_type,
            api_version: int(n.api_version),
            created_at: n.created_at,
            data: n.data.into(),
        }
    }
}

/// Verifies signed status notifications against one or more secrets.
#[derive(uniffi::Object)]
pub struct WebhookVerifier {
    inner: CoreVerifier,
}

#[uniffi::export]
impl WebhookVerifier {
    /// A verifier accepting a signature by any of `secrets` (keep old secrets while old
    /// payments may still notify). `tolerance_seconds` defaults to the contract's 5 minutes.
    #[uniffi::constructor(default(tolerance_seconds = None))]
    pub fn new(
        secrets: Vec<Arc<Secret>>,
        tolerance_seconds: Option<i64>,
    ) -> Result<Arc<Self>, WebhookError> {
        let mut inner = CoreVerifier::new(secrets.iter().map(|s| s.inner.clone()))?;
        if let Some(secs) = tolerance_seconds {
            // A negative tolerance is treated as zero (only the exact second passes).
            inner = inner.with_tolerance(Duration::from_secs(u64::try_from(secs).unwrap_or(0)));
        }
        Ok(Arc::new(WebhookVerifier { inner }))
    }

    /// Verifies one delivery against the system clock: the three header values (null when
    /// absent) and the raw body bytes exactly as received. Returns the typed notification.
    pub fn verify(
        &self,
        event_id: Option<String>,
        timestamp: Option<String>,
        signature: Option<String>,
        body: Vec<u8>,
    ) -> Result<StatusNotification, WebhookError> {
        Ok(self
            .inner
            .verify(
                event_id.as_deref(),
                timestamp.as_deref(),
                signature.as_deref(),
                &body,
            )?
            .into())
    }

    /// `verify` with "now" given in Unix seconds (tests, servers with their own time source).
    pub fn verify_at(
        &self,
        event_id: Option<String>,
        timestamp: Option<String>,
        signature: Option<String>,
        body: Vec<u8>,
        now_unix_seconds: i64,
    ) -> Result<StatusNotification, WebhookError> {
        Ok(self
            .inner
            .verify_at(
                now_unix_seconds,
                event_id.as_deref(),
                timestamp.as_deref(),
                signature.as_deref(),
                &body,
            )?
            .into())
    }
}

/// Signs notifications like the service does, for the host app's own receiver tests.
#[derive(uniffi::Object)]
pub struct TestSigner {
    inner: CoreSigner,
}

#[uniffi::export]
impl TestSigner {
    /// A signer with this secret.
    #[uniffi::constructor]
    pub fn new(secret: Arc<Secret>) -> Arc<Self> {
        Arc::new(TestSigner {
            inner: CoreSigner::new(secret.inner.clone()),
        })
    }

    /// The `X-Service-Signature` value of `body` delivered at `timestamp` (Unix seconds).
    pub fn signature(&self, timestamp: i64, body: Vec<u8>) -> String {
        self.inner.signature(timestamp, &body)
    }
}

/// What to do with an incoming snapshot given the stored `status_version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum VersionDecision {
    /// Newer than what is stored: apply it.
    Apply,
    /// Same version: a repeat; acknowledge, change nothing.
    Duplicate,
    /// Lower than what is stored: must not overwrite the newer state.
    Stale,
}

/// Compares an incoming `status_version` with the stored one (null when nothing is stored): a
/// lower version never overwrites a higher one.
#[uniffi::export]
pub fn status_version_decision(stored: Option<i64>, incoming: i64) -> VersionDecision {
    // Versions are never negative: a negative stored value counts as nothing stored, a
    // negative incoming one as stale.
    let Ok(incoming) = u64::try_from(incoming) else {
        return VersionDecision::Stale;
    };
    let stored = stored.and_then(|s| u64::try_from(s).ok());
    match core::status_version_decision(stored, incoming) {
        CoreDecision::Apply => VersionDecision::Apply,
        CoreDecision::Duplicate => VersionDecision::Duplicate,
        CoreDecision::Stale => VersionDecision::Stale,
    }
}

/// What the merchant's own order says the payment must be.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PaymentExpectation {
    /// The merchant's business order reference.
    pub external_reference: String,
    /// The amount asked for, in minor units.
    pub amount_minor: i64,
    /// The currency asked for.
    pub currency: String,
    /// Whether a test channel is acceptable (false for live orders).
    pub test_mode: bool,
}

impl PaymentExpectation {
    fn to_core(&self) -> Result<CoreExpectation, WebhookError> {
        let amount =
            minor("amount_minor", self.amount_minor).map_err(|e| invalid_amount(e.to_string()))?;
        Ok(CoreExpectation {
            external_reference: self.external_reference.clone(),
            amount_minor: amount,
            currency: self.currency.clone(),
            test_mode: self.test_mode,
        })
    }

    /// The core's field check; a payment amount that is not positive never matches (checked
    /// before the expectation's own amount).
    fn check(
        &self,
        reference: &str,
        amount_minor: i64,
        currency: &str,
        test_mode: bool,
    ) -> Result<(), WebhookError> {
        let amount = minor("amount_minor", amount_minor)
            .map_err(|_| invalid_amount(amount_minor.to_string()))?;
        Ok(self
            .to_core()?
            .check_fields(reference, amount, currency, test_mode)?)
    }
}

/// An `amount_minor` outside the contract's range (not positive, or above the maximum) never
/// matches.
fn invalid_amount(actual: String) -> WebhookError {
    WebhookError::ExpectationMismatch {
        field: "amount_minor".into(),
        expected: "a positive amount_minor".into(),
        actual,
    }
}

/// Checks a verified notification's snapshot against the merchant's expectation (reference,
/// amount, currency, `test_mode`).
#[uniffi::export]
pub fn check_notification(
    expectation: &PaymentExpectation,
    data: &NotificationData,
) -> Result<(), WebhookError> {
    expectation.check(
        &data.external_reference,
        data.amount_minor,
        &data.currency,
        data.test_mode,
    )
}

/// Checks a queried payment against the merchant's expectation (reconciliation by query).
#[uniffi::export]
pub fn check_payment(
    expectation: &PaymentExpectation,
    payment: &MerchantPayment,
) -> Result<(), WebhookError> {
    expectation.check(
        &payment.external_reference,
        payment.amount_minor,
        &payment.currency,
        payment.test_mode,
    )
}
