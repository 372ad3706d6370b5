//! Unit tests of the C layer: the exports are called from Rust exactly as C would call them.

use std::ffi::{CStr, CString, c_char};
use std::ptr;

use super::error::*;
use super::io::*;
use super::result::sf_result;

/// Reads a borrowed C string (test helper).
fn text(ptr: *const c_char) -> Option<String> {
    (!ptr.is_null()).then(|| unsafe { CStr::from_ptr(ptr) }.to_str().unwrap().to_owned())
}

/// Takes an owned error out of an `error_out` slot, returning its JSON and freeing it.
fn take_error(error: *mut sf_error) -> serde_json::Value {
    assert!(!error.is_null(), "a failure must write error_out");
    let json = text(unsafe { sf_error_json(error) }).unwrap();
    unsafe { sf_error_free(error) };
    serde_json::from_str(&json).unwrap()
}

/// The names and bodies of every `extern "C"` function in this module's sources.
fn exported_bodies() -> Vec<(String, String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi/c");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let is_test = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("tests"));
        if path.extension().is_none_or(|e| e != "rs") || is_test {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for (at, _) in source.match_indices("extern \"C\" fn ") {
            let rest = &source[at + "extern \"C\" fn ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let open = rest.find('{').expect("function body");
            found.push((file.clone(), name, rest[open + 1..].trim_start().to_owned()));
        }
    }
    found
}

/// Rule (ABI conventions): no panic crosses the boundary, so every exported body is exactly one
/// call of `boundary::call` or `boundary::value`, and every export is `#[unsafe(no_mangle)]`.
#[test]
fn every_export_goes_through_the_boundary() {
    let bodies = exported_bodies();
    assert!(bodies.len() >= 10, "found only {} exports", bodies.len());
    for (file, name, body) in &bodies {
        assert!(
            name.starts_with("sf_"),
            "{file}: export {name} lacks the sf_ prefix"
        );
        assert!(
            body.starts_with("boundary::call(") || body.starts_with("boundary::value("),
            "{file}: export {name} does not run inside the panic boundary"
        );
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi/c");
    let mut no_mangle = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.ends_with("tests.rs") {
            continue;
        }
        no_mangle += std::fs::read_to_string(&path)
            .unwrap()
            .matches("#[unsafe(no_mangle)]")
            .count();
    }
    assert_eq!(
        no_mangle,
        bodies.len(),
        "every no_mangle item must be an extern \"C\" fn"
    );
}

/// The function names declared by the shipped header.
pub(super) fn exported_names() -> Vec<String> {
    let header = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include/storefront.h"),
    )
    .unwrap();
    header
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .filter_map(|line| {
            let before = &line[..line.find('(')?];
            let name = before.rsplit([' ', '*']).next()?;
            name.starts_with("sf_").then(|| name.to_owned())
        })
        .collect()
}

/// Rule (ABI conventions): the shipped header declares exactly the exported functions, so it is
/// not stale and nothing is exported undocumented.
#[test]
fn header_declares_every_export() {
    let mut in_header = exported_names();
    let mut exported: Vec<String> = exported_bodies().into_iter().map(|(_, n, _)| n).collect();
    in_header.sort();
    exported.sort();
    assert_eq!(in_header, exported, "run .ci/regen-header");
}

/// Rule (ABI conventions): result numbers are stable and distinct; they are ABI.
#[test]
fn result_numbers_are_stable_and_distinct() {
    let mut numbers: Vec<u32> = sf_result::ALL.iter().map(|r| *r as u32).collect();
    assert_eq!(sf_result::Ok as u32, 0);
    assert_eq!(sf_result::NullArgument as u32, 1);
    assert_eq!(sf_result::InvalidUtf8 as u32, 2);
    assert_eq!(sf_result::InvalidJson as u32, 3);
    assert_eq!(sf_result::InputTooLarge as u32, 4);
    assert_eq!(sf_result::Panic as u32, 6);
    assert_eq!(sf_result::Api as u32, 100);
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), sf_result::ALL.len());
}

/// Rule (ABI conventions): a panic inside an export becomes `SF_RESULT_PANIC` with an error
/// object, and does not unwind into the caller.
#[test]
fn a_panic_becomes_a_result_code() {
    let mut error = ptr::null_mut();
    let result = super::boundary::call(&mut error, || panic!("boom"));
    assert_eq!(result, sf_result::Panic);
    let json = take_error(error);
    assert_eq!(json["result_name"], "panic");
    assert_eq!(super::boundary::value(7, || -> i32 { panic!("boom") }), 7);
}

