//! `capi_json`: every C entry point that takes JSON or strings, called through the C ABI with
//! arbitrary NUL-terminated bytes (and NULLs). No call may panic (a panic caught at the boundary
//! is `SF_RESULT_PANIC`, a bug); every failure hands out an `sf_error` whose accessors and JSON
//! are readable; every result string is UTF-8 (JSON where the header promises JSON); everything
//! returned is released with the documented free functions (leaks show under ASan/LSan).
//!
//! Calls that send requests use one client whose endpoints are a closed loopback port, with
//! one attempt and short timeouts, so they fail fast with a transport error after their
//! validation ran. A client built from fuzzed configuration JSON is freed at once and never
//! used for a call: nothing is ever sent anywhere but that closed loopback port.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;
use std::sync::OnceLock;

use crate::reader::{Reader, nul_args};

type SfResult = u32;
type Client = c_void;
type Verifier = c_void;
type SfError = c_void;

const OK: SfResult = 0;
const NULL_ARGUMENT: SfResult = 1;
const PANIC: SfResult = 6;

unsafe extern "C" {
    fn sf_client_new(
        config: *const c_char,
        out: *mut *mut Client,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_client_free(client: *mut Client);
    fn sf_merchant_profile_get(
        c: *const Client,
        token: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_products_list(
        c: *const Client,
        token: *const c_char,
        query: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_userinfo_get(
        c: *const Client,
        token: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_order_create(
        c: *const Client,
        token: *const c_char,
        request: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_order_get(
        c: *const Client,
        token: *const c_char,
        order_no: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_payment_start(
        c: *const Client,
        token: *const c_char,
        order_no: *const c_char,
        payment_no: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_payment_status(
        c: *const Client,
        token: *const c_char,
        order_no: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_payment_wait(
        c: *const Client,
        token: *const c_char,
        order_no: *const c_char,
        interval_ms: u64,
        timeout_ms: u64,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_other_ipu_build(
        product: *const c_char,
        values: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_merchant_payment_create(
        c: *const Client,
        request: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_merchant_payment_get(
        c: *const Client,
        order_no: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_merchant_payments_list(
        c: *const Client,
        query: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_notification_records_list(
        c: *const Client,
        order_no: *const c_char,
        limit: u32,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_notification_requeue(
        c: *const Client,
        order_no: *const c_char,
        event_id: *const c_char,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_error_result(e: *const SfError) -> SfResult;
    fn sf_error_http_status(e: *const SfError) -> u16;
    fn sf_error_retry_after_ms(e: *const SfError) -> i64;
    fn sf_error_message(e: *const SfError) -> *const c_char;
    fn sf_error_code(e: *const SfError) -> *const c_char;
    fn sf_error_description(e: *const SfError) -> *const c_char;
    fn sf_error_field(e: *const SfError) -> *const c_char;
    fn sf_error_json(e: *const SfError) -> *const c_char;
    fn sf_error_free(e: *mut SfError);
    fn sf_string_free(s: *mut c_char);
    fn sf_webhook_verifier_new(
        secrets: *const c_char,
        out: *mut *mut Verifier,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_webhook_verifier_free(v: *mut Verifier);
    fn sf_webhook_verify(
        v: *const Verifier,
        event_id: *const c_char,
        timestamp: *const c_char,
        signature: *const c_char,
        body: *const u8,
        body_len: usize,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_webhook_verify_at(
        v: *const Verifier,
        event_id: *const c_char,
        timestamp: *const c_char,
        signature: *const c_char,
        body: *const u8,
        body_len: usize,
        now_unix: i64,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_webhook_sign(
        secret: *const c_char,
        timestamp: i64,
        body: *const u8,
        body_len: usize,
        out: *mut *mut c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_payment_expectation_check(
        payment: *const c_char,
        expectation: *const c_char,
        e: *mut *mut SfError,
    ) -> SfResult;
    fn sf_status_version_decision(stored: i64, incoming: u64) -> u32;
}

/// The long-lived handles: a client aimed at a closed loopback port and a verifier.
struct Handles {
    client: *mut Client,
    verifier: *mut Verifier,
}

// SAFETY: the header documents both handle types as usable from several threads at once; they
// are never freed.
unsafe impl Send for Handles {}
// SAFETY: as above.
unsafe impl Sync for Handles {}

/// Secrets of the long-lived verifier (the seeds sign with the first).
pub const VERIFIER_SECRETS: &str =
    r#"["fuzz-notify-secret-0123456789abcdef","fuzz-old-secret-aaaaaaaaaaaaaaaaaaaa"]"#;

fn handles() -> &'static Handles {
    static HANDLES: OnceLock<Handles> = OnceLock::new();
    HANDLES.get_or_init(|| {
        // reqwest honours proxy variables; a proxy would carry the calls off this machine.
        // SAFETY: set once, before the first client exists and before any other thread of the
        // harness reads the environment.
        unsafe {
            std::env::set_var("NO_PROXY", "*");
            std::env::set_var("no_proxy", "*");
        }
        // A port that was just free: bound, then released, so connecting is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let config = serde_json::json!({
            "base_url": format!("http://127.0.0.1:{port}/api"),
            "token_endpoint": format!("http://127.0.0.1:{port}/oauth/token"),
            "userinfo_endpoint": format!("http://127.0.0.1:{port}/userinfo"),
            "client_id": "fuzz-client",
            "client_secret": "fuzz-client-secret",
            "allow_insecure_loopback": true,
            "attempt_timeout_ms": 200,
            "overall_deadline_ms": 300,
            "retry": {"max_attempts": 1},
        });
        let config = cstring(config.to_string().as_bytes());
        let mut client = ptr::null_mut();
        let mut verifier = ptr::null_mut();
        // SAFETY: NUL-terminated strings and writable out-pointers.
        unsafe {
            let rc = sf_client_new(config.as_ptr().cast(), &mut client, ptr::null_mut());
            assert_eq!(rc, OK, "the loopback client is created");
            let secrets = cstring(VERIFIER_SECRETS.as_bytes());
            let rc =
                sf_webhook_verifier_new(secrets.as_ptr().cast(), &mut verifier, ptr::null_mut());
            assert_eq!(rc, OK, "the verifier is created");
        }
        Handles { client, verifier }
    })
}

/// The bytes with a NUL appended (the bytes hold none).
fn cstring(bytes: &[u8]) -> Vec<u8> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let mut v = bytes[..end].to_vec();
    v.push(0);
    v
}

/// Number of entry points this target picks from.
pub const ENTRY_POINTS: u8 = 21;

/// Input: 1 byte entry point, 1 byte NULL mask (bit n set: string argument n is NULL), 8 bytes
/// number (times, limits, versions), then the string arguments separated by NUL bytes.
pub fn run(data: &[u8]) {
    let h = handles();
    let mut r = Reader::new(data);
    let selector = r.u8() % ENTRY_POINTS;
    let null_mask = r.u8();
    let number = r.u64();
    let raw = nul_args(r.rest(), 4);
    let strings: Vec<Vec<u8>> = raw.iter().map(|a| cstring(a)).collect();
    let arg = |n: usize| -> *const c_char {
        if null_mask & (1 << n) != 0 {
            ptr::null()
        } else {
            strings[n].as_ptr().cast()
        }
    };
    // A byte argument: pointer and length of the raw bytes (NULL with length 0 when masked).
    let bytes = |n: usize| -> (*const u8, usize) {
        if null_mask & (1 << n) != 0 {
            (ptr::null(), 0)
        } else {
            (raw[n].as_ptr(), raw[n].len())
        }
    };
    let c = h.client.cast_const();
    let v = h.verifier.cast_const();
    let mut out: *mut c_char = ptr::null_mut();
    let mut err: *mut SfError = ptr::null_mut();
    let (o, e) = (&raw mut out, &raw mut err);

    // SAFETY: every string is NULL or NUL-terminated, byte arguments are readable for their
    // length, out-pointers are writable, and the handles are live.
    unsafe {
        let rc = match selector {
            0 => {
                let mut client = ptr::null_mut();
                let rc = sf_client_new(arg(0), &mut client, e);
                // Never used for a call: its endpoints are fuzzed.
                assert_eq!(rc == OK, !client.is_null());
                sf_client_free(client);
                rc
            }
            1 => {
                let mut verifier = ptr::null_mut();
                let rc = sf_webhook_verifier_new(arg(0), &mut verifier, e);
                assert_eq!(rc == OK, !verifier.is_null());
                if rc == OK {
                    // A delivery signed through the C signer verifies on this verifier or fails
                    // on its content only.
                    let ts = (number % 4_102_444_800) as i64;
                    let (body, len) = bytes(3);
                    let mut sig = ptr::null_mut();
                    let mut sign_err = ptr::null_mut();
                    let rc = sf_webhook_sign(arg(1), ts, body, len, &mut sig, &mut sign_err);
                    let verdict = finish(rc, sig, sign_err, Output::Text);
                    if rc == OK {
                        let sig = CStr::from_bytes_with_nul(&verdict).expect("signature text");
                        let ts_text = cstring(ts.to_string().as_bytes());
                        let mut n = ptr::null_mut();
                        let mut verify_err = ptr::null_mut();
                        let rc = sf_webhook_verify_at(
                            verifier,
                            arg(2),
                            ts_text.as_ptr().cast(),
                            sig.as_ptr(),
                            body,
                            len,
                            ts,
                            &mut n,
                            &mut verify_err,
                        );
                        // The signing secret may be one the verifier ignores (empty) or lacks.
                        finish(rc, n, verify_err, Output::Json);
                    }
                }
                sf_webhook_verifier_free(verifier);
                rc
            }
            2 => {
                let (body, len) = bytes(3);
                sf_webhook_verify(v, arg(0), arg(1), arg(2), body, len, o, e)
            }
            3 => {
                let (body, len) = bytes(3);
                sf_webhook_verify_at(v, arg(0), arg(1), arg(2), body, len, number as i64, o, e)
            }
            4 => {
                let (body, len) = bytes(1);
                sf_webhook_sign(arg(0), number as i64, body, len, o, e)
            }
            5 => sf_payment_expectation_check(arg(0), arg(1), e),
            6 => sf_other_ipu_build(arg(0), arg(1), o, e),
            7 => sf_merchant_payment_create(c, arg(0), o, e),
            8 => sf_merchant_payments_list(c, arg(0), o, e),
            9 => sf_products_list(c, arg(0), arg(1), o, e),
            10 => sf_order_create(c, arg(0), arg(1), o, e),
            11 => sf_merchant_payment_get(c, arg(0), o, e),
            12 => sf_notification_records_list(c, arg(0), number as u32, o, e),
            13 => sf_notification_requeue(c, arg(0), arg(1), o, e),
            14 => sf_order_get(c, arg(0), arg(1), o, e),
            15 => sf_payment_start(c, arg(0), arg(1), arg(2), o, e),
            16 => sf_payment_status(c, arg(0), arg(1), o, e),
            17 => {
                // Short waits only: the status poll fails against the closed port anyway.
                let interval = number & 0x7;
                let timeout = (number >> 8) & 0x7;
                sf_payment_wait(c, arg(0), arg(1), interval, timeout, o, e)
            }
            18 => sf_merchant_profile_get(c, arg(0), o, e),
            19 => sf_userinfo_get(c, arg(0), o, e),
            _ => {
                let decision = sf_status_version_decision(number as i64, number.rotate_left(7));
                assert!(decision <= 2, "decision {decision}");
                return;
            }
        };
        let output = match selector {
            0 | 1 | 5 => Output::Nothing,
            4 => Output::Text,
            _ => Output::Json,
        };
        finish(rc, out, err, output);
        // Nothing on the closed port can answer: a call that sends cannot succeed, except the
        // payment wait, whose failing polls end in the outcome "still pending" (issue 12 item 3).
        if (7..=19).contains(&selector) && selector != 17 {
            assert_ne!(rc, OK, "entry point {selector} succeeded without a service");
        }
        if null_mask & 1 != 0 && matches!(selector, 0 | 1 | 4..=8 | 10..=17 | 19) {
            assert_eq!(
                rc, NULL_ARGUMENT,
                "entry point {selector} with a NULL first argument"
            );
        }
    }
}

/// What a successful call writes to its string out-parameter.
#[derive(Clone, Copy, PartialEq)]
enum Output {
    Nothing,
    Text,
    Json,
}

/// Checks one call's result, result string and error, then frees them. Returns the result
/// string's bytes (with its NUL) when there was one.
///
/// # Safety
/// `out` and `err` are NULL or were written by the call that returned `rc`.
unsafe fn finish(rc: SfResult, out: *mut c_char, err: *mut SfError, output: Output) -> Vec<u8> {
    assert_ne!(
        rc,
        PANIC,
        "a panic was caught at the C boundary: {}",
        unsafe { error_text(err) }
    );
    let mut text = Vec::new();
    if rc == OK {
        assert!(err.is_null(), "an error was written on success");
        if output != Output::Nothing {
            assert!(!out.is_null(), "no result string on success");
            // SAFETY: a NUL-terminated string from the library.
            let s = unsafe { CStr::from_ptr(out) };
            text = s.to_bytes_with_nul().to_vec();
            let s = s.to_str().expect("result strings are UTF-8");
            if output == Output::Json {
                serde_json::from_str::<serde_json::Value>(s).expect("result strings are JSON");
            }
        }
    } else {
        assert!(out.is_null(), "a result string was written on failure");
        assert!(!err.is_null(), "no error written for result {rc}");
        // SAFETY: a live error from the library.
        unsafe {
            assert_eq!(sf_error_result(err), rc);
            let _ = (sf_error_http_status(err), sf_error_retry_after_ms(err));
            for s in [
                sf_error_message(err),
                sf_error_code(err),
                sf_error_description(err),
                sf_error_field(err),
            ] {
                if !s.is_null() {
                    CStr::from_ptr(s).to_str().expect("error strings are UTF-8");
                }
            }
            assert!(!sf_error_message(err).is_null());
            let json = CStr::from_ptr(sf_error_json(err)).to_str().expect("UTF-8");
            let json: serde_json::Value = serde_json::from_str(json).expect("error JSON");
            assert_eq!(json["result"], rc);
        }
    }
    // SAFETY: each was handed out by the library and is freed once.
    unsafe {
        sf_string_free(out);
        sf_error_free(err);
    }
    text
}

/// The error's JSON, for a panic message.
///
/// # Safety
/// `err` is NULL or a live error.
unsafe fn error_text(err: *mut SfError) -> String {
    if err.is_null() {
        return "(no error)".into();
    }
    // SAFETY: a live error; its JSON is a NUL-terminated string.
    unsafe { CStr::from_ptr(sf_error_json(err)) }
        .to_string_lossy()
        .into_owned()
}
