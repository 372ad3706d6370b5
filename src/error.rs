//! The one error model of the SDK.
//!
//! Contract rules: "Branch on HTTP status and `error`, not on message text"; `error_description`,
//! `field` and `Retry-After` are kept; "HTTP 202 `provider_result_pending` is not success of
//! payment"; catalog order creation and payment start that may have been processed are reported
//! as an unknown outcome, never re-sent.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::operation::{Operation, TokenSubject};

/// The service's `error` code. Known codes are variants; anything else is kept in `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400: per-payment notification requested without a usable address and secret, or disabled
    /// together with an address or secret.
    InvalidNotifyConfig,
    /// 400: notification address not public HTTPS, or has user info, fragment or private target.
    InvalidNotifyUrl,
    /// 400: notification secret not 32 to 256 bytes or contains whitespace.
    InvalidNotifySecret,
    /// 400: bad parameters, amount or list filters.
    InvalidRequest,
    /// 400: `expires_in` not an integer of 60 to 7200.
    InvalidExpiresIn,
    /// 400: `return_url` not a valid HTTPS address.
    InvalidReturnUrl,
    /// 401: obtain a valid token.
    InvalidToken,
    /// 403: approved scope missing.
    InsufficientScope,
    /// 403: the token subject is not a client-credentials token.
    ClientCredentialsRequired,
    /// 403: bound merchant not active.
    MerchantInactive,
    /// 403: checkout requires buyer login.
    LoginRequired,
    /// 403: debug test-channel assignment or enablement fails.
    PaymentDebugAccessDenied,
    /// 404: payment number unknown or not of this merchant.
    PaymentNotFound,
    /// 409: same idempotency key with changed parameters.
    PaymentConflict,
    /// 409: channel session, amount or currency mismatch; the platform verifies.
    ProviderResultMismatch,
    /// 410: payment can no longer be started; query the original payment.
    PaymentExpired,
    /// 422: channel not usable.
    ChannelUnavailable,
    /// 422: platform rate not available.
    CurrencyRateUnavailable,
    /// 422: fee cannot be funded from wallet and approved credit.
    MerchantFeeFundingUnavailable,
    /// 202: channel result unclear; keep the original payment and check.
    ProviderResultPending,
    /// 429: wait per `Retry-After`.
    RateLimited,
    /// 503: rate limiter unavailable; retry with limited backoff.
    RateLimitUnavailable,
    /// 503: retry later with the original idempotency key.
    NotificationUnavailable,
    /// 500: server error; reuse the original idempotency key for writes.
    ServerError,
    /// Any other code (OAuth codes such as `invalid_client`, future codes, or an empty code when
    /// the body carried none).
    Other(String),
}

/// One list of the known codes and their wire strings gives both directions of the mapping.
macro_rules! wire_codes {
    ($($variant:ident => $wire:literal,)*) => {
        impl ErrorCode {
            /// Maps the wire string to a code.
            pub fn parse(code: &str) -> Self {
                match code {
                    $($wire => ErrorCode::$variant,)*
                    other => ErrorCode::Other(other.to_owned()),
                }
            }

            /// The wire string of the code.
            pub fn as_str(&self) -> &str {
                match self {
                    $(ErrorCode::$variant => $wire,)*
                    ErrorCode::Other(s) => s,
                }
            }
        }
    };
}

