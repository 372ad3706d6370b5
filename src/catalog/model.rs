//! Catalog resources in the service's own JSON shapes: merchant profile, products, orders,
//! payment start and payment status.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::{OffsetDateTime, PrimitiveDateTime};
use url::Url;

use crate::money::{FixedPoint8, bounds};

/// Merchant profile (`GET /openapi/v1/merchant`); all fields are strings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MerchantProfile {
    /// Merchant number.
    pub merchant_no: String,
    /// Merchant name.
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

/// A product's `payment_policy`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PaymentPolicy {
    /// `automatic`.
    Automatic,
    /// `allowlist`.
    Allowlist,
    /// A value the contract does not list.
    Unknown(String),
}

impl PaymentPolicy {
    /// Wire text.
    pub fn as_str(&self) -> &str {
        match self {
            PaymentPolicy::Automatic => "automatic",
            PaymentPolicy::Allowlist => "allowlist",
            PaymentPolicy::Unknown(s) => s,
        }
    }
}

impl Serialize for PaymentPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for PaymentPolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "automatic" => PaymentPolicy::Automatic,
            "allowlist" => PaymentPolicy::Allowlist,
            other => PaymentPolicy::Unknown(other.to_owned()),
        })
    }
}

/// A catalog product (element of `list`). Unknown display fields are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Product {
    /// Product number.
    pub gd_no: String,
    /// Product name.
    pub gd_name: String,
    /// Description.
    #[serde(default)]
    pub gd_description: String,
    /// Actual price, eight-decimal fixed point; never negative (a negative one fails decoding).
    #[serde(deserialize_with = "bounds::amount")]
    pub actual_price: FixedPoint8,
    /// Retail price, eight-decimal fixed point; never negative.
    #[serde(deserialize_with = "bounds::amount")]
    pub retail_price: FixedPoint8,
    /// Pricing currency.
    pub currency: String,
    /// Display precision only (does not change the eight-decimal scaling); 0 to
    /// [`crate::money::MAX_SCALE`], anything larger fails decoding.
    #[serde(deserialize_with = "bounds::decimals")]
    pub currency_decimals: u32,
    /// Stock; never negative (a negative one fails decoding).
    #[serde(deserialize_with = "bounds::count")]
    pub in_stock: i64,
    /// Max per purchase; 0 means unlimited.
    pub buy_limit_num: u32,
    /// `automatic` or `allowlist`.
    pub payment_policy: PaymentPolicy,
    /// Channel identifiers only (no names or quotes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_methods: Option<Vec<String>>,
    /// Additional-input configuration, entries `key=label=flag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_ipu_cnf: Option<Vec<String>>,
    /// Wholesale configuration; the platform computes the final order amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wholesale_price_cnf: Option<Vec<String>>,
    /// Purchase hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buy_prompt: Option<String>,
}

/// One page of products (`GET /openapi/v1/products`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProductPage {
    /// Products of this page.
    pub list: Vec<Product>,
    /// Number of matching products.
    pub total: u64,
    /// Effective page.
    pub page: u32,
    /// Effective limit.
    pub limit: u32,
}

/// Query of `GET /openapi/v1/products`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProductQuery {
    /// Page, from 1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Page size, 1 to 100 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Exact product number filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gd_no: Option<String>,
    /// Search by product name or keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_value: Option<String>,
}

/// Body of `POST /openapi/v1/orders`. The client sends no total and no buyer id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateOrderRequest {
    /// The bound merchant's product number.
    pub gd_no: String,
    /// Positive quantity.
    pub quantity: u32,
    /// Real platform channel identifier (not a currency code or display name).
    pub payment_no: String,
    /// Extra input keyed by the keys of the product's `other_ipu_cnf` (never labels); build it
    /// with [`crate::OtherIpuForm`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_ipu: Option<BTreeMap<String, String>>,
}

