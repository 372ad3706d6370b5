//! Random bytes from the system's CSPRNG (ring's `SystemRandom`: `getrandom(2)` on Linux) for
//! inbox claim tokens, shared-state lease holders, rate-entry suffixes and retry jitter. A
//! failure is returned to the caller, which turns it into its own error or a safe fallback
//! (issue 24 item 5): never ignored, never a silent run of zero bytes.

use ring::rand::{SecureRandom, SystemRandom};

/// The system's random number generator failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unavailable;

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the system's random number generator failed (getrandom)")
    }
}

/// `N` random bytes as lowercase hex.
#[cfg_attr(
    not(any(
        feature = "store-sqlite",
        feature = "store-redis",
        feature = "store-postgres"
    )),
    allow(dead_code)
)]
pub(crate) fn hex<const N: usize>() -> Result<String, Unavailable> {
    Ok(hex::encode(bytes::<N>()?))
}

/// `N` random bytes.
pub(crate) fn bytes<const N: usize>() -> Result<[u8; N], Unavailable> {
    let mut out = [0u8; N];
    SystemRandom::new()
        .fill(&mut out)
        .map_err(|_| Unavailable)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_draws_differ_and_have_the_asked_length() {
        let (a, b) = (hex::<16>().unwrap(), hex::<16>().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
