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

impl ProductQuery {
    /// A query of the first page with the service's defaults (page 1, limit 20, no filter);
    /// refine it with the `with_*` methods (built like [`crate::ListMerchantPaymentsQuery`]).
    pub fn new() -> Self {
        ProductQuery::default()
    }

    /// Sets the page, from 1 (checked before sending).
    pub fn with_page(mut self, page: u32) -> Self {
        self.page = Some(page);
        self
    }

    /// Sets the page size, 1 to 100 (checked before sending).
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Filters by exact product number.
    pub fn with_gd_no(mut self, gd_no: impl Into<String>) -> Self {
        self.gd_no = Some(gd_no.into());
        self
    }

    /// Searches by product name or keyword.
    pub fn with_search_value(mut self, search_value: impl Into<String>) -> Self {
        self.search_value = Some(search_value.into());
        self
    }
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

/// A point in time that displays (and debugs) as RFC 3339 in UTC, `2026-11-23T05:38:14Z`,
/// and travels as Unix seconds, as the contract's `expire_time` does. Dereferences to the
/// [`OffsetDateTime`] inside.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UnixTime(#[serde(with = "time::serde::timestamp")] OffsetDateTime);

impl UnixTime {
    /// The time from Unix seconds; `None` outside the representable range.
    pub fn from_unix_seconds(seconds: i64) -> Option<Self> {
        OffsetDateTime::from_unix_timestamp(seconds)
            .ok()
            .map(UnixTime::from)
    }

    /// Unix seconds.
    pub fn unix_seconds(self) -> i64 {
        self.0.unix_timestamp()
    }

    /// The time as an [`OffsetDateTime`] in UTC.
    pub fn to_offset_date_time(self) -> OffsetDateTime {
        self.0
    }

    /// RFC 3339 text in UTC (`2026-11-23T05:38:14Z`).
    pub fn to_rfc3339(self) -> String {
        self.to_string()
    }
}

impl From<OffsetDateTime> for UnixTime {
    fn from(t: OffsetDateTime) -> Self {
        UnixTime(t.to_offset(time::UtcOffset::UTC))
    }
}

impl std::ops::Deref for UnixTime {
    type Target = OffsetDateTime;
    fn deref(&self) -> &OffsetDateTime {
        &self.0
    }
}

impl fmt::Display for UnixTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self
            .0
            .format(&time::format_description::well_known::Rfc3339)
            .map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl fmt::Debug for UnixTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Response of the payment start: a session, not proof of payment.
///
/// `redirect` is already resolved: a relative address is resolved against the platform
/// service's origin, never the host app's domain. `Display` and `Debug` show the session, the
/// expiry in RFC 3339 and the address without its query (it may carry a session token).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentStart {
    /// Payment session identifier.
    pub trade_no: String,
    /// Absolute payment address.
    pub redirect: Url,
    /// Session expiry (Unix seconds on the wire); displays as `2026-11-23T05:38:14Z`.
    pub expire_time: UnixTime,
}

impl fmt::Display for PaymentStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "payment session {} at {}{} until {}",
            self.trade_no,
            self.redirect.origin().ascii_serialization(),
            self.redirect.path(),
            self.expire_time
        )
    }
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

/// Result of [`crate::UserSession::wait_for_payment`]: either a final payment status with the
/// order read afterwards, or "still pending after `waited`" (contract: "Poll with an interval
/// and an overall timeout"; running out of time is an outcome the app shows, not an error).
///
/// JSON (C ABI): `{"outcome": "final", "payment_status": 1, "order": {...}}` or
/// `{"outcome": "still_pending", "last_status": 0, "waited_ms": 60000, "last_poll_failed":
/// false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PaymentWaitOutcome {
    /// Status 1 paid or 2 cancelled was seen; the order was read afterwards (its status tells
    /// whether delivery is still processing).
    Final {
        /// 1 paid or 2 cancelled.
        payment_status: PaymentStatus,
        /// The order after the final status (boxed: the other variant is small).
        order: Box<CatalogOrder>,
    },
    /// No final status within the wait's timeout: the payment is still open. Show "still
    /// pending" and check again later with the same order number.
    StillPending {
        /// The last status the service answered (0 awaiting payment when none was seen).
        last_status: PaymentStatus,
        /// How long the wait polled.
        #[serde(rename = "waited_ms", with = "crate::config::duration_ms")]
        waited: std::time::Duration,
        /// Whether the last poll failed with an error that may heal (transport failure, 408,
        /// 429, 5xx, 202 `provider_result_pending`) rather than answering a status.
        last_poll_failed: bool,
    },
}

impl PaymentWaitOutcome {
    /// Whether a final status (paid or cancelled) was seen.
    pub fn is_final(&self) -> bool {
        matches!(self, PaymentWaitOutcome::Final { .. })
    }

    /// The final status, or the last status seen while still pending.
    pub fn payment_status(&self) -> PaymentStatus {
        match self {
            PaymentWaitOutcome::Final { payment_status, .. } => *payment_status,
            PaymentWaitOutcome::StillPending { last_status, .. } => *last_status,
        }
    }

    /// The order read after a final status; `None` while still pending.
    pub fn order(&self) -> Option<&CatalogOrder> {
        match self {
            PaymentWaitOutcome::Final { order, .. } => Some(order.as_ref()),
            PaymentWaitOutcome::StillPending { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12 item 3: the expiry of a payment start prints as RFC 3339, not as
    /// `2026-11-23 5:38:14.0 +00:00:00`, and still travels as Unix seconds.
    #[test]
    fn payment_start_expiry_displays_rfc3339() {
        let start = PaymentStart {
            trade_no: "T1".into(),
            redirect: Url::parse("https://platform.example/pay/T1?token=abc").unwrap(),
            expire_time: UnixTime::from_unix_seconds(1_795_412_294).unwrap(),
        };
        assert_eq!(start.expire_time.to_string(), "2026-11-23T05:38:14Z");
        assert_eq!(format!("{:?}", start.expire_time), "2026-11-23T05:38:14Z");
        assert_eq!(
            start.to_string(),
            "payment session T1 at https://platform.example/pay/T1 until 2026-11-23T05:38:14Z"
        );
        let debug = format!("{start:?}");
        assert!(debug.contains("2026-11-23T05:38:14Z"), "{debug}");
        assert!(!debug.contains("abc") && !start.to_string().contains("abc"));
        let json = serde_json::to_value(&start).unwrap();
        assert_eq!(json["expire_time"], 1_795_412_294);
        let back: PaymentStart = serde_json::from_value(json).unwrap();
        assert_eq!(back, start);
    }

    #[test]
    fn wait_outcome_json_names_the_outcome() {
        let pending = PaymentWaitOutcome::StillPending {
            last_status: PaymentStatus::AwaitingPayment,
            waited: std::time::Duration::from_millis(1500),
            last_poll_failed: false,
        };
        let json = serde_json::to_value(&pending).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"outcome": "still_pending", "last_status": 0, "waited_ms": 1500,
                "last_poll_failed": false})
        );
        assert_eq!(
            serde_json::from_value::<PaymentWaitOutcome>(json).unwrap(),
            pending
        );
        assert!(!pending.is_final());
        assert_eq!(pending.order(), None);
    }

    #[test]
    fn product_query_is_built_like_the_payments_query() {
        let q = ProductQuery::new()
            .with_page(2)
            .with_limit(50)
            .with_gd_no("G1")
            .with_search_value("tea");
        assert_eq!(
            q,
            ProductQuery {
                page: Some(2),
                limit: Some(50),
                gd_no: Some("G1".into()),
                search_value: Some("tea".into()),
            }
        );
    }

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