impl CreateOrderRequest {
    /// An order request without extra input.
    pub fn new(gd_no: impl Into<String>, quantity: u32, payment_no: impl Into<String>) -> Self {
        CreateOrderRequest {
            gd_no: gd_no.into(),
            quantity,
            payment_no: payment_no.into(),
            other_ipu: None,
        }
    }

    /// Sets the extra input.
    pub fn with_other_ipu(mut self, other_ipu: BTreeMap<String, String>) -> Self {
        self.other_ipu = Some(other_ipu);
        self
    }
}

/// Response of `POST /openapi/v1/orders`: creation does not mean paid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedOrder {
    /// The new order's number.
    pub order_no: String,
}

macro_rules! int_status {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $v,)*
            /// A number the contract does not define.
            Unknown(i64),
        }

        impl $name {
            /// The wire number.
            pub fn code(self) -> i64 {
                match self {
                    $($name::$v => $n,)*
                    $name::Unknown(n) => n,
                }
            }

            /// From the wire number.
            pub fn from_code(n: i64) -> Self {
                match n {
                    $($n => $name::$v,)*
                    other => $name::Unknown(other),
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_i64(self.code())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                Ok($name::from_code(i64::deserialize(d)?))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:?} ({})", self, self.code())
            }
        }
    };
}

int_status! {
    /// Catalog order `status` (0-3). Distinct from [`PaymentStatus`]: the numberings differ.
    OrderStatus {
        /// 0: awaiting payment.
        AwaitingPayment = 0,
        /// 1: paid and being processed (delivery still processing).
        PaidProcessing = 1,
        /// 2: cancelled.
        Cancelled = 2,
        /// 3: completed.
        Completed = 3,
    }
}

int_status! {
    /// Catalog payment status (0-2) of `GET /openapi/v1/orders/{order_no}/payment`. Distinct
    /// from [`OrderStatus`].
    PaymentStatus {
        /// 0: awaiting payment.
        AwaitingPayment = 0,
        /// 1: paid.
        Paid = 1,
        /// 2: cancelled.
        Cancelled = 2,
    }
}

impl PaymentStatus {
    /// Whether polling stops here (1 paid or 2 cancelled).
    pub fn is_final(self) -> bool {
        matches!(self, PaymentStatus::Paid | PaymentStatus::Cancelled)
    }
}

/// Response of `GET /openapi/v1/orders/{order_no}/payment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentStatusResponse {
    /// 0 awaiting payment, 1 paid, 2 cancelled.
    pub status: PaymentStatus,
}

