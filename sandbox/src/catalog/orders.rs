//! Catalog orders and their payment sessions (contract: "Catalog orders", "POST/GET
//! {base_url}/openapi/v1/orders...").
//!
//! An order reserves stock when created and gives it back when cancelled. It is payable for
//! [`PAYMENT_WINDOW_SECONDS`] after creation; an unpaid order is cancelled after that (status 2,
//! payment status 2). A paid order (status 1) completes delivery (status 3)
//! [`FULFILMENT_SECONDS`] later on the sandbox clock. Amounts are eight-decimal fixed point;
//! payment amounts are converted with the seeded rates ([`crate::seed::COIN_RATES`]).

use std::collections::BTreeMap;

use axum::http::StatusCode;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use super::products::Product;
use crate::directory::store::Channel;
use crate::error::{ApiError, ApiResult};
use crate::seed;

/// How long an order can be paid after creation; the payment session's `expire_time`.
pub const PAYMENT_WINDOW_SECONDS: i64 = 30 * 60;
/// How long after payment delivery completes (order status 1 → 3).
pub const FULFILMENT_SECONDS: i64 = 60;
/// Card-provider handling fee, in percent of the order amount (rounded down).
pub const CARD_HANDLING_PERCENT: i64 = 1;

/// Order status numbers (contract: "Catalog order object").
pub mod status {
    /// Awaiting payment.
    pub const AWAITING_PAYMENT: u8 = 0;
    /// Paid and being processed.
    pub const PAID: u8 = 1;
    /// Cancelled.
    pub const CANCELLED: u8 = 2;
    /// Completed.
    pub const COMPLETED: u8 = 3;
}

/// A catalog payment session (`trade_no`).
#[derive(Debug, Clone)]
pub struct Trade {
    /// Payment session identifier.
    pub trade_no: String,
    /// Session expiry.
    pub expires_at: OffsetDateTime,
}

/// A catalog order.
#[derive(Debug, Clone)]
pub struct Order {
    /// Order number.
    pub order_no: String,
    /// Merchant the product belongs to.
    pub merchant_no: String,
    /// Buyer (the token's user).
    pub user_id: String,
    /// Product number.
    pub gd_no: String,
    /// Product name at ordering time.
    pub title: String,
    /// Units ordered.
    pub quantity: i64,
    /// 0-3, see [`status`].
    pub status: u8,
    /// Pricing currency and its display precision.
    pub currency: String,
    /// Display precision of `currency`.
    pub currency_decimals: u32,
    /// Amounts in the pricing currency (eight-decimal).
    pub total_amount: i64,
    /// Wholesale discount.
    pub discount_amount: i64,
    /// Channel fee.
    pub handling_amount: i64,
    /// total - discount + handling.
    pub pay_amount: i64,
    /// Payment currency (the channel's) and precision.
    pub payment_currency: String,
    /// Precision of `payment_currency`.
    pub payment_currency_decimals: u32,
    /// Amounts in the payment currency (eight-decimal).
    pub payment_subtotal: i64,
    /// Fee in the payment currency.
    pub payment_handling_amount: i64,
    /// Amount to pay in the payment currency.
    pub payment_pay_amount: i64,
    /// Channel bound to the order.
    pub payment_no: String,
    /// Its name.
    pub payment_name: String,
    /// Its provider (`platform-coin` debits the wallet during payment start).
    pub provider: String,
    /// Additional inputs given at creation.
    pub other_ipu: BTreeMap<String, String>,
    /// The payment session, once started.
    pub trade: Option<Trade>,
    /// When the order was paid.
    pub paid_at: Option<OffsetDateTime>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change.
    pub updated_at: OffsetDateTime,
}

fn label(status: u8) -> &'static str {
    match status {
        status::AWAITING_PAYMENT => "Awaiting payment",
        status::PAID => "Paid, processing",
        status::CANCELLED => "Cancelled",
        _ => "Completed",
    }
}

/// `YYYY-MM-DD HH:mm:ss`, no zone (UTC), as the contract writes catalog times.
pub fn format_time(at: OffsetDateTime) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    at.to_offset(time::UtcOffset::UTC)
        .format(&format)
        .unwrap_or_default()
}

