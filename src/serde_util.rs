//! Serde helpers for the service's wire formats (durations in seconds, catalog local times).

/// `Option<Duration>` as whole seconds.
pub(crate) mod opt_duration_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_some(&d.as_secs()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_secs))
    }
}

/// Catalog times: `YYYY-MM-DD HH:mm:ss`, no time zone, or null. Parsed as a
/// [`time::PrimitiveDateTime`]; no zone is invented.
pub mod catalog_time {
    use serde::{Deserialize, Deserializer, Serializer};
    use time::PrimitiveDateTime;
    use time::format_description::BorrowedFormatItem;
    use time::macros::format_description;

    /// The catalog wire format `YYYY-MM-DD HH:mm:ss`.
    pub const FORMAT: &[BorrowedFormatItem<'static>] =
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");

    /// Parses a catalog time string.
    pub fn parse(text: &str) -> Result<PrimitiveDateTime, time::error::Parse> {
        PrimitiveDateTime::parse(text, FORMAT)
    }

    /// Formats a catalog time string.
    pub fn format(value: &PrimitiveDateTime) -> String {
        value.format(FORMAT).unwrap_or_default()
    }

    pub(crate) fn serialize<S: Serializer>(
        v: &Option<PrimitiveDateTime>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(t) => s.serialize_some(&format(t)),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<PrimitiveDateTime>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) if s.is_empty() => Ok(None),
            Some(s) => parse(&s).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::catalog_time;

    #[test]
    fn catalog_time_parses_without_inventing_a_zone() {
        let t = catalog_time::parse("2026-11-22 13:05:09").unwrap();
        assert_eq!(t.hour(), 13);
        assert_eq!(catalog_time::format(&t), "2026-11-22 13:05:09");
        assert!(catalog_time::parse("2026-11-22T13:05:09Z").is_err());
    }
}
