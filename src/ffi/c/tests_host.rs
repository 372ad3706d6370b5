//! Issue 9, "Live inside real hosts": strict input, cancellation, fork safety, persistent
//! clients and the log sink, through the C ABI.

use std::ffi::{CString, c_char};
use std::ptr;
use std::time::{Duration, Instant};

use storefront_sandbox::seed;

use super::cancel::*;
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
        failure.message.into_string(),
    )
}

/// Strict input: a request object given as a JSON array is refused, never read positionally
/// (`[1, 2]` would otherwise fill the first two fields; `["R1", 1250, "USD"]` a payment).
#[test]
fn request_objects_are_never_read_from_arrays() {
    let (result, _, message) = refused::<CreateMerchantPayment>(r#"["R1", "key-1", 1250, "USD"]"#);
    assert_ne!(result, sf_result::Ok, "{message}");
    assert!(message.contains("a JSON object"), "{message}");
    let (result, _, message) = refused::<Config>(r#"["https://a.example/api"]"#);
    assert_ne!(result, sf_result::Ok, "{message}");
    let (result, _, message) =
        refused::<ListMerchantPaymentsQuery>(r#"{"order_no":"P1","limit":[5]}"#);
    assert_ne!(result, sf_result::Ok, "{message}");
    // PHP's json_encode writes an empty array as `[]`: an empty object, never positional.
    let config = r#"{"base_url":"https://a.example/api","token_endpoint":"https://a.example/t",
        "client_id":"c","retry":[]}"#;
    let parsed: Config = super::io::parse_json(config, "config_json").unwrap();
    assert_eq!(parsed.retry, crate::RetryPolicy::default());
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

/// An order of alice's paid by card and never completed: its payment status stays 0.
fn unpaid_card_order(env: &Env, client: *mut sf_client, token: &CString) -> CString {
    let request = c(&format!(
        r#"{{"gd_no":"{}","quantity":1,"payment_no":"{}"}}"#,
        seed::PRODUCT_BEANS,
        seed::CHANNEL_CARD_USD
    ));
    let mut out = ptr::null_mut();
    let mut error = ptr::null_mut();
    let r = unsafe {
        sf_order_create(
            client,
            token.as_ptr(),
            request.as_ptr(),
            &mut out,
            &mut error,
        )
    };
    assert_eq!(r, sf_result::Ok, "{:?}", error_json(error));
    let order_no = c(take(out)["order_no"].as_str().unwrap());
    let r = unsafe {
        sf_payment_start(
            client,
            token.as_ptr(),
            order_no.as_ptr(),
            c(seed::CHANNEL_CARD_USD).as_ptr(),
            &mut out,
            &mut error,
        )
    };
    assert_eq!(r, sf_result::Ok, "{:?}", error_json(error));
    take(out);
    let _ = env;
    order_no
}

/// Rule (issue 9 item 2): a payment wait that would never end, cancelled from another thread
/// after 200 ms, returns `SF_RESULT_CANCELLED` promptly; the thread's later calls in the scope
/// are refused before anything is sent; after the scope, calls work again.
#[test]
fn a_cancelled_wait_returns_promptly() {
    let env = Env::start();
    let client = env.client();
    let token = env.user_token(seed::USER_ALICE);
    let order_no = unpaid_card_order(&env, client, &token);

    let cancel = sf_cancel_token_new();
    assert!(!cancel.is_null());
    assert!(!unsafe { sf_cancel_token_is_cancelled(cancel) });
    let (client_word, cancel_word) = (client as usize, cancel as usize);
    let waiter = std::thread::spawn(move || {
        let client = client_word as *const sf_client;
        unsafe { sf_cancel_scope_enter(cancel_word as *const sf_cancel_token) };
        let mut out = ptr::null_mut();
        let mut error = ptr::null_mut();
        let r = unsafe {
            sf_payment_wait(
                client,
                token.as_ptr(),
                order_no.as_ptr(),
                50,
                60_000,
                &mut out,
                &mut error,
            )
        };
        let ended = Instant::now();
        let detail = error_json(error);
        assert!(out.is_null());
        // Later calls in the scope are refused at once, nothing sent.
        let mut error = ptr::null_mut();
        let again = unsafe { sf_client_authenticate(client, &mut out, &mut error) };
        let again_detail = error_json(error).unwrap();
        sf_cancel_scope_exit();
        // Outside the scope the thread's calls run again.
        let mut error = ptr::null_mut();
        let after = unsafe { sf_client_authenticate(client, &mut out, &mut error) };
        assert_eq!(after, sf_result::Ok, "{:?}", error_json(error));
        take(out);
        (r, detail, ended, again, again_detail)
    });
    std::thread::sleep(Duration::from_millis(200));
    let cancelled_at = Instant::now();
    unsafe { sf_cancel_token_cancel(cancel) };
    unsafe { sf_cancel_token_cancel(cancel) }; // idempotent
    let (r, detail, ended, again, again_detail) = waiter.join().unwrap();
    assert_eq!(r, sf_result::Cancelled, "{detail:?}");
    let detail = detail.unwrap();
    assert_eq!(detail["result"], 407);
    assert_eq!(detail["result_name"], "cancelled");
    let took = ended.saturating_duration_since(cancelled_at);
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(unsafe { sf_cancel_token_is_cancelled(cancel) });
    assert_eq!(again, sf_result::Cancelled);
    assert!(
        again_detail["message"]
            .as_str()
            .unwrap()
            .contains("nothing was sent"),
        "{again_detail}"
    );
    unsafe {
        sf_cancel_token_free(cancel);
        sf_cancel_token_cancel(ptr::null());
        sf_cancel_token_free(ptr::null_mut());
        sf_cancel_scope_enter(ptr::null());
        sf_cancel_scope_exit();
        sf_cancel_scope_exit(); // unbalanced exit: nothing happens
        sf_client_free(client);
    }
    assert!(!unsafe { sf_cancel_token_is_cancelled(ptr::null()) });
}

/// Rule (issue 9 item 2): cancelling a never-re-sent call after it started says the outcome is
/// unknown.
#[test]
fn a_cancelled_order_creation_says_the_outcome_is_unknown() {
    let env = Env::start();
    let client = env.client();
    let token = env.user_token(seed::USER_ALICE);
    // The next order creation waits 2 s in the sandbox before it is handled.
    env.control(
        "/faults",
        serde_json::json!({"method": "POST", "path": "/api/openapi/v1/orders", "latency_ms": 2000}),
    );
    let cancel = sf_cancel_token_new();
    let cancel_word = cancel as usize;
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        unsafe { sf_cancel_token_cancel(cancel_word as *const sf_cancel_token) };
    });
    let request = c(&format!(
        r#"{{"gd_no":"{}","quantity":1,"payment_no":"{}"}}"#,
        seed::PRODUCT_BEANS,
        seed::CHANNEL_CARD_USD
    ));
    let mut out = ptr::null_mut();
    let mut error = ptr::null_mut();
    let started = Instant::now();
    unsafe { sf_cancel_scope_enter(cancel) };
    let r = unsafe {
        sf_order_create(
            client,
            token.as_ptr(),
            request.as_ptr(),
            &mut out,
            &mut error,
        )
    };
    sf_cancel_scope_exit();
    canceller.join().unwrap();
    assert!(started.elapsed() < Duration::from_millis(1500));
    assert_eq!(r, sf_result::Cancelled);
    let detail = error_json(error).unwrap();
    assert!(
        detail["message"]
            .as_str()
            .unwrap()
            .contains("outcome is unknown"),
        "{detail}"
    );
    unsafe {
        sf_cancel_token_free(cancel);
        sf_client_free(client);
    }
}

/// `GET` on a sandbox control endpoint, returning the JSON answer.
fn control_get(env: &Env, path_and_query: &str) -> serde_json::Value {
    use std::io::{Read, Write};
    let address = env.sandbox.address();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {}{path_and_query} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n",
        seed::CONTROL_PREFIX
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 2"), "{head}\n{body}");
    serde_json::from_str(body).unwrap()
}

/// How many token requests the sandbox received.
fn token_requests(env: &Env) -> usize {
    let all = control_get(env, "/requests?method=POST");
    all.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == seed::TOKEN_PATH)
        .count()
}

