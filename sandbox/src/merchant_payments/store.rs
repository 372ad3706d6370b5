//! The stored merchant payment and the store that holds payments, idempotency records,
//! checkout tokens, the sweep state and fee funds. Data only: no web framework types and no
//! application state.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use time::OffsetDateTime;

use super::idempotency::IdempotencyRecord;

/// A merchant-payment state of the contract ("States and transitions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Undecided.
    Pending,
    /// Payment and merchant accounting confirmed.
    Paid,
    /// Deadline reached while the channel result is undecided.
    Review,
    /// Verified to have no payment at expiry.
    Expired,
    /// Confirmed refund; the payment event is kept.
    Refunded,
    /// Confirmed chargeback; the payment event is kept.
    Chargeback,
}

impl Status {
    /// Every state, in the contract's order.
    pub const ALL: [Status; 6] = [
        Status::Pending,
        Status::Paid,
        Status::Review,
        Status::Expired,
        Status::Refunded,
        Status::Chargeback,
    ];

    /// The wire name (`pending`, `paid`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Paid => "paid",
            Status::Review => "review",
            Status::Expired => "expired",
            Status::Refunded => "refunded",
            Status::Chargeback => "chargeback",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// A value that must never be printed (checkout tokens, notification secrets).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl Drop for Secret {
    /// Overwrites the secret's bytes before its memory is released.
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.0).into_bytes();
        bytes.fill(0);
        std::hint::black_box(&bytes);
    }
}

impl Secret {
    /// The secret text, for the few places that must use it (signing, token lookup).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// The notification address and signing secret effective for one payment, fixed at creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyTarget {
    /// Delivery address.
    pub url: String,
    /// Signing secret.
    pub secret: Secret,
}

/// A payment method offered on one payment's checkout: the channel and the per-order method
/// identifier the checkout page uses, so a submitted channel number cannot pay another channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutMethod {
    /// Per-order method identifier shown on the checkout page.
    pub method_id: String,
    /// The real channel behind it.
    pub payment_no: String,
}

/// A channel payment session the buyer started. Once started, the method is locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelSession {
    /// The channel of the session.
    pub payment_no: String,
    /// The logged-in buyer who started it, if any.
    pub user: Option<String>,
    /// When it was started (sandbox clock).
    pub started_at: OffsetDateTime,
    /// The channel's session-creation response was unclear.
    pub unclear: bool,
    /// The channel confirmed that the session expired unpaid (background verification under
    /// review; see [`super::rules::verify_channel_expiry`]).
    pub channel_expired: bool,
    /// Channel transaction number of the session (for platform coin: marker, colon, order_no).
    pub trade_no: String,
    /// Whether the channel is an administrator-assigned test channel.
    pub test_mode: bool,
}

/// One step of a payment's status timeline: the version it made, when (sandbox clock) and why.
/// Kept for the sandbox dashboard and the inspect view; never part of a contract answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusStep {
    /// The status the payment moved to.
    pub status: Status,
    /// Its `status_version` after the change.
    pub status_version: u64,
    /// When it changed (sandbox clock).
    pub at: OffsetDateTime,
    /// What made it change, in words.
    pub why: String,
}

/// One merchant payment as the service stores it.
#[derive(Debug, Clone)]
pub struct MerchantPayment {
    /// Creation order, for "newest first".
    pub seq: u64,
    /// Service-assigned payment number.
    pub order_no: String,
    /// Owning merchant.
    pub merchant_no: String,
    /// Merchant's business reference, fixed at creation.
    pub external_reference: String,
    /// Amount in minor units of `currency`.
    pub amount_minor: i64,
    /// Uppercase currency code.
    pub currency: String,
    /// Precision of `currency`.
    pub currency_decimals: u32,
    /// Trimmed description shown to the buyer.
    pub description: Option<String>,
    /// The channel the merchant fixed at creation, if any.
    pub fixed_payment_no: Option<String>,
    /// Current state.
    pub status: Status,
    /// Increases by one on every status change.
    pub status_version: u64,
    /// Every status change, oldest first (the first is the creation as `pending`).
    pub timeline: Vec<StatusStep>,
    /// Per-order checkout token (part of `checkout_url`).
    pub checkout_token: Secret,
    /// Saved return address.
    pub return_url: Option<String>,
    /// Creation time (sandbox clock).
    pub created_at: OffsetDateTime,
    /// Payment deadline, fixed at creation.
    pub expires_at: OffsetDateTime,
    /// Platform-coin rate saved at creation (eight-decimal coin per whole currency unit).
    pub coin_rate: Option<i64>,
    /// Methods stored at creation.
    pub methods: Vec<CheckoutMethod>,
    /// The channel session, once the buyer started one.
    pub session: Option<ChannelSession>,
    /// Buyer logged in on the HTML checkout page.
    pub checkout_user: Option<String>,
    /// Stable payment event number, set when payment is confirmed.
    pub event_id: Option<String>,
    /// Channel transaction number, once known.
    pub provider_trade_no: Option<String>,
    /// Payment confirmation time.
    pub occurred_at: Option<OffsetDateTime>,
    /// Platform-locked settlement in platform coin (eight-decimal fixed point).
    pub settlement_coin: Option<i64>,
    /// Effective notification configuration, fixed at creation.
    pub notify: Option<NotifyTarget>,
    /// Platform fee reserved when a merchant-own channel payment started (0 when none, or once
    /// charged or released).
    pub fee_reserved: i64,
}

impl MerchantPayment {
    /// `payment_no` as the contract shows it: empty until a method is chosen.
    pub fn chosen_payment_no(&self) -> &str {
        self.session
            .as_ref()
            .map(|s| s.payment_no.as_str())
            .unwrap_or("")
    }
}

/// Whether the sweep is paused, and when it last ran.
#[derive(Debug, Default, Clone)]
pub struct SweepState {
    /// Set through the control endpoint so a test can prove the read-time expiry rule alone.
    pub paused: bool,
    /// Sandbox-clock minute (Unix seconds / 60) of the last sweep.
    pub last_minute: Option<i64>,
}

/// Merchant payments, idempotency records and checkout tokens.
#[derive(Debug, Default)]
pub struct PaymentStore {
    /// Payments by order number.
    pub payments: BTreeMap<String, MerchantPayment>,
    /// Checkout token → order number.
    pub by_token: HashMap<String, String>,
    /// (merchant, idempotency key) → the payment it created and its normalized parameters.
    pub idempotency: HashMap<(String, String), IdempotencyRecord>,
    /// Background sweep state.
    pub sweep: SweepState,
    /// Fee funds of merchants (merchant-own channels).
    pub fees: super::fees::FeeBook,
    next_seq: u64,
}

impl PaymentStore {
    /// The next creation sequence number.
    pub fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// The payment with this number if it belongs to `merchant_no`.
    pub fn owned_mut(&mut self, merchant_no: &str, order_no: &str) -> Option<&mut MerchantPayment> {
        self.payments
            .get_mut(order_no)
            .filter(|p| p.merchant_no == merchant_no)
    }

    /// The order number behind a checkout token.
    pub fn order_for_token(&self, token: &str) -> Option<String> {
        self.by_token.get(token).cloned()
    }
}
