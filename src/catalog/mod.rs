//! Catalog: merchant profile, products (pages and an all-pages stream), userinfo, orders,
//! payment start, payment status and the payment wait.
//!
//! Contract rules: catalog orders and payments need a user token; profile and products take a
//! user or client token; order creation and payment start are never re-sent once they may have
//! been processed; a relative `redirect` resolves against the platform service address; poll the
//! payment status "with an interval and an overall timeout, stopping at status 1 or 2. After 1,
//! read the order to see whether delivery is still processing."

pub mod model;
pub mod other_ipu;
mod stream;
mod wait;

pub use wait::{DEFAULT_WAIT_INTERVAL, DEFAULT_WAIT_TIMEOUT, MAX_WAIT_TIMEOUT, MIN_POLL_INTERVAL};

use futures_core::Stream;
use time::OffsetDateTime;
use url::Url;

use crate::client::{Client, UserSession};
use crate::error::{Error, LookupKeys, Result};
use crate::operation::Operation;
use crate::params::{limit_query, require_id};
use crate::transport::{Auth, Body, Inner, Request};

use model::*;

fn products_query(q: &ProductQuery) -> Result<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    if let Some(p) = q.page {
        if p < 1 {
            return Err(Error::validation("page", "must be at least 1"));
        }
        out.push(("page", p.to_string()));
    }
    out.extend(limit_query(q.limit)?);
    if let Some(g) = &q.gd_no {
        out.push(("gd_no", g.clone()));
    }
    if let Some(s) = &q.search_value {
        out.push(("search_value", s.clone()));
    }
    Ok(out)
}

async fn merchant_profile(inner: &Inner, auth: Auth<'_>) -> Result<MerchantProfile> {
    inner
        .execute(Request {
            op: Operation::MerchantProfile,
            url: inner.api_url(&["openapi", "v1", "merchant"], &[])?,
            query: Vec::new(),
            body: Body::Empty,
            auth,
        })
        .await?
        .json()
}

async fn list_products(inner: &Inner, auth: Auth<'_>, q: &ProductQuery) -> Result<ProductPage> {
    inner
        .execute(Request {
            op: Operation::ListProducts,
            url: inner.api_url(&["openapi", "v1", "products"], &[])?,
            query: products_query(q)?,
            body: Body::Empty,
            auth,
        })
        .await?
        .json()
}

impl Client {
    /// `GET /openapi/v1/merchant` with the client token.
    pub async fn merchant_profile(&self) -> Result<MerchantProfile> {
        merchant_profile(&self.inner, self.auth()).await
    }

    /// `GET /openapi/v1/products`, one page, with the client token.
    pub async fn list_products(&self, query: &ProductQuery) -> Result<ProductPage> {
        list_products(&self.inner, self.auth(), query).await
    }

    /// Every product over all pages (from `query.page`), with the client token.
    pub fn products_stream(
        &self,
        query: ProductQuery,
    ) -> impl Stream<Item = Result<Product>> + Send + 'static {
        stream::product_stream(self.clone(), None, query)
    }
}

impl UserSession {
    /// `GET {userinfo_endpoint}` (scope `openid`): the contract does not show its fields, so it
    /// is returned as a JSON map.
    pub async fn userinfo(&self) -> Result<serde_json::Map<String, serde_json::Value>> {
        let inner = &self.client.inner;
        let url = inner
            .valid
            .userinfo_endpoint
            .clone()
            .ok_or_else(|| Error::Config("userinfo_endpoint is not configured".into()))?;
        let auth = self.checked_auth(Operation::UserInfo).await?;
        inner
            .execute(Request {
                op: Operation::UserInfo,
                url,
                query: Vec::new(),
                body: Body::Empty,
                auth,
            })
            .await?
            .json()
    }

    /// `GET /openapi/v1/merchant` with the user's token.
    pub async fn merchant_profile(&self) -> Result<MerchantProfile> {
        let auth = self.checked_auth(Operation::MerchantProfile).await?;
        merchant_profile(&self.client.inner, auth).await
    }

    /// `GET /openapi/v1/products`, one page, with the user's token.
    pub async fn list_products(&self, query: &ProductQuery) -> Result<ProductPage> {
        let auth = self.checked_auth(Operation::ListProducts).await?;
        list_products(&self.client.inner, auth, query).await
    }

