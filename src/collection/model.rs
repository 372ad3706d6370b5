//! Merchant-collection resources in the service's own JSON shapes: channels, merchant payments,
//! notification delivery records.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::OffsetDateTime;
use url::Url;

use crate::money::{FixedPoint8, MinorAmount, Money, MoneyError};
use crate::secret::Secret;

macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $v,)*
            /// A value the contract does not list (kept verbatim).
            Unknown(String),
        }

        impl $name {
            /// Wire text.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$v => $s,)*
                    $name::Unknown(s) => s,
                }
            }

            /// From wire text.
            pub fn parse(text: &str) -> Self {
                match text {
                    $($s => $name::$v,)*
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                Ok($name::parse(&String::deserialize(d)?))
            }
        }
    };
}

string_enum! {
    /// Merchant-payment status. Unknown future statuses "are treated as needing verification and
    /// never as paid": only [`MerchantPaymentStatus::Paid`] confirms payment.
    MerchantPaymentStatus {
        /// Undecided; do not deliver; do not judge failure from a local timer.
        Pending = "pending",
        /// Payment and merchant accounting confirmed.
        Paid = "paid",
        /// Deadline reached, channel result undecided; platform verifies. Not failed.
        Review = "review",
        /// No payment at expiry; a late genuine payment may still turn it to paid.
        Expired = "expired",
        /// Confirmed refund; original payment event retained.
        Refunded = "refunded",
        /// Confirmed chargeback; original payment event retained.
        Chargeback = "chargeback",
    }
}

impl MerchantPaymentStatus {
    /// True only for `paid`. `review`, `expired` and unknown statuses are never payment.
    pub fn is_paid(&self) -> bool {
        matches!(self, MerchantPaymentStatus::Paid)
    }

    /// True for statuses that need verification before any business decision (`review` and
    /// unknown future statuses).
    pub fn needs_verification(&self) -> bool {
        matches!(
            self,
            MerchantPaymentStatus::Review | MerchantPaymentStatus::Unknown(_)
        )
    }
}

string_enum! {
    /// Channel `provider`.
    ChannelProvider {
        /// A card payment provider whose signed webhook is configured.
        CardProvider = "card-provider",
        /// The platform's own coin.
        PlatformCoin = "platform-coin",
    }
}

string_enum! {
    /// Channel `owner`.
    ChannelOwner {
        /// Platform channel (collected and credited by the platform).
        Platform = "platform",
        /// Merchant-own channel (collected by the merchant).
        Merchant = "merchant",
    }
}

string_enum! {
    /// `delivery_status` of a notification delivery record.
    DeliveryStatus {
        /// Not yet delivered; attempts continue.
        Pending = "pending",
        /// Acknowledged with a 2xx.
        Delivered = "delivered",
        /// Automatic attempts exhausted (re-queue possible). Not a payment failure.
        Failed = "failed",
    }
}

/// A payment channel of the directory (`GET /openapi/v1/merchant-payment-channels`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentChannel {
    /// Real channel identifier used when creating a payment; not a display name.
    pub payment_no: String,
    /// Channel name.
    pub name: String,
    /// Provider kind.
    pub provider: ChannelProvider,
    /// `platform` or `merchant`.
    pub owner: ChannelOwner,
    /// Payment currency of the channel.
    pub currency: String,
    /// Whether the buyer must log in.
    pub login_required: bool,
    /// Administrator-assigned card-provider test channel.
    pub test_mode: bool,
}

/// `{"items": [...]}` list wrapper of the service.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Items<T> {
    pub items: Vec<T>,
}

/// The `checkout_url` of a payment: an absolute HTTPS address carrying a per-order checkout
/// token. Redacted in `Debug`/`Display` (only the origin shows) and zeroized on drop; not proof
/// of payment.
#[derive(Clone, PartialEq, Eq)]
pub struct CheckoutUrl(Secret);

impl CheckoutUrl {
    /// The full address (with its token), to hand to the buyer's browser. Never log it.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }

    /// The full address as a [`Secret`], moved rather than copied.
    pub fn into_secret(self) -> Secret {
        self.0
    }

    /// The parsed address (with its token).
    pub fn to_url(&self) -> Option<Url> {
        Url::parse(self.0.expose()).ok()
    }

    fn redacted(&self) -> String {
        match Url::parse(self.0.expose()) {
            Ok(u) => format!("{}/[REDACTED]", u.origin().ascii_serialization()),
            Err(_) => "[REDACTED]".into(),
        }
    }
}

impl fmt::Debug for CheckoutUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CheckoutUrl({})", self.redacted())
    }
}

impl fmt::Display for CheckoutUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl Serialize for CheckoutUrl {
    /// Serialized as the service sends it, so FFI layers can pass the JSON through.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.expose())
    }
}

