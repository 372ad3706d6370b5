//! The C ABI over real HTTP against the sandbox: flows, error mapping, threads, webhooks.

use std::ffi::{CString, c_char};
use std::ptr;

use storefront_sandbox::seed;

use super::catalog::*;
use super::client::*;
use super::collection::*;
use super::error::*;
use super::result::sf_result;
use super::tests_abi::{Env, error_json, take};
use super::webhook::*;

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

/// The JSON result of a call, or its result code and error JSON.
type Outcome = Result<serde_json::Value, (sf_result, serde_json::Value)>;

/// Calls an export writing one string, returning the JSON or the error JSON.
fn ok_or_err(call: impl FnOnce(*mut *mut c_char, *mut *mut sf_error) -> sf_result) -> Outcome {
    let mut out = ptr::null_mut();
    let mut error = ptr::null_mut();
    match call(&mut out, &mut error) {
        sf_result::Ok => Ok(take(out)),
        code => Err((code, error_json(error).unwrap())),
    }
}

/// Contract: catalog orders use the user's token; the platform coin pays during payment start;
/// `redirect` is absolute against the service origin; the wait stops at paid and reads the
/// order.
#[test]
fn catalog_flow_through_the_c_abi() {
    let env = Env::start();
    let client = env.client();
    let token = env.user_token(seed::USER_ALICE);
    let page = ok_or_err(|o, e| unsafe {
        sf_products_list(client, token.as_ptr(), c(r#"{"limit":20}"#).as_ptr(), o, e)
    })
    .unwrap();
    assert_eq!(page["total"], seed::ENABLED_PRODUCT_COUNT);
    let request = format!(
        r#"{{"gd_no":"{}","quantity":1,"payment_no":"{}"}}"#,
        seed::PRODUCT_BEANS,
        seed::CHANNEL_PLATFORM_COIN
    );
    let created = ok_or_err(|o, e| unsafe {
        sf_order_create(client, token.as_ptr(), c(&request).as_ptr(), o, e)
    })
    .unwrap();
    let order_no = c(created["order_no"].as_str().unwrap());
    let start = ok_or_err(|o, e| unsafe {
        sf_payment_start(
            client,
            token.as_ptr(),
            order_no.as_ptr(),
            c(seed::CHANNEL_PLATFORM_COIN).as_ptr(),
            o,
            e,
        )
    })
    .unwrap();
    let redirect = start["redirect"].as_str().unwrap();
    assert!(redirect.starts_with(&env.sandbox.origin()), "{redirect}");
    let outcome = ok_or_err(|o, e| unsafe {
        sf_payment_wait(client, token.as_ptr(), order_no.as_ptr(), 50, 10_000, o, e)
    })
    .unwrap();
    assert_eq!(outcome["payment_status"], 1);
    assert_eq!(outcome["order"]["order_no"], created["order_no"]);
    let status = ok_or_err(|o, e| unsafe {
        sf_payment_status(client, token.as_ptr(), order_no.as_ptr(), o, e)
    })
    .unwrap();
    assert_eq!(status["status"], 1);
    unsafe { sf_client_free(client) };
}

/// Contract (Errors): status, `error`, `error_description` and `field` reach the C caller;
/// client-side validation names the field and sends nothing.
#[test]
fn errors_keep_status_code_and_field() {
    let env = Env::start();
    let client = env.client();
    let (code, detail) = ok_or_err(|o, e| unsafe {
        sf_merchant_payment_get(client, c("MP_DOES_NOT_EXIST").as_ptr(), o, e)
    })
    .unwrap_err();
    assert_eq!(code, sf_result::Api);
    assert_eq!(detail["http_status"], 404);
    assert_eq!(detail["error"], "payment_not_found");

    let long = "x".repeat(501);
    let request = format!(
        r#"{{"external_reference":"R-1","amount_minor":1250,"currency":"USD","description":"{long}"}}"#
    );
    let (code, detail) =
        ok_or_err(|o, e| unsafe { sf_merchant_payment_create(client, c(&request).as_ptr(), o, e) })
            .unwrap_err();
    assert_eq!(code, sf_result::Validation);
    assert_eq!(detail["field"], "description");
    assert!(detail.get("http_status").is_none());

    let (code, detail) =
        ok_or_err(|o, e| unsafe { sf_merchant_payments_list(client, c("{}").as_ptr(), o, e) })
            .unwrap_err();
    assert_eq!(code, sf_result::Validation, "{detail}");
    unsafe { sf_client_free(client) };
}

/// ABI rule: calls are safe from several threads at once on one handle.
#[test]
fn one_client_serves_several_threads_at_once() {
    let env = Env::start();
    let client = env.client() as usize;
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(move || {
                for _ in 0..5 {
                    let profile = ok_or_err(|o, e| unsafe {
                        sf_merchant_profile_get(client as *const sf_client, ptr::null(), o, e)
                    })
                    .unwrap();
                    assert_eq!(profile["merchant_no"], seed::MERCHANT_NO);
                }
            });
        }
    });
    unsafe { sf_client_free(client as *mut sf_client) };
}

