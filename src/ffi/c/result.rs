//! `sf_result`: the one result type of every fallible export.
//!
//! Numbers are part of the ABI: once published a number is never reused or renumbered, new
//! results only get new numbers. They are grouped by hundreds: 0 success, 1-99 arguments refused
//! at the boundary, 100-199 answers of the service, 200-299 transport and decoding, 300-399
//! webhook verification, 400-499 local checks of the SDK, 500-599 the webhook inbox.

/// Result of every fallible `sf_*` function. `SF_RESULT_OK` (0) is the only success; for any
/// other value the details (HTTP status, `error` code, description, field, `Retry-After`) are
/// in the `sf_error` object written to the function's `error_out` argument.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum sf_result {
    /// Success: the out-parameters were written.
    Ok = 0,
    /// A required pointer argument was NULL (the error's `field` names it).
    NullArgument = 1,
    /// A string argument was not valid UTF-8.
    InvalidUtf8 = 2,
    /// A JSON argument was not syntactically valid JSON.
    InvalidJson = 3,
    /// A string or byte argument was longer than `sf_max_input_bytes()`; it was not read past
    /// that bound.
    InputTooLarge = 4,
    /// Well-formed JSON of the wrong shape, or an argument value out of range.
    InvalidArgument = 5,
    /// A panic inside the library was caught at the boundary (a bug; please report it). The
    /// handle stays usable.
    Panic = 6,
    /// The service answered with an HTTP error: branch on `sf_error_http_status` and
    /// `sf_error_code` (the `error` field), never on the message.
    Api = 100,
    /// HTTP 202 `provider_result_pending`: the channel result is unclear. Not success and not a
    /// failure to retry blindly; keep the original payment and check it.
    ProviderResultPending = 101,
    /// A catalog order creation or payment start may have been processed (timeout or connection
    /// lost after sending, or a 5xx). It was not re-sent; read the order before trying again.
    OutcomeUnknown = 102,
    /// No connection could be established (the request was not sent).
    Connect = 200,
    /// An attempt timed out.
    Timeout = 201,
    /// TLS setup or certificate verification failed.
    Tls = 202,
    /// The connection broke while sending or receiving.
    Connection = 203,
    /// The response body exceeded the configured size cap.
    BodyTooLarge = 204,
    /// The overall deadline across retries ran out.
    DeadlineExceeded = 205,
    /// The service's answer could not be decoded into the contract's shape.
    Decode = 206,
    /// A webhook header (`X-Service-Event-ID`, `X-Service-Timestamp` or `X-Service-Signature`)
    /// is absent (the error's `field` names it).
    WebhookMissingHeader = 300,
    /// `X-Service-Timestamp` is not Unix seconds.
    WebhookMalformedTimestamp = 301,
    /// The webhook timestamp is more than 5 minutes in the past.
    WebhookTimestampTooOld = 302,
    /// The webhook timestamp is more than 5 minutes in the future.
    WebhookTimestampInFuture = 303,
    /// `X-Service-Signature` is not `sha256=` and 64 lowercase hex digits.
    WebhookMalformedSignature = 304,
    /// No configured secret produces the signature.
    WebhookSignatureMismatch = 305,
    /// The signed body is not a valid status notification.
    WebhookInvalidBody = 306,
    /// `X-Service-Event-ID` differs from the body's `id`.
    WebhookEventIdMismatch = 307,
    /// The notification `type` is not `merchant_payment.status_changed`.
    WebhookUnsupportedEventType = 308,
    /// The notification `api_version` is not 1.
    WebhookUnsupportedApiVersion = 309,
    /// The verifier was given no (non-empty) secret.
    WebhookNoSecrets = 310,
    /// A request parameter broke a limit of the contract and was not sent (the error's `field`
    /// names it).
    Validation = 400,
    /// The operation needs another token subject (a user token for catalog orders and payments, a
    /// client-credentials token for merchant collection); nothing was sent.
    WrongTokenSubject = 401,
    /// The service's answer contradicts the request (amount, currency or precision after creation).
    ResponseMismatch = 402,
    /// The configuration was refused (bad URL, plain HTTP to a non-loopback host, bad CA PEM).
    Config = 403,
    // 404 was `SF_RESULT_WAIT_TIMEOUT` in 0.1: a payment wait without a final status now
    // succeeds with `{"outcome": "still_pending"}`. The number is not reused.
    /// A payment or notification does not match the merchant's expectation (reference, amount,
    /// currency, precision or `test_mode`).
    ExpectationMismatch = 405,
    /// The host's user-token provider failed.
    TokenProvider = 406,
    /// The call was stopped because the cancellation token bound to the calling thread (see
    /// `sf_cancel_scope_enter`) was cancelled; its request was aborted. For catalog order
    /// creation and payment start, which are never re-sent, a request already sent may have been
    /// processed: the outcome is unknown (the message says so), read the order before trying
    /// again.
    Cancelled = 407,
    /// Any other failure; the message tells more.
    Other = 499,
    /// The webhook inbox's database failed (unreachable, locked past the timeout, a
    /// constraint). Nothing was changed; try again.
    InboxStore = 500,
    /// The inbox event's lease ran out and another worker claimed it: do not book it here (roll
    /// back what the handler did, if it can).
    InboxLeaseLost = 501,
    /// No such inbox event.
    InboxNotFound = 502,
}

