//! The public symbols of each binding, read from its sources.
//!
//! Symbol notation in `bindings/api-parity.toml`:
//! * Kotlin and Swift: `Type.member` (a method of a generated uniffi class, or an extension /
//!   `object` / `class` member in a hand-written source file, such as the Java API's
//!   `StorefrontClient.createMerchantPaymentAsync`), `Type()` (a constructor), `name` (a
//!   top-level function). Read from the generated `storefront.kt` / `Storefront.swift` (kept
//!   equal to the uniffi exports of `src/ffi/uniffi` by `.ci/regen-uniffi`) and every other
//!   source file of the package.
//! * C: the function name as declared in `include/storefront.h`.
//! * Python: `Type.method` or `name`, where `Type` / `name` is in the package's `__all__` and
//!   the method a public `def` of that class (read with Python's `ast`).
//! * PHP: `Type::method` (`Type::__construct` for `new Type`), a public method of the class
//!   declared in `bindings/php/src/Type.php`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The five bindings, in table order.
pub const BINDINGS: [&str; 5] = ["kotlin", "swift", "c", "python", "php"];

/// The symbols one binding declares: class name to member names, and free names.
#[derive(Debug, Default)]
pub struct Surface {
    /// Class (or extended type, or `object`) to its members; `()` stands for a constructor.
    pub members: BTreeMap<String, BTreeSet<String>>,
    /// Top-level functions (and, for Python, exported names).
    pub free: BTreeSet<String>,
}

impl Surface {
    /// Whether `symbol` (in the notation of the module docs, `sep` between type and member)
    /// exists.
    pub fn has(&self, symbol: &str, sep: &str) -> bool {
        if let Some(class) = symbol.strip_suffix("()") {
            return self.members.get(class).is_some_and(|m| m.contains("()"));
        }
        match symbol.split_once(sep) {
            Some((class, member)) => self.members.get(class).is_some_and(|m| m.contains(member)),
            None => self.free.contains(symbol),
        }
    }

    fn add_member(&mut self, class: &str, member: &str) {
        self.members
            .entry(class.to_owned())
            .or_default()
            .insert(member.to_owned());
    }
}

/// Separator between type and member in a binding's notation.
pub fn separator(binding: &str) -> &'static str {
    if binding == "php" { "::" } else { "." }
}

/// Reads every binding of the repository at `root`.
pub fn read_all(root: &Path) -> Result<BTreeMap<&'static str, Surface>, String> {
    let mut out = BTreeMap::new();
    out.insert(
        "kotlin",
        kotlin(&root.join("bindings/kotlin/src/main/kotlin"))?,
    );
    out.insert("swift", swift(&root.join("bindings/swift/Sources"))?);
    out.insert("c", c_header(&read(&root.join("include/storefront.h"))?));
    out.insert("python", python(&root.join("bindings/python/storefront"))?);
    out.insert("php", php(&root.join("bindings/php/src"))?);
    Ok(out)
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn files_with_ext(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The identifier at the start of `s` (letters, digits, `_`).
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The name of a declaration `keyword Name...` at the start of `line`, if it is one.
fn declared<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    let name = ident(line.strip_prefix(keyword)?);
    (!name.is_empty()).then_some(name)
}

// ---------------------------------------------------------------- Kotlin

/// Kotlin: the generated uniffi file and the hand-written sources beside it.
pub fn kotlin(dir: &Path) -> Result<Surface, String> {
    let mut surface = Surface::default();
    for file in files_with_ext(dir, "kt")? {
        let text = read(&file)?;
        if text.contains("uniffi") && text.contains("open class RustBuffer") {
            kotlin_generated(&text, &mut surface);
        } else {
            kotlin_handwritten(&text, &mut surface);
        }
    }
    Ok(surface)
}

/// A column-0 line that ends the body of a generated uniffi class.
fn kotlin_top_level(line: &str) -> bool {
    [
        "open class ",
        "public object ",
        "object ",
        "interface ",
        "public interface ",
        "data class ",
        "enum class ",
        "sealed class ",
        "class ",
        "internal ",
        "private ",
    ]
    .iter()
    .any(|k| line.starts_with(k))
}