/// A catalog order (`GET /openapi/v1/orders/{order_no}`). Times are the service's local
/// `YYYY-MM-DD HH:mm:ss` without zone, kept as [`PrimitiveDateTime`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogOrder {
    /// Order number.
    pub order_no: String,
    /// Product number.
    pub gd_no: String,
    /// Title.
    #[serde(default)]
    pub title: String,
    /// Quantity.
    pub quantity: u32,
    /// Order status (business logic uses this number).
    pub status: OrderStatus,
    /// Display text of the status; never branch on it.
    #[serde(default)]
    pub status_label: String,
    /// Product pricing currency.
    pub currency: String,
    /// Display precision of `currency` (0 to [`crate::money::MAX_SCALE`]).
    #[serde(deserialize_with = "bounds::decimals")]
    pub currency_decimals: u32,
    /// Total, eight-decimal.
    #[serde(deserialize_with = "bounds::amount")]
    pub total_amount: FixedPoint8,
    /// Discount, eight-decimal (the amount taken off, not negative).
    #[serde(deserialize_with = "bounds::amount")]
    pub discount_amount: FixedPoint8,
    /// Order fee record, eight-decimal.
    #[serde(deserialize_with = "bounds::amount")]
    pub handling_amount: FixedPoint8,
    /// Payment amount record, eight-decimal.
    #[serde(deserialize_with = "bounds::amount")]
    pub pay_amount: FixedPoint8,
    /// Payment currency.
    pub payment_currency: String,
    /// Display precision of the payment currency (0 to [`crate::money::MAX_SCALE`]).
    #[serde(deserialize_with = "bounds::decimals")]
    pub payment_currency_decimals: u32,
    /// Subtotal in payment currency, eight-decimal.
    #[serde(deserialize_with = "bounds::amount")]
    pub payment_subtotal: FixedPoint8,
    /// Fee in payment currency, eight-decimal.
    #[serde(deserialize_with = "bounds::amount")]
    pub payment_handling_amount: FixedPoint8,
    /// Amount to pay in payment currency, eight-decimal (prefer for display).
    #[serde(deserialize_with = "bounds::amount")]
    pub payment_pay_amount: FixedPoint8,
    /// The order's channel identifier.
    #[serde(default)]
    pub payment_no: String,
    /// The order's channel name.
    #[serde(default)]
    pub payment_name: String,
    /// Channels recorded for the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_methods: Option<Vec<String>>,
    /// Recorded trade number.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub trade_no: String,
    /// Payment time (no zone).
    #[serde(default, with = "crate::serde_util::catalog_time")]
    pub paid_time: Option<PrimitiveDateTime>,
    /// Creation time (no zone).
    #[serde(default, with = "crate::serde_util::catalog_time")]
    pub created_at: Option<PrimitiveDateTime>,
    /// Update time (no zone).
    #[serde(default, with = "crate::serde_util::catalog_time")]
    pub updated_at: Option<PrimitiveDateTime>,
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Body of `POST /openapi/v1/orders/{order_no}/payment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartPaymentRequest {
    /// The channel bound to the order and still available.
    pub payment_no: String,
}

/// Response of the payment start: a session, not proof of payment.
///
/// `redirect` is already resolved: a relative address is resolved against the platform
/// service's origin, never the host app's domain.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentStart {
    /// Payment session identifier.
    pub trade_no: String,
    /// Absolute payment address.
    pub redirect: Url,
    /// Session expiry (Unix seconds on the wire).
    #[serde(with = "time::serde::timestamp")]
    pub expire_time: OffsetDateTime,
}

impl fmt::Debug for PaymentStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The payment address may carry a session token: show only origin and path.
        f.debug_struct("PaymentStart")
            .field("trade_no", &self.trade_no)
            .field(
                "redirect",
                &format_args!(
                    "{}{}[query redacted]",
                    self.redirect.origin().ascii_serialization(),
                    self.redirect.path()
                ),
            )
            .field("expire_time", &self.expire_time)
            .finish()
    }
}

/// The wire shape of the payment start (before resolving `redirect`).
#[derive(Deserialize)]
pub(crate) struct PaymentStartWire {
    pub trade_no: String,
    pub redirect: String,
    pub expire_time: i64,
}

/// Result of [`crate::UserSession::wait_for_payment`]: the final payment status and the order
/// read afterwards (its status tells whether delivery is still processing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentWaitOutcome {
    /// 1 paid or 2 cancelled.
    pub payment_status: PaymentStatus,
    /// The order after the final status.
    pub order: CatalogOrder,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_payment_status_numberings_are_distinct() {
        assert_eq!(OrderStatus::from_code(1), OrderStatus::PaidProcessing);
        assert_eq!(PaymentStatus::from_code(1), PaymentStatus::Paid);
        assert_eq!(OrderStatus::from_code(3), OrderStatus::Completed);
        assert_eq!(PaymentStatus::from_code(3), PaymentStatus::Unknown(3));
        assert!(PaymentStatus::Cancelled.is_final());
        assert!(!PaymentStatus::AwaitingPayment.is_final());
        assert!(!PaymentStatus::Unknown(7).is_final());
    }

    fn product_json(field: &str, value: &str) -> String {
        let mut v = serde_json::json!({"gd_no":"G1","gd_name":"Beans","actual_price":1250000000,
            "retail_price":1500000000,"currency":"USD","currency_decimals":2,"in_stock":5,
            "buy_limit_num":0,"payment_policy":"automatic"});
        v[field] = serde_json::from_str(value).unwrap();
        v.to_string()
    }

    /// Issue 10 item 5: the contract types prices, stock and the purchase limit as
    /// non-negative integers and `currency_decimals` as a precision; a negative price or stock,
    /// or a precision of 4294967295, fails decoding instead of reaching the caller.
    #[test]
    fn product_rejects_negative_amounts_and_huge_precision() {
        let p: Product = serde_json::from_str(&product_json("in_stock", "0")).unwrap();
        assert_eq!(p.actual_price.raw(), 1_250_000_000);
        for (field, value) in [
            ("actual_price", "-1"),
            ("retail_price", "-100000000"),
            ("in_stock", "-1"),
            ("buy_limit_num", "-1"),
            ("currency_decimals", "4294967295"),
            ("currency_decimals", "19"),
        ] {
            assert!(
                serde_json::from_str::<Product>(&product_json(field, value)).is_err(),
                "{field} = {value}"
            );
        }
    }

    /// Issue 10 item 5: every catalog order amount is a non-negative eight-decimal record.
    #[test]
    fn catalog_order_rejects_negative_amounts_and_huge_precision() {
        let base = serde_json::json!({"order_no":"O1","gd_no":"G1","quantity":1,"status":0,
            "currency":"USD","currency_decimals":2,"total_amount":1,"discount_amount":0,
            "handling_amount":0,"pay_amount":1,"payment_currency":"PLC",
            "payment_currency_decimals":8,"payment_subtotal":1,"payment_handling_amount":0,
            "payment_pay_amount":1});
        assert!(serde_json::from_value::<CatalogOrder>(base.clone()).is_ok());
        for field in [
            "total_amount",
            "discount_amount",
            "handling_amount",
            "pay_amount",
            "payment_subtotal",
            "payment_handling_amount",
            "payment_pay_amount",
        ] {
            let mut v = base.clone();
            v[field] = serde_json::json!(-1);
            assert!(
                serde_json::from_value::<CatalogOrder>(v).is_err(),
                "{field}"
            );
        }
        for field in ["currency_decimals", "payment_currency_decimals"] {
            let mut v = base.clone();
            v[field] = serde_json::json!(4294967295u32);
            assert!(
                serde_json::from_value::<CatalogOrder>(v).is_err(),
                "{field}"
            );
        }
    }

    #[test]
    fn catalog_order_decodes_local_times_and_fixed_point() {
        let json = r#"{"order_no":"O1","gd_no":"G1001","title":"Beans","quantity":2,"status":1,
          "status_label":"Paid","currency":"USD","currency_decimals":2,"total_amount":2500000000,
          "discount_amount":0,"handling_amount":0,"pay_amount":2500000000,"payment_currency":"PLC",
          "payment_currency_decimals":8,"payment_subtotal":2500000000,"payment_handling_amount":0,
          "payment_pay_amount":2500000000,"payment_no":"ch_platform_coin","payment_name":"Coin",
          "trade_no":"T1","paid_time":"2026-11-22 13:05:09","created_at":"2026-11-22 13:00:00",
          "updated_at":null,"extra_field":1}"#;
        let o: CatalogOrder = serde_json::from_str(json).unwrap();
        assert_eq!(o.status, OrderStatus::PaidProcessing);
        assert_eq!(o.total_amount.to_decimal_string(2).unwrap(), "25.00");
        assert_eq!(o.paid_time.unwrap().second(), 9);
        assert_eq!(o.updated_at, None);
        let back = serde_json::to_value(&o).unwrap();
        assert_eq!(back["paid_time"], "2026-11-22 13:05:09");
        assert_eq!(back["status"], 1);
    }
}
