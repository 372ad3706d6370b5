//! Records of the merchant profile, products and catalog orders.
//!
//! Contract rules: catalog amounts are eight-decimal fixed point (`Long`, value × 10^8;
//! `currency_decimals` is display precision only); order status (0-3) and payment status (0-2)
//! are distinct enums that cannot be mixed; `other_ipu` keys come from the product's
//! `other_ipu_cnf` key part, never the label; a relative payment `redirect` is resolved against
//! the service's origin (done by the core).

use std::collections::HashMap;

use time::{OffsetDateTime, PrimitiveDateTime};

use crate::catalog::model as core;
use crate::catalog::other_ipu::{OtherIpuField as CoreField, OtherIpuForm};

use super::error::{Result, StorefrontError};
use super::ints::{int, long, unsigned, unsigned_opt};

/// `GET /openapi/v1/merchant`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct MerchantProfile {
    /// Merchant number.
    pub merchant_no: String,
    /// Name.
    pub name: String,
    /// Logo address.
    pub logo_url: String,
    /// Short description.
    pub short_description: String,
    /// Description.
    pub description: String,
    /// Business scope.
    pub business_scope: String,
    /// Website address.
    pub website_url: String,
    /// Contact.
    pub contact: String,
}

impl From<core::MerchantProfile> for MerchantProfile {
    fn from(p: core::MerchantProfile) -> Self {
        MerchantProfile {
            merchant_no: p.merchant_no,
            name: p.name,
            logo_url: p.logo_url,
            short_description: p.short_description,
            description: p.description,
            business_scope: p.business_scope,
            website_url: p.website_url,
            contact: p.contact,
        }
    }
}

/// A product's `payment_policy`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum PaymentPolicy {
    /// `automatic`.
    Automatic,
    /// `allowlist`.
    Allowlist,
    /// A value the contract does not list, kept verbatim.
    Unknown {
        /// The wire text.
        value: String,
    },
}

impl From<core::PaymentPolicy> for PaymentPolicy {
    fn from(p: core::PaymentPolicy) -> Self {
        match p {
            core::PaymentPolicy::Automatic => PaymentPolicy::Automatic,
            core::PaymentPolicy::Allowlist => PaymentPolicy::Allowlist,
            core::PaymentPolicy::Unknown(value) => PaymentPolicy::Unknown { value },
        }
    }
}

/// A catalog product (element of `list`). Prices are eight-decimal fixed point.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Product {
    /// Product number.
    pub gd_no: String,
    /// Name.
    pub gd_name: String,
    /// Description.
    pub gd_description: String,
    /// Price, eight-decimal fixed point (value × 10^8).
    pub actual_price: i64,
    /// Retail price, eight-decimal fixed point.
    pub retail_price: i64,
    /// Pricing currency.
    pub currency: String,
    /// Display precision only (does not change the scaling).
    pub currency_decimals: i32,
    /// Stock.
    pub in_stock: i64,
    /// Max per purchase; 0 means unlimited.
    pub buy_limit_num: i64,
    /// `automatic` or `allowlist`.
    pub payment_policy: PaymentPolicy,
    /// Channel identifiers (no names, no quotes), when given.
    pub payment_methods: Option<Vec<String>>,
    /// Additional-input configuration (`key=label=flag`), when given; see `otherIpuFields`.
    pub other_ipu_cnf: Option<Vec<String>>,
    /// Wholesale configuration, when given (the platform computes the final amount).
    pub wholesale_price_cnf: Option<Vec<String>>,
    /// Purchase hint, when given.
    pub buy_prompt: Option<String>,
}

impl From<core::Product> for Product {
    fn from(p: core::Product) -> Self {
        Product {
            gd_no: p.gd_no,
            gd_name: p.gd_name,
            gd_description: p.gd_description,
            actual_price: p.actual_price.raw(),
            retail_price: p.retail_price.raw(),
            currency: p.currency,
            currency_decimals: int(p.currency_decimals),
            in_stock: p.in_stock,
            buy_limit_num: i64::from(p.buy_limit_num),
            payment_policy: p.payment_policy.into(),
            payment_methods: p.payment_methods,
            other_ipu_cnf: p.other_ipu_cnf,
            wholesale_price_cnf: p.wholesale_price_cnf,
            buy_prompt: p.buy_prompt,
        }
    }
}