wire_codes! {
    InvalidNotifyConfig => "invalid_notify_config",
    InvalidNotifyUrl => "invalid_notify_url",
    InvalidNotifySecret => "invalid_notify_secret",
    InvalidRequest => "invalid_request",
    InvalidExpiresIn => "invalid_expires_in",
    InvalidReturnUrl => "invalid_return_url",
    InvalidToken => "invalid_token",
    InsufficientScope => "insufficient_scope",
    ClientCredentialsRequired => "client_credentials_required",
    MerchantInactive => "merchant_inactive",
    LoginRequired => "login_required",
    PaymentDebugAccessDenied => "payment_debug_access_denied",
    PaymentNotFound => "payment_not_found",
    PaymentConflict => "payment_conflict",
    ProviderResultMismatch => "provider_result_mismatch",
    PaymentExpired => "payment_expired",
    ChannelUnavailable => "channel_unavailable",
    CurrencyRateUnavailable => "currency_rate_unavailable",
    MerchantFeeFundingUnavailable => "merchant_fee_funding_unavailable",
    ProviderResultPending => "provider_result_pending",
    RateLimited => "rate_limited",
    RateLimitUnavailable => "rate_limit_unavailable",
    NotificationUnavailable => "notification_unavailable",
    ServerError => "server_error",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ErrorCode::parse(&String::deserialize(d)?))
    }
}

/// An error response of the service: HTTP status, the `error` code and its details.
///
/// Serializes in the service's own error-body shape plus `status` and `retry_after` (seconds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// HTTP status code.
    pub status: u16,
    /// The `error` code of the body.
    pub error: ErrorCode,
    /// `error_description`, when given. Display text: never branch on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_description: Option<String>,
    /// `field` naming the rejected parameter, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Value of the `Retry-After` header, when given.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::serde_util::opt_duration_secs"
    )]
    pub retry_after: Option<Duration>,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {} {}", self.status, self.error)?;
        if let Some(field) = &self.field {
            write!(f, " (field {field})")?;
        }
        if let Some(d) = &self.error_description {
            write!(f, ": {d}")?;
        }
        Ok(())
    }
}

/// What the app needs to look a payment or order up after an unclear answer: the identifying
/// data of the request (and of the answer, when it carried any). Only the fields the operation
/// knows are set; none of them is a secret.
///
/// Carried by [`Error::ProviderResultPending`] (contract: "keep the original payment and
/// check": [`crate::UserSession::payment_status`] / [`crate::UserSession::wait_for_payment`] with
/// `order_no` for a catalog payment, [`crate::Client::get_merchant_payment`] with `order_no` or
/// [`crate::Client::list_merchant_payments`] by `external_reference` for a merchant payment) and
/// by [`Error::OutcomeUnknown`] (see [`Error::advice`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookupKeys {
    /// The order or merchant-payment number, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_no: Option<String>,
    /// The merchant's business reference (merchant payments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_reference: Option<String>,
    /// The channel identifier (`payment_no`) of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_no: Option<String>,
    /// The idempotency key sent (merchant-payment create): retry with it, never a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The product number of a catalog order request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gd_no: Option<String>,
    /// The quantity of a catalog order request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<u32>,
}

impl LookupKeys {
    /// Keys of a request about one order or payment number.
    pub fn order(order_no: impl Into<String>) -> Self {
        LookupKeys {
            order_no: Some(order_no.into()),
            ..LookupKeys::default()
        }
    }

    /// Whether no key is known.
    pub fn is_empty(&self) -> bool {
        *self == LookupKeys::default()
    }

    /// Fills the fields this one lacks from `other` (data of the request completes data of
    /// the answer).
    fn fill_from(&mut self, other: LookupKeys) {
        fn fill<T>(mine: &mut Option<T>, theirs: Option<T>) {
            if mine.is_none() {
                *mine = theirs;
            }
        }
        fill(&mut self.order_no, other.order_no);
        fill(&mut self.external_reference, other.external_reference);
        fill(&mut self.payment_no, other.payment_no);
        fill(&mut self.idempotency_key, other.idempotency_key);
        fill(&mut self.gd_no, other.gd_no);
        fill(&mut self.quantity, other.quantity);
    }
}

/// Which transport failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// No connection could be established (the request was not sent).
    Connect,
    /// The per-attempt timeout ran out.
    Timeout,
    /// TLS setup or certificate verification failed.
    Tls,
    /// The connection broke while sending or receiving.
    Connection,
    /// The response body exceeded the SDK's size cap.
    BodyTooLarge,
}

