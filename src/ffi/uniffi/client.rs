//! `Client` (client-credentials calls) and `UserSession` (calls on behalf of a user).
//!
//! Contract rules: merchant-collection endpoints take client-credentials tokens only and are
//! methods of `Client`; catalog orders and payments take user tokens only and are methods of
//! `UserSession`; profile and products take either. Every method is async on the tokio runtime
//! (Kotlin `suspend`, Swift `async`); cancelling the coroutine / task drops the Rust future,
//! which stops the call (a request already sent may still be processed by the service).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::UserToken;
use crate::client::{Client as CoreClient, UserSession as CoreSession};

use super::catalog::{
    CatalogOrder, CreateOrderRequest, MerchantProfile, PaymentStart, PaymentStatus,
    PaymentWaitOutcome, Product, ProductPage, ProductQuery,
};
use super::collection::{
    CreateMerchantPaymentRequest, CreatedMerchantPayment, DeliveryRecord,
    ListMerchantPaymentsQuery, MerchantPayment, PaymentChannel,
};
use super::config::ClientConfig;
use super::cursor::{ProductCursor, collect_all};
use super::error::{Result, invalid};
use super::secret::Secret;
use super::token::{ForeignProvider, UserTokenProvider};
use super::types::{JsonValue, json_map};

/// What the token endpoint granted for the client-credentials token (the token stays inside).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct GrantedToken {
    /// Granted scopes.
    pub scope: Vec<String>,
    /// Lifetime in seconds as granted (`expires_in`).
    pub expires_in: i64,
}

/// A budget of the client-side rate limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum LimitClass {
    /// Merchant-payment creates (60 per client per minute).
    Create,
    /// Queries, filtered lists and channel reads, shared (300 per client per minute).
    Read,
    /// Notification re-queues (30 per client per minute).
    Requeue,
}

impl From<crate::LimitClass> for LimitClass {
    fn from(class: crate::LimitClass) -> Self {
        match class {
            crate::LimitClass::Create => LimitClass::Create,
            crate::LimitClass::Read => LimitClass::Read,
            crate::LimitClass::Requeue => LimitClass::Requeue,
        }
    }
}

/// One class's window in the shared store.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoredWindow {
    /// The class (`class` in the C ABI's JSON; named so because `class` is a keyword of
    /// Kotlin and Swift).
    pub limit_class: LimitClass,
    /// Admissions within the current window, counted over every process sharing the store.
    pub in_window: i32,
    /// Milliseconds left of a pause set by a 429, if any.
    pub paused_for_ms: Option<i64>,
}

/// What the shared store holds for this client id (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoredState {
    /// Per limit class: admissions within the current window and the pause left.
    pub windows: Vec<StoredWindow>,
    /// Whether a token is stored and not due for renewal.
    pub token_shared: bool,
    /// Milliseconds until the stored token expires, when one is stored.
    pub token_expires_in_ms: Option<i64>,
    /// Whether a process holds the token lease now (is fetching the token for everyone).
    pub token_lease_held: bool,
    /// Token requests that failed in a row (shared back-off).
    pub token_failures_in_a_row: i32,
}

/// Where this client's rate budgets and token live (`ClientConfig.shared_state`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SharedStateStatus {
    /// `memory` (no `shared_state` configured), `sqlite`, `redis` or `postgres`.
    pub backend: String,
    /// Whether the store answered this read (false during an outage: calls then use this
    /// client's own limiter and token cache).
    pub available: bool,
    /// What the store holds, when it answered (null for `memory`).
    pub stored: Option<StoredState>,
}

impl From<crate::SharedStateStatus> for SharedStateStatus {
    fn from(s: crate::SharedStateStatus) -> Self {
        SharedStateStatus {
            backend: s.backend,
            available: s.available,
            stored: s.stored.map(|stored| StoredState {
                windows: stored
                    .windows
                    .into_iter()
                    .map(|w| StoredWindow {
                        limit_class: w.class.into(),
                        in_window: super::ints::int(w.in_window),
                        paused_for_ms: w.paused_for_ms.map(super::ints::long),
                    })
                    .collect(),
                token_shared: stored.token_shared,
                token_expires_in_ms: stored.token_expires_in_ms.map(super::ints::long),
                token_lease_held: stored.token_lease_held,
                token_failures_in_a_row: super::ints::int(stored.token_failures_in_a_row),
            }),
        }
    }
}

/// The SDK client: one connection pool and one client-credentials token cache, shared by every
/// call and every `UserSession` made from it. Thread-safe; build one per configuration.
#[derive(uniffi::Object)]
pub struct Client {
    inner: CoreClient,
}

