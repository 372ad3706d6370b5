//! Random identifiers and secrets.

use ring::rand::{SecureRandom, SystemRandom};

/// `prefix` followed by `bytes` random bytes in lowercase hex.
pub fn random_hex(prefix: &str, bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    SystemRandom::new()
        .fill(&mut buf)
        .expect("the system random source is available");
    format!("{prefix}{}", hex::encode(buf))
}
