//! Catalog exports: merchant profile, products, userinfo, orders, payment start, status and
//! wait. Calls that the contract reserves for user tokens take a `user_token`; profile and
//! products take either (NULL `user_token` = the client-credentials token).

use std::ffi::c_char;
use std::time::Duration;

use crate::{CreateOrderRequest, OtherIpuForm, Product, ProductQuery};

use super::boundary;
use super::client::{client_arg, sf_client};
use super::error::sf_error;
use super::io::{OutString, json_arg, opt_str_arg, response_json_arg, str_arg};
use super::result::sf_result;

/// `GET /openapi/v1/merchant`: the merchant profile. `user_token` may be NULL to use the
/// client-credentials token (the contract accepts either subject).
///
/// On success `*profile_json_out` receives the profile JSON, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_merchant_profile_get(
    client: *const sf_client,
    user_token: *const c_char,
    profile_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(profile_json_out, "profile_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token) =
            unsafe { (client_arg(client)?, opt_str_arg(user_token, "user_token")?) };
        let core = client.core()?;
        let profile = match token {
            Some(token) => client.run(core.user(token).merchant_profile())?,
            None => client.run(core.merchant_profile())?,
        };
        out.write_json(&profile)
    })
}

/// `GET /openapi/v1/products`: one page. `query_json` may be NULL or
/// `{"page", "limit", "gd_no", "search_value"}` (limits checked before sending). `user_token`
/// may be NULL to use the client-credentials token.
///
/// On success `*page_json_out` receives `{"list": [...], "total", "page", "limit"}`, owned by
/// the caller (free with `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_products_list(
    client: *const sf_client,
    user_token: *const c_char,
    query_json: *const c_char,
    page_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(page_json_out, "page_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token) =
            unsafe { (client_arg(client)?, opt_str_arg(user_token, "user_token")?) };
        let query: ProductQuery = if query_json.is_null() {
            ProductQuery::default()
        } else {
            // SAFETY: caller contract of this export.
            unsafe { json_arg(query_json, "query_json") }?
        };
        let core = client.core()?;
        let page = match token {
            Some(token) => client.run(core.user(token).list_products(&query))?,
            None => client.run(core.list_products(&query))?,
        };
        out.write_json(&page)
    })
}

/// `GET {userinfo_endpoint}` with the user's token: the claims as a JSON object (the contract
/// does not show its fields).
///
/// On success `*userinfo_json_out` receives the JSON object, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_userinfo_get(
    client: *const sf_client,
    user_token: *const c_char,
    userinfo_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(userinfo_json_out, "userinfo_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token) = unsafe { (client_arg(client)?, str_arg(user_token, "user_token")?) };
        let claims = client.run(client.core()?.user(token).userinfo())?;
        out.write_json(&claims)
    })
}

/// `POST /openapi/v1/orders` with the user's token. `request_json` is
/// `{"gd_no", "quantity", "payment_no", "other_ipu"?}`. Never re-sent: a timeout or lost
/// connection after sending gives `SF_RESULT_OUTCOME_UNKNOWN` (see its `advice` and `lookup` before
/// ordering again); only a definite 429 is re-sent after `Retry-After`. A cancellation (see
/// `sf_cancel_scope_enter`) after the call started gives `SF_RESULT_CANCELLED` with the outcome
/// unknown in the same way.
///
/// On success `*created_json_out` receives `{"order_no"}`, owned by the caller (free with
/// `sf_string_free`). Creation does not mean paid.
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_order_create(
    client: *const sf_client,
    user_token: *const c_char,
    request_json: *const c_char,
    created_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(created_json_out, "created_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token) = unsafe { (client_arg(client)?, str_arg(user_token, "user_token")?) };
        // SAFETY: caller contract of this export.
        let request: CreateOrderRequest = unsafe { json_arg(request_json, "request_json") }?;
        let created = client.run_never_resent(client.core()?.user(token).create_order(&request))?;
        out.write_json(&created)
    })
}

/// `GET /openapi/v1/orders/{order_no}` with the user's token: the catalog order (its `status`
/// 0-3 is the order numbering, distinct from the payment status).
///
/// On success `*order_json_out` receives the order JSON, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_order_get(
    client: *const sf_client,
    user_token: *const c_char,
    order_no: *const c_char,
    order_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(order_json_out, "order_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token, order_no) = unsafe {
            (
                client_arg(client)?,
                str_arg(user_token, "user_token")?,
                str_arg(order_no, "order_no")?,
            )
        };
        let order = client.run(client.core()?.user(token).get_order(order_no))?;
        out.write_json(&order)
    })
}

