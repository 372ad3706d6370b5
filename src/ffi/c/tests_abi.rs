//! Every export fed NULLs, invalid UTF-8, invalid JSON, wrong shapes and oversized input, then
//! proof over real HTTP against the sandbox that the client still works.

use std::ffi::{CStr, CString, c_char, c_void};
use std::io::{Read, Write};
use std::ptr;

use storefront_sandbox::{Sandbox, seed};

use super::catalog::*;
use super::client::*;
use super::collection::*;
use super::error::*;
use super::inbox::*;
use super::io::{MAX_INPUT_BYTES, sf_string_free};
use super::result::sf_result;
use super::webhook::*;

/// A sandbox on its own runtime, alive while the test calls the blocking C functions.
pub(super) struct Env {
    pub(super) sandbox: Sandbox,
    runtime: tokio::runtime::Runtime,
}

impl Env {
    pub(super) fn start() -> Env {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let sandbox = runtime.block_on(Sandbox::start()).unwrap();
        Env { sandbox, runtime }
    }

    /// The merchant client's configuration for this sandbox.
    pub(super) fn config_json(&self) -> CString {
        let config = serde_json::json!({
            "base_url": self.sandbox.base_url(),
            "token_endpoint": self.sandbox.token_endpoint(),
            "userinfo_endpoint": self.sandbox.userinfo_endpoint(),
            "client_id": seed::MERCHANT_CLIENT_ID,
            "client_secret": seed::MERCHANT_CLIENT_SECRET,
            "allow_insecure_loopback": true,
            "scopes": seed::ALL_SCOPES,
        });
        CString::new(config.to_string()).unwrap()
    }

    /// A client through the C ABI.
    pub(super) fn client(&self) -> *mut sf_client {
        let mut client = ptr::null_mut();
        let mut error = ptr::null_mut();
        let result = unsafe { sf_client_new(self.config_json().as_ptr(), &mut client, &mut error) };
        assert_eq!(result, sf_result::Ok, "{:?}", error_json(error));
        client
    }

    /// POSTs JSON to a sandbox control endpoint and returns the JSON answer.
    pub(super) fn control(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let address = self.sandbox.address();
        let body = body.to_string();
        let _guard = self.runtime.enter();
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        write!(
            stream,
            "POST {}{path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            seed::CONTROL_PREFIX,
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 2"), "{head}\n{body}");
        serde_json::from_str(body).unwrap()
    }

    /// A user token for a seeded user, minted through the merchant client.
    pub(super) fn user_token(&self, user: &str) -> CString {
        let minted = self.control(
            &format!("/users/{user}/tokens"),
            serde_json::json!({ "client_id": seed::MERCHANT_CLIENT_ID }),
        );
        CString::new(minted["access_token"].as_str().unwrap()).unwrap()
    }
}

/// Reads and frees an error, returning its JSON (None when NULL).
pub(super) fn error_json(error: *mut sf_error) -> Option<serde_json::Value> {
    if error.is_null() {
        return None;
    }
    let text = unsafe { CStr::from_ptr(sf_error_json(error)) }
        .to_str()
        .unwrap()
        .to_owned();
    unsafe { sf_error_free(error) };
    Some(serde_json::from_str(&text).unwrap())
}

/// Takes a library-owned result string.
pub(super) fn take(text: *mut c_char) -> serde_json::Value {
    assert!(!text.is_null());
    let value = serde_json::from_str(unsafe { CStr::from_ptr(text) }.to_str().unwrap()).unwrap();
    unsafe { sf_string_free(text) };
    value
}

/// The kind of one pointer argument of an export.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Client,
    Verifier,
    Inbox,
    /// Required string.
    Str,
    /// String where NULL means absent.
    OptStr,
    /// Required JSON.
    Json,
    /// JSON where NULL means absent.
    OptJson,
    /// Pointer of a pointer-and-length pair (the length follows as its own slot).
    Bytes,
    /// A delivery body for the inbox: a pointer-and-length pair of any length (the core inbox
    /// answers one above its limit with 413, see
    /// `inbox_body_above_the_core_limit_is_answered_413`).
    Body,
    Len,
    Out,
}