fn persistent(config: &CString) -> *mut sf_client {
    let mut client = ptr::null_mut();
    let mut error = ptr::null_mut();
    let r = unsafe { sf_client_persistent(config.as_ptr(), &mut client, &mut error) };
    assert_eq!(r, sf_result::Ok, "{:?}", error_json(error));
    assert!(!client.is_null());
    client
}

/// Rule (issue 9 item 4): persistent handles of one configuration share one client: five calls
/// through five handles (freed in between, as a PHP request would) make one token request; key
/// order does not matter; another configuration (another secret) is another client.
#[test]
fn persistent_handles_share_one_client_and_its_token() {
    let env = Env::start();
    let config = env.config_json();
    let base = token_requests(&env);
    let first = persistent(&config);
    for _ in 0..5 {
        let handle = persistent(&config);
        assert_ne!(handle, first);
        assert!(unsafe { &*handle }.shares_with(unsafe { &*first }));
        let mut out = ptr::null_mut();
        let mut error = ptr::null_mut();
        let r = unsafe { sf_channels_list(handle, &mut out, &mut error) };
        assert_eq!(r, sf_result::Ok, "{:?}", error_json(error));
        take(out);
        unsafe { sf_client_free(handle) };
    }
    assert_eq!(token_requests(&env) - base, 1, "one token for five calls");

    // The same settings in another key order (and a default spelled out) share it too.
    let mut value: serde_json::Value = serde_json::from_str(config.to_str().unwrap()).unwrap();
    value["max_response_bytes"] = serde_json::json!(4 * 1024 * 1024);
    let reordered: std::collections::BTreeMap<String, serde_json::Value> =
        serde_json::from_value(value.clone()).unwrap();
    let reordered = c(&serde_json::to_string(&reordered).unwrap());
    let same = persistent(&reordered);
    assert!(unsafe { &*same }.shares_with(unsafe { &*first }));
    // Another secret is another client.
    value["client_secret"] = serde_json::json!("another-secret");
    let other = persistent(&c(&value.to_string()));
    assert!(!unsafe { &*other }.shares_with(unsafe { &*first }));
    // sf_client_new never shares.
    let fresh = env.client();
    assert!(!unsafe { &*fresh }.shares_with(unsafe { &*first }));
    unsafe {
        sf_client_free(same);
        sf_client_free(other);
        sf_client_free(fresh);
        sf_client_free(first);
    }
    // Strict input applies here too.
    let mut client = ptr::null_mut();
    let mut error = ptr::null_mut();
    let bad = c(&config
        .to_str()
        .unwrap()
        .replacen('{', r#"{"atempt_timeout_ms":1,"#, 1));
    let r = unsafe { sf_client_persistent(bad.as_ptr(), &mut client, &mut error) };
    assert_eq!(r, sf_result::Validation);
    assert_eq!(error_json(error).unwrap()["field"], "atempt_timeout_ms");
    assert!(client.is_null());
}

unsafe extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn kill(pid: i32, signal: i32) -> i32;
    fn _exit(status: i32) -> !;
}

/// Forks; the child runs `child` and exits with its code (never returning to the test
/// harness); the parent waits at most 20 s and returns the child's exit status.
fn in_child(child: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child only runs `child` (the library's calls) and `_exit`s.
    let pid = unsafe { fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(98);
        // SAFETY: ends the child without running the harness's exit handlers.
        unsafe { _exit(code) };
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut status = 0;
        // WNOHANG = 1
        let done = unsafe { waitpid(pid, &mut status, 1) };
        if done == pid {
            // WIFEXITED: low 7 bits 0; WEXITSTATUS: bits 8-15.
            return if status & 0x7f == 0 {
                (status >> 8) & 0xff
            } else {
                200 + (status & 0x7f)
            };
        }
        if Instant::now() > deadline {
            unsafe { kill(pid, 9) };
            unsafe { waitpid(pid, &mut status, 0) };
            panic!("the forked child hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Rule (issue 9 item 3): a client (plain or persistent) used before `fork()` works in the child
/// (fresh runtime, connections and token cache built from the saved configuration; nothing
/// hangs) and still in the parent afterwards; freeing it in the child does not wait for the
/// parent's threads.
#[test]
fn clients_survive_fork_in_child_and_parent() {
    let env = Env::start();
    let client = env.client();
    let config = env.config_json();
    let shared = persistent(&config);
    let call = |client: *mut sf_client| {
        let mut out = ptr::null_mut();
        let mut error = ptr::null_mut();
        let r = unsafe { sf_channels_list(client, &mut out, &mut error) };
        if r == sf_result::Ok {
            unsafe { super::io::sf_string_free(out) };
        } else {
            unsafe { super::error::sf_error_free(error) };
        }
        r
    };
    // Warm up both in the parent: runtimes running, tokens cached, connections pooled.
    assert_eq!(call(client), sf_result::Ok);
    assert_eq!(call(shared), sf_result::Ok);
    let (client_word, shared_word) = (client as usize, shared as usize);
    let status = in_child(move || {
        let (client, shared) = (client_word as *mut sf_client, shared_word as *mut sf_client);
        let mut code = 0;
        if call(client) != sf_result::Ok {
            code |= 1;
        }
        if call(shared) != sf_result::Ok {
            code |= 2;
        }
        // A persistent handle made in the child shares the rebuilt client.
        let again = persistent(&config);
        if !unsafe { &*again }.shares_with(unsafe { &*shared }) || call(again) != sf_result::Ok {
            code |= 4;
        }
        unsafe {
            sf_client_free(again);
            sf_client_free(shared);
            sf_client_free(client);
        }
        code
    });
    assert_eq!(
        status, 0,
        "child failed (bits: 1 client, 2 persistent, 4 registry)"
    );
    assert_eq!(call(client), sf_result::Ok);
    assert_eq!(call(shared), sf_result::Ok);
    unsafe {
        sf_client_free(shared);
        sf_client_free(client);
    }
}

static CALLBACK_LINES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn collect_line(user_data: *mut std::ffi::c_void, line: *const c_char) {
    assert_eq!(user_data as usize, 0x1234);
    let line = unsafe { std::ffi::CStr::from_ptr(line) }
        .to_str()
        .unwrap()
        .to_owned();
    CALLBACK_LINES.lock().unwrap().push(line);
}

/// Rule (issue 9 item 5): the callback and the drained buffer receive one JSON line per SDK
/// event and request span close, with method, path template, status, attempt and duration, and
/// never the client secret or a token.
#[test]
fn log_callback_and_buffer_carry_request_records_without_secrets() {
    use super::io::sf_string_free;
    use super::log::*;
    let env = Env::start();
    let client = env.client();
    let token = env.user_token(seed::USER_ALICE);
    unsafe { sf_log_set_callback(Some(collect_line), 0x1234 as *mut std::ffi::c_void, 4) };
    sf_log_buffer_enable(5, 1000);
    let mut out = ptr::null_mut();
    let mut error = ptr::null_mut();
    let r = unsafe { sf_channels_list(client, &mut out, &mut error) };
    assert_eq!(r, sf_result::Ok, "{:?}", error_json(error));
    take(out);
    let r = unsafe { sf_merchant_profile_get(client, token.as_ptr(), &mut out, &mut error) };
    assert_eq!(r, sf_result::Ok, "{:?}", error_json(error));
    take(out);
    unsafe { sf_log_set_callback(None, ptr::null_mut(), 0) };

    let drained = sf_log_drain();
    assert!(!drained.is_null());
    let buffered = unsafe { std::ffi::CStr::from_ptr(drained) }
        .to_str()
        .unwrap()
        .to_owned();
    unsafe { sf_string_free(drained) };
    let from_callback = CALLBACK_LINES.lock().unwrap().join("\n");
    for (source, text) in [("callback", &from_callback), ("buffer", &buffered)] {
        let records: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect();
        let closes: Vec<&serde_json::Value> = records
            .iter()
            .filter(|r| r["message"] == "storefront.request closed")
            .collect();
        let channels = closes
            .iter()
            .find(|r| r["fields"]["path"] == "/openapi/v1/merchant-payment-channels")
            .unwrap_or_else(|| panic!("{source}: no request close for channels in {text}"));
        assert_eq!(channels["fields"]["method"], "GET", "{channels}");
        assert_eq!(channels["fields"]["status"], 200, "{channels}");
        assert_eq!(channels["fields"]["attempt"], 1, "{channels}");
        assert!(channels["fields"]["duration_ms"].is_u64(), "{channels}");
        assert_eq!(channels["level"], "info");
        assert!(
            channels["target"]
                .as_str()
                .unwrap()
                .starts_with("storefront")
        );
        assert!(
            records.iter().any(|r| r["message"] == "request finished"
                && r["level"] == "debug"
                && r["fields"]["path"].is_string()),
            "{source}: {text}"
        );
        for secret in [
            seed::MERCHANT_CLIENT_SECRET,
            token.to_str().unwrap(),
            "Bearer",
            "access_token",
            "?",
        ] {
            assert!(
                !text.contains(secret),
                "{source} carries {secret:?}: {text}"
            );
        }
    }
    // Disabled: nothing buffered any more, the drain answers NULL.
    sf_log_buffer_enable(0, 0);
    assert!(sf_log_drain().is_null());
    unsafe { sf_client_free(client) };
}