/// Generated uniffi Kotlin: members are ``fun `name`(``, constructors ``constructor(`arg` ``.
/// A class body runs to the next top-level declaration (uniffi puts `}` in column 0 inside
/// it); an `object` or `interface` body also ends at a `}` in column 0, and what follows is
/// top level again (where uniffi's exported functions are).
pub fn kotlin_generated(text: &str, surface: &mut Surface) {
    let mut class: Option<String> = None;
    let mut other = false;
    for line in text.lines() {
        if kotlin_top_level(line) {
            class = declared(line, "open class ").map(str::to_owned);
            other = class.is_none();
            continue;
        }
        if other {
            other = !line.starts_with('}');
            continue;
        }
        if let Some(c) = &class
            && line.trim_start().starts_with("constructor(`")
        {
            let c = c.clone();
            surface.add_member(&c, "()");
        }
        let Some(at) = line.find("fun `") else {
            continue;
        };
        let name = ident(&line[at + 5..]);
        if name.is_empty() || !line[at + 5 + name.len()..].starts_with("`(") {
            continue;
        }
        match &class {
            Some(c) => {
                let c = c.clone();
                surface.add_member(&c, name);
            }
            None => {
                surface.free.insert(name.to_owned());
            }
        }
    }
}

/// Hand-written Kotlin: extension functions `fun Type.name(`, members of `object Name {` or of
/// a column-0 `class Name` (until its closing `}` in column 0; the Java API's classes, such as
/// `StorefrontClient`, with nested builders and companions counted as the class's) and
/// top-level `fun name(`.
pub fn kotlin_handwritten(text: &str, surface: &mut Surface) {
    let mut object: Option<String> = None;
    for line in text.lines() {
        if line.starts_with('}') {
            object = None;
            continue;
        }
        if let Some(name) = declared(line, "object ").or_else(|| declared(line, "class ")) {
            object = Some(name.to_owned());
            continue;
        }
        let trimmed = line.trim_start();
        let Some(at) = trimmed.find("fun ") else {
            continue;
        };
        let before = trimmed[..at].trim();
        if !before.is_empty()
            && !before
                .split_whitespace()
                .all(|w| ["suspend", "public", "inline", "override", "operator"].contains(&w))
        {
            continue;
        }
        let mut rest = trimmed[at + 4..].trim_start();
        if rest.starts_with('<') {
            let Some(close) = rest.find('>') else {
                continue;
            };
            rest = rest[close + 1..].trim_start();
        }
        let first = ident(rest);
        if first.is_empty() {
            continue;
        }
        let after = &rest[first.len()..];
        if let Some(member_rest) = after.strip_prefix('.') {
            let member = ident(member_rest);
            if !member.is_empty() && member_rest[member.len()..].starts_with('(') {
                surface.add_member(first, member);
            }
        } else if after.starts_with('(') {
            match (
                &object,
                line.starts_with("fun ") || line.starts_with("suspend fun "),
            ) {
                (_, true) => {
                    surface.free.insert(first.to_owned());
                }
                (Some(o), false) => {
                    let o = o.clone();
                    surface.add_member(&o, first);
                }
                (None, false) => {}
            }
        }
    }
}

// ---------------------------------------------------------------- Swift

/// Swift: the generated uniffi file and any hand-written sources beside it.
pub fn swift(dir: &Path) -> Result<Surface, String> {
    let mut surface = Surface::default();
    for file in files_with_ext(dir, "swift")? {
        swift_source(&read(&file)?, &mut surface);
    }
    Ok(surface)
}

/// A column-0 line that ends the body of a class or extension.
fn swift_top_level(line: &str) -> bool {
    [
        "open class ",
        "public class ",
        "public struct ",
        "public func ",
        "public enum ",
        "public protocol ",
        "extension ",
        "public extension ",
        "fileprivate ",
        "private ",
        "internal ",
    ]
    .iter()
    .any(|k| line.starts_with(k))
}

/// Swift: members `open func name(` / `public func name(` inside `open class Name` or
/// `extension Name`, constructors `public convenience init(` (uniffi's constructors), top-level
/// `public func name(` (uniffi's `FfiConverter*` and `uniffi*` plumbing left out).
pub fn swift_source(text: &str, surface: &mut Surface) {
    let mut class: Option<String> = None;
    for line in text.lines() {
        if swift_top_level(line) {
            class = declared(line, "open class ")
                .or_else(|| declared(line, "public class "))
                .or_else(|| declared(line, "extension "))
                .or_else(|| declared(line, "public extension "))
                .map(str::to_owned);
            if let Some(name) = declared(line, "public func ")
                && !name.starts_with("FfiConverter")
                && !name.starts_with("uniffi")
            {
                surface.free.insert(name.to_owned());
            }
            continue;
        }
        let Some(c) = class.clone() else { continue };
        let trimmed = line.trim_start();
        if trimmed.starts_with("public convenience init(") {
            surface.add_member(&c, "()");
        }
        for prefix in ["open func ", "public func ", "public static func "] {
            if let Some(name) = declared(trimmed, prefix)
                && !name.starts_with("uniffi")
            {
                surface.add_member(&c, name);
            }
        }
    }
}

