//! Issue 18 item 3: a configuration made for the sandbox. `Config::from_env` over the variables
//! the sandbox gives (`Sandbox::app_env`, what `storefront-sandbox` prints and writes to its
//! ready file's `"env"`) builds a client that creates and reads a merchant payment over real
//! HTTP, both through the lookup form and through the process environment of a child process.

mod common;

use std::collections::HashMap;
use std::process::Command;

use common::s;
use storefront::{Client, Config, CreateMerchantPayment, Error, MinorAmount};
use storefront_sandbox::{Sandbox, SandboxOptions};

/// Set in the child process that runs [`child_reads_the_process_environment`] for real.
const CHILD_MARKER: &str = "STOREFRONT_TEST_FROM_ENV_CHILD";

async fn create_and_read(client: &Client, reference: &str) {
    let created = client
        .create_merchant_payment(&CreateMerchantPayment::new(
            reference,
            MinorAmount::parse_decimal("12.50", 2).unwrap(),
            "USD",
        ))
        .await
        .expect("created through the configuration from the environment");
    let read = client
        .get_merchant_payment(&created.payment.order_no)
        .await
        .unwrap();
    assert_eq!(read.order_no, created.payment.order_no);
    assert_eq!(read.external_reference, reference);
}

#[tokio::test]
async fn the_sandbox_variables_configure_a_working_client() {
    let sandbox = Sandbox::start_with(SandboxOptions::default())
        .await
        .unwrap();
    let env: HashMap<String, String> = sandbox.app_env(None).into_iter().collect();
    let config = Config::from_env_with(|name| env.get(name).cloned()).unwrap();
    assert!(config.allow_insecure_loopback);
    assert_eq!(config.client_id, s::MERCHANT_CLIENT_ID);
    create_and_read(&Client::new(config).unwrap(), "env-lookup").await;

    // The quick start's first attempt without the flag now says which variable to set.
    let mut without = env.clone();
    without.remove("STOREFRONT_ALLOW_INSECURE_LOOPBACK");
    match Config::from_env_with(|name| without.get(name).cloned()) {
        Err(Error::Config(m)) => {
            assert!(m.contains("STOREFRONT_ALLOW_INSECURE_LOOPBACK=1"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_sandbox_variables_with_tls_trust_the_written_ca() {
    let sandbox = Sandbox::start_with(SandboxOptions {
        tls: true,
        ..SandboxOptions::default()
    })
    .await
    .unwrap();
    let ca = std::env::temp_dir().join(format!("sf-from-env-{}.ca.pem", std::process::id()));
    std::fs::write(&ca, sandbox.ca_pem().unwrap()).unwrap();
    let env: HashMap<String, String> = sandbox.app_env(Some(&ca)).into_iter().collect();
    let config = Config::from_env_with(|name| env.get(name).cloned()).unwrap();
    assert!(!config.allow_insecure_loopback);
    create_and_read(&Client::new(config).unwrap(), "env-tls").await;
    let _ = std::fs::remove_file(ca);
}

/// `Config::from_env` reading the real process environment: this test runs itself again as a
/// child process with the sandbox's variables set (so no test mutates this process's env).
#[tokio::test]
async fn child_reads_the_process_environment() {
    if std::env::var_os(CHILD_MARKER).is_some() {
        let client = Client::new(Config::from_env().expect("from_env")).unwrap();
        create_and_read(&client, "env-process").await;
        return;
    }
    let sandbox = Sandbox::start_with(SandboxOptions::default())
        .await
        .unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "child_reads_the_process_environment",
            "--nocapture",
        ])
        .env(CHILD_MARKER, "1");
    for name in storefront::ENV_VARIABLES {
        child.env_remove(name);
    }
    child.envs(sandbox.app_env(None));
    let output = tokio::task::spawn_blocking(move || child.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let payments = sandbox
        .inspect()
        .payments()
        .into_iter()
        .filter(|p| p.external_reference == "env-process")
        .count();
    assert_eq!(payments, 1, "the child's payment reached this sandbox");
}
