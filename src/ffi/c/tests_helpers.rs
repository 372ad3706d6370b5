//! Tests of the helper exports (money text, `other_ipu` fields, idempotency keys), called from
//! Rust exactly as C would call them.

use std::ffi::{CStr, CString, c_char};
use std::ptr;

use super::error::sf_error;
use super::idempotency::sf_idempotency_key_generate;
use super::io::sf_string_free;
use super::money::{
    sf_fixed_point8_format, sf_fixed_point8_parse, sf_money_from_minor, sf_money_to_minor,
};
use super::other_ipu::sf_other_ipu_fields;
use super::result::sf_result;
use super::tests_abi::{error_json, take};

/// `sf_money_to_minor(text, decimals)`: the minor amount, or the error's (result, code, field).
fn to_minor(text: &str, decimals: u32) -> Result<u64, (sf_result, String, String)> {
    let text = CString::new(text).unwrap();
    let mut out = 0u64;
    let mut error: *mut sf_error = ptr::null_mut();
    let r = unsafe { sf_money_to_minor(text.as_ptr(), decimals, &mut out, &mut error) };
    if r == sf_result::Ok {
        assert!(error.is_null());
        return Ok(out);
    }
    let e = error_json(error).unwrap();
    Err((
        r,
        e["error"].as_str().unwrap().into(),
        e["field"].as_str().unwrap().into(),
    ))
}

/// `sf_money_from_minor(minor, decimals)`: the text, or the error's code.
fn from_minor(minor: u64, decimals: u32) -> Result<String, String> {
    let mut out: *mut c_char = ptr::null_mut();
    let mut error: *mut sf_error = ptr::null_mut();
    let r = unsafe { sf_money_from_minor(minor, decimals, &mut out, &mut error) };
    if r == sf_result::Ok {
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
        unsafe { sf_string_free(out) };
        return Ok(text);
    }
    assert_eq!(r, sf_result::Validation);
    Err(error_json(error).unwrap()["error"].as_str().unwrap().into())
}

/// Rule (amount_minor = amount x 10^currency_decimals, exact): the cases of `money::tests`
/// through the C ABI, with the reason as a stable code.
#[test]
fn money_text_converts_exactly_with_coded_refusals() {
    assert_eq!(to_minor("19.99", 2), Ok(1999));
    assert_eq!(to_minor("12.5", 2), Ok(1250));
    assert_eq!(to_minor("1200", 0), Ok(1200));
    assert_eq!(to_minor("0.00000001", 8), Ok(1));
    assert_eq!(to_minor("12.500", 2), Ok(1250));
    assert_eq!(to_minor("9007199254740991", 0), Ok(9_007_199_254_740_991));
    let code = |r: Result<u64, (sf_result, String, String)>| {
        let (result, code, field) = r.unwrap_err();
        assert_eq!((result, field.as_str()), (sf_result::Validation, "amount"));
        code
    };
    assert_eq!(code(to_minor("12.505", 2)), "too_many_decimals");
    assert_eq!(code(to_minor("0", 2)), "not_positive");
    assert_eq!(code(to_minor("-1", 2)), "not_positive");
    assert_eq!(code(to_minor("9007199254740992", 0)), "out_of_range");
    assert_eq!(
        code(to_minor("999999999999999999999999", 2)),
        "out_of_range"
    );
    assert_eq!(code(to_minor("1", 19)), "unsupported_scale");
    for bad in ["", ".", "1.", ".5", "1e3", "1,5", "NaN", " 1", "1 ", "--1"] {
        assert_eq!(code(to_minor(bad, 2)), "syntax", "{bad:?}");
    }

    assert_eq!(from_minor(1999, 2).as_deref(), Ok("19.99"));
    assert_eq!(from_minor(1250, 0).as_deref(), Ok("1250"));
    assert_eq!(from_minor(5, 3).as_deref(), Ok("0.005"));
    assert_eq!(from_minor(1250, 18).as_deref(), Ok("0.000000000000001250"));
    assert_eq!(from_minor(0, 2), Err("not_positive".into()));
    assert_eq!(
        from_minor(9_007_199_254_740_992, 2),
        Err("out_of_range".into())
    );
    assert_eq!(from_minor(1250, 19), Err("unsupported_scale".into()));
    assert_eq!(from_minor(1250, u32::MAX), Err("unsupported_scale".into()));
}

