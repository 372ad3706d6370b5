//! Fuzzing regressions: replays the checked-in seed corpora (`fuzz/corpus/<target>/`) and every
//! input that once crashed a fuzz target (`tests/fuzz_regressions/<target>/`) through the same
//! harness code the cargo-fuzz targets run (`fuzz/src/`, included below), so they stay fixed in
//! a plain `cargo test`. See docs/fuzzing.md.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../fuzz/src/reader.rs"]
mod reader;

#[path = "../fuzz/src/money.rs"]
mod money;

#[path = "../fuzz/src/response_decoders.rs"]
mod response_decoders;

#[path = "../fuzz/src/webhook_verify.rs"]
mod webhook_verify;

#[cfg(feature = "capi")]
#[path = "../fuzz/src/capi_json.rs"]
mod capi_json;

/// The files of `fuzz/corpus/<target>/` and `tests/fuzz_regressions/<target>/`, sorted.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        root.join("fuzz/corpus").join(target),
        root.join("tests/fuzz_regressions").join(target),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("readable directory entry").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Runs `harness` on every input of `target`, naming the file that fails.
fn replay(target: &str, harness: fn(&[u8])) -> usize {
    let files = inputs(target);
    for file in &files {
        let data = std::fs::read(file).expect("readable input");
        let outcome = std::panic::catch_unwind(|| harness(&data));
        assert!(outcome.is_ok(), "{target}: {} fails", file.display());
    }
    files.len()
}

#[test]
fn money_inputs_replay() {
    assert!(replay("money", money::run) > 0, "no money seeds");
}

#[test]
fn response_decoder_inputs_replay() {
    assert!(replay("response_decoders", response_decoders::run) > 0);
}

#[test]
fn webhook_verify_inputs_replay() {
    assert!(replay("webhook_verify", webhook_verify::run) > 0);
}

#[cfg(feature = "capi")]
#[test]
fn capi_json_inputs_replay() {
    assert!(replay("capi_json", capi_json::run) > 0);
}

/// The seeds reach the end of the happy paths, so the fuzz targets start from there: the signed
/// seed notification verifies and each decoder seed decodes.
#[test]
fn seeds_reach_the_success_paths() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let body = std::fs::read(root.join("response_decoders/notification")).unwrap();
    let secret = "fuzz-notify-secret-0123456789abcdef";
    let now = 1_790_000_000;
    let signature = storefront::TestSigner::new(secret).signature(now, &body);
    let verifier = storefront::WebhookVerifier::new([secret]).unwrap();
    let n = verifier
        .verify_at(
            now,
            Some("evt_1"),
            Some(&now.to_string()),
            Some(&signature),
            &body,
        )
        .unwrap();
    assert!(n.data.status.is_paid());
    let page = std::fs::read(root.join("response_decoders/products_page")).unwrap();
    let page: storefront::ProductPage = serde_json::from_slice(&page).unwrap();
    assert_eq!(page.list.len(), 2);
    let payment = std::fs::read(root.join("response_decoders/merchant_payment")).unwrap();
    serde_json::from_slice::<storefront::MerchantPayment>(&payment).unwrap();
    let order = std::fs::read(root.join("response_decoders/catalog_order")).unwrap();
    serde_json::from_slice::<storefront::CatalogOrder>(&order).unwrap();
}
