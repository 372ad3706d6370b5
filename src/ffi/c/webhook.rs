//! Webhook exports: the verifier, the test signer, the status-version guard and the
//! expectation check.

use std::ffi::c_char;

use crate::webhook::status_version_decision;
use crate::{
    MerchantPayment, PaymentExpectation, Secret, TestSigner, VersionDecision, WebhookVerifier,
};

use super::boundary;
use super::error::{Failure, sf_error};
use super::io::{Out, OutString, bytes_arg, json_arg, opt_str_arg, response_json_arg, str_arg};
use super::result::sf_result;

/// A webhook verifier holding one or more signing secrets (several during a rotation). Created
/// by `sf_webhook_verifier_new`, released by `sf_webhook_verifier_free`; usable from several
/// threads at once.
#[allow(non_camel_case_types)]
pub struct sf_webhook_verifier {
    verifier: WebhookVerifier,
}

/// What to do with a notification given the stored `status_version` ("a lower version must not
/// overwrite a higher one").
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum sf_version_decision {
    /// Newer than what is stored (or nothing stored): apply it.
    Apply = 0,
    /// Same version as stored: a repeat; acknowledge and change nothing.
    Duplicate = 1,
    /// Lower than what is stored: acknowledge and do not apply.
    Stale = 2,
}

/// Creates a verifier from a JSON array of secrets, e.g. `["new-secret", "old-secret"]`; a
/// signature by any of them is accepted. Empty secrets are ignored; none at all gives
/// `SF_RESULT_WEBHOOK_NO_SECRETS`. Tolerance is the contract's 5 minutes, both directions.
///
/// On success `*verifier_out` receives a handle owned by the caller, released with
/// `sf_webhook_verifier_free`.
///
/// # Safety
/// `secrets_json` NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_webhook_verifier_new(
    secrets_json: *const c_char,
    verifier_out: *mut *mut sf_webhook_verifier,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(verifier_out, "verifier_out")?;
        // SAFETY: caller contract of this export.
        let secrets: Vec<Secret> = unsafe { json_arg(secrets_json, "secrets_json") }?;
        let verifier = WebhookVerifier::new(secrets)?;
        out.write(Box::into_raw(Box::new(sf_webhook_verifier { verifier })));
        Ok(())
    })
}

/// Releases a verifier. Accepts NULL.
///
/// # Safety
/// `verifier` must be NULL or a handle from `sf_webhook_verifier_new` not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_webhook_verifier_free(verifier: *mut sf_webhook_verifier) {
    boundary::value((), || {
        if !verifier.is_null() {
            // SAFETY: created by Box::into_raw in `sf_webhook_verifier_new`; freed once.
            drop(unsafe { Box::from_raw(verifier) });
        }
    })
}

/// Shared body of the two verify exports.
///
/// # Safety
/// As for `sf_webhook_verify`.
#[allow(clippy::too_many_arguments)]
unsafe fn verify(
    verifier: *const sf_webhook_verifier,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    now_unix: Option<i64>,
    notification_json_out: *mut *mut c_char,
) -> Result<(), Failure> {
    let out = OutString::new(notification_json_out, "notification_json_out")?;
    // SAFETY: forwarded caller contract.
    let delivery =
        unsafe { Delivery::read(verifier, event_id, timestamp, signature, body, body_len) }?;
    out.write_json(&delivery.verify_raw(now_unix)?.decode()?)
}

/// The arguments of one delivery, checked and borrowed from the caller.
struct Delivery<'a> {
    verifier: &'a crate::webhook::WebhookVerifier,
    event_id: Option<&'a str>,
    timestamp: Option<&'a str>,
    signature: Option<&'a str>,
    body: &'a [u8],
}