/// An export, its argument kinds, and a call taking raw argument words.
struct Export {
    name: &'static str,
    kinds: &'static [Kind],
    call: fn(&[usize], *mut *mut sf_error) -> sf_result,
    /// Well-formed JSON for each JSON slot, in order (`CONFIG` = the sandbox configuration).
    json: &'static [&'static str],
}

fn p<T>(word: usize) -> *const T {
    word as *const T
}

fn m<T>(word: usize) -> *mut T {
    word as *mut T
}

pub(super) const PRODUCT: &str = r#"{"gd_no":"G1002","gd_name":"Gift card","actual_price":100000000,
    "retail_price":100000000,"currency":"USD","currency_decimals":2,"in_stock":5,
    "buy_limit_num":0,"payment_policy":"allowlist",
    "other_ipu_cnf":["recipient_email=Recipient email=1"]}"#;
const PAYMENT: &str = r#"{"order_no":"P1","external_reference":"R1","amount_minor":1250,
    "currency":"USD","currency_decimals":2,"status":"paid","test_mode":false,
    "expires_at":"2026-11-22T13:00:00Z"}"#;
const EXPECTATION: &str =
    r#"{"external_reference":"R1","amount_minor":1250,"currency":"USD","test_mode":false}"#;

/// Shorthand for an [`Export`] entry.
fn ex(
    name: &'static str,
    kinds: &'static [Kind],
    json: &'static [&'static str],
    call: fn(&[usize], *mut *mut sf_error) -> sf_result,
) -> Export {
    Export {
        name,
        kinds,
        call,
        json,
    }
}