impl Client {
    /// The core client, for exports of other modules (`reconcile`).
    pub(super) fn core(&self) -> &CoreClient {
        &self.inner
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl Client {
    /// Checks the configuration and builds the HTTP client. On Android without `root_ca_pem`,
    /// the platform verifier must have been initialised first (see the Kotlin `Storefront`
    /// helper); otherwise this fails with `Config` instead of crashing.
    #[uniffi::constructor]
    pub fn new(config: ClientConfig) -> Result<Arc<Self>> {
        super::android::check_ready(&config)?;
        Ok(Arc::new(Client {
            inner: CoreClient::new(config.to_core()?)?,
        }))
    }

    /// Obtains (or reuses) the client-credentials token and returns what was granted; other
    /// calls do this on demand, so calling it only surfaces credential problems early.
    pub async fn authenticate(&self) -> Result<GrantedToken> {
        let g = self.inner.authenticate().await?;
        Ok(GrantedToken {
            scope: g.scope,
            expires_in: super::ints::long(g.expires_in),
        })
    }

    /// Where the rate budgets and the token live and what the shared store holds
    /// (`ClientConfig.shared_state`); never the token. One store round trip; `available` is
    /// false while the store does not answer.
    pub async fn shared_state(&self) -> SharedStateStatus {
        self.inner.shared_state().await.into()
    }

    /// A session for calls on behalf of a user with a fixed token value; a rejected token
    /// (401 `invalid_token`) is reported to the caller.
    pub fn user_session(&self, token: Arc<Secret>) -> Arc<UserSession> {
        Arc::new(UserSession {
            inner: self.inner.user(UserToken::Value(token.inner.clone())),
        })
    }

    /// A session whose token comes from the host app's provider, asked again once when the
    /// service rejects a token with 401 `invalid_token`.
    pub fn user_session_with_provider(
        &self,
        provider: Arc<dyn UserTokenProvider>,
    ) -> Arc<UserSession> {
        Arc::new(UserSession {
            inner: self
                .inner
                .user(UserToken::Provider(Arc::new(ForeignProvider(provider)))),
        })
    }

    /// `GET /openapi/v1/merchant` with the client token.
    pub async fn merchant_profile(&self) -> Result<MerchantProfile> {
        Ok(self.inner.merchant_profile().await?.into())
    }

    /// `GET /openapi/v1/products`: one page, with the client token.
    pub async fn list_products(&self, query: ProductQuery) -> Result<ProductPage> {
        Ok(self.inner.list_products(&query.into_core()?).await?.into())
    }

    /// Products over all pages from `query.page`, with the client token, read page by page
    /// as they are consumed (Kotlin: `client.products(query)` is a `Flow`).
    pub fn product_cursor(&self, query: ProductQuery) -> Result<Arc<ProductCursor>> {
        Ok(Arc::new(ProductCursor::new(
            self.inner.products_stream(query.into_core()?),
        )))
    }

    /// Every product over all pages from `query.page`, with the client token.
    pub async fn list_all_products(&self, query: ProductQuery) -> Result<Vec<Product>> {
        collect_all(self.inner.products_stream(query.into_core()?)).await
    }

    /// `GET /openapi/v1/merchant-payment-channels`: channels usable for merchant payments
    /// (empty when none is available). Not a quote for catalog checkout.
    pub async fn list_channels(&self) -> Result<Vec<PaymentChannel>> {
        let channels = self.inner.list_channels().await?;
        Ok(channels.into_iter().map(Into::into).collect())
    }

    /// `POST /openapi/v1/merchant-payments`. Parameters are checked against the contract's
    /// limits first; retries (connection errors, timeouts, 5xx, 429) reuse the same
    /// idempotency key and identical parameters; the returned amount, currency and precision
    /// are checked against the request.
    pub async fn create_merchant_payment(
        &self,
        request: CreateMerchantPaymentRequest,
    ) -> Result<CreatedMerchantPayment> {
        let core = request.to_core()?;
        Ok(self.inner.create_merchant_payment(&core).await?.into())
    }

    /// `GET /openapi/v1/merchant-payments/{order_no}`.
    pub async fn get_merchant_payment(&self, order_no: String) -> Result<MerchantPayment> {
        Ok(self.inner.get_merchant_payment(&order_no).await?.into())
    }

    /// `GET /openapi/v1/merchant-payments` filtered by `external_reference` and/or `order_no`.
    pub async fn list_merchant_payments(
        &self,
        query: ListMerchantPaymentsQuery,
    ) -> Result<Vec<MerchantPayment>> {
        let payments = self
            .inner
            .list_merchant_payments(&query.into_core()?)
            .await?;
        Ok(payments.into_iter().map(Into::into).collect())
    }

    /// `GET /openapi/v1/merchant-payments/{order_no}/notifications` (limit 1 to 100, default
    /// 20).
    pub async fn list_notification_records(
        &self,
        order_no: String,
        limit: Option<i32>,
    ) -> Result<Vec<DeliveryRecord>> {
        let limit = super::ints::unsigned_opt("limit", limit)?;
        let records = self
            .inner
            .list_notification_records(&order_no, limit)
            .await?;
        Ok(records.into_iter().map(Into::into).collect())
    }

    /// `POST /openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry`:
    /// re-queues a notification whose automatic attempts are exhausted. Returns `accepted`.
    pub async fn retry_notification(&self, order_no: String, event_id: String) -> Result<bool> {
        Ok(self
            .inner
            .retry_notification(&order_no, &event_id)
            .await?
            .accepted)
    }
}

/// Calls on behalf of one user: catalog orders and payments, userinfo, and profile/products
/// with the user's token. A client-credentials token is refused before anything is sent.
#[derive(uniffi::Object)]
pub struct UserSession {
    inner: CoreSession,
}

#[uniffi::export(async_runtime = "tokio")]
impl UserSession {
    /// `GET {userinfo_endpoint}` (scope `openid`). The contract does not show its fields, so
    /// it is a map of JSON values.
    pub async fn userinfo(&self) -> Result<HashMap<String, JsonValue>> {
        Ok(json_map(self.inner.userinfo().await?))
    }

    /// `GET /openapi/v1/merchant` with the user's token.
    pub async fn merchant_profile(&self) -> Result<MerchantProfile> {
        Ok(self.inner.merchant_profile().await?.into())
    }

    /// `GET /openapi/v1/products`: one page, with the user's token.
    pub async fn list_products(&self, query: ProductQuery) -> Result<ProductPage> {
        Ok(self.inner.list_products(&query.into_core()?).await?.into())
    }

    /// Products over all pages from `query.page`, with the user's token, read page by page as
    /// they are consumed (Kotlin: `session.products(query)` is a `Flow`).
    pub fn product_cursor(&self, query: ProductQuery) -> Result<Arc<ProductCursor>> {
        Ok(Arc::new(ProductCursor::new(
            self.inner.products_stream(query.into_core()?),
        )))
    }

    /// Every product over all pages from `query.page`, with the user's token.
    pub async fn list_all_products(&self, query: ProductQuery) -> Result<Vec<Product>> {
        collect_all(self.inner.products_stream(query.into_core()?)).await
    }

    /// `POST /openapi/v1/orders`; returns the new `order_no`. Never re-sent once it may have
    /// been processed: a timeout, lost connection or 5xx gives `OutcomeUnknown` (repeated
    /// POSTs may create different orders). Creation does not mean paid.
    pub async fn create_order(&self, request: CreateOrderRequest) -> Result<String> {
        Ok(self
            .inner
            .create_order(&request.into_core()?)
            .await?
            .order_no)
    }

    /// `GET /openapi/v1/orders/{order_no}`.
    pub async fn get_order(&self, order_no: String) -> Result<CatalogOrder> {
        Ok(self.inner.get_order(&order_no).await?.into())
    }

    /// `POST /openapi/v1/orders/{order_no}/payment`: actually starts payment (the platform
    /// coin may debit the wallet during the request); never re-sent once it may have been
    /// processed. A 200 does not prove payment.
    pub async fn start_payment(
        &self,
        order_no: String,
        payment_no: String,
    ) -> Result<PaymentStart> {
        Ok(self
            .inner
            .start_payment(&order_no, &payment_no)
            .await?
            .into())
    }

    /// `GET /openapi/v1/orders/{order_no}/payment`.
    pub async fn payment_status(&self, order_no: String) -> Result<PaymentStatus> {
        Ok(self.inner.payment_status(&order_no).await?.into())
    }

    /// Polls the payment status every `interval_ms` until paid or cancelled (a 429 waits for
    /// its `Retry-After`), then reads the order: `PaymentWaitOutcome.Final`. After `timeout_ms`
    /// without a final status gives `PaymentWaitOutcome.StillPending` (an outcome, not an
    /// error). The SDK's defaults are 2000 ms and 60000 ms (README "Defaults"). Cancelling the
    /// coroutine / task stops the polling.
    pub async fn wait_for_payment(
        &self,
        order_no: String,
        interval_ms: i64,
        timeout_ms: i64,
    ) -> Result<PaymentWaitOutcome> {
        let interval_ms = u64::try_from(interval_ms)
            .ok()
            .filter(|ms| *ms > 0)
            .ok_or_else(|| invalid("interval_ms", "must be positive"))?;
        let timeout_ms =
            u64::try_from(timeout_ms).map_err(|_| invalid("timeout_ms", "must not be negative"))?;
        let outcome = self
            .inner
            .wait_for_payment(
                &order_no,
                Duration::from_millis(interval_ms),
                Duration::from_millis(timeout_ms),
            )
            .await?;
        Ok(outcome.into())
    }
}
