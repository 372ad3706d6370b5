//! The sandbox clock's range, against the binary: an advance the clock cannot hold (`trigger
//! advance 9223372036854775807`, or the control request with an absurd value) is refused with
//! 400 `clock_out_of_range`, and the sandbox keeps answering (it used to panic on every later
//! request once the offset overflowed the time type).

mod harness;

use std::process::Command;

use harness::{BINARY, Binary, answer};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn an_advance_the_clock_cannot_hold_is_refused_and_the_sandbox_keeps_answering() {
    let sandbox = Binary::start("clock-range");
    let output = Command::new(BINARY)
        .args(["trigger", "--ready-file"])
        .arg(&sandbox.ready_path)
        .args(["advance", "9223372036854775807"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("HTTP 400 clock_out_of_range"), "{stderr}");

    for seconds in [
        json!(i64::MAX),
        json!(u64::MAX),
        json!(1e300),
        json!(storefront_sandbox::clock::MAX_OFFSET_SECONDS + 1),
    ] {
        let refused = answer(
            sandbox
                .http
                .post(sandbox.control("/clock/advance"))
                .json(&json!({ "seconds": seconds }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{seconds}");
        assert_eq!(refused.error(), "clock_out_of_range", "{}", refused.text);
        assert_eq!(refused.body["field"], "seconds");
    }
    // Up to the bound is fine; one more second after it is refused.
    let ok = answer(
        sandbox
            .http
            .post(sandbox.control("/clock/advance"))
            .json(&json!({ "seconds": storefront_sandbox::clock::MAX_OFFSET_SECONDS }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text);
    let output = Command::new(BINARY)
        .args(["trigger", "--ready-file"])
        .arg(&sandbox.ready_path)
        .args(["advance", "1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));

    // The sandbox keeps answering, clock, dashboard and service API alike.
    assert_eq!(
        sandbox.clock_offset().await,
        storefront_sandbox::clock::MAX_OFFSET_SECONDS
    );
    let page = answer(sandbox.http.get(sandbox.control("/")).send().await.unwrap()).await;
    assert_eq!(page.status, StatusCode::OK);
    let token = sandbox.merchant_token().await;
    let created = sandbox.create_payment(&token, "far-future").await;
    assert_eq!(created["status"], "pending", "{created}");
}
