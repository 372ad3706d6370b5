//! storefront: typed async SDK for the merchant collection and catalog order service.
//!
//! * [`Client`] holds the configuration, one connection pool and the client-credentials token
//!   cache; it runs merchant-collection calls and profile/product reads.
//! * [`UserSession`] (from [`Client::user`]) runs calls that need a user-authorized token:
//!   catalog orders, payment start and status, userinfo.
//! * [`webhook`] verifies signed status notifications.
//! * [`money`] holds the exact amount types; no floating point anywhere.
//!
//! ```no_run
//! # async fn demo() -> storefront::Result<()> {
//! use storefront::{Client, Config, CreateMerchantPayment, MinorAmount};
//! let client = Client::new(Config::new(
//!     "https://api.example.com/api",
//!     "https://api.example.com/oauth/token",
//!     "client-id",
//!     "client-secret",
//! ))?;
//! let request = CreateMerchantPayment::new("order-42", MinorAmount::parse_decimal("12.50", 2)?, "USD");
//! // Persist request.idempotency_key() with the order before sending.
//! let created = client.create_merchant_payment(&request).await?;
//! println!("send the buyer to the checkout of {}", created.payment.order_no);
//! # Ok(()) }
//! ```

#[cfg(feature = "uniffi")]
uniffi::setup_scaffolding!();

#[cfg(any(feature = "uniffi", feature = "capi"))]
mod ffi;

mod auth;
pub mod catalog;
mod client;
pub mod collection;
mod config;
mod error;
#[cfg(any(feature = "store-sqlite", feature = "store-postgres"))]
pub mod inbox;
pub mod log_sink;
pub mod money;
mod operation;
mod params;
mod random;
mod rate_limit;
pub mod reconcile;
mod retry;
mod secret;
pub mod serde_util;
#[cfg(feature = "store-sqlite")]
mod sqlite_file;
mod store;
mod tls;
mod transport;
pub mod webhook;

pub use auth::{GrantedToken, TokenFuture, UserToken, UserTokenProvider};
pub use catalog::model::{
    CatalogOrder, CreateOrderRequest, CreatedOrder, MerchantProfile, OrderStatus, PaymentPolicy,
    PaymentStart, PaymentStatus, PaymentWaitOutcome, Product, ProductPage, ProductQuery, UnixTime,
};
pub use catalog::other_ipu::{OtherIpuField, OtherIpuForm};
pub use catalog::{
    DEFAULT_WAIT_INTERVAL, DEFAULT_WAIT_TIMEOUT, MAX_WAIT_TIMEOUT, MIN_POLL_INTERVAL,
};
pub use client::{Client, UserSession};
pub use collection::create::{CreateMerchantPayment, generate_idempotency_key};
pub use collection::model::{
    ChannelOwner, ChannelProvider, CheckoutUrl, CreatedMerchantPayment, DeliveryAttempt,
    DeliveryRecord, DeliveryStatus, ListMerchantPaymentsQuery, MerchantPayment,
    MerchantPaymentStatus, PaymentChannel, RetryAccepted,
};
pub use config::{
    Config, DEFAULT_ATTEMPT_TIMEOUT, DEFAULT_CLIENT_SCOPES, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_OVERALL_DEADLINE,
    DEFAULT_TOKEN_REFRESH_MARGIN, ENV_ALLOW_INSECURE_LOOPBACK, ENV_BASE_URL, ENV_CLIENT_ID,
    ENV_CLIENT_SECRET, ENV_ROOT_CA_PEM_FILE, ENV_SCOPES, ENV_SHARED_STATE, ENV_TOKEN_ENDPOINT,
    ENV_USERINFO_ENDPOINT, ENV_VARIABLES, MAX_CONFIG_DURATION, MAX_IN_FLIGHT, RetryPolicy,
    SDK_USER_AGENT,
};
pub use error::{
    ApiError, Error, ErrorCode, ErrorKind, LookupKeys, PROVIDER_RESULT_PENDING_ADVICE, Result,
    TransportKind,
};
pub use money::{FixedPoint8, MAX_AMOUNT_MINOR, MAX_SCALE, MinorAmount, Money, MoneyError};
pub use operation::{Operation, Resend, TokenSubject};
pub use rate_limit::{LimitClass, RateLimitState, RateLimits};
pub use reconcile::{
    LocalRecord, ReconcileCursor, ReconcileFinding, ReconcileOptions, ReconcileReport, Reconciler,
};
pub use secret::Secret;
pub use store::{
    DEFAULT_STORE_TIMEOUT, DEFAULT_TOKEN_LEASE, PROBE_INTERVAL, SharedStateStatus, StoredState,
    StoredWindow,
};
pub use webhook::{
    NotificationData, PaymentExpectation, StatusNotification, TestSigner, VerifiedNotification,
    VersionDecision, WebhookError, WebhookVerifier, status_version_decision,
};

impl From<MoneyError> for Error {
    fn from(e: MoneyError) -> Self {
        Error::validation("amount", e.to_string())
    }
}

/// The README's Rust blocks, compiled and run against the standalone sandbox by suite
/// `36-readme-blocks` (`RUSTDOCFLAGS="--cfg readme_blocks" cargo test --doc`, with the sandbox's
/// `STOREFRONT_*` variables): they need a running service, so a plain `cargo test` leaves them out.
#[cfg(all(doctest, readme_blocks))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
