//! Merchant-collection exports (client-credentials token only): channel directory, payment
//! create/get/list, notification delivery records and re-queue.

use std::ffi::c_char;

use crate::{CreateMerchantPayment, ListMerchantPaymentsQuery};

use super::boundary;
use super::client::{client_arg, sf_client};
use super::error::sf_error;
use super::io::{OutString, json_arg, str_arg};
use super::result::sf_result;

/// `GET /openapi/v1/merchant-payment-channels`.
///
/// On success `*channels_json_out` receives `{"items": [channel...]}`, owned by the caller
/// (free with `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_channels_list(
    client: *const sf_client,
    channels_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(channels_json_out, "channels_json_out")?;
        // SAFETY: caller contract of this export.
        let client = unsafe { client_arg(client) }?;
        let items = client.run(client.core()?.list_channels())?;
        out.write_json(&serde_json::json!({ "items": items }))
    })
}

/// `POST /openapi/v1/merchant-payments`. `request_json` has the contract's fields
/// (`external_reference`, `idempotency_key`, `amount_minor`, `currency`, `payment_no`,
/// `description`, `expires_in`, `notify_enabled`, `notify_url`, `notify_secret`, `return_url`)
/// plus the optional local check `expected_currency_decimals`. Without `idempotency_key` one is
/// generated. Every limit is checked before sending (`SF_RESULT_VALIDATION`, `field` named);
/// retries reuse the same key and parameters; the returned amount, currency and precision are
/// checked against the request (`SF_RESULT_RESPONSE_MISMATCH`).
///
/// On success `*created_json_out` receives the created payment plus the `idempotency_key` used
/// (persist it); owned by the caller (free with `sf_string_free`). Its `checkout_url` carries a
/// checkout token: do not log it. The string is wiped when freed.
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_merchant_payment_create(
    client: *const sf_client,
    request_json: *const c_char,
    created_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(created_json_out, "created_json_out")?;
        // SAFETY: caller contract of this export.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: caller contract of this export.
        let request: CreateMerchantPayment = unsafe { json_arg(request_json, "request_json") }?;
        let created = client.run(client.core()?.create_merchant_payment(&request))?;
        out.write_json(&created)
    })
}

/// `GET /openapi/v1/merchant-payments/{order_no}`: the payment with its confirmation fields.
/// An unknown number gives `SF_RESULT_API` with HTTP 404 `payment_not_found`.
///
/// On success `*payment_json_out` receives the payment JSON, owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_merchant_payment_get(
    client: *const sf_client,
    order_no: *const c_char,
    payment_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(payment_json_out, "payment_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, order_no) = unsafe { (client_arg(client)?, str_arg(order_no, "order_no")?) };
        let payment = client.run(client.core()?.get_merchant_payment(order_no))?;
        out.write_json(&payment)
    })
}

/// `GET /openapi/v1/merchant-payments`: `query_json` is
/// `{"external_reference"?, "order_no"?, "limit"?}` with at least one filter (checked before
/// sending).
///
/// On success `*list_json_out` receives `{"items": [payment...]}` (newest first), owned by the
/// caller (free with `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_merchant_payments_list(
    client: *const sf_client,
    query_json: *const c_char,
    list_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(list_json_out, "list_json_out")?;
        // SAFETY: caller contract of this export.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: caller contract of this export.
        let query: ListMerchantPaymentsQuery = unsafe { json_arg(query_json, "query_json") }?;
        let items = client.run(client.core()?.list_merchant_payments(&query))?;
        out.write_json(&serde_json::json!({ "items": items }))
    })
}

/// `GET /openapi/v1/merchant-payments/{order_no}/notifications`: delivery records ordered by
/// status version, newest first. `limit` 0 means the service default (20); otherwise 1 to 100.
///
/// On success `*records_json_out` receives `{"items": [record...]}`, owned by the caller (free
/// with `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_notification_records_list(
    client: *const sf_client,
    order_no: *const c_char,
    limit: u32,
    records_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(records_json_out, "records_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, order_no) = unsafe { (client_arg(client)?, str_arg(order_no, "order_no")?) };
        let limit = (limit != 0).then_some(limit);
        let items = client.run(client.core()?.list_notification_records(order_no, limit))?;
        out.write_json(&serde_json::json!({ "items": items }))
    })
}

/// `POST /openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry`: re-queues
/// a notification whose automatic retries are exhausted (no new event, no status change).
///
/// On success `*accepted_json_out` receives `{"accepted": true}`, owned by the caller (free
/// with `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; strings NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_notification_requeue(
    client: *const sf_client,
    order_no: *const c_char,
    event_id: *const c_char,
    accepted_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(accepted_json_out, "accepted_json_out")?;
        // SAFETY: caller contract of this export.
        let (client, order_no, event_id) = unsafe {
            (
                client_arg(client)?,
                str_arg(order_no, "order_no")?,
                str_arg(event_id, "event_id")?,
            )
        };
        let accepted = client.run(client.core()?.retry_notification(order_no, event_id))?;
        out.write_json(&accepted)
    })
}
