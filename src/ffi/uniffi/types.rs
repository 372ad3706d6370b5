//! Value types shared by the records: times as the host language's own time types, and JSON
//! values of fields whose shape the contract does not show.
//!
//! Contract rules: `expires_at` and `occurred_at` are RFC 3339 with zone (zone preserved);
//! catalog times are `YYYY-MM-DD HH:mm:ss` without zone. Kotlin gets `java.time.OffsetDateTime`
//! and `java.time.LocalDateTime` (see uniffi.toml); Swift gets the text (no zoned date type).

use std::collections::HashMap;

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

// RFC 3339 text with the service's own offset; Kotlin lifts it with OffsetDateTime.parse.
uniffi::custom_type!(OffsetDateTime, String, {
    remote,
    lower: |t| t.format(&Rfc3339).unwrap_or_default(),
    try_lift: |s| Ok(OffsetDateTime::parse(&s, &Rfc3339)?),
});

// Catalog time without zone, `YYYY-MM-DD HH:mm:ss`; Kotlin lifts it to LocalDateTime.
uniffi::custom_type!(PrimitiveDateTime, String, {
    remote,
    lower: |t| t.format(format_description!("[year]-[month]-[day] [hour]:[minute]:[second]")).unwrap_or_default(),
    try_lift: |s| Ok(PrimitiveDateTime::parse(&s, format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"))?),
});

/// A JSON value of a field whose shape the contract does not show (userinfo, delivery-record
/// details). Numbers stay exact decimal text: no floating point.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum JsonValue {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool {
        /// The value.
        value: bool,
    },
    /// A number, as its exact JSON text.
    Number {
        /// The JSON text of the number (`12`, `-3.5`).
        text: String,
    },
    /// A string.
    Text {
        /// The value.
        value: String,
    },
    /// An array.
    Array {
        /// The elements.
        items: Vec<JsonValue>,
    },
    /// An object.
    Object {
        /// The members.
        fields: HashMap<String, JsonValue>,
    },
}

impl From<serde_json::Value> for JsonValue {
    fn from(value: serde_json::Value) -> Self {
        use serde_json::Value as V;
        match value {
            V::Null => JsonValue::Null,
            V::Bool(value) => JsonValue::Bool { value },
            V::Number(n) => JsonValue::Number {
                text: n.to_string(),
            },
            V::String(value) => JsonValue::Text { value },
            V::Array(items) => JsonValue::Array {
                items: items.into_iter().map(Into::into).collect(),
            },
            V::Object(map) => JsonValue::Object {
                fields: json_map(map),
            },
        }
    }
}

/// Converts a JSON object into a map of [`JsonValue`].
pub(crate) fn json_map(
    map: serde_json::Map<String, serde_json::Value>,
) -> HashMap<String, JsonValue> {
    map.into_iter().map(|(k, v)| (k, v.into())).collect()
}
