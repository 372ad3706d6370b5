//! The one error type of the bindings: Kotlin `sealed class StorefrontException`, Swift
//! `enum StorefrontError: Error`.
//!
//! Contract rules: "Branch on HTTP status and `error`, not on message text" (status and code are
//! fields, the code an enum); `error_description`, `field` and `Retry-After` are kept; HTTP 202
//! `provider_result_pending` is its own case, never success; an order creation or payment start
//! that may have been processed is `OutcomeUnknown`, never retried. No case carries a secret.

use crate::error::{
    ApiError as CoreApiError, Error as CoreError, ErrorCode as CoreCode,
    TransportKind as CoreTransport,
};

/// The service's `error` code (Kotlin sealed class / Swift enum); unknown codes stay in `Other`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
#[uniffi::export(Display)]
pub enum ErrorCode {
    /// 400 `invalid_notify_config`.
    InvalidNotifyConfig,
    /// 400 `invalid_notify_url`.
    InvalidNotifyUrl,
    /// 400 `invalid_notify_secret`.
    InvalidNotifySecret,
    /// 400 `invalid_request`.
    InvalidRequest,
    /// 400 `invalid_expires_in`.
    InvalidExpiresIn,
    /// 400 `invalid_return_url`.
    InvalidReturnUrl,
    /// 401 `invalid_token`.
    InvalidToken,
    /// 403 `insufficient_scope`.
    InsufficientScope,
    /// 403 `client_credentials_required`.
    ClientCredentialsRequired,
    /// 403 `merchant_inactive`.
    MerchantInactive,
    /// 403 `login_required`.
    LoginRequired,
    /// 403 `payment_debug_access_denied`.
    PaymentDebugAccessDenied,
    /// 404 `payment_not_found`.
    PaymentNotFound,
    /// 409 `payment_conflict`.
    PaymentConflict,
    /// 409 `provider_result_mismatch`.
    ProviderResultMismatch,
    /// 410 `payment_expired`.
    PaymentExpired,
    /// 422 `channel_unavailable`.
    ChannelUnavailable,
    /// 422 `currency_rate_unavailable`.
    CurrencyRateUnavailable,
    /// 422 `merchant_fee_funding_unavailable`.
    MerchantFeeFundingUnavailable,
    /// 202 `provider_result_pending`.
    ProviderResultPending,
    /// 429 `rate_limited`.
    RateLimited,
    /// 503 `rate_limit_unavailable`.
    RateLimitUnavailable,
    /// 503 `notification_unavailable`.
    NotificationUnavailable,
    /// 500 `server_error`.
    ServerError,
    /// Any other code, as sent (OAuth codes, future codes, empty when the body had none).
    Other {
        /// The wire string.
        code: String,
    },
}

/// The variants shared with the core's [`CoreCode`], named once for both directions.
macro_rules! same_codes {
    ($($variant:ident,)*) => {
        impl From<&CoreCode> for ErrorCode {
            fn from(code: &CoreCode) -> Self {
                match code {
                    $(CoreCode::$variant => ErrorCode::$variant,)*
                    CoreCode::Other(code) => ErrorCode::Other { code: code.clone() },
                }
            }
        }

        impl From<&ErrorCode> for CoreCode {
            fn from(code: &ErrorCode) -> Self {
                match code {
                    $(ErrorCode::$variant => CoreCode::$variant,)*
                    ErrorCode::Other { code } => CoreCode::Other(code.clone()),
                }
            }
        }
    };
}

same_codes! {
    InvalidNotifyConfig,
    InvalidNotifyUrl,
    InvalidNotifySecret,
    InvalidRequest,
    InvalidExpiresIn,
    InvalidReturnUrl,
    InvalidToken,
    InsufficientScope,
    ClientCredentialsRequired,
    MerchantInactive,
    LoginRequired,
    PaymentDebugAccessDenied,
    PaymentNotFound,
    PaymentConflict,
    ProviderResultMismatch,
    PaymentExpired,
    ChannelUnavailable,
    CurrencyRateUnavailable,
    MerchantFeeFundingUnavailable,
    ProviderResultPending,
    RateLimited,
    RateLimitUnavailable,
    NotificationUnavailable,
    ServerError,
}