const SECRET: &str = "whsec_test_0123456789abcdef0123456789";
const NOW: i64 = 1_790_000_000;

fn body(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"merchant_payment.status_changed","api_version":1,"created_at":"2026-09-21T12:00:00Z","data":{{"order_no":"MP1","external_reference":"R1","payment_no":"ch_card_usd","amount_minor":1250,"currency":"USD","currency_decimals":2,"status":"paid","status_version":2,"test_mode":false,"expires_at":"2026-09-21T12:30:00Z","event_id":"EV1","provider_trade_no":"T1","occurred_at":"2026-09-21T12:00:00+08:00"}}}}"#
    )
}

fn sign(timestamp: i64, body: &str) -> CString {
    let value = ok_or_err(|o, e| unsafe {
        let mut out = ptr::null_mut();
        let r = sf_webhook_sign(
            c(SECRET).as_ptr(),
            timestamp,
            body.as_ptr(),
            body.len(),
            &mut out,
            e,
        );
        if r == sf_result::Ok {
            // Wrap as JSON for the helper.
            let text = std::ffi::CStr::from_ptr(out).to_str().unwrap().to_owned();
            super::io::sf_string_free(out);
            let s = CString::new(serde_json::Value::String(text).to_string()).unwrap();
            *o = s.into_raw();
        }
        r
    })
    .unwrap();
    c(value.as_str().unwrap())
}

fn verify(
    verifier: *const sf_webhook_verifier,
    id: Option<&str>,
    timestamp: Option<i64>,
    signature: Option<&CString>,
    body: &str,
    now: i64,
) -> Outcome {
    let id = id.map(c);
    let ts = timestamp.map(|t| c(&t.to_string()));
    let opt = |s: &Option<CString>| s.as_ref().map_or(ptr::null(), |s| s.as_ptr());
    ok_or_err(|o, e| unsafe {
        sf_webhook_verify_at(
            verifier,
            opt(&id),
            opt(&ts),
            signature.map_or(ptr::null(), |s| s.as_ptr()),
            body.as_ptr(),
            body.len(),
            now,
            o,
            e,
        )
    })
}