    /// Every product over all pages, with the user's token.
    pub fn products_stream(
        &self,
        query: ProductQuery,
    ) -> impl Stream<Item = Result<Product>> + Send + 'static {
        stream::product_stream(self.client.clone(), Some(self.clone()), query)
    }

    /// `POST /openapi/v1/orders`. Never re-sent once it may have been processed: a timeout,
    /// lost connection or 5xx gives [`Error::OutcomeUnknown`] (repeated POSTs may create
    /// different orders). Creation does not mean paid.
    ///
    /// An unknown outcome carries the request in [`Error::lookup`] (product, quantity, channel)
    /// and its [`Error::advice`]: the contract has no order list, so do not re-send; tell the
    /// buyer the order is being confirmed and let them decide before ordering again.
    pub async fn create_order(&self, request: &CreateOrderRequest) -> Result<CreatedOrder> {
        self.create_order_once(request).await.map_err(|e| {
            e.with_lookup(LookupKeys {
                gd_no: Some(request.gd_no.clone()),
                quantity: Some(request.quantity),
                payment_no: Some(request.payment_no.clone()),
                ..LookupKeys::default()
            })
        })
    }

    async fn create_order_once(&self, request: &CreateOrderRequest) -> Result<CreatedOrder> {
        require_id("gd_no", &request.gd_no)?;
        require_id("payment_no", &request.payment_no)?;
        if request.quantity == 0 {
            return Err(Error::validation("quantity", "must be positive"));
        }
        let inner = &self.client.inner;
        let auth = self.checked_auth(Operation::CreateOrder).await?;
        let resp = inner
            .execute(Request {
                op: Operation::CreateOrder,
                url: inner.api_url(&["openapi", "v1", "orders"], &[])?,
                query: Vec::new(),
                body: Body::json(request)?,
                auth,
            })
            .await?;
        // The order exists once the service answered 2xx: an unusable answer is OutcomeUnknown.
        let created: CreatedOrder = resp.json()?;
        require_id("order_no", &created.order_no).map_err(|_| resp.unreadable("empty order_no"))?;
        Ok(created)
    }

    /// `GET /openapi/v1/orders/{order_no}`.
    pub async fn get_order(&self, order_no: &str) -> Result<CatalogOrder> {
        require_id("order_no", order_no)?;
        let inner = &self.client.inner;
        let auth = self.checked_auth(Operation::GetOrder).await?;
        inner
            .execute(Request {
                op: Operation::GetOrder,
                url: inner.api_url(&["openapi", "v1", "orders"], &[order_no])?,
                query: Vec::new(),
                body: Body::Empty,
                auth,
            })
            .await
            .map_err(|e| e.with_lookup(LookupKeys::order(order_no)))?
            .json()
    }

    /// `POST /openapi/v1/orders/{order_no}/payment`: actually starts payment (the platform coin
    /// may debit the wallet during the request). Never re-sent once it may have been processed.
    /// The returned `redirect` is absolute, resolved against the service's origin.
    ///
    /// A 202 `provider_result_pending` or an unknown outcome carries `order_no` and
    /// `payment_no` in [`Error::lookup`]: poll the payment status of that order, do not start
    /// again.
    pub async fn start_payment(&self, order_no: &str, payment_no: &str) -> Result<PaymentStart> {
        self.start_payment_once(order_no, payment_no)
            .await
            .map_err(|e| {
                e.with_lookup(LookupKeys {
                    order_no: Some(order_no.to_owned()),
                    payment_no: Some(payment_no.to_owned()),
                    ..LookupKeys::default()
                })
            })
    }

    async fn start_payment_once(&self, order_no: &str, payment_no: &str) -> Result<PaymentStart> {
        require_id("order_no", order_no)?;
        require_id("payment_no", payment_no)?;
        let inner = &self.client.inner;
        let auth = self.checked_auth(Operation::StartPayment).await?;
        let body = Body::json(&StartPaymentRequest {
            payment_no: payment_no.to_owned(),
        })?;
        let resp = inner
            .execute(Request {
                op: Operation::StartPayment,
                url: inner.api_url(&["openapi", "v1", "orders"], &[order_no, "payment"])?,
                query: Vec::new(),
                body,
                auth,
            })
            .await?;
        // Payment has started (the wallet may be debited): an unusable answer is OutcomeUnknown.
        let wire: PaymentStartWire = resp.json()?;
        let redirect = resolve_redirect(&inner.valid.origin, &wire.redirect)
            .map_err(|m| resp.unreadable(m))?;
        let expire_time = OffsetDateTime::from_unix_timestamp(wire.expire_time)
            .map_err(|e| resp.unreadable(format!("expire_time: {e}")))?;
        Ok(PaymentStart {
            trade_no: wire.trade_no,
            redirect,
            expire_time: expire_time.into(),
        })
    }

    /// `GET /openapi/v1/orders/{order_no}/payment`.
    pub async fn payment_status(&self, order_no: &str) -> Result<PaymentStatus> {
        require_id("order_no", order_no)?;
        let inner = &self.client.inner;
        let auth = self.checked_auth(Operation::PaymentStatus).await?;
        let r: PaymentStatusResponse = inner
            .execute(Request {
                op: Operation::PaymentStatus,
                url: inner.api_url(&["openapi", "v1", "orders"], &[order_no, "payment"])?,
                query: Vec::new(),
                body: Body::Empty,
                auth,
            })
            .await
            .map_err(|e| e.with_lookup(LookupKeys::order(order_no)))?
            .json()?;
        Ok(r.status)
    }
}