impl<'de> Deserialize<'de> for CheckoutUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(CheckoutUrl(Secret::deserialize(d)?))
    }
}

/// A merchant payment (create response, query, list item).
///
/// The create response lacks the confirmation fields and `status_version`: it reads as `None`
/// (never 0, which a historical never-changed record may really carry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MerchantPayment {
    /// Service-assigned payment number.
    pub order_no: String,
    /// Merchant's business order reference.
    pub external_reference: String,
    /// Empty until the buyer chose a method; afterwards the real channel.
    #[serde(default)]
    pub payment_no: String,
    /// Amount in minor units of `currency`.
    pub amount_minor: MinorAmount,
    /// Uppercase currency code.
    pub currency: String,
    /// Precision of the currency (scale of `amount_minor`): 0 to [`crate::money::MAX_SCALE`];
    /// a larger one fails decoding.
    #[serde(deserialize_with = "crate::money::bounds::decimals")]
    pub currency_decimals: u32,
    /// Status (only `paid` confirms payment).
    pub status: MerchantPaymentStatus,
    /// Per-payment monotonically increasing version (0 for historical never-changed records);
    /// `None` when the answer does not carry it (the create response: "returned by query and in
    /// notifications"). Serialized as `null` then, so FFI layers see "absent", not 0.
    #[serde(default)]
    pub status_version: Option<u64>,
    /// False until a channel is chosen.
    pub test_mode: bool,
    /// Checkout address with its token (redacted in `Debug`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkout_url: Option<CheckoutUrl>,
    /// Saved merchant return address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_url: Option<String>,
    /// Expiry, fixed at creation (RFC 3339 with zone).
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// Stable payment event number, set once confirmed; book payments idempotently by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Channel transaction number, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_trade_no: Option<String>,
    /// Payment confirmation time (RFC 3339, zone preserved).
    #[serde(
        default,
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub occurred_at: Option<OffsetDateTime>,
    /// Platform-locked settlement amount in platform coin (eight-decimal); not proof of payment.
    /// The contract types it as a string holding the fixed-point integer.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "fixed_point8_string"
    )]
    pub settlement_coin: Option<FixedPoint8>,
}

/// `Option<FixedPoint8>` carried as a JSON string of the raw integer (`"1250000000"`).
mod fixed_point8_string {
    use super::FixedPoint8;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<FixedPoint8>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(f) => s.serialize_some(&f.raw().to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<FixedPoint8>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
        }
        let raw = match Option::<Raw>::deserialize(d)? {
            None => return Ok(None),
            Some(Raw::Int(i)) => i,
            Some(Raw::Text(t)) => t.parse::<i64>().map_err(|_| {
                serde::de::Error::custom("settlement_coin is not an integer string")
            })?,
        };
        // A settlement amount is never negative.
        if raw < 0 {
            return Err(serde::de::Error::custom(
                "settlement_coin must not be negative",
            ));
        }
        Ok(Some(FixedPoint8::from_raw(raw)))
    }
}

impl MerchantPayment {
    /// The amount for display: `amount_minor` at `currency_decimals` in `currency`, shown as
    /// `12.50 USD`. A precision above [`crate::MAX_SCALE`] (never decoded from the service) is
    /// [`MoneyError::UnsupportedScale`].
    pub fn money(&self) -> Result<Money, MoneyError> {
        self.amount_minor
            .with_currency(self.currency.clone(), self.currency_decimals)
    }
}

/// Result of creating a merchant payment: the payment and the idempotency key used (persist it
/// to retry with the same key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedMerchantPayment {
    /// The idempotency key sent.
    pub idempotency_key: String,
    /// The payment as created.
    #[serde(flatten)]
    pub payment: MerchantPayment,
}

/// Query of `GET /openapi/v1/merchant-payments`: at least one filter; both must match.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListMerchantPaymentsQuery {
    /// Merchant business reference filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_reference: Option<String>,
    /// Payment number filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_no: Option<String>,
    /// 1 to 100 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Built like [`crate::ProductQuery`]: a constructor (here one per required filter, as the
/// contract needs at least one), then `with_*` methods.
impl ListMerchantPaymentsQuery {
    /// Filter by business reference.
    pub fn by_external_reference(reference: impl Into<String>) -> Self {
        ListMerchantPaymentsQuery {
            external_reference: Some(reference.into()),
            ..Default::default()
        }
    }

    /// Filter by payment number.
    pub fn by_order_no(order_no: impl Into<String>) -> Self {
        ListMerchantPaymentsQuery {
            order_no: Some(order_no.into()),
            ..Default::default()
        }
    }

    /// Also filters by business reference (both filters must match).
    pub fn with_external_reference(mut self, reference: impl Into<String>) -> Self {
        self.external_reference = Some(reference.into());
        self
    }

