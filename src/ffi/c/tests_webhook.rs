//! `sf_webhook_verify_body` / `sf_webhook_verify_body_at`: every bad input gets its own result
//! code (the same code `sf_webhook_verify_at` gives), with and without `error_out`, and a
//! success hands nothing back.

use std::ffi::{CString, c_char};
use std::ptr;

use super::*;
use crate::ffi::c::error::{sf_error_free, sf_error_result};
use crate::ffi::c::io::{sf_max_input_bytes, sf_string_free};

const SECRET: &str = "whsec_body_0123456789abcdef0123456789";
const NOW: i64 = 1_790_000_000;

fn body(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"merchant_payment.status_changed","api_version":1,"created_at":"2026-09-21T12:00:00Z","data":{{"order_no":"MP1","external_reference":"R1","payment_no":"ch_card_usd","amount_minor":1250,"currency":"USD","currency_decimals":2,"status":"paid","status_version":2,"test_mode":false,"expires_at":"2026-09-21T12:30:00Z","event_id":"EV1","provider_trade_no":"T1","occurred_at":"2026-09-21T12:00:00+08:00"}}}}"#
    )
}

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

fn sign(ts: i64, body: &[u8]) -> CString {
    c(&TestSigner::new(SECRET).signature(ts, body))
}

/// A verifier over SECRET (and a rotated-out secret before it).
struct Verifier(*mut sf_webhook_verifier);

impl Verifier {
    fn new() -> Self {
        let secrets = c(&format!(
            r#"["rotated-out-secret-aaaaaaaaaaaa", "{SECRET}"]"#
        ));
        let mut handle = ptr::null_mut();
        let result =
            unsafe { sf_webhook_verifier_new(secrets.as_ptr(), &mut handle, ptr::null_mut()) };
        assert_eq!(result, sf_result::Ok);
        assert!(!handle.is_null());
        Verifier(handle)
    }
}

impl Drop for Verifier {
    fn drop(&mut self) {
        unsafe { sf_webhook_verifier_free(self.0) };
    }
}

/// One call's raw arguments.
#[derive(Clone, Copy)]
struct Args {
    verifier: *const sf_webhook_verifier,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    now: i64,
}

/// Calls `sf_webhook_verify_body_at` with `error_out` NULL and with it set, and checks the two
/// agree, the error object carries the same code, and a success writes no error; then checks
/// that `sf_webhook_verify_at` (the decoding export) gives the same code.
fn verify_body(args: Args) -> sf_result {
    let a = args;
    let without = unsafe {
        sf_webhook_verify_body_at(
            a.verifier,
            a.event_id,
            a.timestamp,
            a.signature,
            a.body,
            a.body_len,
            a.now,
            ptr::null_mut(),
        )
    };
    let mut error = ptr::null_mut();
    let with = unsafe {
        sf_webhook_verify_body_at(
            a.verifier,
            a.event_id,
            a.timestamp,
            a.signature,
            a.body,
            a.body_len,
            a.now,
            &mut error,
        )
    };
    assert_eq!(without, with, "error_out must not change the outcome");
    if with == sf_result::Ok {
        assert!(error.is_null(), "a success writes no error");
    } else {
        assert!(!error.is_null(), "a failure reports its detail");
        assert_eq!(unsafe { sf_error_result(error) }, with);
        unsafe { sf_error_free(error) };
    }
    let mut json = ptr::null_mut();
    let decoding = unsafe {
        sf_webhook_verify_at(
            a.verifier,
            a.event_id,
            a.timestamp,
            a.signature,
            a.body,
            a.body_len,
            a.now,
            &mut json,
            ptr::null_mut(),
        )
    };
    unsafe { sf_string_free(json) };
    assert_eq!(decoding, with, "sf_webhook_verify_at disagrees");
    with
}

