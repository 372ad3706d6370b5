//! Checks of request parameters shared by the catalog and merchant-collection calls; a failure
//! is a `Validation` error and nothing is sent.

use crate::error::{Error, Result};

/// A path or body identifier (`order_no`, `gd_no`, ...) must not be empty or blank.
pub(crate) fn require_id(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::validation(field, "must not be empty"));
    }
    Ok(())
}

/// The contract's list `limit` (1 to 100) as a query parameter; none when not given.
pub(crate) fn limit_query(limit: Option<u32>) -> Result<Option<(&'static str, String)>> {
    match limit {
        None => Ok(None),
        Some(l) if (1..=100).contains(&l) => Ok(Some(("limit", l.to_string()))),
        Some(_) => Err(Error::validation("limit", "must be 1 to 100")),
    }
}