impl<'a> Delivery<'a> {
    /// Checks the pointers (NULL verifier refused; NULL header = absent) and the text.
    ///
    /// # Safety
    /// As for `sf_webhook_verify`.
    unsafe fn read(
        verifier: *const sf_webhook_verifier,
        event_id: *const c_char,
        timestamp: *const c_char,
        signature: *const c_char,
        body: *const u8,
        body_len: usize,
    ) -> Result<Delivery<'a>, Failure> {
        // SAFETY: forwarded caller contract.
        let verifier = unsafe { verifier.as_ref() }.ok_or_else(|| Failure::null("verifier"))?;
        // SAFETY: forwarded caller contract.
        unsafe {
            Ok(Delivery {
                verifier: &verifier.verifier,
                event_id: opt_str_arg(event_id, "event_id")?,
                timestamp: opt_str_arg(timestamp, "timestamp")?,
                signature: opt_str_arg(signature, "signature")?,
                body: bytes_arg(body, body_len, "body")?,
            })
        }
    }

    /// Signature, timestamp and envelope, at `now_unix` or on the verifier's clock.
    fn verify_raw(
        &self,
        now_unix: Option<i64>,
    ) -> Result<crate::webhook::VerifiedNotification<'a>, crate::webhook::WebhookError> {
        let (v, body) = (self.verifier, self.body);
        match now_unix {
            Some(now) => v.verify_raw_at(now, self.event_id, self.timestamp, self.signature, body),
            None => v.verify_raw(self.event_id, self.timestamp, self.signature, body),
        }
    }
}

/// Verifies a status notification: the three header values as received
/// (`X-Service-Event-ID`, `X-Service-Timestamp`, `X-Service-Signature`; NULL when absent) and
/// the raw body bytes exactly as received (never re-serialized JSON), as pointer and length.
/// Checks the `sha256=` HMAC over `timestamp.body` in constant time against every secret, the
/// 5-minute tolerance both ways on the system clock, that the body's `id` equals the event-id
/// header, the type and `api_version`. Each failure has its own `SF_RESULT_WEBHOOK_*` code.
///
/// On success `*notification_json_out` receives the notification
/// (`{"id", "type", "api_version", "created_at", "data": {...}}`), owned by the caller (free
/// with `sf_string_free`). Then check `data` with `sf_payment_expectation_check`, deduplicate by
/// `id` and book by `data.event_id`.
///
/// # Safety
/// `verifier` NULL or live; strings NULL or NUL-terminated; `body` NULL (only with length 0) or
/// readable for `body_len` bytes; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_webhook_verify(
    verifier: *const sf_webhook_verifier,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    notification_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe {
            verify(
                verifier,
                event_id,
                timestamp,
                signature,
                body,
                body_len,
                None,
                notification_json_out,
            )
        }
    })
}

/// `sf_webhook_verify` with an explicit current time in Unix seconds instead of the system
/// clock (for tests, and for servers with their own time source).
///
/// # Safety
/// As for `sf_webhook_verify`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_webhook_verify_at(
    verifier: *const sf_webhook_verifier,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    now_unix: i64,
    notification_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe {
            verify(
                verifier,
                event_id,
                timestamp,
                signature,
                body,
                body_len,
                Some(now_unix),
                notification_json_out,
            )
        }
    })
}

/// Shared body of the two verify-body exports: checks without decoding `data` or allocating.
///
/// # Safety
/// As for `sf_webhook_verify_body`.
unsafe fn verify_body(
    verifier: *const sf_webhook_verifier,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    now_unix: Option<i64>,
) -> Result<(), Failure> {
    // SAFETY: forwarded caller contract.
    let delivery =
        unsafe { Delivery::read(verifier, event_id, timestamp, signature, body, body_len) }?;
    delivery.verify_raw(now_unix)?;
    Ok(())
}