/// Rule (ABI conventions): NULL, invalid UTF-8 and oversized strings each get their own code,
/// and nothing is read past the bound.
#[test]
fn string_arguments_are_checked() {
    unsafe {
        assert_eq!(
            str_arg(ptr::null(), "x").unwrap_err().result,
            sf_result::NullArgument
        );
        let bad = [0xffu8, 0xfe, 0];
        assert_eq!(
            str_arg(bad.as_ptr().cast(), "x").unwrap_err().result,
            sf_result::InvalidUtf8
        );
        let big = CString::new(vec![b'a'; MAX_INPUT_BYTES + 1]).unwrap();
        assert_eq!(
            str_arg(big.as_ptr(), "x").unwrap_err().result,
            sf_result::InputTooLarge
        );
        // No NUL at all within the bound: must stop at the bound, not read further.
        let unterminated = vec![b'a'; MAX_INPUT_BYTES + 1];
        assert_eq!(
            str_arg(unterminated.as_ptr().cast(), "x")
                .unwrap_err()
                .result,
            sf_result::InputTooLarge
        );
        let ok = CString::new("héllo").unwrap();
        assert_eq!(str_arg(ok.as_ptr(), "x").unwrap(), "héllo");
        assert_eq!(bytes_arg(ptr::null(), 0, "b").unwrap(), b"");
        assert_eq!(
            bytes_arg(ptr::null(), 3, "b").unwrap_err().result,
            sf_result::NullArgument
        );
        assert_eq!(
            bytes_arg(b"x".as_ptr(), MAX_INPUT_BYTES + 1, "b")
                .unwrap_err()
                .result,
            sf_result::InputTooLarge
        );
    }
}

/// Rule (ABI conventions): invalid JSON and well-formed JSON of the wrong shape differ.
#[test]
fn json_arguments_are_classified() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Shape {
        a: u32,
    }
    assert_eq!(
        parse_json::<Shape>("{", "j").unwrap_err().result,
        sf_result::InvalidJson
    );
    assert_eq!(
        parse_json::<Shape>("{\"a\":\"x\"}", "j")
            .unwrap_err()
            .result,
        sf_result::InvalidArgument
    );
    assert_eq!(parse_json::<Shape>("{\"a\":1}", "j").unwrap().a, 1);
}

/// Rule (ABI conventions): the error object carries status, code, description, field and
/// Retry-After, and every accessor and `_free` accepts NULL.
#[test]
fn error_object_carries_the_contract_fields() {
    let failure = Failure {
        result: sf_result::Api,
        message: "HTTP 429 rate_limited".into(),
        http_status: 429,
        code: Some("rate_limited".into()),
        description: Some("slow down".into()),
        field: None,
        retry_after: Some(std::time::Duration::from_secs(3)),
        unclear: None,
    };
    let mut error = ptr::null_mut();
    assert_eq!(unsafe { report(&failure, &mut error) }, sf_result::Api);
    unsafe {
        assert_eq!(sf_error_result(error), sf_result::Api);
        assert_eq!(sf_error_http_status(error), 429);
        assert_eq!(sf_error_retry_after_ms(error), 3000);
        assert_eq!(text(sf_error_code(error)).as_deref(), Some("rate_limited"));
        assert_eq!(
            text(sf_error_description(error)).as_deref(),
            Some("slow down")
        );
        assert_eq!(text(sf_error_field(error)), None);
        assert_eq!(
            text(sf_error_message(error)).as_deref(),
            Some("HTTP 429 rate_limited")
        );
    }
    let json = take_error(error);
    assert_eq!(json["http_status"], 429);
    assert_eq!(json["retry_after_ms"], 3000);
    unsafe {
        assert_eq!(sf_error_result(ptr::null()), sf_result::Other);
        assert_eq!(sf_error_http_status(ptr::null()), 0);
        assert_eq!(sf_error_retry_after_ms(ptr::null()), -1);
        assert!(sf_error_json(ptr::null()).is_null());
        assert!(sf_error_code(ptr::null()).is_null());
        sf_error_free(ptr::null_mut());
        sf_string_free(ptr::null_mut());
    }
    // A NULL error_out is allowed: the code is still returned.
    assert_eq!(unsafe { report(&failure, ptr::null_mut()) }, sf_result::Api);
}

/// Rule (ABI conventions): out-parameters are checked before any work and written only on
/// success.
#[test]
fn out_parameters_are_checked_and_written_once() {
    assert_eq!(
        OutString::new(ptr::null_mut(), "json_out")
            .err()
            .unwrap()
            .result,
        sf_result::NullArgument
    );
    let mut slot: *mut c_char = ptr::null_mut();
    OutString::new(&mut slot, "json_out")
        .unwrap()
        .write_json(&serde_json::json!({"a": 1}))
        .unwrap();
    assert_eq!(text(slot).as_deref(), Some("{\"a\":1}"));
    unsafe { sf_string_free(slot) };
    assert_eq!(
        text(sf_version()).as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(sf_max_input_bytes(), MAX_INPUT_BYTES);
}
