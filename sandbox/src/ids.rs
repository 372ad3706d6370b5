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

/// `digits` random decimal digits from the system CSPRNG (rule: identifiers that grant access,
/// such as merchant payment order numbers on the control routes, are not guessable). Each digit
/// is drawn by rejection sampling, so every digit is uniform.
pub fn random_digits(digits: usize) -> String {
    let random = SystemRandom::new();
    let mut out = String::with_capacity(digits);
    let mut byte = [0u8; 1];
    while out.len() < digits {
        random
            .fill(&mut byte)
            .expect("the system random source is available");
        // 250 is the largest multiple of 10 below 256: larger bytes would bias the digits.
        if byte[0] < 250 {
            out.push(char::from(b'0' + byte[0] % 10));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn random_digits_are_digits_and_differ() {
        let a = super::random_digits(16);
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|b| b.is_ascii_digit()));
        assert_ne!(a, super::random_digits(16));
    }
}
