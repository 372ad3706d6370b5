//! `sf_error`: the detail of a failed call, handed to the caller through `error_out`.
//!
//! Follows the contract's error model: HTTP status, the `error` code, `error_description`,
//! `field` and `Retry-After` are kept as the service sent them, so that callers branch on status
//! and code, never on message text. Messages never contain secrets or tokens.

use std::ffi::{CString, c_char};
use std::ptr;
use std::time::Duration;

use serde::Serialize;

use super::boundary;
use super::result::sf_result;

/// The detail of one failure inside the C layer, before it is handed out as an `sf_error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) result: sf_result,
    /// Boxed text (two words, not three): keeps `Failure` within clippy's error-size bound.
    pub(crate) message: Box<str>,
    pub(crate) http_status: u16,
    pub(crate) code: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) field: Option<String>,
    pub(crate) retry_after: Option<Duration>,
    /// For an unclear answer (202 `provider_result_pending`, unknown outcome): what the app
    /// can do now and the request's identifying data.
    pub(crate) unclear: Option<Box<Unclear>>,
}

impl Failure {
    /// A failure with only a result and a message.
    pub(crate) fn new(result: sf_result, message: impl Into<String>) -> Self {
        Self {
            result,
            message: message.into().into_boxed_str(),
            http_status: 0,
            code: None,
            description: None,
            field: None,
            retry_after: None,
            unclear: None,
        }
    }

    /// A required pointer argument was NULL.
    pub(crate) fn null(argument: &str) -> Self {
        Self::new(
            sf_result::NullArgument,
            format!("argument `{argument}` must not be NULL"),
        )
        .with_field(argument)
    }

    /// Names the field or argument the failure is about.
    pub(crate) fn with_field(mut self, field: &str) -> Self {
        self.field = Some(field.to_owned());
        self
    }
}

/// The advice and lookup data of an unclear answer (see `sf_error_json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unclear {
    /// What the app can do now, per the contract.
    pub(crate) advice: &'static str,
    /// `order_no`, `external_reference`, `payment_no`, `idempotency_key`, `gd_no`, `quantity`
    /// of the request (absent keys omitted).
    pub(crate) lookup: crate::LookupKeys,
}

/// JSON rendering of an error, returned by `sf_error_json`.
#[derive(Serialize)]
struct ErrorJson<'a> {
    result: u32,
    result_name: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    advice: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lookup: Option<&'a crate::LookupKeys>,
}

/// Details of a failed call. Created by the library and written to a caller's `error_out`;
/// owned by the caller, who releases it with `sf_error_free`. Strings read from it are borrowed
/// and stay valid until that call.
#[allow(non_camel_case_types)]
pub struct sf_error {
    result: sf_result,
    http_status: u16,
    retry_after_ms: Option<u64>,
    message: CString,
    code: Option<CString>,
    description: Option<CString>,
    field: Option<CString>,
    json: CString,
}

/// Converts text to a C string, replacing interior NULs, which the C side could not see.
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

impl sf_error {
    fn from_failure(failure: &Failure) -> Self {
        let retry_after_ms = failure
            .retry_after
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let json = serde_json::to_string(&ErrorJson {
            result: failure.result as u32,
            result_name: failure.result.name(),
            message: &failure.message,
            http_status: (failure.http_status != 0).then_some(failure.http_status),
            error: failure.code.as_deref(),
            error_description: failure.description.as_deref(),
            field: failure.field.as_deref(),
            retry_after_ms,
            advice: failure.unclear.as_ref().map(|u| u.advice),
            lookup: failure.unclear.as_ref().map(|u| &u.lookup),
        })
        .unwrap_or_default();
        Self {
            result: failure.result,
            http_status: failure.http_status,
            retry_after_ms,
            message: c_string(&failure.message),
            code: failure.code.as_deref().map(c_string),
            description: failure.description.as_deref().map(c_string),
            field: failure.field.as_deref().map(c_string),
            json: c_string(&json),
        }
    }
}