/// Stable, FFI-friendly category of an [`Error`]; its `as_str` never changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The service answered with an error status ([`Error::Api`]).
    Api,
    /// HTTP 202 `provider_result_pending` ([`Error::ProviderResultPending`]).
    ProviderResultPending,
    /// A non-idempotent write may have been processed ([`Error::OutcomeUnknown`]).
    OutcomeUnknown,
    /// Transport failure ([`Error::Transport`]).
    Transport,
    /// The overall deadline across retries ran out ([`Error::DeadlineExceeded`]).
    DeadlineExceeded,
    /// A response could not be decoded ([`Error::Decode`]).
    Decode,
    /// A parameter failed client-side validation ([`Error::Validation`]).
    Validation,
    /// The call needs a different token subject ([`Error::WrongTokenSubject`]).
    WrongTokenSubject,
    /// The response does not match the request ([`Error::ResponseMismatch`]).
    ResponseMismatch,
    /// The configuration is invalid ([`Error::Config`]).
    Config,
    /// The user-token provider failed ([`Error::TokenProvider`]).
    TokenProvider,
}

impl ErrorKind {
    /// Stable snake_case name, used across the FFI boundary.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Api => "api",
            ErrorKind::ProviderResultPending => "provider_result_pending",
            ErrorKind::OutcomeUnknown => "outcome_unknown",
            ErrorKind::Transport => "transport",
            ErrorKind::DeadlineExceeded => "deadline_exceeded",
            ErrorKind::Decode => "decode",
            ErrorKind::Validation => "validation",
            ErrorKind::WrongTokenSubject => "wrong_token_subject",
            ErrorKind::ResponseMismatch => "response_mismatch",
            ErrorKind::Config => "config",
            ErrorKind::TokenProvider => "token_provider",
        }
    }
}

/// Every failure the SDK reports. Messages never contain secrets, tokens or checkout tokens.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The service rejected the request with an error status and `error` code.
    #[error("{0}")]
    Api(ApiError),
    /// HTTP 202 `provider_result_pending`: the channel result is unclear. Not success, not a
    /// failure to retry blindly: keep the original payment and check it later, with the
    /// numbers in `lookup` (contract: "keep the original payment and check").
    #[error(
        "channel result pending (HTTP 202 provider_result_pending); keep the original payment and check it{}",
        lookup_suffix(lookup)
    )]
    ProviderResultPending {
        /// The service's answer (status 202, code `provider_result_pending`).
        api: ApiError,
        /// What identifies the payment: the order number, external reference, channel or
        /// idempotency key the request was about.
        lookup: Box<LookupKeys>,
    },
    /// A catalog order creation or payment start may have been processed (timeout, connection
    /// lost after sending, 5xx). It was not re-sent. Follow `advice`, with the request's data in
    /// `lookup`.
    #[error("outcome of {operation} unknown ({cause}); {advice}")]
    OutcomeUnknown {
        /// The operation whose outcome is unknown.
        operation: Operation,
        /// What was observed (timeout, connection lost, HTTP status).
        cause: String,
        /// What the app can do now, per the contract (see [`Error::advice`]).
        advice: &'static str,
        /// The service's error response, when there was one (5xx).
        api: Option<Box<ApiError>>,
        /// The request's identifying data (order number for a payment start; product, quantity
        /// and channel for an order creation, which has no number yet).
        lookup: Box<LookupKeys>,
    },
    /// Transport failure; `message` never contains a URL query or a token.
    #[error("transport error ({kind:?}): {message}")]
    Transport {
        /// Which failure.
        kind: TransportKind,
        /// Short description.
        message: String,
    },
    /// The overall deadline across retries ran out; `last` is the last failure seen.
    #[error("overall deadline exceeded{}", last.as_ref().map(|e| format!(" (last error: {e})")).unwrap_or_default())]
    DeadlineExceeded {
        /// The last failure before the deadline, if any.
        last: Option<Box<Error>>,
    },
    /// A response body could not be decoded into the expected type.
    #[error("could not decode response (HTTP {status}): {message}")]
    Decode {
        /// HTTP status of the response.
        status: u16,
        /// What was wrong.
        message: String,
    },
    /// A parameter failed the contract's limits before anything was sent.
    #[error("invalid {field}: {message}")]
    Validation {
        /// The contract's parameter name.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The operation needs a different token subject (for example a user token for catalog
    /// orders, a client-credentials token for merchant collection). Nothing was sent.
    #[error("{operation} needs a {required} token")]
    WrongTokenSubject {
        /// The operation attempted.
        operation: Operation,
        /// The token subject it requires.
        required: TokenSubject,
    },
    /// The response contradicts the request (for example a different amount or currency after
    /// creation: "verify the returned amount, currency and precision").
    #[error("response {field} does not match the request: expected {expected}, got {actual}")]
    ResponseMismatch {
        /// The field that differs.
        field: String,
        /// What was requested.
        expected: String,
        /// What the service returned.
        actual: String,
    },
    /// The client configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The host app's user-token provider failed.
    #[error("user token provider failed: {0}")]
    TokenProvider(String),
}

