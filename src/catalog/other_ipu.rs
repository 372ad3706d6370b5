//! Builds `other_ipu` from a product's `other_ipu_cnf`.
//!
//! Contract rule: "Each entry is of the form key=label=flag (a label is display text); the JSON
//! key used in `other_ipu` is the key part, never the label". Flag `1` marks a required input.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::catalog::model::Product;
use crate::error::{Error, Result};

/// One parsed `other_ipu_cnf` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherIpuField {
    /// JSON key to use in `other_ipu`.
    pub key: String,
    /// Display text for the input (never a key).
    pub label: String,
    /// Whether the input is required (flag `1`).
    pub required: bool,
}

impl OtherIpuField {
    /// Parses `key=label=flag`. The label may itself contain `=`; the key is before the first
    /// `=`, the flag after the last.
    pub fn parse(entry: &str) -> Result<Self> {
        let bad = || Error::validation("other_ipu_cnf", format!("malformed entry {entry:?}"));
        let (key, rest) = entry.split_once('=').ok_or_else(bad)?;
        let (label, flag) = rest.rsplit_once('=').ok_or_else(bad)?;
        let key = key.trim();
        if key.is_empty() {
            return Err(bad());
        }
        let required = match flag.trim() {
            "1" | "true" => true,
            "0" | "false" | "" => false,
            _ => return Err(bad()),
        };
        Ok(OtherIpuField {
            key: key.to_owned(),
            label: label.to_owned(),
            required,
        })
    }
}

/// The extra-input form of a product: the fields to ask for, and a checked `other_ipu` map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherIpuForm {
    fields: Vec<OtherIpuField>,
}

impl OtherIpuForm {
    /// Parses the product's `other_ipu_cnf` (none means no extra input).
    pub fn for_product(product: &Product) -> Result<Self> {
        let fields = product
            .other_ipu_cnf
            .iter()
            .flatten()
            .map(|e| OtherIpuField::parse(e))
            .collect::<Result<Vec<_>>>()?;
        Ok(OtherIpuForm { fields })
    }

    /// The fields, in configuration order.
    pub fn fields(&self) -> &[OtherIpuField] {
        &self.fields
    }

    /// Builds `other_ipu` from `(key, value)` pairs: every key must be a configured key (a label
    /// is refused), every required field needs a non-blank value. Empty optional values are
    /// left out.
    pub fn build<I, K, V>(&self, values: I) -> Result<BTreeMap<String, String>>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut out = BTreeMap::new();
        for (k, v) in values {
            let (k, v) = (k.into(), v.into());
            if !self.fields.iter().any(|f| f.key == k) {
                let hint = if self.fields.iter().any(|f| f.label == k) {
                    " (that is a label; use the key part of other_ipu_cnf)"
                } else {
                    ""
                };
                return Err(Error::validation(
                    format!("other_ipu.{k}"),
                    format!("not a key of the product's other_ipu_cnf{hint}"),
                ));
            }
            if !v.trim().is_empty() {
                out.insert(k, v);
            }
        }
        for f in self.fields.iter().filter(|f| f.required) {
            if !out.contains_key(&f.key) {
                return Err(Error::validation(
                    format!("other_ipu.{}", f.key),
                    format!("required input {:?} is missing", f.label),
                ));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> OtherIpuForm {
        OtherIpuForm {
            fields: vec![
                OtherIpuField::parse("recipient_email=Recipient email=1").unwrap(),
                OtherIpuField::parse("gift_message=Gift message=0").unwrap(),
            ],
        }
    }

    #[test]
    fn parses_key_label_flag() {
        let f = OtherIpuField::parse("note=a=b label=0").unwrap();
        assert_eq!(
            (f.key.as_str(), f.label.as_str(), f.required),
            ("note", "a=b label", false)
        );
        assert!(OtherIpuField::parse("nokey").is_err());
        assert!(OtherIpuField::parse("=label=1").is_err());
        assert!(OtherIpuField::parse("k=l=maybe").is_err());
    }

    #[test]
    fn build_uses_keys_never_labels_and_enforces_required() {
        let f = form();
        let m = f.build([("recipient_email", "a@b.example")]).unwrap();
        assert_eq!(m.len(), 1);
        let e = f.build([("Recipient email", "a@b.example")]).unwrap_err();
        assert!(e.to_string().contains("label"), "{e}");
        let e = f.build([("gift_message", "hi")]).unwrap_err();
        assert_eq!(e.field(), Some("other_ipu.recipient_email"));
        let e = f.build([("recipient_email", "  ")]).unwrap_err();
        assert_eq!(e.field(), Some("other_ipu.recipient_email"));
    }
}