impl Order {
    /// The catalog order object of the contract.
    pub fn to_json(&self) -> Value {
        json!({
            "order_no": self.order_no,
            "gd_no": self.gd_no,
            "title": self.title,
            "quantity": self.quantity,
            "status": self.status,
            "status_label": label(self.status),
            "currency": self.currency,
            "currency_decimals": self.currency_decimals,
            "total_amount": self.total_amount,
            "discount_amount": self.discount_amount,
            "handling_amount": self.handling_amount,
            "pay_amount": self.pay_amount,
            "payment_currency": self.payment_currency,
            "payment_currency_decimals": self.payment_currency_decimals,
            "payment_subtotal": self.payment_subtotal,
            "payment_handling_amount": self.payment_handling_amount,
            "payment_pay_amount": self.payment_pay_amount,
            "payment_no": self.payment_no,
            "payment_name": self.payment_name,
            "payment_methods": [self.payment_no],
            "trade_no": self.trade.as_ref().map(|t| t.trade_no.as_str()).unwrap_or(""),
            "paid_time": self.paid_at.map(format_time),
            "created_at": format_time(self.created_at),
            "updated_at": format_time(self.updated_at),
        })
    }

    /// Payment status of the payment status endpoint: 0 awaiting, 1 paid, 2 cancelled.
    pub fn payment_status(&self) -> u8 {
        match self.status {
            status::AWAITING_PAYMENT => 0,
            status::CANCELLED => 2,
            _ => 1,
        }
    }

    /// When an unpaid order stops being payable.
    pub fn payment_deadline(&self) -> OffsetDateTime {
        self.created_at + Duration::seconds(PAYMENT_WINDOW_SECONDS)
    }

    /// Applies what time did: an unpaid order past its deadline is cancelled (returns the
    /// units to put back in stock), a paid order past its fulfilment time completes.
    pub fn advance(&mut self, now: OffsetDateTime) -> Option<i64> {
        match self.status {
            status::AWAITING_PAYMENT if now >= self.payment_deadline() => {
                self.status = status::CANCELLED;
                self.updated_at = self.payment_deadline();
                Some(self.quantity)
            }
            status::PAID => {
                let done = self
                    .paid_at
                    .map(|paid| paid + Duration::seconds(FULFILMENT_SECONDS));
                if let Some(done) = done.filter(|done| now >= *done) {
                    self.status = status::COMPLETED;
                    self.updated_at = done;
                }
                None
            }
            _ => None,
        }
    }

    /// Marks the order paid now.
    pub fn mark_paid(&mut self, now: OffsetDateTime) {
        self.status = status::PAID;
        self.paid_at = Some(now);
        self.updated_at = now;
    }
}

/// A validated order creation request.
#[derive(Debug, Clone)]
pub struct NewOrder {
    /// Product number.
    pub gd_no: String,
    /// Units (positive).
    pub quantity: i64,
    /// Channel identifier.
    pub payment_no: String,
    /// Additional inputs.
    pub other_ipu: BTreeMap<String, String>,
}

fn required_string(body: &Value, field: &str) -> ApiResult<String> {
    match body.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        Some(Value::String(_)) => {
            Err(ApiError::invalid_request(format!("{field} must not be empty")).field(field))
        }
        None | Some(Value::Null) => {
            Err(ApiError::invalid_request(format!("{field} is required")).field(field))
        }
        Some(_) => Err(ApiError::invalid_request(format!("{field} must be a string")).field(field)),
    }
}

impl NewOrder {
    /// Checks the body's format (400 `invalid_request` naming the `field`): `gd_no` and
    /// `payment_no` non-empty strings, `quantity` a positive integer, `other_ipu` an object of
    /// strings when present.
    pub fn parse(body: &Value) -> ApiResult<Self> {
        if !body.is_object() {
            return Err(ApiError::invalid_request("the body must be a JSON object"));
        }
        let gd_no = required_string(body, "gd_no")?;
        let quantity = match body.get("quantity") {
            None | Some(Value::Null) => {
                return Err(ApiError::invalid_request("quantity is required").field("quantity"));
            }
            Some(value) => crate::extract::json_integer(value)
                .filter(|q| *q > 0)
                .ok_or_else(|| {
                    ApiError::invalid_request("quantity must be a positive integer")
                        .field("quantity")
                })?,
        };
        let payment_no = required_string(body, "payment_no")?;
        let mut other_ipu = BTreeMap::new();
        match body.get("other_ipu") {
            // `null` is not an object of strings: refused below, not taken as omitted.
            None => {}
            Some(Value::Object(map)) => {
                for (key, value) in map {
                    let Value::String(value) = value else {
                        return Err(ApiError::invalid_request(format!(
                            "other_ipu.{key} must be a string"
                        ))
                        .field("other_ipu"));
                    };
                    other_ipu.insert(key.clone(), value.clone());
                }
            }
            Some(_) => {
                return Err(ApiError::invalid_request(
                    "other_ipu must be an object of string to string",
                )
                .field("other_ipu"));
            }
        }
        Ok(NewOrder {
            gd_no,
            quantity,
            payment_no,
            other_ipu,
        })
    }
}