impl Error {
    /// The stable category of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Api(_) => ErrorKind::Api,
            Error::ProviderResultPending { .. } => ErrorKind::ProviderResultPending,
            Error::OutcomeUnknown { .. } => ErrorKind::OutcomeUnknown,
            Error::Transport { .. } => ErrorKind::Transport,
            Error::DeadlineExceeded { .. } => ErrorKind::DeadlineExceeded,
            Error::Decode { .. } => ErrorKind::Decode,
            Error::Validation { .. } => ErrorKind::Validation,
            Error::WrongTokenSubject { .. } => ErrorKind::WrongTokenSubject,
            Error::ResponseMismatch { .. } => ErrorKind::ResponseMismatch,
            Error::Config(_) => ErrorKind::Config,
            Error::TokenProvider(_) => ErrorKind::TokenProvider,
        }
    }

    /// The service's error response carried by this error, if any.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(api) | Error::ProviderResultPending { api, .. } => Some(api),
            Error::OutcomeUnknown { api, .. } => api.as_deref(),
            Error::DeadlineExceeded { last: Some(last) } => last.api(),
            _ => None,
        }
    }

    /// HTTP status of the service's response, if there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Decode { status, .. } => Some(*status),
            _ => self.api().map(|a| a.status),
        }
    }

    /// The service's `error` code, if there was one.
    pub fn code(&self) -> Option<&ErrorCode> {
        self.api().map(|a| &a.error)
    }

    /// `error_description`, if the service gave one.
    pub fn error_description(&self) -> Option<&str> {
        self.api().and_then(|a| a.error_description.as_deref())
    }

    /// The parameter named by the error: the service's `field`, or the client-side
    /// validation's field.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::Validation { field, .. } | Error::ResponseMismatch { field, .. } => Some(field),
            _ => self.api().and_then(|a| a.field.as_deref()),
        }
    }

    /// `Retry-After` the service asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        self.api().and_then(|a| a.retry_after)
    }

    /// Whether this is the given service error code.
    pub fn is_code(&self, code: &ErrorCode) -> bool {
        self.code() == Some(code)
    }

    /// What the app needs to look the payment or order up, for an unclear answer
    /// ([`Error::ProviderResultPending`], [`Error::OutcomeUnknown`]); `None` for other errors.
    pub fn lookup(&self) -> Option<&LookupKeys> {
        match self {
            Error::ProviderResultPending { lookup, .. } | Error::OutcomeUnknown { lookup, .. } => {
                Some(lookup)
            }
            _ => None,
        }
    }

    /// What the app can do now, per the contract, for an unclear answer:
    ///
    /// - order creation of unknown outcome: the contract has no order list and the order
    ///   number never arrived, so the order cannot be looked up; do not re-send (a repeat may
    ///   create a second order), tell the buyer the order is being confirmed, and let the buyer
    ///   decide before ordering again; `lookup` holds the request (product, quantity, channel);
    /// - payment start of unknown outcome: do not start again (the wallet may be debited); poll
    ///   the payment status of `lookup.order_no`, then read the order;
    /// - `provider_result_pending`: keep the original payment and check it with
    ///   `lookup.order_no` (or `lookup.external_reference` for a merchant payment).
    ///
    /// `None` for other errors (branch on [`Error::kind`] and [`Error::code`]).
    pub fn advice(&self) -> Option<&'static str> {
        match self {
            Error::OutcomeUnknown { advice, .. } => Some(advice),
            Error::ProviderResultPending { .. } => Some(PROVIDER_RESULT_PENDING_ADVICE),
            _ => None,
        }
    }

    /// The 202 `provider_result_pending` error for `api`, with no lookup data yet (the
    /// operation adds it with [`Error::with_lookup`]).
    pub(crate) fn provider_result_pending(api: ApiError) -> Self {
        Error::ProviderResultPending {
            api,
            lookup: Box::default(),
        }
    }

    /// Adds the request's identifying data to an unclear-answer error (fields already set are
    /// kept); other errors pass unchanged. Also looks inside a [`Error::DeadlineExceeded`].
    pub(crate) fn with_lookup(mut self, keys: LookupKeys) -> Self {
        match &mut self {
            Error::ProviderResultPending { lookup, .. } | Error::OutcomeUnknown { lookup, .. } => {
                lookup.fill_from(keys)
            }
            Error::DeadlineExceeded { last: Some(last) } => {
                let inner = std::mem::replace(last.as_mut(), Error::Config(String::new()));
                **last = inner.with_lookup(keys);
            }
            _ => {}
        }
        self
    }

    pub(crate) fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Validation {
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn decode(status: u16, message: impl Into<String>) -> Self {
        Error::Decode {
            status,
            message: message.into(),
        }
    }
}

