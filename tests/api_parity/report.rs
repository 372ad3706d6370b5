//! Compares the core's operations with the mapping and the bindings' symbols; renders the
//! operation × binding table (printed by the check, and the content of `docs/api-parity.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::bindings::{BINDINGS, Surface, separator};
use crate::core_ops::CoreSurface;
use crate::mapping::{Entry, Mapping};

/// The state of one cell of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// Every named symbol exists.
    Present(Vec<String>),
    /// Declared not applicable, with the reason.
    NotApplicable(String),
    /// Declared missing in the mapping, with the note.
    Missing(String),
    /// Named symbols that the binding does not declare (with the ones that do exist).
    NotFound {
        absent: Vec<String>,
        present: Vec<String>,
    },
    /// The mapping has no entry for this operation and binding.
    NoEntry,
}

/// The comparison: one row per core operation, plus problems that are not cells.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Operation to binding to cell.
    pub rows: BTreeMap<String, BTreeMap<&'static str, Cell>>,
    /// Mapping entries whose operation is not (or no longer) a core operation.
    pub stale: Vec<String>,
}

impl Comparison {
    /// Every failure, one line each (empty when the bindings are complete).
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (op, cells) in &self.rows {
            for (binding, cell) in cells {
                match cell {
                    Cell::Present(_) | Cell::NotApplicable(_) => {}
                    Cell::Missing(note) => out.push(format!("{op} [{binding}]: missing ({note})")),
                    Cell::NotFound { absent, .. } => out.push(format!(
                        "{op} [{binding}]: symbol not found: {}",
                        absent.join(", ")
                    )),
                    Cell::NoEntry => out.push(format!(
                        "{op} [{binding}]: no entry in bindings/api-parity.toml"
                    )),
                }
            }
        }
        for op in &self.stale {
            out.push(format!(
                "{op}: in bindings/api-parity.toml but not a public core operation"
            ));
        }
        out
    }
}

/// Compares the core operations with the mapping and what each binding declares.
pub fn compare(
    core: &CoreSurface,
    mapping: &Mapping,
    surfaces: &BTreeMap<&'static str, Surface>,
) -> Comparison {
    let mut cmp = Comparison::default();
    for op in core.operations.keys() {
        let mut cells = BTreeMap::new();
        for binding in BINDINGS {
            let cell = match mapping.get(op).and_then(|m| m.get(binding)) {
                None => Cell::NoEntry,
                Some(Entry::NotApplicable(r)) => Cell::NotApplicable(r.clone()),
                Some(Entry::Missing(n)) => Cell::Missing(n.clone()),
                Some(Entry::Symbols(symbols)) => {
                    let surface = &surfaces[binding];
                    let (present, absent): (Vec<String>, Vec<String>) = symbols
                        .iter()
                        .cloned()
                        .partition(|s| surface.has(s, separator(binding)));
                    if absent.is_empty() {
                        Cell::Present(present)
                    } else {
                        Cell::NotFound { absent, present }
                    }
                }
            };
            cells.insert(binding, cell);
        }
        cmp.rows.insert(op.clone(), cells);
    }
    cmp.stale = mapping
        .keys()
        .filter(|op| !core.operations.contains_key(*op))
        .cloned()
        .collect();
    cmp
}

fn code_list(symbols: &[String]) -> String {
    symbols
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join("<br>")
}

fn cell_text(cell: &Cell, notes: &mut Vec<String>) -> String {
    match cell {
        Cell::Present(s) => code_list(s),
        Cell::NotApplicable(reason) => {
            let n = match notes.iter().position(|r| r == reason) {
                Some(i) => i + 1,
                None => {
                    notes.push(reason.clone());
                    notes.len()
                }
            };
            format!("n/a [{n}]")
        }
        Cell::Missing(note) => format!("**MISSING**: {note}"),
        Cell::NotFound { absent, present } => {
            let mut t = format!("**NOT FOUND**: {}", code_list(absent));
            if !present.is_empty() {
                let _ = write!(t, " (found: {})", code_list(present));
            }
            t
        }
        Cell::NoEntry => "**NO ENTRY**".to_owned(),
    }
}

/// The Markdown document: the rules, the table, the reasons, the excluded items, failures.
pub fn render(core: &CoreSurface, cmp: &Comparison) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut t = String::new();
    t.push_str(
        "# API parity: core operations in every binding\n\n\
         Generated by `tests/api_parity` (`STOREFRONT_BLESS=1 cargo test --test api_parity`) \
         from the core's source (`src/`, read with `syn`), the mapping \
         `bindings/api-parity.toml` and the bindings' sources; the check \
         (`.ci/suites/05-api-parity.sh`) fails when a core operation has no entry, a named \
         symbol does not exist in its binding, an entry is marked missing, or this file is \
         stale. Do not edit by hand.\n\n\
         An *operation* is every public `fn`/`async fn` of the core (methods of public types, \
         free functions, methods of public traits the host implements, `FromStr` parsers) \
         except plain data handling: a **builder** (sync, `self` by value, returns `Self`), an \
         **accessor** (sync, only the receiver, no `Result`) or a **plain constructor** (sync, \
         no receiver, returns `Self`); those are listed at the end. Symbol notation: Kotlin and \
         Swift `Type.member`, `Type()` for a constructor, `name` for a top-level function; C the \
         header's function; Python `Type.method` / `name` exported by `__all__`; PHP \
         `Type::method`. The Kotlin column also names the Java forms in the same jar \
         (`StorefrontClient`, `StorefrontUserSession`, `StorefrontInbox`: a blocking method and \
         its `…Async` form returning `CompletableFuture`; `Storefront` statics).\n\n",
    );
    let header: Vec<&str> = vec!["Operation", "Kind", "Kotlin", "Swift", "C", "Python", "PHP"];
    let _ = writeln!(t, "| {} |", header.join(" | "));
    let _ = writeln!(t, "|{}", "---|".repeat(header.len()));
    for (op, cells) in &cmp.rows {
        let kind = core.operations[op].label();
        let cols: Vec<String> = BINDINGS
            .iter()
            .map(|b| cell_text(&cells[b], &mut notes))
            .collect();
        let _ = writeln!(t, "| `{op}` | {kind} | {} |", cols.join(" | "));
    }
    if !notes.is_empty() {
        t.push_str("\n## Not applicable: reasons\n\n");
        for (i, reason) in notes.iter().enumerate() {
            let _ = writeln!(t, "{}. {reason}", i + 1);
        }
    }
    t.push_str("\n## Public items that are not operations\n\n");
    let _ = writeln!(t, "| Item | Rule |\n|---|---|");
    for (item, rule) in &core.excluded {
        let _ = writeln!(t, "| `{item}` | {} |", rule.label());
    }
    let failures = cmp.failures();
    t.push_str("\n## Failures\n\n");
    if failures.is_empty() {
        t.push_str("None: every core operation is in every binding or declared not applicable.\n");
    } else {
        for f in &failures {
            let _ = writeln!(t, "- {f}");
        }
    }
    t
}
