//! The standalone binary: starts, writes its endpoints to `--ready-file`, prints its endpoints
//! and the seeded credentials, and serves real requests (issue 2, "Done when").

mod harness;

use harness::{Running, scratch_dir};

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use storefront_sandbox::seed;

const BINARY: &str = env!("CARGO_BIN_EXE_storefront-sandbox");

/// Starts the binary and waits for its ready file (the process exiting first fails the test).
fn start(args: &[&str], ready: &Path) -> (Running, Value) {
    let child = Command::new(BINARY)
        .args(args)
        .arg("--ready-file")
        .arg(ready)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut running = Running(child);
    // Polls for readiness; the bound only stops a broken build from hanging the suite.
    for _ in 0..1200 {
        if let Ok(text) = std::fs::read_to_string(ready) {
            return (
                running,
                serde_json::from_str(&text).expect("the ready file is JSON"),
            );
        }
        if let Some(status) = running.0.try_wait().unwrap() {
            let mut stderr = String::new();
            running
                .0
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            panic!("the binary exited with {status}: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the binary never became ready");
}

fn stdout_of(mut running: Running) -> String {
    let _ = running.0.kill();
    let _ = running.0.wait();
    let mut out = String::new();
    running
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    out
}

#[tokio::test]
async fn binary_writes_its_endpoints_to_the_ready_file_prints_credentials_and_serves() {
    let dir = scratch_dir("plain");
    let ready_path = dir.join("ready.json");
    let (running, ready) = start(&["--port", "0"], &ready_path);
    let origin = ready["origin"].as_str().unwrap();
    assert!(origin.starts_with("http://127.0.0.1:"), "{ready}");
    assert_eq!(ready["base_url"], format!("{origin}{}", seed::API_PREFIX));
    assert_eq!(
        ready["token_endpoint"],
        format!("{origin}{}", seed::TOKEN_PATH)
    );
    assert_eq!(
        ready["userinfo_endpoint"],
        format!("{origin}{}", seed::USERINFO_PATH)
    );
    assert_eq!(
        ready["control_url"],
        format!("{origin}{}", seed::CONTROL_PREFIX)
    );
    assert!(ready["ca_pem_path"].is_null());
    let clients = ready["clients"].as_array().unwrap();
    let merchant = clients
        .iter()
        .find(|c| c["client_id"] == seed::MERCHANT_CLIENT_ID)
        .expect("the merchant client is listed");
    assert_eq!(merchant["client_secret"], seed::MERCHANT_CLIENT_SECRET);
    assert_eq!(merchant["merchant_no"], seed::MERCHANT_NO);
    assert_eq!(ready["users"][0], seed::USER_ALICE);

    let http = harness::http_client(None);
    let token: Value = http
        .post(ready["token_endpoint"].as_str().unwrap())
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", seed::MERCHANT_CLIENT_ID),
            ("client_secret", seed::MERCHANT_CLIENT_SECRET),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let products: Value = http
        .get(format!(
            "{}/openapi/v1/products",
            ready["base_url"].as_str().unwrap()
        ))
        .bearer_auth(token["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(products["total"], seed::ENABLED_PRODUCT_COUNT);

    let printed = stdout_of(running);
    for expected in [
        origin,
        ready["base_url"].as_str().unwrap(),
        ready["token_endpoint"].as_str().unwrap(),
        ready["userinfo_endpoint"].as_str().unwrap(),
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
        seed::USER_ALICE,
    ] {
        assert!(
            printed.contains(expected),
            "{expected} not printed in:\n{printed}"
        );
    }

    // Issue 18 item 3: the lines that configure an app (every binding's from_env), printed and
    // in the ready file's "env".
    let env = ready["env"].as_object().expect("the ready file has env");
    let expected_env = [
        ("STOREFRONT_BASE_URL", ready["base_url"].as_str().unwrap()),
        (
            "STOREFRONT_TOKEN_ENDPOINT",
            ready["token_endpoint"].as_str().unwrap(),
        ),
        (
            "STOREFRONT_USERINFO_ENDPOINT",
            ready["userinfo_endpoint"].as_str().unwrap(),
        ),
        ("STOREFRONT_CLIENT_ID", seed::MERCHANT_CLIENT_ID),
        ("STOREFRONT_CLIENT_SECRET", seed::MERCHANT_CLIENT_SECRET),
        ("STOREFRONT_ALLOW_INSECURE_LOOPBACK", "1"),
    ];
    assert_eq!(env.len(), expected_env.len(), "{env:?}");
    let block = printed
        .split("your app's configuration")
        .nth(1)
        .expect("the configuration block is printed");
    assert!(block.contains("sf_config_from_env"), "{block}");
    for (name, value) in expected_env {
        assert_eq!(env[name], value, "{name}");
        let line = format!("  export {name}={value}\n");
        assert!(block.contains(&line), "{line} not printed in:\n{block}");
    }
    assert!(!block.contains("STOREFRONT_ROOT_CA_PEM_FILE"));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn binary_with_tls_writes_the_ca_next_to_the_ready_file() {
    let dir = scratch_dir("tls");
    let ready_path = dir.join("ready.json");
    let env_path = dir.join("sandbox.env");
    let (running, ready) = start(
        &[
            "--port",
            "0",
            "--tls",
            "--env-file",
            env_path.to_str().unwrap(),
        ],
        &ready_path,
    );
    let origin = ready["origin"].as_str().unwrap();
    assert!(origin.starts_with("https://127.0.0.1:"), "{ready}");
    let pem = std::fs::read_to_string(ready["ca_pem_path"].as_str().unwrap()).unwrap();
    // With --tls the app trusts the generated CA instead of allowing plain HTTP.
    assert_eq!(
        ready["env"]["STOREFRONT_ROOT_CA_PEM_FILE"],
        ready["ca_pem_path"]
    );
    assert!(ready["env"]["STOREFRONT_ALLOW_INSECURE_LOOPBACK"].is_null());
    let env_file = std::fs::read_to_string(&env_path).unwrap();
    for (name, value) in ready["env"].as_object().unwrap() {
        let line = format!("export {name}={}\n", value.as_str().unwrap());
        assert!(env_file.contains(&line), "{line} not in:\n{env_file}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&env_path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the env file holds the client secret");
    }
    let http = harness::http_client(Some(&pem));
    let response = http
        .post(ready["token_endpoint"].as_str().unwrap())
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", seed::MERCHANT_CLIENT_ID),
            ("client_secret", seed::MERCHANT_CLIENT_SECRET),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    drop(running);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn binary_refuses_unknown_arguments_with_usage() {
    let output = Command::new(BINARY).arg("--bogus").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("usage:"));
}

/// `--token-lifetime SECONDS` is the grant's `expires_in` (0 allowed); a negative or non-numeric
/// value is refused with the usage error.
#[tokio::test]
async fn binary_token_lifetime_flag_sets_expires_in() {
    for seconds in ["2", "0"] {
        let dir = scratch_dir("lifetime");
        let ready_path = dir.join("ready.json");
        let (running, ready) = start(&["--port", "0", "--token-lifetime", seconds], &ready_path);
        let http = harness::http_client(None);
        let token: Value = http
            .post(ready["token_endpoint"].as_str().unwrap())
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", seed::MERCHANT_CLIENT_ID),
                ("client_secret", seed::MERCHANT_CLIENT_SECRET),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(token["expires_in"], seconds.parse::<i64>().unwrap());
        let lifetime: Value = http
            .get(format!(
                "{}/token-lifetime",
                ready["control_url"].as_str().unwrap()
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(lifetime["seconds"], seconds.parse::<i64>().unwrap());
        drop(running);
        let _ = std::fs::remove_dir_all(dir);
    }
    for bad in ["-1", "soon", "1.5"] {
        let output = Command::new(BINARY)
            .args(["--port", "0", "--token-lifetime", bad])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("--token-lifetime"),
            "{bad}"
        );
    }
}

#[test]
fn binary_usage_lists_the_token_lifetime_flag() {
    let output = Command::new(BINARY).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("--token-lifetime SECONDS"));
}