/// Which transport failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum TransportKind {
    /// No connection could be established (nothing was sent).
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

impl From<CoreTransport> for TransportKind {
    fn from(kind: CoreTransport) -> Self {
        match kind {
            CoreTransport::Connect => TransportKind::Connect,
            CoreTransport::Timeout => TransportKind::Timeout,
            CoreTransport::Tls => TransportKind::Tls,
            CoreTransport::Connection => TransportKind::Connection,
            CoreTransport::BodyTooLarge => TransportKind::BodyTooLarge,
        }
    }
}

/// Every failure of the SDK. Kotlin: `StorefrontException.Api`, `.Transport`, ...; each case
/// keeps the service's details as fields, and none carries a secret or token.
#[derive(Debug, Clone, thiserror::Error, uniffi::Error)]
pub enum StorefrontError {
    /// The service rejected the request: HTTP `status` and the `error` `code`, with
    /// `error_description`, `field` and `Retry-After` (seconds) when the service sent them.
    #[error("HTTP {status} {code}")]
    Api {
        /// HTTP status.
        status: i32,
        /// The `error` code.
        code: ErrorCode,
        /// `error_description` (display text: never branch on it).
        error_description: Option<String>,
        /// `field` naming the rejected parameter.
        field: Option<String>,
        /// `Retry-After` in seconds (429 `rate_limited`).
        retry_after_seconds: Option<i64>,
    },
    /// HTTP 202 `provider_result_pending`: the channel result is unclear. Not success and not a
    /// failure to retry: keep the original payment and check it later by `lookup.orderNo`
    /// (catalog: `paymentStatus`/`waitForPayment`; merchant payment: `getMerchantPayment`, or
    /// `listMerchantPayments` by `lookup.externalReference`).
    #[error("provider result pending (HTTP 202): {advice}")]
    ProviderResultPending {
        /// `error_description`, when given.
        error_description: Option<String>,
        /// What identifies the payment (order number, external reference, channel, key).
        lookup: Box<LookupKeys>,
        /// What to do now, per the contract.
        advice: String,
    },
    /// A catalog order creation or payment start may have been processed (timeout, connection
    /// lost after sending, 5xx) and was not re-sent. Follow `advice`: after `createOrder` do not
    /// order again (the contract has no order list; a repeat may create a second order), tell
    /// the buyer the order is being confirmed; after `startPayment` poll the payment status of
    /// `lookup.orderNo`.
    #[error("outcome of {operation} unknown ({observed}): {advice}")]
    OutcomeUnknown {
        /// The operation whose outcome is unknown (for example `create_order`).
        operation: String,
        /// What was observed (timeout, connection lost, HTTP status).
        observed: String,
        /// What the app can do now, per the contract.
        advice: String,
        /// HTTP status, when the service answered (5xx).
        status: Option<i32>,
        /// The `error` code, when the service answered with one.
        code: Option<ErrorCode>,
        /// The request's identifying data (order number for a payment start; product, quantity
        /// and channel for an order creation).
        lookup: Box<LookupKeys>,
    },
    /// Transport failure (connect, timeout, TLS, connection lost, oversized body).
    #[error("transport error {kind:?}: {detail}")]
    Transport {
        /// Which failure.
        kind: TransportKind,
        /// Short description without URL query or token.
        detail: String,
    },
    /// The overall deadline across retries ran out; the last failure is described, with its
    /// HTTP status and code when it was a service error.
    #[error("overall deadline exceeded: {detail}")]
    DeadlineExceeded {
        /// Description of the last failure seen.
        detail: String,
        /// HTTP status of the last service error, if any.
        status: Option<i32>,
        /// `error` code of the last service error, if any.
        code: Option<ErrorCode>,
        /// `Retry-After` in seconds of the last service error, if any.
        retry_after_seconds: Option<i64>,
    },
    /// A response could not be decoded into the expected type.
    #[error("could not decode response (HTTP {status}): {detail}")]
    Decode {
        /// HTTP status of the response.
        status: i32,
        /// What was wrong.
        detail: String,
    },
    /// A parameter broke the contract's limits; nothing was sent.
    #[error("invalid {field}: {detail}")]
    Validation {
        /// The contract's parameter name.
        field: String,
        /// What is wrong.
        detail: String,
    },
    /// The call needs another token subject (a user token for catalog orders, a
    /// client-credentials token for merchant collection); nothing was sent.
    #[error("{operation} needs a {required} token")]
    WrongTokenSubject {
        /// The operation attempted.
        operation: String,
        /// The token subject it needs.
        required: String,
    },
    /// The response contradicts the request (for example another amount or currency after
    /// creation).
    #[error("response {field} does not match: expected {expected}, got {actual}")]
    ResponseMismatch {
        /// The field that differs.
        field: String,
        /// What was requested.
        expected: String,
        /// What the service returned.
        actual: String,
    },
    /// The client configuration is invalid.
    #[error("invalid configuration: {detail}")]
    Config {
        /// What is wrong.
        detail: String,
    },
    /// The host app's user-token provider failed or returned no token.
    #[error("user token provider failed: {detail}")]
    TokenProvider {
        /// What the provider reported.
        detail: String,
    },
}

