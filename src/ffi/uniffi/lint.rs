//! Source checks of the uniffi layer that the compiler cannot make.

use std::path::Path;

/// Every `#[uniffi::export ...]` attribute followed by an `async fn` (directly, or inside the
/// exported `impl`/`trait` block) must name the tokio runtime: reqwest needs a tokio reactor,
/// and uniffi's default executor has none ("there is no reactor running" at run time).
#[test]
fn every_async_export_names_the_tokio_runtime() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi/uniffi");
    let mut offenders = Vec::new();
    let mut exports = 0;
    for entry in std::fs::read_dir(&dir).expect("src/ffi/uniffi is readable") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("lint.rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("source is readable");
        for (line, item) in exported_items(&source) {
            exports += 1;
            let (attribute, body) = item;
            if body_has_async_fn(body) && !attribute.contains("async_runtime = \"tokio\"") {
                offenders.push(format!("{}:{line}", path.display()));
            }
        }
    }
    assert!(
        exports > 0,
        "no #[uniffi::export] found: the check would prove nothing"
    );
    assert!(
        offenders.is_empty(),
        "async exports without async_runtime = \"tokio\": {offenders:?}"
    );
}

/// Money and every other number cross the FFI as integers: no `f32`/`f64` anywhere in the
/// uniffi layer, so Kotlin and Swift never see a `Double`/`Float` ("never floating point").
#[test]
fn no_floating_point_type_crosses_the_ffi() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi/uniffi");
    for entry in std::fs::read_dir(&dir).expect("src/ffi/uniffi is readable") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("lint.rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("source is readable");
        let words: Vec<&str> = source
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .collect();
        for float in ["f32", "f64"] {
            assert!(!words.contains(&float), "{} uses {float}", path.display());
        }
    }
}

/// The check itself: an async export without the runtime is caught, one with it passes.
#[test]
fn the_async_runtime_check_catches_a_missing_runtime() {
    let bad = "#[uniffi::export]\nimpl X {\n    pub async fn f(&self) {}\n}\n";
    let good = "#[uniffi::export(async_runtime = \"tokio\")]\nimpl X {\n    pub async fn f(&self) {}\n}\n#[uniffi::export]\npub fn g() {}\n";
    let items = exported_items(bad);
    assert_eq!(items.len(), 1);
    assert!(body_has_async_fn(items[0].1.1));
    for (_, (attribute, body)) in exported_items(good) {
        assert!(!body_has_async_fn(body) || attribute.contains("async_runtime = \"tokio\""));
    }
}

/// (line number, (attribute text, item text up to its end)) of every `#[uniffi::export` item.
fn exported_items(source: &str) -> Vec<(usize, (&str, &str))> {
    let mut items = Vec::new();
    let mut search = 0;
    while let Some(found) = source[search..].find("#[uniffi::export") {
        let start = search + found;
        let attr_end = start + source[start..].find(']').expect("attribute closes") + 1;
        let body_end = item_end(source, attr_end);
        let line = source[..start].lines().count() + 1;
        items.push((
            line,
            (&source[start..attr_end], &source[attr_end..body_end]),
        ));
        search = attr_end;
    }
    items
}

/// End of the item after an attribute: its matching closing brace, or `;` for a bodiless item.
fn item_end(source: &str, from: usize) -> usize {
    let mut depth = 0usize;
    for (offset, ch) in source[from..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return from + offset + 1;
                }
            }
            ';' if depth == 0 => return from + offset + 1,
            _ => {}
        }
    }
    source.len()
}

fn body_has_async_fn(body: &str) -> bool {
    body.split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w[0] == "async" && w[1] == "fn")
}