/// Verifies a status notification and hands nothing back: on `SF_RESULT_OK` the caller's own
/// `body` buffer is the verified notification, which the caller decodes once with its own JSON
/// library (no JSON is re-encoded across the ABI, nothing is allocated for the caller, nothing
/// is to be freed).
///
/// The same checks as `sf_webhook_verify`, in the same order and with the same
/// `SF_RESULT_WEBHOOK_*` codes (contract, Events): the three headers are present
/// (`X-Service-Event-ID`, `X-Service-Timestamp`, `X-Service-Signature`, NULL when absent), the
/// timestamp is within 5 minutes of the system clock both ways, the signature is `sha256=` and
/// 64 lowercase hex digits and is the HMAC-SHA256 of timestamp, `.`, raw body by one of the
/// verifier's secrets (constant-time compare), the body is a notification envelope whose `id`
/// equals the event-id header, whose `type` is `merchant_payment.status_changed`, whose
/// `api_version` is 1 and whose `created_at` is an RFC 3339 time. Unlike `sf_webhook_verify`,
/// `data` is not decoded here: decode and check it with your JSON library (the notification
/// shape of `sf_webhook_verify`), then check it with `sf_payment_expectation_check`,
/// deduplicate by `id` and book by `data.event_id`.
///
/// # Safety
/// `verifier` NULL or live; strings NULL or NUL-terminated; `body` NULL (only with length 0) or
/// readable for `body_len` bytes and unchanged during the call; `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_webhook_verify_body(
    verifier: *const sf_webhook_verifier,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe {
            verify_body(
                verifier, event_id, timestamp, signature, body, body_len, None,
            )
        }
    })
}

/// `sf_webhook_verify_body` with an explicit current time in Unix seconds instead of the system
/// clock (for tests, and for servers with their own time source).
///
/// # Safety
/// As for `sf_webhook_verify_body`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_webhook_verify_body_at(
    verifier: *const sf_webhook_verifier,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    now_unix: i64,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe {
            verify_body(
                verifier,
                event_id,
                timestamp,
                signature,
                body,
                body_len,
                Some(now_unix),
            )
        }
    })
}

/// Test signer for host apps' own receiver tests: the `X-Service-Signature` value
/// (`sha256=` + lowercase hex HMAC-SHA256 of `timestamp.body`) the service would send.
///
/// On success `*signature_out` receives the header value, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `secret` NULL or NUL-terminated; `body` NULL (only with length 0) or readable for
/// `body_len` bytes; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_webhook_sign(
    secret: *const c_char,
    timestamp: i64,
    body: *const u8,
    body_len: usize,
    signature_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(signature_out, "signature_out")?;
        // SAFETY: caller contract of this export.
        let (secret, body) = unsafe {
            (
                str_arg(secret, "secret")?,
                bytes_arg(body, body_len, "body")?,
            )
        };
        out.write_string(TestSigner::new(secret).signature(timestamp, body))
    })
}

/// Checks a payment (a verified notification's `data`, or a queried payment) against the
/// merchant's expectation `{"external_reference", "amount_minor", "currency", "test_mode"}`:
/// the contract's "after verifying, check reference, amount, currency and `test_mode`".
/// A difference gives `SF_RESULT_EXPECTATION_MISMATCH` with `field` naming it.
///
/// # Safety
/// Strings NULL or NUL-terminated; `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_payment_expectation_check(
    payment_json: *const c_char,
    expectation_json: *const c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        let payment: MerchantPayment = unsafe { response_json_arg(payment_json, "payment_json") }?;
        // SAFETY: caller contract of this export.
        let expectation: PaymentExpectation =
            unsafe { json_arg(expectation_json, "expectation_json") }?;
        expectation.check_payment(&payment)?;
        Ok(())
    })
}

/// The status-version guard: what to do with a notification of `incoming_version` when
/// `stored_version` is stored (-1 or any negative value when nothing is stored yet). A lower
/// version never overwrites a higher one. Cannot fail (a caught panic answers
/// `SF_VERSION_DECISION_STALE`, which changes nothing).
#[unsafe(no_mangle)]
pub extern "C" fn sf_status_version_decision(
    stored_version: i64,
    incoming_version: u64,
) -> sf_version_decision {
    boundary::value(sf_version_decision::Stale, || {
        let stored = u64::try_from(stored_version).ok();
        match status_version_decision(stored, incoming_version) {
            VersionDecision::Apply => sf_version_decision::Apply,
            VersionDecision::Duplicate => sf_version_decision::Duplicate,
            VersionDecision::Stale => sf_version_decision::Stale,
        }
    })
}

#[cfg(test)]
#[path = "tests_webhook.rs"]
mod tests;
