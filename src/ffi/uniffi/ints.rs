//! Integer conversions between the core's unsigned types and the signed `Int`/`Long` that
//! Kotlin and Swift code uses naturally. Outputs saturate (the service's counts never approach
//! 2^31 / 2^63); inputs are checked, a negative value being a `Validation` error.

use super::error::{Result, invalid};

/// A count from the core as `Int` (saturating).
pub(crate) fn int(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

/// A count or version from the core as `Long` (saturating).
pub(crate) fn long(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A non-negative `Int` from the host for the core.
pub(crate) fn unsigned(field: &str, value: i32) -> Result<u32> {
    u32::try_from(value).map_err(|_| invalid(field, "must not be negative"))
}

/// A non-negative `Long` from the host for the core.
pub(crate) fn unsigned_long(field: &str, value: i64) -> Result<u64> {
    u64::try_from(value).map_err(|_| invalid(field, "must not be negative"))
}

/// An optional non-negative `Int` from the host.
pub(crate) fn unsigned_opt(field: &str, value: Option<i32>) -> Result<Option<u32>> {
    value.map(|v| unsigned(field, v)).transpose()
}
