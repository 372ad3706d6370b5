//! The sandbox's file-level module graph: no import circle runs through the application state
//! or the data modules, and the domain stores stay data.
//!
//! The graph is built from the text of `sandbox/src`: every file is a node, and a file depends
//! on the file that defines each module path it names (`use crate::...`, `use super::...`,
//! `use self::...`, groups in braces, and inline `crate::a::b` / `super::a` paths), resolved to
//! the deepest existing file (`a/b.rs`, `a/b/mod.rs`, else the parent module's file). Comments,
//! string literals and `#[cfg(test)] mod tests` blocks are left out; `mod x;` declarations are
//! not dependencies.
//!
//! Run against the layout before the split (`MODULE_GRAPH_SRC=<old sandbox/src>`; one
//! `state.rs` holding `Shared` and a `World` with every domain's data as public fields, imported
//! back by some 25 files), this test failed: `state.rs` lay on an import circle of 13 files
//! (auth.rs, catalog/mod.rs, checkout.rs, faults.rs, limits.rs, merchant_payments.rs,
//! merchant_payments/{idempotency,model,validation}.rs, notifications.rs,
//! notifications/config.rs, requests.rs, state.rs), printed as the cycle
//! `state.rs -> auth.rs -> state.rs`. The other importers of `state.rs` (handlers, workers)
//! reached it without being reached back, so they were not on the circle by this definition;
//! counting `mod x;` declarations as edges would put every child of those modules on it too,
//! but that definition would also forbid the target layout itself (`<domain>/store.rs` and
//! `<domain>/http.rs` under one module), so only imports count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules that hold the application state and the data behind its lock.
const STATE_MODULES: &[&str] = &["state.rs", "db.rs"];

/// The domain stores: data only.
const STORES: &[&str] = &[
    "directory/store.rs",
    "catalog/store.rs",
    "merchant_payments/store.rs",
    "notifications/store.rs",
];

/// `sandbox/src`, or the tree named by `MODULE_GRAPH_SRC` (to check another checkout, e.g. an
/// older layout).
fn src_dir() -> PathBuf {
    std::env::var_os("MODULE_GRAPH_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// Every `.rs` file under `src`, relative, with `/` separators.
fn rust_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under src");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// The module path of a file: `a/b.rs` and `a/b/mod.rs` are `[a, b]`; `lib.rs` and `main.rs`
/// are the crate root.
fn module_of(file: &str) -> Vec<String> {
    let trimmed = file.trim_end_matches(".rs");
    let mut parts: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// The file that defines the longest prefix of `path` (a module path from the crate root).
fn resolve(files: &BTreeSet<String>, path: &[String]) -> Option<String> {
    for len in (1..=path.len()).rev() {
        let stem = path[..len].join("/");
        for candidate in [format!("{stem}.rs"), format!("{stem}/mod.rs")] {
            if files.contains(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

/// Source without comments, string and char literals, and `#[cfg(test)]` items.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(bytes.len(), |e| i + e + 2);
            i = end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body_start = i + 1 + hashes + 1;
            let end = text[body_start..]
                .find(&close)
                .map_or(bytes.len(), |e| body_start + e + close.len());
            out.push_str("\"\"");
            i = end;
        } else if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if bytes[i] == b'\''
            && rest.len() >= 3
            && (rest.as_bytes()[2] == b'\'' || rest.starts_with("'\\"))
        {
            // A char literal ('x' or '\n'); lifetimes ('a) are left alone.
            let end = rest[1..].find('\'').map_or(bytes.len(), |e| i + 1 + e + 1);
            out.push_str("' '");
            i = end;
        } else {
            let ch = rest.chars().next().expect("non-empty");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    strip_test_items(&out)
}

/// Drops every item following a `#[cfg(test)]` attribute (through its matching brace or `;`).
fn strip_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let brace = after.find('{');
        let semi = after.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (k, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into its leaf paths.
fn expand_use_tree(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            expand_use_tree(p)
                .into_iter()
                .map(|leaf| format!("{prefix}{leaf}"))
        })
        .collect()
}

/// Every module path (as written, with `crate`/`super`/`self` heads) the code names.
fn named_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    // `use` declarations, with their brace groups.
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before_ok = at == 0 || !is_ident(rest[..at].chars().last().unwrap_or(' '));
        let after = &rest[at + 4..];
        if before_ok && let Some(end) = after.find(';') {
            let tree = &after[..end];
            if ["crate", "super", "self"]
                .iter()
                .any(|h| tree.trim_start().starts_with(h))
            {
                paths.extend(expand_use_tree(tree));
            }
        }
        rest = after;
    }
    // Inline paths: `crate::a::b`, `super::a`, `super::super::a`.
    for head in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(head) {
            let start = from + at;
            let before_ok = start == 0 || !is_ident(code[..start].chars().last().unwrap_or(' '));
            let path: String = code[start..]
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':')
                .collect();
            if before_ok {
                paths.push(path.trim_end_matches(':').to_owned());
            }
            from = start + head.len();
        }
    }
    paths
}

/// Turns a written path into one from the crate root, as seen from `module`.
fn absolute(module: &[String], written: &str) -> Option<Vec<String>> {
    let segments: Vec<&str> = written.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = match segments.first().copied() {
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => module.to_vec(),
        _ => return None,
    };
    let mut i = if segments.first() == Some(&"crate") {
        1
    } else {
        0
    };
    while i < segments.len() && (segments[i] == "super" || segments[i] == "self") {
        if segments[i] == "super" {
            base.pop()?;
        }
        i += 1;
    }
    base.extend(segments[i..].iter().map(|s| (*s).to_owned()));
    Some(base)
}

/// File → the files it depends on.
fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: BTreeSet<String> = rust_files(root).into_iter().collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(root.join(file)).expect("read source");
        let module = module_of(file);
        let mut deps = BTreeSet::new();
        for written in named_paths(&code_only(&text)) {
            if let Some(path) = absolute(&module, &written)
                && let Some(target) = resolve(&files, &path)
                && target != *file
                && target != "lib.rs"
            {
                deps.insert(target);
            }
        }
        edges.insert(file.clone(), deps);
    }
    edges
}

