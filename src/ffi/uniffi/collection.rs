//! Records of merchant collection: channels, merchant payments, delivery records.
//!
//! Contract rules: `amount_minor` is an integer in minor units (scale `currency_decimals`);
//! status is an enum whose `Unknown` case is never paid; `checkout_url` carries a checkout token
//! that must not be logged (a `Secret` here); `expires_at`/`occurred_at` keep their zone.

use std::collections::HashMap;
use std::sync::Arc;

use time::OffsetDateTime;

use crate::collection::create::CreateMerchantPayment;
use crate::collection::model as core;

use super::error::Result;
use super::ints::{int, long, unsigned_opt};
use super::money::minor;
use super::secret::Secret;
use super::types::{JsonValue, json_map};

/// Merchant-payment status. Only `Paid` confirms payment; `Unknown` (a future status) needs
/// verification and is never paid.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
#[uniffi::export(Display)]
pub enum MerchantPaymentStatus {
    /// Undecided; do not deliver; do not judge failure from a local timer.
    Pending,
    /// Payment and merchant accounting confirmed.
    Paid,
    /// Deadline reached, channel result undecided; platform verifies. Not failed.
    Review,
    /// No payment at expiry; a late genuine payment may still turn it to paid.
    Expired,
    /// Confirmed refund.
    Refunded,
    /// Confirmed chargeback.
    Chargeback,
    /// A status the contract does not list: needs verification, never paid.
    Unknown {
        /// The wire text.
        value: String,
    },
}

impl From<core::MerchantPaymentStatus> for MerchantPaymentStatus {
    fn from(s: core::MerchantPaymentStatus) -> Self {
        use core::MerchantPaymentStatus as C;
        match s {
            C::Pending => MerchantPaymentStatus::Pending,
            C::Paid => MerchantPaymentStatus::Paid,
            C::Review => MerchantPaymentStatus::Review,
            C::Expired => MerchantPaymentStatus::Expired,
            C::Refunded => MerchantPaymentStatus::Refunded,
            C::Chargeback => MerchantPaymentStatus::Chargeback,
            C::Unknown(value) => MerchantPaymentStatus::Unknown { value },
        }
    }
}

/// Whether a status confirms payment: true only for `Paid` (never for `Unknown`).
#[uniffi::export]
pub fn merchant_payment_status_is_paid(status: &MerchantPaymentStatus) -> bool {
    matches!(status, MerchantPaymentStatus::Paid)
}

/// A channel's `provider`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum ChannelProvider {
    /// `card-provider`.
    CardProvider,
    /// `platform-coin`.
    PlatformCoin,
    /// A value the contract does not list.
    Unknown {
        /// The wire text.
        value: String,
    },
}

/// A channel's `owner`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum ChannelOwner {
    /// `platform`.
    Platform,
    /// `merchant`.
    Merchant,
    /// A value the contract does not list.
    Unknown {
        /// The wire text.
        value: String,
    },
}

/// A channel of the merchant-collection directory.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
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

impl From<core::PaymentChannel> for PaymentChannel {
    fn from(c: core::PaymentChannel) -> Self {
        PaymentChannel {
            payment_no: c.payment_no,
            name: c.name,
            provider: match c.provider {
                core::ChannelProvider::CardProvider => ChannelProvider::CardProvider,
                core::ChannelProvider::PlatformCoin => ChannelProvider::PlatformCoin,
                core::ChannelProvider::Unknown(value) => ChannelProvider::Unknown { value },
            },
            owner: match c.owner {
                core::ChannelOwner::Platform => ChannelOwner::Platform,
                core::ChannelOwner::Merchant => ChannelOwner::Merchant,
                core::ChannelOwner::Unknown(value) => ChannelOwner::Unknown { value },
            },
            currency: c.currency,
            login_required: c.login_required,
            test_mode: c.test_mode,
        }
    }
}