/// Contract (Events): signature over timestamp, dot and raw body with any configured secret,
/// 5-minute tolerance both ways, event id equal to body `id`; each failure has its own code;
/// then reference, amount, currency and `test_mode` are checked.
#[test]
fn webhook_verification_gives_each_failure_its_own_code() {
    let mut verifier = ptr::null_mut();
    let secrets = c(&format!(
        r#"["old-secret-that-is-rotated-out", "{SECRET}"]"#
    ));
    assert_eq!(
        unsafe { sf_webhook_verifier_new(secrets.as_ptr(), &mut verifier, ptr::null_mut()) },
        sf_result::Ok
    );
    let b = body("EVT1");
    let sig = sign(NOW, &b);
    let n = verify(verifier, Some("EVT1"), Some(NOW), Some(&sig), &b, NOW + 299).unwrap();
    assert_eq!(n["data"]["amount_minor"], 1250);
    assert_eq!(n["data"]["event_id"], "EV1");

    let cases: Vec<(sf_result, Outcome)> = vec![
        (
            sf_result::WebhookTimestampTooOld,
            verify(verifier, Some("EVT1"), Some(NOW), Some(&sig), &b, NOW + 301),
        ),
        (
            sf_result::WebhookTimestampInFuture,
            verify(verifier, Some("EVT1"), Some(NOW), Some(&sig), &b, NOW - 301),
        ),
        (
            sf_result::WebhookMissingHeader,
            verify(verifier, None, Some(NOW), Some(&sig), &b, NOW),
        ),
        (
            sf_result::WebhookMalformedSignature,
            verify(
                verifier,
                Some("EVT1"),
                Some(NOW),
                Some(&c("sha1=00")),
                &b,
                NOW,
            ),
        ),
        (
            sf_result::WebhookSignatureMismatch,
            verify(
                verifier,
                Some("EVT1"),
                Some(NOW),
                Some(&sig),
                &b.replace("1250", "1251"),
                NOW,
            ),
        ),
        (
            sf_result::WebhookEventIdMismatch,
            verify(verifier, Some("EVT2"), Some(NOW), Some(&sig), &b, NOW),
        ),
        (
            sf_result::WebhookInvalidBody,
            verify(
                verifier,
                Some("EVT1"),
                Some(NOW),
                Some(&sign(NOW, "{}")),
                "{}",
                NOW,
            ),
        ),
    ];
    for (expected, got) in cases {
        let (code, detail) = got.unwrap_err();
        assert_eq!(code, expected, "{detail}");
    }
    let (_, detail) = verify(verifier, None, Some(NOW), Some(&sig), &b, NOW).unwrap_err();
    assert_eq!(detail["field"], "X-Service-Event-ID");

    let data = c(&n["data"].to_string());
    let expect = |json: &str| unsafe {
        let mut error = ptr::null_mut();
        let r = sf_payment_expectation_check(data.as_ptr(), c(json).as_ptr(), &mut error);
        (r, error_json(error))
    };
    let good =
        r#"{"external_reference":"R1","amount_minor":1250,"currency":"USD","test_mode":false}"#;
    assert_eq!(expect(good).0, sf_result::Ok);
    let (r, detail) = expect(&good.replace("1250", "1300"));
    assert_eq!(r, sf_result::ExpectationMismatch);
    assert_eq!(detail.unwrap()["field"], "amount_minor");
    unsafe { sf_webhook_verifier_free(verifier) };

    let mut none = ptr::null_mut();
    let mut error = ptr::null_mut();
    let r = unsafe { sf_webhook_verifier_new(c("[\"\"]").as_ptr(), &mut none, &mut error) };
    assert_eq!(r, sf_result::WebhookNoSecrets);
    assert!(none.is_null());
    error_json(error);
}

/// Contract (Events): "a lower version must not overwrite a higher one".
#[test]
fn status_version_guard() {
    assert_eq!(
        sf_status_version_decision(-1, 0),
        sf_version_decision::Apply
    );
    assert_eq!(sf_status_version_decision(2, 3), sf_version_decision::Apply);
    assert_eq!(
        sf_status_version_decision(3, 3),
        sf_version_decision::Duplicate
    );
    assert_eq!(sf_status_version_decision(3, 2), sf_version_decision::Stale);
}

/// Contract (Product): the `other_ipu` keys are the key part of `other_ipu_cnf`, never labels;
/// required inputs are enforced.
#[test]
fn other_ipu_uses_keys_not_labels() {
    let product = c(super::tests_abi::PRODUCT);
    let build = |values: &str| {
        ok_or_err(|o, e| unsafe { sf_other_ipu_build(product.as_ptr(), c(values).as_ptr(), o, e) })
    };
    assert_eq!(
        build(r#"{"recipient_email":"a@b.example"}"#).unwrap(),
        serde_json::json!({"recipient_email": "a@b.example"})
    );
    let (code, detail) = build(r#"{"Recipient email":"a@b.example"}"#).unwrap_err();
    assert_eq!(code, sf_result::Validation);
    assert_eq!(detail["field"], "other_ipu.Recipient email");
    let (code, _) = build("{}").unwrap_err();
    assert_eq!(code, sf_result::Validation);
}
