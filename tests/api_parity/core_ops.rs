//! The public operations of the core crate, read from its source with `syn` (never a
//! hand-kept list).
//!
//! Walk: from `src/lib.rs` through every `mod` item (file or inline), skipping modules under a
//! `#[cfg]` attribute that names `test` or an FFI feature (`uniffi`, `capi`, `ffi`): the tests and the
//! FFI layers. A module behind a backend feature (the webhook inbox, `store-*`) is core API. A type or
//! function is public API when it is declared `pub` in a chain of `pub` modules, or named by a
//! `pub use` of a public module (the crate root re-exports most of the API that way).
//!
//! Candidates: every `pub fn` (sync, async or `const`) of an inherent `impl` of a public type,
//! every public free function, every method of a public trait (a callback the host app
//! implements, such as the user-token provider) and every `FromStr` implementation of a public
//! type (text parsing, e.g. `FixedPoint8`). Other trait implementations (`Display`, `Debug`,
//! serde, `From`) are each language's own protocols and not operations.
//!
//! Rules that make a candidate *not* an operation (plain data handling, which every binding
//! expresses with its own records, fields and constructors):
//! * **builder**: synchronous, takes `self` by value and returns `Self` (`with_*` setters);
//! * **accessor**: synchronous, takes only the receiver and returns no `Result` (getters,
//!   predicates and views of a value, e.g. `Error::status`, `Secret::expose`);
//! * **plain constructor**: synchronous, no receiver, returns `Self` itself (infallible
//!   constructors of plain data such as `Config::new`).
//!
//! Everything else is an operation: every endpoint call, every fallible constructor, every
//! helper taking input, every free function, every callback and every parser.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::{FnArg, ImplItem, Item, ReturnType, Signature, TraitItem, Type, Visibility};

/// What kind of operation a core item is (shown in the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    /// An `async fn` (a call to the service, or work that waits).
    Async,
    /// A synchronous function or method that takes input.
    Sync,
    /// A method of a public trait the host app implements (called by the SDK).
    Callback,
    /// A `FromStr` implementation (text parsing).
    Parse,
}

impl OpKind {
    /// Label used in the table.
    pub fn label(self) -> &'static str {
        match self {
            OpKind::Async => "async",
            OpKind::Sync => "sync",
            OpKind::Callback => "callback",
            OpKind::Parse => "parse",
        }
    }
}

/// Why a public item is not an operation (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exclusion {
    /// Takes `self` by value, returns `Self`.
    Builder,
    /// Only the receiver, no `Result`.
    Accessor,
    /// No receiver, returns `Self`.
    PlainConstructor,
}

impl Exclusion {
    /// Label used in the generated document.
    pub fn label(self) -> &'static str {
        match self {
            Exclusion::Builder => "builder",
            Exclusion::Accessor => "accessor",
            Exclusion::PlainConstructor => "plain constructor",
        }
    }
}

/// The classified public surface of the core crate.
#[derive(Debug, Default)]
pub struct CoreSurface {
    /// Operation name (`Type::method` or the function's public path) to its kind.
    pub operations: BTreeMap<String, OpKind>,
    /// Public items that are not operations, with the rule that excluded them.
    pub excluded: BTreeMap<String, Exclusion>,
}

/// A public `fn` found by the walk, before classification.
struct Candidate {
    owner: Option<String>,
    module: Vec<String>,
    module_public: bool,
    sig: Signature,
    kind: CandidateKind,
}

enum CandidateKind {
    Inherent,
    Free,
    TraitMethod,
    FromStr,
}

#[derive(Default)]
struct Walk {
    candidates: Vec<Candidate>,
    /// Types and functions declared `pub` in public modules, or re-exported by a public `pub use`.
    public_names: BTreeSet<String>,
    /// Names re-exported by the crate root.
    root_exports: BTreeSet<String>,
}