/// Resolves the payment `redirect` against the platform service address (the base URL's
/// origin), never the host app's domain, and refuses what an app must not open:
/// - a scheme-relative `//host/...` (it would leave the service's origin while looking relative);
/// - anything but `https`, except plain `http` on the service's own origin when that origin is
///   itself plain HTTP (the loopback sandbox);
/// - user info in the address (`https://service@evil.example/` misleads a reader).
pub(crate) fn resolve_redirect(origin: &Url, redirect: &str) -> std::result::Result<Url, String> {
    let r = redirect.trim();
    if r.is_empty() {
        return Err("empty redirect".into());
    }
    let absolute = Url::parse(r).is_ok();
    let url = origin
        .join(r)
        .map_err(|e| format!("redirect is not a valid address: {e}"))?;
    if !absolute && url.origin() != origin.origin() {
        // `//host`, `\\host`, `/\t/host`: relative in form, another host in effect.
        return Err("relative redirect leaves the service's origin".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("redirect carries user info".into());
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if origin.scheme() == "http" && url.origin() == origin.origin() => Ok(url),
        "http" => Err("redirect is plain http".into()),
        other => Err(format!("redirect has unsupported scheme {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_redirect_resolves_against_service_origin() {
        let origin = Url::parse("https://platform.example/").unwrap();
        assert_eq!(
            resolve_redirect(&origin, "/pay/T1?s=1").unwrap().as_str(),
            "https://platform.example/pay/T1?s=1"
        );
        assert_eq!(
            resolve_redirect(&origin, "pay/T1").unwrap().as_str(),
            "https://platform.example/pay/T1"
        );
        assert_eq!(
            resolve_redirect(&origin, "https://provider.example/x")
                .unwrap()
                .as_str(),
            "https://provider.example/x"
        );
        assert!(resolve_redirect(&origin, "javascript:alert(1)").is_err());
        // Open doors (issue: a mobile app would open them).
        for hostile in [
            "http://evil.example/",
            "//evil.example/",
            "\\\\evil.example/",
            "/\\evil.example/",
            "/\t/evil.example/",
            "https://platform.example@evil.example/",
            "data:text/html,hi",
            "file:///etc/passwd",
        ] {
            assert!(resolve_redirect(&origin, hostile).is_err(), "{hostile:?}");
        }
        // A provider's own https page on another host is a normal redirect.
        assert!(resolve_redirect(&origin, "https://provider.example/pay?x=1").is_ok());
        // Plain http only on the service's own plain-http origin (the loopback sandbox).
        let loopback = Url::parse("http://127.0.0.1:8080/").unwrap();
        assert!(resolve_redirect(&loopback, "/pay/T1").is_ok());
        assert!(resolve_redirect(&loopback, "http://127.0.0.1:9999/pay").is_err());
        assert!(resolve_redirect(&origin, "").is_err());
    }

    #[test]
    fn product_query_limits_checked_before_sending() {
        assert!(products_query(&ProductQuery::new().with_limit(101)).is_err());
        assert!(products_query(&ProductQuery::new().with_page(0)).is_err());
        let q = products_query(&ProductQuery::new().with_page(2).with_search_value("tea")).unwrap();
        assert_eq!(
            q,
            vec![
                ("page", "2".to_string()),
                ("search_value", "tea".to_string())
            ]
        );
    }
}
