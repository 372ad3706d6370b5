//! Sending one notification attempt: POST of the raw body with `X-Service-Event-ID`,
//! `X-Service-Timestamp` (sandbox-clock Unix seconds of this attempt, re-signed each time) and
//! `X-Service-Signature`. The shared client waits at most 8 seconds and never follows
//! redirects; only a 2xx acknowledges. The world lock is not held while the request runs.

use std::sync::Arc;

use super::signing::signature;
use super::store::{AttemptOutcome, DeliveryJob};
use crate::state::Shared;

/// Sends one attempt and records its outcome.
pub async fn deliver(shared: Arc<Shared>, job: DeliveryJob) {
    let timestamp = shared.clock.now().unix_timestamp();
    let signature = signature(
        job.secret.expose().as_bytes(),
        timestamp,
        job.body.as_bytes(),
    );
    let result = shared
        .http
        .post(&job.url)
        .header("Content-Type", "application/json")
        .header("X-Service-Event-ID", &job.event_id)
        .header("X-Service-Timestamp", timestamp.to_string())
        .header("X-Service-Signature", &signature)
        .body(job.body.clone())
        .send()
        .await;
    let (http_status, error) = match result {
        Ok(response) => {
            let status = response.status();
            // The answer body is ignored.
            drop(response);
            if status.is_success() {
                (Some(status.as_u16()), None)
            } else if status.is_redirection() {
                (
                    Some(status.as_u16()),
                    Some(format!(
                        "HTTP {} (redirects are not followed)",
                        status.as_u16()
                    )),
                )
            } else {
                (
                    Some(status.as_u16()),
                    Some(format!("HTTP {}", status.as_u16())),
                )
            }
        }
        Err(e) if e.is_timeout() => (None, Some("timeout after 8 s".to_owned())),
        Err(e) if e.is_connect() => (None, Some("connection failed".to_owned())),
        Err(_) => (None, Some("request failed".to_owned())),
    };
    let outcome = AttemptOutcome {
        timestamp,
        signature,
        http_status,
        error,
        finished_at: shared.clock.now(),
    };
    shared.world().notifications.finish(&job, outcome);
}