impl Product {
    /// Back to the core type (for the `other_ipu` helpers, which read `other_ipu_cnf`).
    fn to_core(&self) -> Result<core::Product> {
        Ok(core::Product {
            gd_no: self.gd_no.clone(),
            gd_name: self.gd_name.clone(),
            gd_description: self.gd_description.clone(),
            actual_price: crate::money::FixedPoint8::from_raw(self.actual_price),
            retail_price: crate::money::FixedPoint8::from_raw(self.retail_price),
            currency: self.currency.clone(),
            currency_decimals: unsigned("currency_decimals", self.currency_decimals)?,
            in_stock: self.in_stock,
            buy_limit_num: u32::try_from(self.buy_limit_num).unwrap_or(u32::MAX),
            payment_policy: core::PaymentPolicy::Unknown(String::new()),
            payment_methods: self.payment_methods.clone(),
            other_ipu_cnf: self.other_ipu_cnf.clone(),
            wholesale_price_cnf: self.wholesale_price_cnf.clone(),
            buy_prompt: self.buy_prompt.clone(),
        })
    }
}

/// One page of products.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ProductPage {
    /// The products of this page.
    pub list: Vec<Product>,
    /// Total number of products matching.
    pub total: i64,
    /// This page's number.
    pub page: i32,
    /// Page size.
    pub limit: i32,
}

impl From<core::ProductPage> for ProductPage {
    fn from(p: core::ProductPage) -> Self {
        ProductPage {
            list: p.list.into_iter().map(Into::into).collect(),
            total: long(p.total),
            page: int(p.page),
            limit: int(p.limit),
        }
    }
}

/// Filter and page of `GET /openapi/v1/products` (all optional; page starts at 1).
#[derive(Debug, Clone, Default, PartialEq, Eq, uniffi::Record)]
pub struct ProductQuery {
    /// Page number, 1 or more (default 1).
    #[uniffi(default = None)]
    pub page: Option<i32>,
    /// Page size.
    #[uniffi(default = None)]
    pub limit: Option<i32>,
    /// Only this product number.
    #[uniffi(default = None)]
    pub gd_no: Option<String>,
    /// Search text.
    #[uniffi(default = None)]
    pub search_value: Option<String>,
}

impl ProductQuery {
    pub(crate) fn into_core(self) -> Result<core::ProductQuery> {
        Ok(core::ProductQuery {
            page: unsigned_opt("page", self.page)?,
            limit: unsigned_opt("limit", self.limit)?,
            gd_no: self.gd_no,
            search_value: self.search_value,
        })
    }
}

/// Body of `POST /openapi/v1/orders`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct CreateOrderRequest {
    /// Product number.
    pub gd_no: String,
    /// Quantity, 1 or more.
    pub quantity: i32,
    /// Real platform channel identifier (not a currency code or display name).
    pub payment_no: String,
    /// Additional input keyed by the `other_ipu_cnf` key part (build it with `buildOtherIpu`).
    #[uniffi(default = None)]
    pub other_ipu: Option<HashMap<String, String>>,
}

impl CreateOrderRequest {
    pub(crate) fn into_core(self) -> Result<core::CreateOrderRequest> {
        Ok(core::CreateOrderRequest {
            gd_no: self.gd_no,
            quantity: unsigned("quantity", self.quantity)?,
            payment_no: self.payment_no,
            other_ipu: self.other_ipu.map(|m| m.into_iter().collect()),
        })
    }
}

/// Catalog order `status`: 0 awaiting payment, 1 paid and being processed, 2 cancelled,
/// 3 completed. Not the payment status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
#[uniffi::export(Display)]
pub enum OrderStatus {
    /// 0.
    AwaitingPayment,
    /// 1: paid, delivery still being processed.
    PaidProcessing,
    /// 2.
    Cancelled,
    /// 3.
    Completed,
    /// A number the contract does not list.
    Unknown {
        /// The number.
        code: i64,
    },
}

impl From<core::OrderStatus> for OrderStatus {
    fn from(s: core::OrderStatus) -> Self {
        match s {
            core::OrderStatus::AwaitingPayment => OrderStatus::AwaitingPayment,
            core::OrderStatus::PaidProcessing => OrderStatus::PaidProcessing,
            core::OrderStatus::Cancelled => OrderStatus::Cancelled,
            core::OrderStatus::Completed => OrderStatus::Completed,
            core::OrderStatus::Unknown(code) => OrderStatus::Unknown { code },
        }
    }
}