/// `POST /openapi/v1/orders/{order_no}/payment` with the user's token: starts payment with
/// channel `payment_no` (the platform coin may debit the wallet during the request). Never
/// re-sent: an unclear outcome gives `SF_RESULT_OUTCOME_UNKNOWN`; a cancellation after the call
/// started gives `SF_RESULT_CANCELLED` with the outcome unknown in the same way.
///
/// On success `*start_json_out` receives `{"trade_no", "redirect", "expire_time"}` with
/// `redirect` made absolute against the service's origin; owned by the caller (free with
/// `sf_string_free`). Not proof of payment.
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_payment_start(
    client: *const sf_client,
    user_token: *const c_char,
    order_no: *const c_char,
    payment_no: *const c_char,
    start_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(start_json_out, "start_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token, order_no, payment_no) = unsafe {
            (
                client_arg(client)?,
                str_arg(user_token, "user_token")?,
                str_arg(order_no, "order_no")?,
                str_arg(payment_no, "payment_no")?,
            )
        };
        let start = client.run_never_resent(
            client
                .core()?
                .user(token)
                .start_payment(order_no, payment_no),
        )?;
        out.write_json(&start)
    })
}

/// `GET /openapi/v1/orders/{order_no}/payment` with the user's token.
///
/// On success `*status_json_out` receives `{"status": n}` (0 awaiting payment, 1 paid,
/// 2 cancelled), owned by the caller (free with `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_payment_status(
    client: *const sf_client,
    user_token: *const c_char,
    order_no: *const c_char,
    status_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(status_json_out, "status_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token, order_no) = unsafe {
            (
                client_arg(client)?,
                str_arg(user_token, "user_token")?,
                str_arg(order_no, "order_no")?,
            )
        };
        let status = client.run(client.core()?.user(token).payment_status(order_no))?;
        out.write_json(&serde_json::json!({ "status": status.code() }))
    })
}

/// Polls the payment status every `interval_ms` until 1 paid or 2 cancelled (honouring
/// `Retry-After`), then reads the order. After `timeout_ms` without a final status the wait
/// still succeeds, with a "still pending" outcome (not an error). The SDK's defaults are
/// 2000 ms and 60000 ms (README "Defaults"). Blocks the calling thread; cancellable from another
/// thread with a token bound by `sf_cancel_scope_enter` (`SF_RESULT_CANCELLED`).
///
/// On success `*outcome_json_out` receives `{"outcome": "final", "payment_status": n, "order":
/// {...}}` (the order tells whether delivery is still processing) or `{"outcome":
/// "still_pending", "last_status": n, "waited_ms": n, "last_poll_failed": bool}`, owned by the
/// caller (free with `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_payment_wait(
    client: *const sf_client,
    user_token: *const c_char,
    order_no: *const c_char,
    interval_ms: u64,
    timeout_ms: u64,
    outcome_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(outcome_json_out, "outcome_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, token, order_no) = unsafe {
            (
                client_arg(client)?,
                str_arg(user_token, "user_token")?,
                str_arg(order_no, "order_no")?,
            )
        };
        let outcome = client.run(client.core()?.user(token).wait_for_payment(
            order_no,
            Duration::from_millis(interval_ms),
            Duration::from_millis(timeout_ms),
        ))?;
        out.write_json(&outcome)
    })
}

/// Builds a checked `other_ipu` object for an order from a product (as listed) and the
/// buyer's input `{"key": "value", ...}`: keys must be the key part of the product's
/// `other_ipu_cnf` (a label is refused), required fields need a value. Failures give
/// `SF_RESULT_VALIDATION` with `field` = `other_ipu.<key>`.
///
/// On success `*other_ipu_json_out` receives the object, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// Strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_other_ipu_build(
    product_json: *const c_char,
    values_json: *const c_char,
    other_ipu_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(other_ipu_json_out, "other_ipu_json_out")?;
        // SAFETY: caller contract of this export.
        let product: Product = unsafe { response_json_arg(product_json, "product_json") }?;
        // SAFETY: caller contract of this export.
        let values: std::collections::BTreeMap<String, String> =
            unsafe { json_arg(values_json, "values_json") }?;
        let other_ipu = OtherIpuForm::for_product(&product)?.build(values)?;
        out.write_json(&other_ipu)
    })
}