/// [`Error::advice`] of a 202 `provider_result_pending`.
pub const PROVIDER_RESULT_PENDING_ADVICE: &str = "the channel result is unclear: keep the original \
     payment (do not create or start another) and check it later by the order number (or \
     external reference) in `lookup`";

/// ` (order_no X)` for a pending error's message, when the number is known.
fn lookup_suffix(lookup: &LookupKeys) -> String {
    match (&lookup.order_no, &lookup.external_reference) {
        (Some(no), _) => format!(" (order_no {no})"),
        (None, Some(reference)) => format!(" (external_reference {reference})"),
        (None, None) => String::new(),
    }
}

/// Result alias for the SDK.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_round_trip_and_keep_unknown_codes() {
        for code in [
            "payment_conflict",
            "rate_limited",
            "provider_result_pending",
        ] {
            assert_eq!(ErrorCode::parse(code).as_str(), code);
            assert!(!matches!(ErrorCode::parse(code), ErrorCode::Other(_)));
        }
        assert_eq!(
            ErrorCode::parse("invalid_client"),
            ErrorCode::Other("invalid_client".into())
        );
    }

    #[test]
    fn accessors_expose_status_code_field_and_retry_after() {
        let e = Error::Api(ApiError {
            status: 429,
            error: ErrorCode::RateLimited,
            error_description: Some("slow down".into()),
            field: Some("amount_minor".into()),
            retry_after: Some(Duration::from_secs(3)),
        });
        assert_eq!(e.kind(), ErrorKind::Api);
        assert_eq!(e.status(), Some(429));
        assert!(e.is_code(&ErrorCode::RateLimited));
        assert_eq!(e.field(), Some("amount_minor"));
        assert_eq!(e.error_description(), Some("slow down"));
        assert_eq!(e.retry_after(), Some(Duration::from_secs(3)));
        let json = serde_json::to_value(e.api().unwrap()).unwrap();
        assert_eq!(json["error"], "rate_limited");
        assert_eq!(json["retry_after"], 3);
    }
}