/// What the app needs to look a payment or order up after an unclear answer (202
/// `provider_result_pending`, unknown outcome): the request's identifying data. Null fields
/// were not part of the request. None is a secret.
#[derive(Debug, Clone, Default, PartialEq, Eq, uniffi::Record)]
pub struct LookupKeys {
    /// The order or merchant-payment number.
    pub order_no: Option<String>,
    /// The merchant's business reference (merchant payments).
    pub external_reference: Option<String>,
    /// The channel identifier of the request.
    pub payment_no: Option<String>,
    /// The idempotency key sent (merchant-payment create): retry with it, never a new one.
    pub idempotency_key: Option<String>,
    /// The product number of an order request.
    pub gd_no: Option<String>,
    /// The quantity of an order request.
    pub quantity: Option<i64>,
}

impl From<&crate::LookupKeys> for LookupKeys {
    fn from(k: &crate::LookupKeys) -> Self {
        LookupKeys {
            order_no: k.order_no.clone(),
            external_reference: k.external_reference.clone(),
            payment_no: k.payment_no.clone(),
            idempotency_key: k.idempotency_key.clone(),
            gd_no: k.gd_no.clone(),
            quantity: k.quantity.map(i64::from),
        }
    }
}

fn retry_after_seconds(api: &CoreApiError) -> Option<i64> {
    api.retry_after
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl From<CoreError> for StorefrontError {
    fn from(error: CoreError) -> Self {
        match &error {
            CoreError::Api(api) => StorefrontError::Api {
                status: i32::from(api.status),
                code: (&api.error).into(),
                error_description: api.error_description.clone(),
                field: api.field.clone(),
                retry_after_seconds: retry_after_seconds(api),
            },
            CoreError::ProviderResultPending { api, lookup } => {
                StorefrontError::ProviderResultPending {
                    error_description: api.error_description.clone(),
                    lookup: Box::new(lookup.as_ref().into()),
                    advice: crate::PROVIDER_RESULT_PENDING_ADVICE.to_owned(),
                }
            }
            CoreError::OutcomeUnknown {
                operation,
                cause,
                advice,
                api,
                lookup,
            } => StorefrontError::OutcomeUnknown {
                operation: operation.to_string(),
                observed: cause.clone(),
                advice: (*advice).to_owned(),
                status: api.as_ref().map(|a| i32::from(a.status)),
                code: api.as_ref().map(|a| (&a.error).into()),
                lookup: Box::new(lookup.as_ref().into()),
            },
            CoreError::Transport { kind, message } => StorefrontError::Transport {
                kind: (*kind).into(),
                detail: message.clone(),
            },
            CoreError::DeadlineExceeded { .. } => {
                let api = error.api();
                StorefrontError::DeadlineExceeded {
                    detail: error.to_string(),
                    status: api.map(|a| i32::from(a.status)),
                    code: api.map(|a| (&a.error).into()),
                    retry_after_seconds: api.and_then(retry_after_seconds),
                }
            }
            CoreError::Decode { status, message } => StorefrontError::Decode {
                status: i32::from(*status),
                detail: message.clone(),
            },
            CoreError::Validation { field, message } => StorefrontError::Validation {
                field: field.clone(),
                detail: message.clone(),
            },
            CoreError::WrongTokenSubject {
                operation,
                required,
            } => StorefrontError::WrongTokenSubject {
                operation: operation.to_string(),
                required: required.to_string(),
            },
            CoreError::ResponseMismatch {
                field,
                expected,
                actual,
            } => StorefrontError::ResponseMismatch {
                field: field.clone(),
                expected: expected.clone(),
                actual: actual.clone(),
            },
            CoreError::Config(detail) => StorefrontError::Config {
                detail: detail.clone(),
            },
            CoreError::TokenProvider(detail) => StorefrontError::TokenProvider {
                detail: detail.clone(),
            },
        }
    }
}

/// Result of the exports.
pub type Result<T, E = StorefrontError> = std::result::Result<T, E>;

/// A validation failure raised by this layer (for example a negative amount from Kotlin).
pub(crate) fn invalid(field: &str, detail: impl Into<String>) -> StorefrontError {
    StorefrontError::Validation {
        field: field.to_owned(),
        detail: detail.into(),
    }
}

impl std::fmt::Display for ErrorCode {
    /// The wire string of the code (`rate_limited`), the core's own.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(CoreCode::from(self).as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn api(status: u16, code: &str, retry: Option<u64>) -> CoreApiError {
        CoreApiError {
            status,
            error: CoreCode::parse(code),
            error_description: Some("described".into()),
            field: Some("amount_minor".into()),
            retry_after: retry.map(Duration::from_secs),
        }
    }

    /// "Branch on HTTP status and `error`": both survive the crossing, with `Retry-After`,
    /// `error_description` and `field`.
    #[test]
    fn api_errors_keep_status_code_details_and_retry_after() {
        let e: StorefrontError = CoreError::Api(api(429, "rate_limited", Some(7))).into();
        let StorefrontError::Api {
            status,
            code,
            error_description,
            field,
            retry_after_seconds,
        } = e
        else {
            panic!("not Api: {e:?}");
        };
        assert_eq!(status, 429);
        assert_eq!(code, ErrorCode::RateLimited);
        assert_eq!(error_description.as_deref(), Some("described"));
        assert_eq!(field.as_deref(), Some("amount_minor"));
        assert_eq!(retry_after_seconds, Some(7));
        let other: StorefrontError = CoreError::Api(api(401, "invalid_client", None)).into();
        assert!(
            matches!(other, StorefrontError::Api { code: ErrorCode::Other { code }, .. } if code == "invalid_client")
        );
    }

    /// The last service error inside a deadline failure stays visible (status, code, Retry-After).
    #[test]
    fn deadline_exceeded_carries_the_last_service_error() {
        let e: StorefrontError = CoreError::DeadlineExceeded {
            last: Some(Box::new(CoreError::Api(api(
                503,
                "rate_limit_unavailable",
                Some(2),
            )))),
        }
        .into();
        assert!(matches!(
            e,
            StorefrontError::DeadlineExceeded {
                status: Some(503),
                code: Some(ErrorCode::RateLimitUnavailable),
                retry_after_seconds: Some(2),
                ..
            }
        ));
    }

    /// 202 `provider_result_pending` is not success and not a plain API error.
    #[test]
    fn provider_result_pending_has_its_own_case() {
        let e: StorefrontError =
            CoreError::provider_result_pending(api(202, "provider_result_pending", None))
                .with_lookup(crate::LookupKeys::order("P1"))
                .into();
        assert!(matches!(e, StorefrontError::ProviderResultPending { .. }));
    }

    /// Display is the wire string (what to log; branch on the enum), unknown codes as sent.
    #[test]
    fn codes_display_as_their_wire_string() {
        assert_eq!(ErrorCode::RateLimited.to_string(), "rate_limited");
        let other = ErrorCode::Other {
            code: "invalid_client".into(),
        };
        assert_eq!(other.to_string(), "invalid_client");
        assert_eq!(ErrorCode::from(&CoreCode::parse("invalid_client")), other);
    }
}