/// Strongly connected components of more than one file (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        edges: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

/// A shortest cycle from `start` back to it, inside `component`.
fn cycle_through(
    edges: &BTreeMap<String, BTreeSet<String>>,
    component: &BTreeSet<String>,
    start: &str,
) -> Vec<String> {
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.to_owned()]);
    while let Some(v) = queue.pop_front() {
        for w in edges.get(&v).into_iter().flatten() {
            if !component.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.to_owned()];
                let mut at = v.clone();
                while at != start {
                    path.push(at.clone());
                    at = parent[&at].clone();
                }
                path.push(start.to_owned());
                let last = path.len() - 1;
                path[1..last].reverse();
                return path;
            }
            if !parent.contains_key(w) {
                parent.insert(w.clone(), v.clone());
                queue.push_back(w.clone());
            }
        }
    }
    Vec::new()
}

/// Problems of a source tree: cycles through the state modules, stores that import web types
/// or the application state.
fn problems(root: &Path) -> Vec<String> {
    let edges = graph(root);
    let mut found = Vec::new();
    for component in cycles(&edges) {
        let set: BTreeSet<String> = component.iter().cloned().collect();
        for state in STATE_MODULES {
            if set.contains(*state) {
                found.push(format!(
                    "{state} lies on an import circle of {} files: {}\n  cycle: {}",
                    component.len(),
                    component.join(", "),
                    cycle_through(&edges, &set, state).join(" -> ")
                ));
            }
        }
    }
    for store in STORES {
        let Ok(text) = std::fs::read_to_string(root.join(store)) else {
            found.push(format!("{store} is missing"));
            continue;
        };
        let code = code_only(&text);
        for banned in ["axum", "hyper", "tower", "reqwest"] {
            let mentions = code.match_indices(banned).any(|(at, _)| {
                let before = code[..at].chars().last().unwrap_or(' ');
                let after = code[at + banned.len()..].chars().next().unwrap_or(' ');
                !is_ident(before) && !is_ident(after)
            });
            if mentions {
                found.push(format!("{store} names the web crate `{banned}`"));
            }
        }
        for dep in edges.get(*store).into_iter().flatten() {
            if STATE_MODULES.contains(&dep.as_str()) || dep == "app.rs" {
                found.push(format!("{store} imports the application state ({dep})"));
            }
        }
    }
    found
}

#[test]
fn no_import_circle_runs_through_the_state_and_stores_are_data() {
    let found = problems(&src_dir());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The checker itself finds a circle through the state and a store that sees the web or the
/// state (so the test above can fail).
#[test]
fn the_checker_finds_a_circle_and_a_web_typed_store() {
    let dir = std::env::temp_dir().join(format!("sandbox-module-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (file, text) in [
        ("lib.rs", "mod state; mod db; mod catalog;"),
        ("state.rs", "use crate::db::Db; pub struct AppState;"),
        (
            "db.rs",
            "use crate::catalog::store::CatalogStore; // use crate::state;\npub struct Db;",
        ),
        ("catalog/mod.rs", "pub mod store;"),
        (
            "catalog/store.rs",
            "use axum::Json;\nuse super::super::state::{AppState};\nconst S: &str = \"crate::db\";",
        ),
        ("directory/store.rs", ""),
        ("merchant_payments/store.rs", ""),
        (
            "notifications/store.rs",
            "#[cfg(test)]\nmod tests { use crate::state::AppState; }",
        ),
    ] {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let found = problems(&dir);
    std::fs::remove_dir_all(&dir).ok();
    let text = found.join("\n");
    assert!(
        text.contains("state.rs lies on an import circle of 3 files")
            && text.contains("cycle: state.rs -> db.rs -> catalog/store.rs -> state.rs"),
        "{text}"
    );
    assert!(
        text.contains("catalog/store.rs names the web crate `axum`"),
        "{text}"
    );
    assert!(
        text.contains("catalog/store.rs imports the application state (state.rs)"),
        "{text}"
    );
    // Test-only imports and comments do not count.
    assert!(!text.contains("notifications/store.rs"), "{text}");
    assert_eq!(found.len(), 4, "{text}");
}