/// Catalog payment status: 0 awaiting payment, 1 paid, 2 cancelled. Not the order status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
#[uniffi::export(Display)]
pub enum PaymentStatus {
    /// 0.
    AwaitingPayment,
    /// 1.
    Paid,
    /// 2.
    Cancelled,
    /// A number the contract does not list (not final, not paid).
    Unknown {
        /// The number.
        code: i64,
    },
}

impl From<core::PaymentStatus> for PaymentStatus {
    fn from(s: core::PaymentStatus) -> Self {
        match s {
            core::PaymentStatus::AwaitingPayment => PaymentStatus::AwaitingPayment,
            core::PaymentStatus::Paid => PaymentStatus::Paid,
            core::PaymentStatus::Cancelled => PaymentStatus::Cancelled,
            core::PaymentStatus::Unknown(code) => PaymentStatus::Unknown { code },
        }
    }
}

/// A catalog order (`GET /openapi/v1/orders/{order_no}`). Amounts are eight-decimal fixed
/// point; times have no zone (`null` when the service sent none).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct CatalogOrder {
    /// Order number.
    pub order_no: String,
    /// Product number.
    pub gd_no: String,
    /// Title.
    pub title: String,
    /// Quantity.
    pub quantity: i32,
    /// Order status (business logic uses this, not `status_label`).
    pub status: OrderStatus,
    /// Display text of the status.
    pub status_label: String,
    /// Product pricing currency.
    pub currency: String,
    /// Display precision of `currency`.
    pub currency_decimals: i32,
    /// Total, eight-decimal fixed point.
    pub total_amount: i64,
    /// Discount, eight-decimal fixed point.
    pub discount_amount: i64,
    /// Order fee record, eight-decimal fixed point.
    pub handling_amount: i64,
    /// Payment amount record, eight-decimal fixed point.
    pub pay_amount: i64,
    /// Payment currency.
    pub payment_currency: String,
    /// Display precision of the payment currency.
    pub payment_currency_decimals: i32,
    /// Subtotal in payment currency, eight-decimal fixed point (prefer these for display).
    pub payment_subtotal: i64,
    /// Fee in payment currency, eight-decimal fixed point.
    pub payment_handling_amount: i64,
    /// Amount paid in payment currency, eight-decimal fixed point.
    pub payment_pay_amount: i64,
    /// The order's channel identifier.
    pub payment_no: String,
    /// The channel's name.
    pub payment_name: String,
    /// Channels recorded for the order, when given.
    pub payment_methods: Option<Vec<String>>,
    /// Recorded trade number.
    pub trade_no: String,
    /// Payment time (no zone).
    pub paid_time: Option<PrimitiveDateTime>,
    /// Creation time (no zone).
    pub created_at: Option<PrimitiveDateTime>,
    /// Last update time (no zone).
    pub updated_at: Option<PrimitiveDateTime>,
}

impl From<core::CatalogOrder> for CatalogOrder {
    fn from(o: core::CatalogOrder) -> Self {
        CatalogOrder {
            order_no: o.order_no,
            gd_no: o.gd_no,
            title: o.title,
            quantity: int(o.quantity),
            status: o.status.into(),
            status_label: o.status_label,
            currency: o.currency,
            currency_decimals: int(o.currency_decimals),
            total_amount: o.total_amount.raw(),
            discount_amount: o.discount_amount.raw(),
            handling_amount: o.handling_amount.raw(),
            pay_amount: o.pay_amount.raw(),
            payment_currency: o.payment_currency,
            payment_currency_decimals: int(o.payment_currency_decimals),
            payment_subtotal: o.payment_subtotal.raw(),
            payment_handling_amount: o.payment_handling_amount.raw(),
            payment_pay_amount: o.payment_pay_amount.raw(),
            payment_no: o.payment_no,
            payment_name: o.payment_name,
            payment_methods: o.payment_methods,
            trade_no: o.trade_no,
            paid_time: o.paid_time,
            created_at: o.created_at,
            updated_at: o.updated_at,
        }
    }
}

/// Result of `POST /openapi/v1/orders/{order_no}/payment`. A 200 does not prove payment.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PaymentStart {
    /// Payment session identifier.
    pub trade_no: String,
    /// Absolute payment address (a relative one was resolved against the service's origin).
    pub redirect: String,
    /// Session expiry.
    pub expire_time: OffsetDateTime,
}