/// Rule (ABI conventions): NULL text and NULL out-pointers are refused, nothing written.
#[test]
fn money_exports_check_their_pointers() {
    let mut out = 7u64;
    let r = unsafe { sf_money_to_minor(ptr::null(), 2, &mut out, ptr::null_mut()) };
    assert_eq!((r, out), (sf_result::NullArgument, 7));
    let text = CString::new("1").unwrap();
    let r = unsafe { sf_money_to_minor(text.as_ptr(), 2, ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(r, sf_result::NullArgument);
    let r = unsafe { sf_money_from_minor(1, 2, ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(r, sf_result::NullArgument);
}

/// `sf_fixed_point8_parse(text)`: the raw value, or the error's (code, field).
fn fp8_parse(text: &str) -> Result<i64, (String, String)> {
    let text = CString::new(text).unwrap();
    let mut out = 0i64;
    let mut error: *mut sf_error = ptr::null_mut();
    let r = unsafe { sf_fixed_point8_parse(text.as_ptr(), &mut out, &mut error) };
    if r == sf_result::Ok {
        assert!(error.is_null());
        return Ok(out);
    }
    assert_eq!(r, sf_result::Validation);
    let e = error_json(error).unwrap();
    Err((
        e["error"].as_str().unwrap().into(),
        e["field"].as_str().unwrap().into(),
    ))
}

/// `sf_fixed_point8_format(raw, decimals)`: the text, or the error's (code, field).
fn fp8_format(raw: i64, decimals: u32) -> Result<String, (String, String)> {
    let mut out: *mut c_char = ptr::null_mut();
    let mut error: *mut sf_error = ptr::null_mut();
    let r = unsafe { sf_fixed_point8_format(raw, decimals, &mut out, &mut error) };
    if r == sf_result::Ok {
        assert!(error.is_null());
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
        unsafe { sf_string_free(out) };
        return Ok(text);
    }
    assert_eq!(r, sf_result::Validation);
    let e = error_json(error).unwrap();
    Err((
        e["error"].as_str().unwrap().into(),
        e["field"].as_str().unwrap().into(),
    ))
}

/// Rule (catalog amounts are eight-decimal fixed point, value x 10^8, exact): the cases of
/// `money::tests::fixed_point8_round_trips_decimal_strings` through the C ABI. The core accepts
/// signed amounts, so negatives parse and format; nothing is ever rounded.
#[test]
fn fixed_point8_text_converts_exactly_with_coded_refusals() {
    assert_eq!(fp8_parse("12.5"), Ok(1_250_000_000));
    assert_eq!(fp8_parse("0"), Ok(0));
    assert_eq!(fp8_parse("-0.00000001"), Ok(-1));
    assert_eq!(fp8_parse("-12.5"), Ok(-1_250_000_000));
    assert_eq!(fp8_parse("0.100000000"), Ok(10_000_000));
    assert_eq!(fp8_parse("92233720368.54775807"), Ok(i64::MAX));
    assert_eq!(fp8_parse("-92233720368.54775807"), Ok(-i64::MAX));
    let amount = |code: &str| Err((code.to_owned(), "amount".to_owned()));
    assert_eq!(fp8_parse("0.000000001"), amount("too_many_decimals"));
    assert_eq!(fp8_parse("1.123456789"), amount("too_many_decimals"));
    assert_eq!(fp8_parse("92233720368.54775808"), amount("out_of_range"));
    assert_eq!(
        fp8_parse("999999999999999999999999"),
        amount("out_of_range")
    );
    for bad in ["", ".", "1.", ".5", "1e3", "1,5", "NaN", " 1", "1 ", "--1"] {
        assert_eq!(fp8_parse(bad), amount("syntax"), "{bad:?}");
    }

    assert_eq!(fp8_format(1_250_000_000, 2).as_deref(), Ok("12.50"));
    assert_eq!(fp8_format(1_250_000_000, 8).as_deref(), Ok("12.50000000"));
    assert_eq!(fp8_format(100_000_000, 0).as_deref(), Ok("1"));
    assert_eq!(fp8_format(0, 0).as_deref(), Ok("0"));
    assert_eq!(fp8_format(-1, 8).as_deref(), Ok("-0.00000001"));
    assert_eq!(fp8_format(-1_250_000_000, 1).as_deref(), Ok("-12.5"));
    assert_eq!(
        fp8_format(i64::MAX, 8).as_deref(),
        Ok("92233720368.54775807")
    );
    assert_eq!(
        fp8_format(i64::MIN, 8).as_deref(),
        Ok("-92233720368.54775808")
    );
    let raw = |code: &str| Err((code.to_owned(), "raw".to_owned()));
    assert_eq!(fp8_format(1_250_000_000, 0), raw("too_many_decimals"));
    assert_eq!(fp8_format(1, 7), raw("too_many_decimals"));
    assert_eq!(fp8_format(1, 9), raw("unsupported_scale"));
    assert_eq!(fp8_format(1, u32::MAX), raw("unsupported_scale"));
}

/// Rule (ABI conventions): NULL text and NULL out-pointers are refused, nothing written.
#[test]
fn fixed_point8_exports_check_their_pointers() {
    let mut out = 7i64;
    let r = unsafe { sf_fixed_point8_parse(ptr::null(), &mut out, ptr::null_mut()) };
    assert_eq!((r, out), (sf_result::NullArgument, 7));
    let text = CString::new("1").unwrap();
    let r = unsafe { sf_fixed_point8_parse(text.as_ptr(), ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(r, sf_result::NullArgument);
    let r = unsafe { sf_fixed_point8_format(1, 2, ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(r, sf_result::NullArgument);
}

/// Rule ("key=label=flag"; the key part, never the label): fields listed in order.
#[test]
fn other_ipu_fields_lists_keys_labels_and_required() {
    let product = serde_json::json!({
        "gd_no": "G1", "gd_name": "Gift", "gd_description": "", "actual_price": 100000000,
        "retail_price": 100000000, "currency": "USD", "currency_decimals": 2, "in_stock": 5,
        "buy_limit_num": 0, "payment_policy": "",
        "other_ipu_cnf": ["recipient_email=Recipient email=1", "note=a=b label=0"]
    });
    let json = CString::new(product.to_string()).unwrap();
    let mut out: *mut c_char = ptr::null_mut();
    let r = unsafe { sf_other_ipu_fields(json.as_ptr(), &mut out, ptr::null_mut()) };
    assert_eq!(r, sf_result::Ok);
    assert_eq!(
        take(out),
        serde_json::json!({"items": [
            {"key": "recipient_email", "label": "Recipient email", "required": true},
            {"key": "note", "label": "a=b label", "required": false},
        ]})
    );

    let mut bad = product.clone();
    bad["other_ipu_cnf"] = serde_json::json!(["nokey"]);
    let json = CString::new(bad.to_string()).unwrap();
    let mut error: *mut sf_error = ptr::null_mut();
    let mut out: *mut c_char = ptr::null_mut();
    let r = unsafe { sf_other_ipu_fields(json.as_ptr(), &mut out, &mut error) };
    assert_eq!(r, sf_result::Validation);
    assert!(out.is_null());
    assert_eq!(error_json(error).unwrap()["field"], "other_ipu_cnf");
}

/// Rule (retry with the original key): keys are fresh, of the core's shape, and within the
/// contract's 128 bytes.
#[test]
fn idempotency_keys_are_fresh_before_sending() {
    let key = || {
        let mut out: *mut c_char = ptr::null_mut();
        let r = unsafe { sf_idempotency_key_generate(&mut out, ptr::null_mut()) };
        assert_eq!(r, sf_result::Ok);
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
        unsafe { sf_string_free(out) };
        text
    };
    let (a, b) = (key(), key());
    assert_ne!(a, b);
    assert!(
        a.starts_with("sf-") && a.len() == 35 && a.len() <= 128,
        "{a}"
    );
    let r = unsafe { sf_idempotency_key_generate(ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(r, sf_result::NullArgument);
}