/// Checks `other_ipu` against the product's `other_ipu_cnf`: every key must be one of the
/// configured keys (a label is not a key) and every required key needs a non-empty value.
pub fn check_inputs(product: &Product, inputs: &BTreeMap<String, String>) -> ApiResult<()> {
    let fields = product.input_fields();
    for key in inputs.keys() {
        if !fields.iter().any(|f| &f.key == key) {
            return Err(ApiError::invalid_request(format!(
                "other_ipu key {key:?} is not configured for this product"
            ))
            .field("other_ipu"));
        }
    }
    for field in fields.iter().filter(|f| f.required) {
        if inputs.get(&field.key).is_none_or(|v| v.trim().is_empty()) {
            return Err(ApiError::invalid_request(format!(
                "other_ipu.{} ({}) is required",
                field.key, field.label
            ))
            .field("other_ipu"));
        }
    }
    Ok(())
}

/// 422 for unmet business conditions of catalog endpoints.
pub fn unmet(error: &str, description: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, error).describe(description)
}

/// Whether the channel may pay this product for this buyer: enabled and available to the
/// merchant, allowed by the product's policy, and payable by the user (test channels).
pub fn channel_allows(channel: &Channel, product: &Product, user: &str) -> bool {
    channel.available_to_merchant(&product.merchant_no)
        && channel.payable_by(Some(user))
        && match product.payment_policy {
            super::products::Policy::Automatic => true,
            super::products::Policy::Allowlist => product
                .payment_methods
                .iter()
                .flatten()
                .any(|m| m == &channel.payment_no),
        }
}

/// Converts an eight-decimal amount between currencies through the platform-coin rates
/// (rounded down). 422 `currency_rate_unavailable` when a rate is missing.
pub fn convert(amount: i64, from: &str, to: &str) -> ApiResult<i64> {
    if from == to {
        return Ok(amount);
    }
    let rate = |currency: &str| {
        seed::COIN_RATES
            .iter()
            .find(|(c, _)| *c == currency)
            .map(|(_, r)| i128::from(*r))
            .ok_or_else(|| {
                unmet(
                    "currency_rate_unavailable",
                    format!("no rate from {from} to {to}"),
                )
            })
    };
    let converted = i128::from(amount) * rate(from)? / rate(to)?;
    i64::try_from(converted).map_err(|_| unmet("invalid_amount", "the amount is too large"))
}

/// The amounts of an order of `quantity` units of `product` paid through `channel`.
pub struct Amounts {
    /// Undiscounted total.
    pub total: i64,
    /// Wholesale discount.
    pub discount: i64,
    /// Channel fee.
    pub handling: i64,
    /// Subtotal in the payment currency.
    pub payment_subtotal: i64,
    /// Fee in the payment currency.
    pub payment_handling: i64,
}

impl Amounts {
    /// Prices the order: wholesale tier, card fee, conversion to the channel's currency.
    pub fn compute(product: &Product, quantity: i64, channel: &Channel) -> ApiResult<Self> {
        let too_large = || unmet("invalid_amount", "the order amount is too large");
        let total = product
            .actual_price
            .checked_mul(quantity)
            .ok_or_else(too_large)?;
        let discounted = product
            .unit_price_for(quantity)
            .checked_mul(quantity)
            .ok_or_else(too_large)?;
        let discount = total - discounted;
        let handling = if channel.provider == "card-provider" {
            i64::try_from(i128::from(discounted) * i128::from(CARD_HANDLING_PERCENT) / 100)
                .map_err(|_| too_large())?
        } else {
            0
        };
        Ok(Amounts {
            total,
            discount,
            handling,
            payment_subtotal: convert(discounted, &product.currency, &channel.currency)?,
            payment_handling: convert(handling, &product.currency, &channel.currency)?,
        })
    }
}
