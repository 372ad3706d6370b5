//! Issue 9, "Live inside real hosts": strict input, cancellation, fork safety, persistent
//! clients and the log sink, through the C ABI.

use std::ffi::{CString, c_char};
use std::ptr;

use super::catalog::*;
use super::client::*;
use super::collection::*;
use super::io::parse_json;
use super::result::sf_result;
use super::tests_abi::{Env, error_json, take};
use crate::{Config, CreateMerchantPayment, CreateOrderRequest, ListMerchantPaymentsQuery};

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

fn config_with(extra: serde_json::Value) -> String {
    let mut config = serde_json::json!({
        "base_url": "https://api.example.com/api",
        "token_endpoint": "https://api.example.com/oauth/token",
        "client_id": "id",
        "client_secret": "s3cr3t-value",
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    config.to_string()
}

/// `(result, field, message)` of a failed parse.
fn refused<T: serde::de::DeserializeOwned>(json: &str) -> (sf_result, String, String) {
    let failure = parse_json::<T>(json, "arg").err().expect("refused");
    (
        failure.result,
        failure.field.unwrap_or_default(),
        failure.message,
    )
}

/// Rule (issue 9 item 1): unknown keys, at any depth, are validation errors naming the key path.
#[test]
fn unknown_keys_are_refused_with_their_path() {
    for (extra, path) in [
        (
            serde_json::json!({"atempt_timeout_ms": 5}),
            "atempt_timeout_ms",
        ),
        (
            serde_json::json!({"retry": {"max_attempt": 2}}),
            "retry.max_attempt",
        ),
    ] {
        let (result, field, message) = refused::<Config>(&config_with(extra));
        assert_eq!(result, sf_result::Validation, "{message}");
        assert_eq!(field, path);
        assert!(message.contains(path), "{message}");
        assert!(!message.contains("s3cr3t"), "{message}");
    }
    let create = r#"{"external_reference":"R1","amount_minor":1250,"currency":"USD",
        "notifyUrl":"https://shop.example/n"}"#;
    let (result, field, _) = refused::<CreateMerchantPayment>(create);
    assert_eq!(
        (result, field.as_str()),
        (sf_result::Validation, "notifyUrl")
    );
    let (result, field, _) = refused::<ListMerchantPaymentsQuery>(r#"{"order_no":"P1","limt":5}"#);
    assert_eq!((result, field.as_str()), (sf_result::Validation, "limt"));
    let (result, field, _) = refused::<crate::ProductQuery>(r#"{"pag":2}"#);
    assert_eq!((result, field.as_str()), (sf_result::Validation, "pag"));
    let order = r#"{"gd_no":"G1","quantity":1,"payment_no":"ch","other_ipus":{}}"#;
    let (result, field, _) = refused::<CreateOrderRequest>(order);
    assert_eq!(
        (result, field.as_str()),
        (sf_result::Validation, "other_ipus")
    );
    let expectation =
        r#"{"external_reference":"R1","amount_minor":1,"currency":"USD","test_mode":false,"x":1}"#;
    let (result, field, _) = refused::<crate::PaymentExpectation>(expectation);
    assert_eq!((result, field.as_str()), (sf_result::Validation, "x"));

    // Known keys still pass, nested ones included.
    let ok =
        config_with(serde_json::json!({"attempt_timeout_ms": 5, "retry": {"max_attempts": 2}}));
    let config: Config = parse_json(&ok, "arg").unwrap();
    assert_eq!(config.retry.max_attempts, 2);
}

/// Rule (issue 9 item 1): a number the field cannot hold is a validation error naming the key;
/// a value of the wrong type stays `SF_RESULT_INVALID_ARGUMENT`, also naming it.
#[test]
fn numbers_out_of_range_are_validation_errors_naming_the_key() {
    for (extra, path) in [
        (
            serde_json::json!({"attempt_timeout_ms": -1}),
            "attempt_timeout_ms",
        ),
        (
            serde_json::json!({"retry": {"max_attempts": 4_294_967_296u64}}),
            "retry.max_attempts",
        ),
        (
            serde_json::json!({"retry": {"max_attempts": -3}}),
            "retry.max_attempts",
        ),
        (
            serde_json::json!({"max_response_bytes": 1.5}),
            "max_response_bytes",
        ),
    ] {
        let (result, field, message) = refused::<Config>(&config_with(extra));
        assert_eq!(result, sf_result::Validation, "{message}");
        assert_eq!(field, path, "{message}");
    }
    // Beyond u64 (JSON parses it as a float).
    let huge = config_with(serde_json::json!({})).replace(
        "\"client_id\"",
        "\"overall_deadline_ms\":18446744073709551616,\"client_id\"",
    );
    let (result, field, _) = refused::<Config>(&huge);
    assert_eq!(
        (result, field.as_str()),
        (sf_result::Validation, "overall_deadline_ms")
    );
    let create = r#"{"external_reference":"R1","amount_minor":-5,"currency":"USD"}"#;
    let (result, field, _) = refused::<CreateMerchantPayment>(create);
    assert_eq!(
        (result, field.as_str()),
        (sf_result::Validation, "amount_minor")
    );
    let (result, field, _) = refused::<CreateMerchantPayment>(
        r#"{"external_reference":"R1","amount_minor":1,"currency":"USD","expires_in":99999999999}"#,
    );
    assert_eq!(
        (result, field.as_str()),
        (sf_result::Validation, "expires_in")
    );
    let (result, field, _) = refused::<Config>(&config_with(serde_json::json!({"retry": 5})));
    assert_eq!(
        (result, field.as_str()),
        (sf_result::InvalidArgument, "retry")
    );
    let (result, field, _) =
        refused::<Config>(&config_with(serde_json::json!({"attempt_timeout_ms": "5"})));
    assert_eq!(
        (result, field.as_str()),
        (sf_result::InvalidArgument, "attempt_timeout_ms")
    );
    let (result, field, _) = refused::<CreateMerchantPayment>(r#"{"external_reference":"R1"}"#);
    assert_eq!(
        (result, field.as_str()),
        (sf_result::InvalidArgument, "arg")
    );
}

/// Rule (issue 9 item 1) through the exports: `sf_client_new` and a request export refuse an
/// unknown key with `SF_RESULT_VALIDATION` and `sf_error_field`; the service's own answers
/// handed back (a listed product) keep ignoring unknown keys.
#[test]
fn exports_refuse_unknown_keys() {
    let mut client = ptr::null_mut();
    let mut error = ptr::null_mut();
    let config = c(&config_with(
        serde_json::json!({"retry": {"max_attempt": 2}}),
    ));
    let r = unsafe { sf_client_new(config.as_ptr(), &mut client, &mut error) };
    assert_eq!(r, sf_result::Validation);
    assert!(client.is_null());
    let detail = error_json(error).unwrap();
    assert_eq!(detail["field"], "retry.max_attempt");

    let env = Env::start();
    let client = env.client();
    let mut out: *mut c_char = ptr::null_mut();
    let mut error = ptr::null_mut();
    let request =
        c(r#"{"external_reference":"R1","amount_minor":1250,"currency":"USD","notifyUrl":"x"}"#);
    let r = unsafe { sf_merchant_payment_create(client, request.as_ptr(), &mut out, &mut error) };
    assert_eq!(r, sf_result::Validation);
    assert_eq!(error_json(error).unwrap()["field"], "notifyUrl");
    assert!(out.is_null());
    let mut error = ptr::null_mut();
    let query = c(r#"{"limit":5,"serach_value":"x"}"#);
    let r = unsafe { sf_products_list(client, ptr::null(), query.as_ptr(), &mut out, &mut error) };
    assert_eq!(r, sf_result::Validation);
    assert_eq!(error_json(error).unwrap()["field"], "serach_value");

    let product = super::tests_abi::PRODUCT.replace("\"gd_no\"", "\"future_field\":7,\"gd_no\"");
    let mut error = ptr::null_mut();
    let r = unsafe {
        sf_other_ipu_build(
            c(&product).as_ptr(),
            c(r#"{"recipient_email":"a@b.example"}"#).as_ptr(),
            &mut out,
            &mut error,
        )
    };
    assert_eq!(r, sf_result::Ok, "{:?}", error_json(error));
    take(out);
    unsafe { sf_client_free(client) };
}