/// Reads the crate at `src_dir` (its `lib.rs` and every module file) and classifies its public
/// functions.
pub fn read_core(src_dir: &Path) -> Result<CoreSurface, String> {
    let mut walk = Walk::default();
    let lib = src_dir.join("lib.rs");
    let file = parse_file(&lib)?;
    walk_items(&mut walk, &file.items, src_dir, &[], true)?;
    Ok(classify(walk))
}

/// Classifies the candidates of source text (used by the self-test with a made-up crate).
pub fn read_source(lib_rs: &str) -> Result<CoreSurface, String> {
    let mut walk = Walk::default();
    let file = syn::parse_file(lib_rs).map_err(|e| format!("parse: {e}"))?;
    walk_items(&mut walk, &file.items, Path::new("/nonexistent"), &[], true)?;
    Ok(classify(walk))
}

fn parse_file(path: &Path) -> Result<syn::File, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn has_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg"))
}

/// A module under `#[cfg(...)]` naming the tests or an FFI layer's feature.
fn skipped_module(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let text = match &a.meta {
                syn::Meta::List(list) => list.tokens.to_string(),
                _ => String::new(),
            };
            ["test", "\"uniffi\"", "\"capi\"", "\"ffi\""]
                .iter()
                .any(|word| text.contains(word))
        }
    })
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// Walks the items of one module. `dir` is where the module's child module files live.
fn walk_items(
    walk: &mut Walk,
    items: &[Item],
    dir: &Path,
    module: &[String],
    module_public: bool,
) -> Result<(), String> {
    for item in items {
        match item {
            Item::Mod(m) => {
                if skipped_module(&m.attrs) {
                    continue;
                }
                let name = m.ident.to_string();
                let mut path = module.to_vec();
                path.push(name.clone());
                let public = module_public && is_pub(&m.vis);
                let child_dir = dir.join(&name);
                match &m.content {
                    Some((_, inner)) => walk_items(walk, inner, &child_dir, &path, public)?,
                    None => {
                        let file = module_file(dir, &name)?;
                        let parsed = parse_file(&file)?;
                        walk_items(walk, &parsed.items, &child_dir, &path, public)?;
                    }
                }
            }
            Item::Struct(s) if module_public && is_pub(&s.vis) => {
                walk.public_names.insert(s.ident.to_string());
            }
            Item::Enum(e) if module_public && is_pub(&e.vis) => {
                walk.public_names.insert(e.ident.to_string());
            }
            Item::Type(t) if module_public && is_pub(&t.vis) => {
                walk.public_names.insert(t.ident.to_string());
            }
            Item::Use(u) if module_public && is_pub(&u.vis) => {
                let mut names = Vec::new();
                use_leaves(&u.tree, &mut names);
                for name in names {
                    if module.is_empty() {
                        walk.root_exports.insert(name.clone());
                    }
                    walk.public_names.insert(name);
                }
            }
            Item::Fn(f) if is_pub(&f.vis) && !has_cfg(&f.attrs) => {
                walk.candidates.push(Candidate {
                    owner: None,
                    module: module.to_vec(),
                    module_public,
                    sig: f.sig.clone(),
                    kind: CandidateKind::Free,
                });
            }
            Item::Trait(t) if is_pub(&t.vis) => {
                if module_public {
                    walk.public_names.insert(t.ident.to_string());
                }
                for ti in &t.items {
                    if let TraitItem::Fn(f) = ti {
                        walk.candidates.push(Candidate {
                            owner: Some(t.ident.to_string()),
                            module: module.to_vec(),
                            module_public,
                            sig: f.sig.clone(),
                            kind: CandidateKind::TraitMethod,
                        });
                    }
                }
            }
            Item::Impl(i) if !has_cfg(&i.attrs) => {
                let Some(owner) = type_name(&i.self_ty) else {
                    continue;
                };
                match &i.trait_ {
                    None => {
                        for ii in &i.items {
                            if let ImplItem::Fn(f) = ii
                                && is_pub(&f.vis)
                                && !has_cfg(&f.attrs)
                            {
                                walk.candidates.push(Candidate {
                                    owner: Some(owner.clone()),
                                    module: module.to_vec(),
                                    module_public,
                                    sig: f.sig.clone(),
                                    kind: CandidateKind::Inherent,
                                });
                            }
                        }
                    }
                    Some((_, path, _)) => {
                        let is_from_str =
                            path.segments.last().is_some_and(|s| s.ident == "FromStr");
                        if is_from_str {
                            for ii in &i.items {
                                if let ImplItem::Fn(f) = ii {
                                    walk.candidates.push(Candidate {
                                        owner: Some(owner.clone()),
                                        module: module.to_vec(),
                                        module_public,
                                        sig: f.sig.clone(),
                                        kind: CandidateKind::FromStr,
                                    });
                                }
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `dir/name.rs` or `dir/name/mod.rs`.
fn module_file(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let flat = dir.join(format!("{name}.rs"));
    if flat.is_file() {
        return Ok(flat);
    }
    let nested = dir.join(name).join("mod.rs");
    if nested.is_file() {
        return Ok(nested);
    }
    Err(format!(
        "module `{name}` has no file under {}",
        dir.display()
    ))
}

fn use_leaves(tree: &syn::UseTree, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => use_leaves(&p.tree, out),
        syn::UseTree::Name(n) => out.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => out.push(r.rename.to_string()),
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_leaves(t, out)),
    }
}

fn type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn classify(walk: Walk) -> CoreSurface {
    let mut surface = CoreSurface::default();
    for c in walk.candidates {
        let fn_name = c.sig.ident.to_string();
        let (name, reachable) = match &c.owner {
            Some(owner) => {
                let name = match c.kind {
                    CandidateKind::FromStr => format!("{owner}::from_str"),
                    _ => format!("{owner}::{fn_name}"),
                };
                (name, walk.public_names.contains(owner))
            }
            None if walk.root_exports.contains(&fn_name) => (fn_name.clone(), true),
            None => {
                let mut path = c.module.clone();
                path.push(fn_name.clone());
                (path.join("::"), c.module_public)
            }
        };
        if !reachable {
            continue;
        }
        let kind = match c.kind {
            CandidateKind::TraitMethod => Some(OpKind::Callback),
            CandidateKind::FromStr => Some(OpKind::Parse),
            CandidateKind::Inherent | CandidateKind::Free => None,
        };
        let kind = match kind {
            Some(kind) => kind,
            None => match exclusion(&c.sig, c.owner.as_deref()) {
                Some(rule) => {
                    surface.excluded.insert(name, rule);
                    continue;
                }
                None if c.sig.asyncness.is_some() => OpKind::Async,
                None => OpKind::Sync,
            },
        };
        surface.operations.insert(name, kind);
    }
    surface
}

/// The exclusion rule a signature falls under, if any (see the module docs).
fn exclusion(sig: &Signature, owner: Option<&str>) -> Option<Exclusion> {
    if sig.asyncness.is_some() {
        return None;
    }
    let receiver = sig.inputs.iter().find_map(|a| match a {
        FnArg::Receiver(r) => Some(r.reference.is_none()),
        FnArg::Typed(_) => None,
    });
    let other_inputs = sig
        .inputs
        .iter()
        .filter(|a| matches!(a, FnArg::Typed(_)))
        .count();
    let output = match &sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) => type_name(ty),
    };
    let returns_self = output
        .as_deref()
        .is_some_and(|o| o == "Self" || Some(o) == owner);
    let returns_result = output.as_deref() == Some("Result");
    match receiver {
        Some(true) if returns_self => Some(Exclusion::Builder),
        Some(_) if other_inputs == 0 && !returns_result => Some(Exclusion::Accessor),
        None if owner.is_some() && returns_self => Some(Exclusion::PlainConstructor),
        _ => None,
    }
}
