//! The `other_ipu` form of a product: the inputs to ask the buyer for, parsed by the core
//! ([`crate::OtherIpuForm`]) so wrappers do not re-implement the `key=label=flag` format.
//! `sf_other_ipu_build` (in `catalog`) builds the checked map from the answers.
//!
//! Contract rule: "Each entry is of the form key=label=flag (a label is display text); the JSON
//! key used in `other_ipu` is the key part, never the label". Flag `1` marks a required input.

use std::ffi::c_char;

use crate::{OtherIpuForm, Product};

use super::boundary;
use super::error::sf_error;
use super::io::{OutString, response_json_arg};
use super::result::sf_result;

/// Lists the extra inputs of a product (as listed): `{"items": [{"key", "label",
/// "required"}...]}` in configuration order; `key` is what `other_ipu` uses, `label` is display
/// text only. A product without `other_ipu_cnf` has none. A malformed entry gives
/// `SF_RESULT_VALIDATION` with `field` = `other_ipu_cnf`.
///
/// On success `*fields_json_out` receives the JSON, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// Strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_other_ipu_fields(
    product_json: *const c_char,
    fields_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(fields_json_out, "fields_json_out")?;
        // SAFETY: caller contract of this export.
        let product: Product = unsafe { response_json_arg(product_json, "product_json") }?;
        let form = OtherIpuForm::for_product(&product)?;
        out.write_json(&serde_json::json!({ "items": form.fields() }))
    })
}