/// A merchant payment (create response, query, list item).
#[derive(Debug, Clone, uniffi::Record)]
pub struct MerchantPayment {
    /// Service-assigned payment number.
    pub order_no: String,
    /// Merchant's business order reference.
    pub external_reference: String,
    /// Empty until the buyer chose a method; afterwards the real channel.
    pub payment_no: String,
    /// Amount in minor units of `currency` (scale `currency_decimals`).
    pub amount_minor: i64,
    /// Uppercase currency code.
    pub currency: String,
    /// Precision of the currency.
    pub currency_decimals: i32,
    /// Status; only `Paid` confirms payment.
    pub status: MerchantPaymentStatus,
    /// Per-payment monotonically increasing version (0 for historical never-changed records);
    /// null on a create response, which does not carry it.
    pub status_version: Option<i64>,
    /// False until a channel is chosen.
    pub test_mode: bool,
    /// Checkout address with its per-order token (returned on creation): open it with
    /// `expose()`, never log it. Not proof of payment.
    pub checkout_url: Option<Arc<Secret>>,
    /// Saved merchant return address.
    pub return_url: Option<String>,
    /// Expiry, fixed at creation (zone preserved).
    pub expires_at: OffsetDateTime,
    /// Stable payment event number once confirmed; book payments idempotently by it.
    pub event_id: Option<String>,
    /// Channel transaction number, once known.
    pub provider_trade_no: Option<String>,
    /// Payment confirmation time (zone preserved).
    pub occurred_at: Option<OffsetDateTime>,
    /// Platform-locked settlement in platform coin, eight-decimal fixed point; not proof of
    /// payment.
    pub settlement_coin: Option<i64>,
}

impl From<core::MerchantPayment> for MerchantPayment {
    fn from(p: core::MerchantPayment) -> Self {
        MerchantPayment {
            order_no: p.order_no,
            external_reference: p.external_reference,
            payment_no: p.payment_no,
            amount_minor: long(p.amount_minor.get()),
            currency: p.currency,
            currency_decimals: int(p.currency_decimals),
            status: p.status.into(),
            status_version: p.status_version.map(long),
            test_mode: p.test_mode,
            checkout_url: p.checkout_url.map(|u| Secret::wrap(u.into_secret())),
            return_url: p.return_url,
            expires_at: p.expires_at,
            event_id: p.event_id,
            provider_trade_no: p.provider_trade_no,
            occurred_at: p.occurred_at,
            settlement_coin: p.settlement_coin.map(|c| c.raw()),
        }
    }
}

/// Parameters of `POST /openapi/v1/merchant-payments`. Every limit of the contract is checked
/// before sending. Leave `idempotency_key` null to have one generated (it is returned in
/// `CreatedMerchantPayment`: persist it and reuse it to retry the same creation).
#[derive(Debug, Clone, uniffi::Record)]
pub struct CreateMerchantPaymentRequest {
    /// Merchant's business order reference (non-empty after trim, max 191 bytes).
    pub external_reference: String,
    /// Amount in minor units (positive, max 9007199254740991).
    pub amount_minor: i64,
    /// Uppercase currency code.
    pub currency: String,
    /// Idempotency key (max 128 bytes); generated when null.
    #[uniffi(default = None)]
    pub idempotency_key: Option<String>,
    /// Restrict to this channel; null lets the buyer choose at checkout.
    #[uniffi(default = None)]
    pub payment_no: Option<String>,
    /// Shown to the buyer (max 500 bytes).
    #[uniffi(default = None)]
    pub description: Option<String>,
    /// Seconds until expiry, 60 to 7200 (service default 1800).
    #[uniffi(default = None)]
    pub expires_in: Option<i32>,
    /// Per-payment notification switch (false must not be combined with address or secret).
    #[uniffi(default = None)]
    pub notify_enabled: Option<bool>,
    /// Notification address (public HTTPS), together with `notify_secret`.
    #[uniffi(default = None)]
    pub notify_url: Option<String>,
    /// Notification signing secret (32 to 256 bytes, no whitespace).
    #[uniffi(default = None)]
    pub notify_secret: Option<Arc<Secret>>,
    /// Return address for the buyer's browser after `paid`.
    #[uniffi(default = None)]
    pub return_url: Option<String>,
    /// When set, the created payment's `currency_decimals` must equal it.
    #[uniffi(default = None)]
    pub expected_currency_decimals: Option<i32>,
}

impl CreateMerchantPaymentRequest {
    pub(crate) fn to_core(&self) -> Result<CreateMerchantPayment> {
        let mut r = CreateMerchantPayment::new(
            self.external_reference.clone(),
            minor("amount_minor", self.amount_minor)?,
            self.currency.clone(),
        );
        if let Some(key) = &self.idempotency_key {
            r.idempotency_key = key.clone();
        }
        r.payment_no = self.payment_no.clone();
        r.description = self.description.clone();
        r.expires_in = unsigned_opt("expires_in", self.expires_in)?;
        r.notify_enabled = self.notify_enabled;
        r.notify_url = self.notify_url.clone();
        r.notify_secret = self.notify_secret.as_ref().map(|s| s.inner.clone());
        r.return_url = self.return_url.clone();
        r.expected_currency_decimals = unsigned_opt(
            "expected_currency_decimals",
            self.expected_currency_decimals,
        )?;
        Ok(r)
    }
}