impl sf_result {
    /// Every variant, for tests that check numbers stay stable and distinct.
    #[cfg(test)]
    pub(crate) const ALL: &'static [sf_result] = &[
        Self::Ok,
        Self::NullArgument,
        Self::InvalidUtf8,
        Self::InvalidJson,
        Self::InputTooLarge,
        Self::InvalidArgument,
        Self::Panic,
        Self::Api,
        Self::ProviderResultPending,
        Self::OutcomeUnknown,
        Self::Connect,
        Self::Timeout,
        Self::Tls,
        Self::Connection,
        Self::BodyTooLarge,
        Self::DeadlineExceeded,
        Self::Decode,
        Self::WebhookMissingHeader,
        Self::WebhookMalformedTimestamp,
        Self::WebhookTimestampTooOld,
        Self::WebhookTimestampInFuture,
        Self::WebhookMalformedSignature,
        Self::WebhookSignatureMismatch,
        Self::WebhookInvalidBody,
        Self::WebhookEventIdMismatch,
        Self::WebhookUnsupportedEventType,
        Self::WebhookUnsupportedApiVersion,
        Self::WebhookNoSecrets,
        Self::Validation,
        Self::WrongTokenSubject,
        Self::ResponseMismatch,
        Self::Config,
        Self::ExpectationMismatch,
        Self::TokenProvider,
        Self::Cancelled,
        Self::Other,
        Self::InboxStore,
        Self::InboxLeaseLost,
        Self::InboxNotFound,
    ];

    /// Stable snake_case name of the result, given in the error JSON as `result_name`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::NullArgument => "null_argument",
            Self::InvalidUtf8 => "invalid_utf8",
            Self::InvalidJson => "invalid_json",
            Self::InputTooLarge => "input_too_large",
            Self::InvalidArgument => "invalid_argument",
            Self::Panic => "panic",
            Self::Api => "api",
            Self::ProviderResultPending => "provider_result_pending",
            Self::OutcomeUnknown => "outcome_unknown",
            Self::Connect => "connect",
            Self::Timeout => "timeout",
            Self::Tls => "tls",
            Self::Connection => "connection",
            Self::BodyTooLarge => "body_too_large",
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::Decode => "decode",
            Self::WebhookMissingHeader => "webhook_missing_header",
            Self::WebhookMalformedTimestamp => "webhook_malformed_timestamp",
            Self::WebhookTimestampTooOld => "webhook_timestamp_too_old",
            Self::WebhookTimestampInFuture => "webhook_timestamp_in_future",
            Self::WebhookMalformedSignature => "webhook_malformed_signature",
            Self::WebhookSignatureMismatch => "webhook_signature_mismatch",
            Self::WebhookInvalidBody => "webhook_invalid_body",
            Self::WebhookEventIdMismatch => "webhook_event_id_mismatch",
            Self::WebhookUnsupportedEventType => "webhook_unsupported_event_type",
            Self::WebhookUnsupportedApiVersion => "webhook_unsupported_api_version",
            Self::WebhookNoSecrets => "webhook_no_secrets",
            Self::Validation => "validation",
            Self::WrongTokenSubject => "wrong_token_subject",
            Self::ResponseMismatch => "response_mismatch",
            Self::Config => "config",
            Self::ExpectationMismatch => "expectation_mismatch",
            Self::TokenProvider => "token_provider",
            Self::Cancelled => "cancelled",
            Self::Other => "other",
            Self::InboxStore => "inbox_store",
            Self::InboxLeaseLost => "inbox_lease_lost",
            Self::InboxNotFound => "inbox_not_found",
        }
    }
}