// ---------------------------------------------------------------- C

/// C: every function declared in the header (`name(` on a line that is not a comment or a
/// typedef).
pub fn c_header(text: &str) -> Surface {
    let mut surface = Surface::default();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//")
            || trimmed.starts_with('*')
            || trimmed.starts_with("/*")
            || trimmed.starts_with("typedef")
            || trimmed.starts_with('#')
        {
            continue;
        }
        let Some(open) = trimmed.find('(') else {
            continue;
        };
        let head = trimmed[..open].trim_end();
        let name_start = head
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let name = &head[name_start..];
        if name.starts_with("sf_") && name_start > 0 {
            surface.free.insert(name.to_owned());
        }
    }
    surface
}

// ---------------------------------------------------------------- Python

/// Lists, with `ast`, the package's `__all__` and the public `def`s of every class and module.
const PYTHON_AST: &str = r#"
import ast, json, pathlib, sys
package = pathlib.Path(sys.argv[1])
exported, classes, functions = [], {}, []
for path in sorted(package.glob("*.py")):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if path.name == "__init__.py" and isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                exported = [ast.literal_eval(e) for e in node.value.elts]
        if isinstance(node, ast.ClassDef):
            members = classes.setdefault(node.name, [])
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if not item.name.startswith("_") or item.name == "__init__":
                        members.append(item.name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(node.name)
print(json.dumps({"all": exported, "classes": classes, "functions": functions}))
"#;

/// Python: names in `__all__`; a class's members count when the class is exported, a function
/// when it is exported (`__init__` stands for the constructor, written `Type()`).
pub fn python(package: &Path) -> Result<Surface, String> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(PYTHON_AST)
        .arg(package)
        .output()
        .map_err(|e| format!("python3 (needed to read the Python package with ast): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 ast over {}: {}",
            package.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let parsed: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("python3 ast output: {e}"))?;
    let strings = |v: &serde_json::Value| -> BTreeSet<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let exported = strings(&parsed["all"]);
    let functions = strings(&parsed["functions"]);
    let mut surface = Surface::default();
    if let Some(classes) = parsed["classes"].as_object() {
        for (class, members) in classes {
            if !exported.contains(class) {
                continue;
            }
            for member in strings(members) {
                let member = if member == "__init__" {
                    "()".to_owned()
                } else {
                    member
                };
                surface.add_member(class, &member);
            }
        }
    }
    surface.free = exported
        .iter()
        .filter(|name| functions.contains(*name))
        .cloned()
        .collect();
    Ok(surface)
}

// ---------------------------------------------------------------- PHP

/// PHP: each `src/Name.php` declares one class `Name`; its `public [static] function`s are its
/// members (`__construct` is also written `Type()`).
pub fn php(dir: &Path) -> Result<Surface, String> {
    let mut surface = Surface::default();
    for file in files_with_ext(dir, "php")? {
        php_source(&read(&file)?, &mut surface);
    }
    Ok(surface)
}

/// Adds the classes and public methods declared in one PHP file.
pub fn php_source(text: &str, surface: &mut Surface) {
    let mut class: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let decl = ["final class ", "abstract class ", "class "]
            .iter()
            .find_map(|k| declared(trimmed, k));
        if let Some(name) = decl
            && !line.starts_with(' ')
        {
            class = Some(name.to_owned());
            surface.members.entry(name.to_owned()).or_default();
            continue;
        }
        let Some(c) = class.clone() else { continue };
        let name = declared(trimmed, "public function ")
            .or_else(|| declared(trimmed, "public static function "))
            .or_else(|| declared(trimmed, "final public function "));
        if let Some(name) = name {
            surface.add_member(&c, name);
            if name == "__construct" {
                surface.add_member(&c, "()");
            }
        }
    }
}
