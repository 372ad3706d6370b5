//! Idempotency keys made before sending, so a host can persist the key first.
//!
//! Contract rule (POST /openapi/v1/merchant-payments): "On a timeout, retry with the original
//! key and parameters; do not use a new key." A key the caller holds before the call survives
//! a timeout, a 202 or an unknown outcome, unlike one seen only in a successful result.

use std::ffi::c_char;

use crate::generate_idempotency_key;

use super::boundary;
use super::error::sf_error;
use super::io::OutString;
use super::result::sf_result;

/// Generates a fresh idempotency key (`sf-` and 32 hex characters from the system CSPRNG), the
/// one `sf_merchant_payment_create` would generate. Put it in the request's
/// `idempotency_key`, persist it, then send; after a timeout, `SF_RESULT_PROVIDER_RESULT_PENDING`
/// or `SF_RESULT_OUTCOME_UNKNOWN`, send the same request with the same key again.
///
/// On success `*key_out` receives the key, owned by the caller (free with `sf_string_free`).
///
/// # Safety
/// Out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_idempotency_key_generate(
    key_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(key_out, "key_out")?;
        out.write_string(generate_idempotency_key())
    })
}
