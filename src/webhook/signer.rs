//! A signer producing exactly what the service sends, for host apps' own receiver tests.

use ring::hmac;

use super::{HEADER_EVENT_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP};
use crate::secret::Secret;

/// Signs notification bodies like the service does: `sha256=` + lowercase hex
/// HMAC-SHA256(secret, timestamp + "." + body).
#[derive(Debug, Clone)]
pub struct TestSigner {
    secret: Secret,
}

impl TestSigner {
    /// A signer with this secret.
    pub fn new(secret: impl Into<Secret>) -> Self {
        TestSigner {
            secret: secret.into(),
        }
    }

    /// The `X-Service-Signature` value for `body` delivered at `timestamp` (Unix seconds).
    pub fn signature(&self, timestamp: i64, body: &[u8]) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA256, self.secret.expose().as_bytes());
        let mut ctx = hmac::Context::with_key(&key);
        ctx.update(timestamp.to_string().as_bytes());
        ctx.update(b".");
        ctx.update(body);
        format!("sha256={}", hex::encode(ctx.sign().as_ref()))
    }

    /// The three headers of a delivery: event id, timestamp and signature.
    pub fn headers(
        &self,
        event_id: &str,
        timestamp: i64,
        body: &[u8],
    ) -> [(&'static str, String); 3] {
        [
            (HEADER_EVENT_ID, event_id.to_owned()),
            (HEADER_TIMESTAMP, timestamp.to_string()),
            (HEADER_SIGNATURE, self.signature(timestamp, body)),
        ]
    }
}