/// Hands a failure to the caller through `error_out` (if not NULL) and returns its result code.
///
/// # Safety
/// `error_out` must be NULL or valid for writing one pointer.
pub(crate) unsafe fn report(failure: &Failure, error_out: *mut *mut sf_error) -> sf_result {
    if !error_out.is_null() {
        let error = Box::into_raw(Box::new(sf_error::from_failure(failure)));
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { error_out.write(error) };
    }
    failure.result
}

/// Borrows the error behind a possibly NULL pointer.
///
/// # Safety
/// `error` must be NULL or a pointer obtained from this library and not yet freed.
unsafe fn borrow<'a>(error: *const sf_error) -> Option<&'a sf_error> {
    // SAFETY: the caller promises a valid or NULL pointer.
    unsafe { error.as_ref() }
}

fn opt_ptr(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(ptr::null(), |s| s.as_ptr())
}

/// The result code of the failure (`SF_RESULT_OTHER` if `error` is NULL).
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_result(error: *const sf_error) -> sf_result {
    boundary::value(sf_result::Other, || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }.map_or(sf_result::Other, |e| e.result)
    })
}

/// The HTTP status the service answered with, or 0 when the failure did not come from an HTTP
/// answer (or `error` is NULL).
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_http_status(error: *const sf_error) -> u16 {
    boundary::value(0, || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }.map_or(0, |e| e.http_status)
    })
}

/// `Retry-After` in milliseconds as the service asked (HTTP 429 or 503), or -1 when absent.
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_retry_after_ms(error: *const sf_error) -> i64 {
    boundary::value(-1, || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }
            .and_then(|e| e.retry_after_ms)
            .map_or(-1, |ms| i64::try_from(ms).unwrap_or(i64::MAX))
    })
}

/// Human-readable message (never containing secrets). Borrowed: valid until `sf_error_free`.
/// Do not branch on it. NULL if `error` is NULL.
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_message(error: *const sf_error) -> *const c_char {
    boundary::value(ptr::null(), || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }.map_or(ptr::null(), |e| e.message.as_ptr())
    })
}

/// The service's `error` code (e.g. `payment_conflict`), or NULL when absent. Borrowed: valid
/// until `sf_error_free`.
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_code(error: *const sf_error) -> *const c_char {
    boundary::value(ptr::null(), || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }.map_or(ptr::null(), |e| opt_ptr(&e.code))
    })
}

/// The service's `error_description`, or NULL when absent. Borrowed: valid until
/// `sf_error_free`.
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_description(error: *const sf_error) -> *const c_char {
    boundary::value(ptr::null(), || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }.map_or(ptr::null(), |e| opt_ptr(&e.description))
    })
}

/// The field the failure is about (the service's `field`, a request field refused by local
/// validation, or the name of a bad argument), or NULL. Borrowed: valid until `sf_error_free`.
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_field(error: *const sf_error) -> *const c_char {
    boundary::value(ptr::null(), || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }.map_or(ptr::null(), |e| opt_ptr(&e.field))
    })
}

/// Everything above as one JSON object: `result`, `result_name`, `message`, and when present
/// `http_status`, `error`, `error_description`, `field`, `retry_after_ms`, and for an unclear
/// answer (`SF_RESULT_PROVIDER_RESULT_PENDING`, `SF_RESULT_OUTCOME_UNKNOWN`) `advice` (what to do
/// now, per the contract) and `lookup` (`order_no`, `external_reference`, `payment_no`,
/// `idempotency_key`, `gd_no`, `quantity` of the request, absent keys omitted). Borrowed: valid
/// until `sf_error_free`. NULL if `error` is NULL.
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_json(error: *const sf_error) -> *const c_char {
    boundary::value(ptr::null(), || {
        // SAFETY: forwarded contract of this function.
        unsafe { borrow(error) }.map_or(ptr::null(), |e| e.json.as_ptr())
    })
}

/// Releases an error written to an `error_out` argument. Accepts NULL. The strings borrowed from
/// it become invalid.
///
/// # Safety
/// `error` must be NULL or an error from this library that was not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_error_free(error: *mut sf_error) {
    boundary::value((), || {
        if !error.is_null() {
            // SAFETY: created by Box::into_raw in `report`; the caller frees it once.
            drop(unsafe { Box::from_raw(error) });
        }
    })
}