/// A created merchant payment and the idempotency key that was sent.
#[derive(Debug, Clone, uniffi::Record)]
pub struct CreatedMerchantPayment {
    /// The idempotency key sent (persist it; retry the same creation with it).
    pub idempotency_key: String,
    /// The payment as created (amount, currency and precision checked against the request).
    pub payment: MerchantPayment,
}

impl From<core::CreatedMerchantPayment> for CreatedMerchantPayment {
    fn from(c: core::CreatedMerchantPayment) -> Self {
        CreatedMerchantPayment {
            idempotency_key: c.idempotency_key,
            payment: c.payment.into(),
        }
    }
}

/// Filter of `GET /openapi/v1/merchant-payments`: at least one of `external_reference` and
/// `order_no` (both must match when both are given).
#[derive(Debug, Clone, Default, PartialEq, Eq, uniffi::Record)]
pub struct ListMerchantPaymentsQuery {
    /// Business reference filter.
    #[uniffi(default = None)]
    pub external_reference: Option<String>,
    /// Payment number filter.
    #[uniffi(default = None)]
    pub order_no: Option<String>,
    /// 1 to 100 (default 20).
    #[uniffi(default = None)]
    pub limit: Option<i32>,
}

impl ListMerchantPaymentsQuery {
    pub(crate) fn into_core(self) -> Result<core::ListMerchantPaymentsQuery> {
        Ok(core::ListMerchantPaymentsQuery {
            external_reference: self.external_reference,
            order_no: self.order_no,
            limit: unsigned_opt("limit", self.limit)?,
        })
    }
}

/// `delivery_status` of a notification delivery record.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum DeliveryStatus {
    /// Not yet delivered; attempts continue.
    Pending,
    /// Acknowledged with a 2xx.
    Delivered,
    /// Automatic attempts exhausted (re-queue possible); not a payment failure.
    Failed,
    /// A value the contract does not list.
    Unknown {
        /// The wire text.
        value: String,
    },
}

/// One delivery attempt. The contract shows only `finished_at` (absent: interrupted or in
/// progress); the other fields are kept as JSON values.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct DeliveryAttempt {
    /// When the attempt finished; null when interrupted or still in progress.
    pub finished_at: Option<JsonValue>,
    /// The other fields of the attempt, as sent.
    pub other: HashMap<String, JsonValue>,
}

/// A notification delivery record. Fields whose types the contract does not show stay JSON
/// values.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct DeliveryRecord {
    /// Notification event number.
    pub event_id: String,
    /// Status version of the snapshot.
    pub status_version: i64,
    /// The snapshot sent.
    pub event: JsonValue,
    /// Delivery state.
    pub delivery_status: DeliveryStatus,
    /// Cumulative attempts.
    pub attempts: i64,
    /// Next automatic attempt, if any.
    pub next_attempt_at: Option<JsonValue>,
    /// HTTP status of the last attempt, if any.
    pub last_http_status: Option<JsonValue>,
    /// Error of the last attempt, if any.
    pub last_error: Option<JsonValue>,
    /// The most recent 20 attempts.
    pub delivery_attempts: Vec<DeliveryAttempt>,
}

impl From<core::DeliveryRecord> for DeliveryRecord {
    fn from(r: core::DeliveryRecord) -> Self {
        DeliveryRecord {
            event_id: r.event_id,
            status_version: long(r.status_version),
            event: r.event.into(),
            delivery_status: match r.delivery_status {
                core::DeliveryStatus::Pending => DeliveryStatus::Pending,
                core::DeliveryStatus::Delivered => DeliveryStatus::Delivered,
                core::DeliveryStatus::Failed => DeliveryStatus::Failed,
                core::DeliveryStatus::Unknown(value) => DeliveryStatus::Unknown { value },
            },
            attempts: long(r.attempts),
            next_attempt_at: r.next_attempt_at.map(Into::into),
            last_http_status: r.last_http_status.map(Into::into),
            last_error: r.last_error.map(Into::into),
            delivery_attempts: r
                .delivery_attempts
                .into_iter()
                .map(|a| DeliveryAttempt {
                    finished_at: a.finished_at.map(Into::into),
                    other: json_map(a.other),
                })
                .collect(),
        }
    }
}

impl std::fmt::Display for MerchantPaymentStatus {
    /// The wire text (`paid`, or the unknown value as sent).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MerchantPaymentStatus::Pending => "pending",
            MerchantPaymentStatus::Paid => "paid",
            MerchantPaymentStatus::Review => "review",
            MerchantPaymentStatus::Expired => "expired",
            MerchantPaymentStatus::Refunded => "refunded",
            MerchantPaymentStatus::Chargeback => "chargeback",
            MerchantPaymentStatus::Unknown { value } => value,
        })
    }
}