/// Contract (Events): the signature over timestamp, dot and raw body by any configured secret,
/// 5-minute tolerance both ways, event id equal to body `id`, the envelope's type and version;
/// every failure its own code; NULL and non-UTF-8 arguments refused, never read.
#[test]
fn verify_body_rejects_every_bad_input_with_its_own_code() {
    let verifier = Verifier::new();
    let b = body("EVT1");
    let id = c("EVT1");
    let ts = c(&NOW.to_string());
    let sig = sign(NOW, b.as_bytes());
    let good = Args {
        verifier: verifier.0,
        event_id: id.as_ptr(),
        timestamp: ts.as_ptr(),
        signature: sig.as_ptr(),
        body: b.as_ptr(),
        body_len: b.len(),
        now: NOW,
    };
    assert_eq!(verify_body(good), sf_result::Ok);
    assert_eq!(
        verify_body(Args {
            now: NOW + 300,
            ..good
        }),
        sf_result::Ok
    );
    assert_eq!(
        verify_body(Args {
            now: NOW - 300,
            ..good
        }),
        sf_result::Ok
    );

    // NULL pointers.
    assert_eq!(
        verify_body(Args {
            verifier: ptr::null(),
            ..good
        }),
        sf_result::NullArgument
    );
    assert_eq!(
        verify_body(Args {
            body: ptr::null(),
            ..good
        }),
        sf_result::NullArgument
    );
    for missing in [
        Args {
            event_id: ptr::null(),
            ..good
        },
        Args {
            timestamp: ptr::null(),
            ..good
        },
        Args {
            signature: ptr::null(),
            ..good
        },
    ] {
        assert_eq!(verify_body(missing), sf_result::WebhookMissingHeader);
    }
    // An empty body (NULL with length 0 is allowed) is signed over nothing: not this signature.
    assert_eq!(
        verify_body(Args {
            body: ptr::null(),
            body_len: 0,
            ..good
        }),
        sf_result::WebhookSignatureMismatch
    );

    // Header text that is not UTF-8.
    let latin1 = CString::new(vec![b's', 0xff, b'x']).unwrap();
    assert_eq!(
        verify_body(Args {
            signature: latin1.as_ptr(),
            ..good
        }),
        sf_result::InvalidUtf8
    );

    // Oversized body: refused before it is read.
    assert_eq!(
        verify_body(Args {
            body_len: sf_max_input_bytes() + 1,
            ..good
        }),
        sf_result::InputTooLarge
    );

    // Timestamps.
    assert_eq!(
        verify_body(Args {
            now: NOW + 301,
            ..good
        }),
        sf_result::WebhookTimestampTooOld
    );
    assert_eq!(
        verify_body(Args {
            now: NOW - 301,
            ..good
        }),
        sf_result::WebhookTimestampInFuture
    );
    for text in ["", "soon", "-1", "1790000000.5", "17900000000000000000"] {
        let t = c(text);
        assert_eq!(
            verify_body(Args {
                timestamp: t.as_ptr(),
                ..good
            }),
            sf_result::WebhookMalformedTimestamp,
            "timestamp {text:?}"
        );
    }

    // Signatures.
    let upper = c(&sig
        .to_str()
        .unwrap()
        .to_uppercase()
        .replace("SHA256=", "sha256="));
    let no_prefix = c(&sig.to_str().unwrap()["sha256=".len()..]);
    let short = c("sha256=abc");
    for s in [&upper, &no_prefix, &short] {
        assert_eq!(
            verify_body(Args {
                signature: s.as_ptr(),
                ..good
            }),
            sf_result::WebhookMalformedSignature
        );
    }
    let other_secret =
        c(&TestSigner::new("someone-else-secret-000000000000").signature(NOW, b.as_bytes()));
    let other_time = sign(NOW - 1, b.as_bytes());
    for s in [&other_secret, &other_time] {
        assert_eq!(
            verify_body(Args {
                signature: s.as_ptr(),
                ..good
            }),
            sf_result::WebhookSignatureMismatch
        );
    }

    // A tampered body (one digit of the amount), and the same body re-serialized.
    let tampered = b.replace("1250", "1251");
    assert_eq!(
        verify_body(Args {
            body: tampered.as_ptr(),
            body_len: tampered.len(),
            ..good
        }),
        sf_result::WebhookSignatureMismatch
    );
    let spaced = b.replace(",", ", ");
    assert_eq!(
        verify_body(Args {
            body: spaced.as_ptr(),
            body_len: spaced.len(),
            ..good
        }),
        sf_result::WebhookSignatureMismatch
    );
    // A body cut short by one byte (a wrong length from the caller).
    assert_eq!(
        verify_body(Args {
            body_len: b.len() - 1,
            ..good
        }),
        sf_result::WebhookSignatureMismatch
    );

    // Signed but not this event, or not a notification envelope.
    let other_id = c("EVT2");
    assert_eq!(
        verify_body(Args {
            event_id: other_id.as_ptr(),
            ..good
        }),
        sf_result::WebhookEventIdMismatch
    );
    let signed = |text: &str, code: sf_result| {
        let s = sign(NOW, text.as_bytes());
        assert_eq!(
            verify_body(Args {
                signature: s.as_ptr(),
                body: text.as_ptr(),
                body_len: text.len(),
                ..good
            }),
            code,
            "body {text}"
        );
    };
    signed("not json", sf_result::WebhookInvalidBody);
    signed("[]", sf_result::WebhookInvalidBody);
    signed(r#"{"id":"EVT1"}"#, sf_result::WebhookInvalidBody);
    signed(
        &b.replace("2026-09-21T12:00:00Z", "yesterday"),
        sf_result::WebhookInvalidBody,
    );
    signed(
        &b.replace("status_changed", "created"),
        sf_result::WebhookUnsupportedEventType,
    );
    signed(
        &b.replace(r#""api_version":1"#, r#""api_version":2"#),
        sf_result::WebhookUnsupportedApiVersion,
    );
}

/// `data` is the host's to decode: a signed envelope whose `data` is not a valid snapshot
/// passes `sf_webhook_verify_body_at` (nothing of `data` is read) while `sf_webhook_verify_at`,
/// which decodes it, refuses it. The bindings check `data` themselves after their own parse.
#[test]
fn verify_body_leaves_data_to_the_host() {
    let verifier = Verifier::new();
    let b = body("EVT1").replace(
        r#""currency_decimals":2"#,
        r#""currency_decimals":4294967295"#,
    );
    let id = c("EVT1");
    let ts = c(&NOW.to_string());
    let sig = sign(NOW, b.as_bytes());
    let (bp, bl) = (b.as_ptr(), b.len());
    let body_only = unsafe {
        sf_webhook_verify_body_at(
            verifier.0,
            id.as_ptr(),
            ts.as_ptr(),
            sig.as_ptr(),
            bp,
            bl,
            NOW,
            ptr::null_mut(),
        )
    };
    assert_eq!(body_only, sf_result::Ok);
    let mut json = ptr::null_mut();
    let decoding = unsafe {
        sf_webhook_verify_at(
            verifier.0,
            id.as_ptr(),
            ts.as_ptr(),
            sig.as_ptr(),
            bp,
            bl,
            NOW,
            &mut json,
            ptr::null_mut(),
        )
    };
    assert_eq!(decoding, sf_result::WebhookInvalidBody);
    assert!(json.is_null(), "a failure writes no output");
}

/// The system-clock export: a delivery signed now verifies, one signed an hour ago is too old.
#[test]
fn verify_body_on_the_system_clock() {
    let verifier = Verifier::new();
    let b = body("EVT1");
    let id = c("EVT1");
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    for (ts, expected) in [
        (now, sf_result::Ok),
        (now - 3600, sf_result::WebhookTimestampTooOld),
    ] {
        let t = c(&ts.to_string());
        let s = sign(ts, b.as_bytes());
        let result = unsafe {
            sf_webhook_verify_body(
                verifier.0,
                id.as_ptr(),
                t.as_ptr(),
                s.as_ptr(),
                b.as_ptr(),
                b.len(),
                ptr::null_mut(),
            )
        };
        assert_eq!(result, expected);
    }
}
