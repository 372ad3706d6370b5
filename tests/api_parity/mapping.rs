//! `bindings/api-parity.toml`: for each core operation, its symbol(s) in each binding.
//!
//! ```toml
//! [operations."Client::create_merchant_payment"]
//! kotlin = "Client.createMerchantPayment"            # one symbol
//! python = ["Client.create_merchant_payment", "AsyncClient.create_merchant_payment"]  # all must exist
//! c = { not_applicable = "why the operation has no place in this binding" }
//! php = { missing = "what is lacking" }              # a known gap: the check fails on it
//! ```
//!
//! Every operation names all five bindings; a reason is mandatory for `not_applicable`.

use std::collections::BTreeMap;

use crate::bindings::BINDINGS;

/// What one operation has in one binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// These symbols (all of them) implement the operation.
    Symbols(Vec<String>),
    /// The operation does not apply to this binding, for this reason.
    NotApplicable(String),
    /// A known gap, still failing the check.
    Missing(String),
}

/// The parsed mapping: operation to binding to entry.
pub type Mapping = BTreeMap<String, BTreeMap<String, Entry>>;

/// Parses the mapping file; every malformed part is an error in the returned list.
pub fn parse(text: &str) -> Result<Mapping, Vec<String>> {
    let table: toml::Table = text
        .parse()
        .map_err(|e| vec![format!("bindings/api-parity.toml: {e}")])?;
    let mut errors = Vec::new();
    let mut mapping = Mapping::new();
    for key in table.keys() {
        if key != "operations" {
            errors.push(format!("unknown top-level key `{key}`"));
        }
    }
    let Some(ops) = table.get("operations").and_then(|v| v.as_table()) else {
        errors.push("no [operations] table".to_owned());
        return Err(errors);
    };
    for (op, value) in ops {
        let Some(bindings) = value.as_table() else {
            errors.push(format!("{op}: not a table"));
            continue;
        };
        let mut entries = BTreeMap::new();
        for (binding, v) in bindings {
            if !BINDINGS.contains(&binding.as_str()) {
                errors.push(format!("{op}: unknown binding `{binding}`"));
                continue;
            }
            match entry(v) {
                Ok(e) => {
                    entries.insert(binding.clone(), e);
                }
                Err(why) => errors.push(format!("{op}.{binding}: {why}")),
            }
        }
        mapping.insert(op.clone(), entries);
    }
    if errors.is_empty() {
        Ok(mapping)
    } else {
        Err(errors)
    }
}

fn entry(v: &toml::Value) -> Result<Entry, String> {
    match v {
        toml::Value::String(s) if !s.trim().is_empty() => Ok(Entry::Symbols(vec![s.clone()])),
        toml::Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|i| match i.as_str() {
                Some(s) if !s.trim().is_empty() => Ok(s.to_owned()),
                _ => Err("symbols must be non-empty strings".to_owned()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Entry::Symbols),
        toml::Value::Table(t) if t.len() == 1 => {
            let (k, reason) = t.iter().next().expect("one key");
            let reason = reason
                .as_str()
                .filter(|r| !r.trim().is_empty())
                .ok_or_else(|| format!("`{k}` needs a non-empty reason"))?
                .to_owned();
            match k.as_str() {
                "not_applicable" => Ok(Entry::NotApplicable(reason)),
                "missing" => Ok(Entry::Missing(reason)),
                other => Err(format!("unknown key `{other}` (not_applicable or missing)")),
            }
        }
        _ => Err(
            "expected a symbol, a list of symbols, { not_applicable = \"reason\" } or \
                  { missing = \"what\" }"
                .to_owned(),
        ),
    }
}
