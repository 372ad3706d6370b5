//! The one panic boundary: every `extern "C"` body runs inside [`call`] or [`value`].
//!
//! Unwinding into C is undefined behaviour, so no panic may cross the ABI. A test
//! (`every_export_goes_through_the_boundary`) reads the sources of this module and fails if an
//! exported function body does not start with one of these two helpers.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::error::{Failure, report, sf_error};
use super::result::sf_result;

/// Runs a fallible export body. `Ok` gives `SF_RESULT_OK`; a failure or a caught panic is
/// written to `error_out` (when not NULL) and its result code returned.
///
/// Out-parameters are written by `f` itself and only on its success path, so a failure leaves
/// them untouched.
pub(crate) fn call(
    error_out: *mut *mut sf_error,
    f: impl FnOnce() -> Result<(), Failure>,
) -> sf_result {
    // AssertUnwindSafe: the shared state behind handles is immutable or synchronised by the
    // core, so a panic in one call leaves nothing half-updated that a later call could observe.
    let failure = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return sf_result::Ok,
        Ok(Err(failure)) => failure,
        Err(_) => Failure::new(
            sf_result::Panic,
            "internal panic caught at the C boundary (a bug in storefront)",
        ),
    };
    // SAFETY: every export documents `error_out` as NULL or writable.
    unsafe { report(&failure, error_out) }
}

/// Runs an infallible export body (accessors, `_free` functions); a caught panic gives
/// `on_panic`.
pub(crate) fn value<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}