impl From<core::PaymentStart> for PaymentStart {
    fn from(p: core::PaymentStart) -> Self {
        PaymentStart {
            trade_no: p.trade_no,
            redirect: p.redirect.to_string(),
            expire_time: p.expire_time.to_offset_date_time(),
        }
    }
}

/// What `waitForPayment` saw: a final payment status with the order read afterwards, or
/// "still pending after `waitedMs`" (an outcome to show, not an error; check again later).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum PaymentWaitOutcome {
    /// `Paid` or `Cancelled` was seen; the order was read afterwards (its status tells whether
    /// delivery is still processing).
    Final {
        /// `Paid` or `Cancelled`.
        payment_status: PaymentStatus,
        /// The order after the payment reached its final status.
        order: Box<CatalogOrder>,
    },
    /// No final status within the timeout: the payment is still open.
    StillPending {
        /// The last status the service answered (`AwaitingPayment` when none was seen).
        last_status: PaymentStatus,
        /// How long the wait polled, in milliseconds.
        waited_ms: i64,
        /// Whether the last poll failed with an error that may heal (transport, 408, 429, 5xx,
        /// 202) rather than answering a status.
        last_poll_failed: bool,
    },
}

impl From<core::PaymentWaitOutcome> for PaymentWaitOutcome {
    fn from(o: core::PaymentWaitOutcome) -> Self {
        match o {
            core::PaymentWaitOutcome::Final {
                payment_status,
                order,
            } => PaymentWaitOutcome::Final {
                payment_status: payment_status.into(),
                order: Box::new((*order).into()),
            },
            core::PaymentWaitOutcome::StillPending {
                last_status,
                waited,
                last_poll_failed,
            } => PaymentWaitOutcome::StillPending {
                last_status: last_status.into(),
                waited_ms: i64::try_from(waited.as_millis()).unwrap_or(i64::MAX),
                last_poll_failed,
            },
        }
    }
}

/// One entry of a product's `other_ipu_cnf`: the JSON key, its display label, and whether it
/// is required.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct OtherIpuField {
    /// Key used in `other_ipu` (never the label).
    pub key: String,
    /// Display text for the input.
    pub label: String,
    /// Whether the order needs a value for it.
    pub required: bool,
}

impl From<&CoreField> for OtherIpuField {
    fn from(f: &CoreField) -> Self {
        OtherIpuField {
            key: f.key.clone(),
            label: f.label.clone(),
            required: f.required,
        }
    }
}

/// The additional inputs a product asks for (parsed from `other_ipu_cnf`).
#[uniffi::export]
pub fn other_ipu_fields(product: &Product) -> Result<Vec<OtherIpuField>> {
    let form = OtherIpuForm::for_product(&product.to_core()?).map_err(StorefrontError::from)?;
    Ok(form.fields().iter().map(Into::into).collect())
}

/// Builds `other_ipu` for an order of `product` from values keyed by the field key: refuses
/// unknown keys (labels are not keys) and missing required fields before anything is sent.
#[uniffi::export]
pub fn build_other_ipu(
    product: &Product,
    values: HashMap<String, String>,
) -> Result<HashMap<String, String>> {
    let form = OtherIpuForm::for_product(&product.to_core()?).map_err(StorefrontError::from)?;
    Ok(form.build(values)?.into_iter().collect())
}

impl std::fmt::Display for OrderStatus {
    /// Name and number, e.g. `PaidProcessing (1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OrderStatus::AwaitingPayment => f.write_str("AwaitingPayment (0)"),
            OrderStatus::PaidProcessing => f.write_str("PaidProcessing (1)"),
            OrderStatus::Cancelled => f.write_str("Cancelled (2)"),
            OrderStatus::Completed => f.write_str("Completed (3)"),
            OrderStatus::Unknown { code } => write!(f, "Unknown ({code})"),
        }
    }
}

impl std::fmt::Display for PaymentStatus {
    /// Name and number, e.g. `Paid (1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PaymentStatus::AwaitingPayment => f.write_str("AwaitingPayment (0)"),
            PaymentStatus::Paid => f.write_str("Paid (1)"),
            PaymentStatus::Cancelled => f.write_str("Cancelled (2)"),
            PaymentStatus::Unknown { code } => write!(f, "Unknown ({code})"),
        }
    }
}