/// Every fallible export with its argument kinds (the integer arguments get fixed values).
fn exports() -> Vec<Export> {
    use Kind::*;
    const ORDER: &str = r#"{"gd_no":"G1001","quantity":1,"payment_no":"ch_platform_coin"}"#;
    const CREATE: &str = r#"{"external_reference":"R1","amount_minor":1250,"currency":"USD"}"#;
    const VERIFY: &[Kind] = &[Verifier, OptStr, OptStr, OptStr, Bytes, Len, Out];
    const VERIFY_BODY: &[Kind] = &[Verifier, OptStr, OptStr, OptStr, Bytes, Len];
    const SECRETS: &str = r#"["whsec_0123456789abcdef0123456789abcdef"]"#;
    vec![
        ex("sf_client_new", &[Json, Out], &["CONFIG"], |a, e| unsafe {
            sf_client_new(p(a[0]), m(a[1]), e)
        }),
        ex(
            "sf_client_persistent",
            &[Json, Out],
            &["CONFIG"],
            |a, e| unsafe { sf_client_persistent(p(a[0]), m(a[1]), e) },
        ),
        ex("sf_config_from_env", &[Out], &[], |a, e| unsafe {
            sf_config_from_env(m(a[0]), e)
        }),
        ex(
            "sf_client_authenticate",
            &[Client, Out],
            &[],
            |a, e| unsafe { sf_client_authenticate(p(a[0]), m(a[1]), e) },
        ),
        ex(
            "sf_client_shared_state",
            &[Client, Out],
            &[],
            |a, e| unsafe { sf_client_shared_state(p(a[0]), m(a[1]), e) },
        ),
        ex(
            "sf_merchant_profile_get",
            &[Client, OptStr, Out],
            &[],
            |a, e| unsafe { sf_merchant_profile_get(p(a[0]), p(a[1]), m(a[2]), e) },
        ),
        ex(
            "sf_products_list",
            &[Client, OptStr, OptJson, Out],
            &["{}"],
            |a, e| unsafe { sf_products_list(p(a[0]), p(a[1]), p(a[2]), m(a[3]), e) },
        ),
        ex("sf_userinfo_get", &[Client, Str, Out], &[], |a, e| unsafe {
            sf_userinfo_get(p(a[0]), p(a[1]), m(a[2]), e)
        }),
        ex(
            "sf_order_create",
            &[Client, Str, Json, Out],
            &[ORDER],
            |a, e| unsafe { sf_order_create(p(a[0]), p(a[1]), p(a[2]), m(a[3]), e) },
        ),
        ex(
            "sf_order_get",
            &[Client, Str, Str, Out],
            &[],
            |a, e| unsafe { sf_order_get(p(a[0]), p(a[1]), p(a[2]), m(a[3]), e) },
        ),
        ex(
            "sf_payment_start",
            &[Client, Str, Str, Str, Out],
            &[],
            |a, e| unsafe { sf_payment_start(p(a[0]), p(a[1]), p(a[2]), p(a[3]), m(a[4]), e) },
        ),
        ex(
            "sf_payment_status",
            &[Client, Str, Str, Out],
            &[],
            |a, e| unsafe { sf_payment_status(p(a[0]), p(a[1]), p(a[2]), m(a[3]), e) },
        ),
        ex(
            "sf_payment_wait",
            &[Client, Str, Str, Out],
            &[],
            |a, e| unsafe { sf_payment_wait(p(a[0]), p(a[1]), p(a[2]), 10, 10, m(a[3]), e) },
        ),
        ex(
            "sf_other_ipu_build",
            &[Json, Json, Out],
            &[PRODUCT, r#"{"recipient_email":"a@b.example"}"#],
            |a, e| unsafe { sf_other_ipu_build(p(a[0]), p(a[1]), m(a[2]), e) },
        ),
        ex(
            "sf_other_ipu_fields",
            &[Json, Out],
            &[PRODUCT],
            |a, e| unsafe { super::other_ipu::sf_other_ipu_fields(p(a[0]), m(a[1]), e) },
        ),
        ex("sf_money_to_minor", &[Str, Out], &[], |a, e| unsafe {
            super::money::sf_money_to_minor(p(a[0]), 2, m(a[1]), e)
        }),
        ex("sf_money_from_minor", &[Out], &[], |a, e| unsafe {
            super::money::sf_money_from_minor(1250, 2, m(a[0]), e)
        }),
        ex("sf_fixed_point8_parse", &[Str, Out], &[], |a, e| unsafe {
            super::money::sf_fixed_point8_parse(p(a[0]), m(a[1]), e)
        }),
        ex("sf_fixed_point8_format", &[Out], &[], |a, e| unsafe {
            super::money::sf_fixed_point8_format(1_250_000_000, 2, m(a[0]), e)
        }),
        ex("sf_idempotency_key_generate", &[Out], &[], |a, e| unsafe {
            super::idempotency::sf_idempotency_key_generate(m(a[0]), e)
        }),
        ex("sf_channels_list", &[Client, Out], &[], |a, e| unsafe {
            sf_channels_list(p(a[0]), m(a[1]), e)
        }),
        ex(
            "sf_merchant_payment_create",
            &[Client, Json, Out],
            &[CREATE],
            |a, e| unsafe { sf_merchant_payment_create(p(a[0]), p(a[1]), m(a[2]), e) },
        ),
        ex(
            "sf_merchant_payment_get",
            &[Client, Str, Out],
            &[],
            |a, e| unsafe { sf_merchant_payment_get(p(a[0]), p(a[1]), m(a[2]), e) },
        ),
        ex(
            "sf_merchant_payments_list",
            &[Client, Json, Out],
            &[r#"{"order_no":"P1"}"#],
            |a, e| unsafe { sf_merchant_payments_list(p(a[0]), p(a[1]), m(a[2]), e) },
        ),
        ex(
            "sf_notification_records_list",
            &[Client, Str, Out],
            &[],
            |a, e| unsafe { sf_notification_records_list(p(a[0]), p(a[1]), 0, m(a[2]), e) },
        ),
        ex(
            "sf_notification_requeue",
            &[Client, Str, Str, Out],
            &[],
            |a, e| unsafe { sf_notification_requeue(p(a[0]), p(a[1]), p(a[2]), m(a[3]), e) },
        ),
        ex(
            "sf_reconcile",
            &[Client, Json, Out],
            &[r#"{"records":[]}"#],
            |a, e| unsafe { super::reconcile::sf_reconcile(p(a[0]), p(a[1]), 2, m(a[2]), e) },
        ),
        ex(
            "sf_webhook_verifier_new",
            &[Json, Out],
            &[r#"["s1"]"#],
            |a, e| unsafe { sf_webhook_verifier_new(p(a[0]), m(a[1]), e) },
        ),
        ex("sf_webhook_verify", VERIFY, &[], |a, e| unsafe {
            sf_webhook_verify(
                p(a[0]),
                p(a[1]),
                p(a[2]),
                p(a[3]),
                p(a[4]),
                a[5],
                m(a[6]),
                e,
            )
        }),
        ex("sf_webhook_verify_at", VERIFY, &[], |a, e| unsafe {
            sf_webhook_verify_at(
                p(a[0]),
                p(a[1]),
                p(a[2]),
                p(a[3]),
                p(a[4]),
                a[5],
                0,
                m(a[6]),
                e,
            )
        }),
        ex("sf_webhook_verify_body", VERIFY_BODY, &[], |a, e| unsafe {
            sf_webhook_verify_body(p(a[0]), p(a[1]), p(a[2]), p(a[3]), p(a[4]), a[5], e)
        }),
        ex(
            "sf_webhook_verify_body_at",
            VERIFY_BODY,
            &[],
            |a, e| unsafe {
                sf_webhook_verify_body_at(p(a[0]), p(a[1]), p(a[2]), p(a[3]), p(a[4]), a[5], 0, e)
            },
        ),
        ex(
            "sf_webhook_sign",
            &[Str, Bytes, Len, Out],
            &[],
            |a, e| unsafe { sf_webhook_sign(p(a[0]), 0, p(a[1]), a[2], m(a[3]), e) },
        ),
        ex(
            "sf_inbox_open",
            &[Str, Json, OptJson, Out],
            &[SECRETS, "{}"],
            |a, e| unsafe { sf_inbox_open(p(a[0]), p(a[1]), p(a[2]), m(a[3]), e) },
        ),
        ex(
            "sf_inbox_receive",
            &[Inbox, OptStr, OptStr, OptStr, Body, Len, Out, Out],
            &[],
            |a, e| unsafe {
                sf_inbox_receive(
                    p(a[0]),
                    p(a[1]),
                    p(a[2]),
                    p(a[3]),
                    p(a[4]),
                    a[5],
                    m(a[6]),
                    m(a[7]),
                    e,
                )
            },
        ),
        ex(
            "sf_inbox_receive_at",
            &[Inbox, OptStr, OptStr, OptStr, Body, Len, Out, Out],
            &[],
            |a, e| unsafe {
                sf_inbox_receive_at(
                    p(a[0]),
                    0,
                    p(a[1]),
                    p(a[2]),
                    p(a[3]),
                    p(a[4]),
                    a[5],
                    m(a[6]),
                    m(a[7]),
                    e,
                )
            },
        ),
        ex("sf_inbox_claim", &[Inbox, Out], &[], |a, e| unsafe {
            sf_inbox_claim(p(a[0]), 1, 1000, m(a[1]), e)
        }),
        ex(
            "sf_inbox_complete",
            &[Inbox, Str, Str],
            &[],
            |a, e| unsafe { sf_inbox_complete(p(a[0]), p(a[1]), p(a[2]), e) },
        ),
        ex("sf_inbox_release", &[Inbox, Str, Str], &[], |a, e| unsafe {
            sf_inbox_release(p(a[0]), p(a[1]), p(a[2]), e)
        }),
        ex("sf_inbox_status", &[Inbox, Out], &[], |a, e| unsafe {
            sf_inbox_status(p(a[0]), m(a[1]), e)
        }),
        ex("sf_inbox_purge", &[Inbox, Out], &[], |a, e| unsafe {
            sf_inbox_purge(p(a[0]), 1000, m(a[1]), e)
        }),
        ex(
            "sf_inbox_replay",
            &[Inbox, Json, Out],
            &[r#"{"event":"n-1"}"#],
            |a, e| unsafe { sf_inbox_replay(p(a[0]), p(a[1]), m(a[2]), e) },
        ),
        ex(
            "sf_inbox_completion_sql",
            &[Inbox, Out],
            &[],
            |a, e| unsafe { sf_inbox_completion_sql(p(a[0]), m(a[1]), e) },
        ),
        ex(
            "sf_inbox_enter_reconciled",
            &[Inbox, Json, Out],
            &[PAYMENT],
            |a, e| unsafe { sf_inbox_enter_reconciled(p(a[0]), p(a[1]), m(a[2]), e) },
        ),
        ex("sf_inbox_watermarks", &[Inbox, Out], &[], |a, e| unsafe {
            sf_inbox_watermarks(p(a[0]), m(a[1]), e)
        }),
        ex(
            "sf_payment_expectation_check",
            &[Json, Json],
            &[PAYMENT, EXPECTATION],
            |a, e| unsafe { sf_payment_expectation_check(p(a[0]), p(a[1]), e) },
        ),
    ]
}

/// Inputs that are valid as far as the boundary can tell (the calls themselves are never made
/// with only these: one argument is always bad).
struct Good {
    client: *mut sf_client,
    verifier: *mut sf_webhook_verifier,
    inbox: *mut sf_inbox,
    text: CString,
    config: CString,
    bytes: Vec<u8>,
}

/// Bad inputs, each with the result code it must give.
struct Bad {
    invalid_utf8: Vec<u8>,
    invalid_json: CString,
    wrong_shape: CString,
    oversized: CString,
}

/// Rule (issue 5, done-when): every export fed NULLs, invalid UTF-8, invalid JSON and oversized
/// input returns its own result code, writes no output, nothing crashes, and the client still
/// works afterwards (proved by a real call to the sandbox).
#[test]
fn every_export_refuses_bad_input_with_its_own_code_and_the_client_still_works() {
    let env = Env::start();
    let mut verifier = ptr::null_mut();
    let secrets = CString::new(r#"["whsec_0123456789abcdef0123456789abcdef"]"#).unwrap();
    assert_eq!(
        unsafe { sf_webhook_verifier_new(secrets.as_ptr(), &mut verifier, ptr::null_mut()) },
        sf_result::Ok
    );
    // An inbox on a file in a directory of its own (the bad-input calls never reach it).
    let dir = std::env::temp_dir().join(format!("sf-abi-inbox-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = CString::new(format!("sqlite://{}", dir.join("inbox.db").display())).unwrap();
    let mut inbox = ptr::null_mut();
    assert_eq!(
        unsafe {
            sf_inbox_open(
                url.as_ptr(),
                secrets.as_ptr(),
                ptr::null(),
                &mut inbox,
                ptr::null_mut(),
            )
        },
        sf_result::Ok
    );
    let good = Good {
        client: env.client(),
        verifier,
        inbox,
        text: CString::new("G1001").unwrap(),
        config: env.config_json(),
        bytes: b"{}".to_vec(),
    };
    let bad = Bad {
        invalid_utf8: vec![b'{', 0xC3, 0x28, b'}', 0],
        invalid_json: CString::new("{\"gd_no\": ").unwrap(),
        wrong_shape: CString::new("[1, 2, 3]").unwrap(),
        oversized: CString::new(vec![b' '; MAX_INPUT_BYTES + 1]).unwrap(),
    };
    let exports = exports();
    let in_header = super::tests::exported_names();
    let fallible: Vec<&String> = in_header
        .iter()
        .filter(|n| {
            !n.starts_with("sf_error_")
                && !n.starts_with("sf_cancel_")
                && !n.starts_with("sf_log_")
                && !n.ends_with("_free")
                && ![
                    "sf_version",
                    "sf_max_input_bytes",
                    "sf_status_version_decision",
                ]
                .contains(&n.as_str())
        })
        .collect();
    let covered: Vec<&str> = exports.iter().map(|e| e.name).collect();
    for name in &fallible {
        assert!(
            covered.contains(&name.as_str()),
            "{name} is not covered by this test"
        );
    }

    let mut cases = 0;
    for export in &exports {
        let good_json: Vec<CString> = export
            .json
            .iter()
            .map(|j| match *j {
                "CONFIG" => good.config.clone(),
                j => CString::new(j).unwrap(),
            })
            .collect();
        let json_slot = |i: usize| {
            export.kinds[..i]
                .iter()
                .filter(|k| matches!(k, Kind::Json | Kind::OptJson))
                .count()
        };
        for (index, kind) in export.kinds.iter().enumerate() {
            let mut variants: Vec<(usize, Option<usize>, sf_result)> = Vec::new();
            let word = |s: &CString| s.as_ptr() as usize;
            match kind {
                Kind::Client | Kind::Verifier | Kind::Inbox | Kind::Out => {
                    variants.push((0, None, sf_result::NullArgument))
                }
                Kind::Str | Kind::OptStr | Kind::Json | Kind::OptJson => {
                    if matches!(kind, Kind::Str | Kind::Json) {
                        variants.push((0, None, sf_result::NullArgument));
                    }
                    variants.push((
                        bad.invalid_utf8.as_ptr() as usize,
                        None,
                        sf_result::InvalidUtf8,
                    ));
                    variants.push((word(&bad.oversized), None, sf_result::InputTooLarge));
                    if matches!(kind, Kind::Json | Kind::OptJson) {
                        variants.push((word(&bad.invalid_json), None, sf_result::InvalidJson));
                        variants.push((word(&bad.wrong_shape), None, sf_result::InvalidArgument));
                    }
                }
                Kind::Bytes => {
                    variants.push((0, Some(3), sf_result::NullArgument));
                    variants.push((
                        good.bytes.as_ptr() as usize,
                        Some(MAX_INPUT_BYTES + 1),
                        sf_result::InputTooLarge,
                    ));
                }
                Kind::Body => variants.push((0, Some(3), sf_result::NullArgument)),
                Kind::Len => {}
            }
            for (bad_word, len, expected) in variants {
                // Out-parameter slots hold a sentinel that must survive every failure.
                let sentinel = 0x5a5a_usize as *mut c_void;
                let mut slot = sentinel;
                let args: Vec<usize> = export
                    .kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        if i == index {
                            return bad_word;
                        }
                        if *k == Kind::Len
                            && i == index + 1
                            && let Some(len) = len
                        {
                            return len;
                        }
                        match k {
                            Kind::Client => good.client as usize,
                            Kind::Verifier => good.verifier as usize,
                            Kind::Inbox => good.inbox as usize,
                            Kind::Str | Kind::OptStr => good.text.as_ptr() as usize,
                            Kind::Json | Kind::OptJson => good_json[json_slot(i)].as_ptr() as usize,
                            Kind::Bytes | Kind::Body => good.bytes.as_ptr() as usize,
                            Kind::Len => good.bytes.len(),
                            Kind::Out => &mut slot as *mut *mut c_void as usize,
                        }
                    })
                    .collect();
                let mut error = ptr::null_mut();
                let result = (export.call)(&args, &mut error);
                let detail = error_json(error).unwrap_or_default();
                assert_eq!(
                    result, expected,
                    "{} argument #{index}: {detail}",
                    export.name
                );
                assert_eq!(detail["result"], expected as u32, "{}", export.name);
                assert_eq!(
                    slot, sentinel,
                    "{} wrote its output on failure",
                    export.name
                );
                // The same failure without an error_out still returns its code.
                assert_eq!((export.call)(&args, ptr::null_mut()), expected);
                cases += 1;
            }
        }
    }
    assert!(cases > 100, "only {cases} cases");

    // The client still works: a real call over HTTP to the sandbox.
    let mut profile = ptr::null_mut();
    let mut error = ptr::null_mut();
    let result =
        unsafe { sf_merchant_profile_get(good.client, ptr::null(), &mut profile, &mut error) };
    assert_eq!(result, sf_result::Ok, "{:?}", error_json(error));
    assert_eq!(take(profile)["merchant_no"], seed::MERCHANT_NO);
    unsafe {
        sf_client_free(good.client);
        sf_webhook_verifier_free(good.verifier);
        sf_inbox_free(good.inbox);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One body limit for every binding, the core inbox's: `sf_inbox_receive` (and `_at`) hand a
/// body above it to the core, which answers 413 `body_too_large` (counted, nothing stored) as a
/// successful call, not `SF_RESULT_INPUT_TOO_LARGE` (which a PHP host answered 503 on every
/// retry); a body of exactly the limit reaches verification.
#[test]
fn inbox_body_above_the_core_limit_is_answered_413() {
    let dir = crate::store::test_servers::ScratchDir::new();
    let url = CString::new(format!(
        "sqlite://{}",
        dir.path().join("inbox.db").display()
    ))
    .unwrap();
    let secrets = CString::new(r#"["whsec_0123456789abcdef0123456789abcdef"]"#).unwrap();
    let mut inbox = ptr::null_mut();
    assert_eq!(
        unsafe {
            sf_inbox_open(
                url.as_ptr(),
                secrets.as_ptr(),
                ptr::null(),
                &mut inbox,
                ptr::null_mut(),
            )
        },
        sf_result::Ok
    );
    let limit = crate::inbox::MAX_BODY_BYTES;
    for (len, at, status, reason) in [
        (limit + 1, false, 413, "body_too_large"),
        (limit + 1, true, 413, "body_too_large"),
        (64 << 20, false, 413, "body_too_large"),
        (limit, false, 400, "missing_header"),
    ] {
        let body = vec![b' '; len];
        let mut http = 0u16;
        let mut receipt = ptr::null_mut();
        let mut error = ptr::null_mut();
        let result = unsafe {
            if at {
                sf_inbox_receive_at(
                    inbox,
                    1_800_000_000,
                    ptr::null(),
                    ptr::null(),
                    ptr::null(),
                    body.as_ptr(),
                    body.len(),
                    &mut http,
                    &mut receipt,
                    &mut error,
                )
            } else {
                sf_inbox_receive(
                    inbox,
                    ptr::null(),
                    ptr::null(),
                    ptr::null(),
                    body.as_ptr(),
                    body.len(),
                    &mut http,
                    &mut receipt,
                    &mut error,
                )
            }
        };
        assert_eq!(result, sf_result::Ok, "{len}: {:?}", error_json(error));
        let receipt = take(receipt);
        assert_eq!(
            (http, receipt["status"].as_u64()),
            (status, Some(u64::from(status)))
        );
        assert_eq!(receipt["reason"], reason, "{receipt}");
        assert_eq!(receipt["outcome"], "rejected");
        let answer: serde_json::Value =
            serde_json::from_str(receipt["body"].as_str().unwrap()).unwrap();
        assert_eq!(answer["reason"], reason);
    }
    let mut status = ptr::null_mut();
    assert_eq!(
        unsafe { sf_inbox_status(inbox, &mut status, ptr::null_mut()) },
        sf_result::Ok
    );
    let status = take(status);
    assert_eq!(status["rejected"]["body_too_large"], 3, "{status}");
    assert_eq!(status["pending"], 0, "{status}");
    assert!(status["contract_violations"].is_object(), "{status}");
    unsafe { sf_inbox_free(inbox) };
}