    /// Also filters by payment number (both filters must match).
    pub fn with_order_no(mut self, order_no: impl Into<String>) -> Self {
        self.order_no = Some(order_no.into());
        self
    }

    /// Sets the page size, 1 to 100 (checked before sending).
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// One delivery attempt of a notification. Only `finished_at` is shown by the contract (an
/// attempt without it was interrupted or is in progress); other fields are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryAttempt {
    /// When the attempt finished; `None` means interrupted or still in progress.
    #[serde(default)]
    pub finished_at: Option<serde_json::Value>,
    /// The other fields of the attempt, as sent.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// A notification delivery record (`GET .../{order_no}/notifications`). The contract does not
/// show these fields' types, so the loosely specified ones stay JSON values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryRecord {
    /// Notification event number (the `id` of the notification).
    pub event_id: String,
    /// Status version of the snapshot.
    pub status_version: u64,
    /// The snapshot sent.
    #[serde(default)]
    pub event: serde_json::Value,
    /// `pending`, `delivered` or `failed`.
    pub delivery_status: DeliveryStatus,
    /// Cumulative attempts.
    #[serde(default)]
    pub attempts: u64,
    /// Next automatic attempt, if any.
    #[serde(default)]
    pub next_attempt_at: Option<serde_json::Value>,
    /// HTTP status of the last attempt, if any.
    #[serde(default)]
    pub last_http_status: Option<serde_json::Value>,
    /// Error of the last attempt, if any.
    #[serde(default)]
    pub last_error: Option<serde_json::Value>,
    /// The most recent 20 attempts.
    #[serde(default)]
    pub delivery_attempts: Vec<DeliveryAttempt>,
}

/// Response of the notification re-queue: `{"accepted": true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryAccepted {
    /// Whether the request was accepted (it queues nothing extra for delivered or pending
    /// events).
    pub accepted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_status_is_never_paid() {
        let s = MerchantPaymentStatus::parse("settled_maybe");
        assert_eq!(s, MerchantPaymentStatus::Unknown("settled_maybe".into()));
        assert!(!s.is_paid());
        assert!(s.needs_verification());
        for known in ["pending", "review", "expired", "refunded", "chargeback"] {
            assert!(!MerchantPaymentStatus::parse(known).is_paid());
        }
        assert!(MerchantPaymentStatus::parse("paid").is_paid());
        assert!(!MerchantPaymentStatus::parse("PAID").is_paid());
    }

    #[test]
    fn payment_decodes_zoned_times_and_redacts_checkout_token() {
        let json = r#"{"order_no":"MP1","external_reference":"ref-1","payment_no":"",
          "amount_minor":1250,"currency":"USD","currency_decimals":2,"status":"pending",
          "test_mode":false,"checkout_url":"https://pay.example/checkout/tok_SECRET123",
          "expires_at":"2026-11-22T14:00:00+08:00","settlement_coin":"1250000000"}"#;
        let p: MerchantPayment = serde_json::from_str(json).unwrap();
        assert_eq!(
            p.settlement_coin,
            Some(FixedPoint8::from_raw(1_250_000_000))
        );
        assert_eq!(p.expires_at.offset().whole_hours(), 8);
        assert_eq!(p.status_version, None);
        assert!(serde_json::to_value(&p).unwrap()["status_version"].is_null());
        let dbg = format!("{p:?}");
        assert!(!dbg.contains("tok_SECRET123"), "{dbg}");
        assert!(dbg.contains("https://pay.example"));
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(back["expires_at"], "2026-11-22T14:00:00+08:00");
        assert_eq!(back["settlement_coin"], "1250000000");
        assert_eq!(
            back["checkout_url"],
            "https://pay.example/checkout/tok_SECRET123"
        );
    }

    /// Issue 10 item 5: `currency_decimals` is the scale of `amount_minor`; 4294967295 (or
    /// anything above 18) fails decoding, as does a negative `settlement_coin`.
    #[test]
    fn payment_rejects_huge_precision_and_negative_settlement() {
        let base = serde_json::json!({"order_no":"MP1","external_reference":"ref-1",
          "amount_minor":1250,"currency":"USD","currency_decimals":2,"status":"pending",
          "test_mode":false,"expires_at":"2026-11-22T14:00:00+08:00"});
        assert!(serde_json::from_value::<MerchantPayment>(base.clone()).is_ok());
        for (field, value) in [
            ("currency_decimals", serde_json::json!(4294967295u32)),
            ("currency_decimals", serde_json::json!(19)),
            ("settlement_coin", serde_json::json!("-1")),
            ("settlement_coin", serde_json::json!(-1)),
        ] {
            let mut v = base.clone();
            v[field] = value.clone();
            assert!(
                serde_json::from_value::<MerchantPayment>(v).is_err(),
                "{field} = {value}"
            );
        }
    }
}
