//! Sending one notification attempt: POST of the raw body with `X-Service-Event-ID`,
//! `X-Service-Timestamp` (Unix seconds of this attempt by the clock [`crate::clock::DeliveryTimestamp`]
//! chooses, real time by default; re-signed each time) and
//! `X-Service-Signature`. The shared client waits at most 8 seconds and never follows
//! redirects; only a 2xx acknowledges. The lock is not held while the request runs.
//!
//! The target is checked again at every attempt: an IP-literal host here, a host name on the
//! addresses it resolves to then ([`super::resolve::GuardedResolver`]). A target that is not
//! public (loopback only with the sandbox's loopback switch) is never connected to; the attempt
//! fails with `last_error` starting `refused:`.

use std::sync::Arc;

use super::address::classify_host;
use super::resolve::NonPublicTarget;
use super::signing::signature;
use super::store::{AttemptOutcome, DeliveryJob};
use crate::state::AppState;

/// Sends one attempt and records its outcome.
pub async fn deliver(shared: Arc<AppState>, job: DeliveryJob) {
    let timestamp = shared.delivery_timestamp.now(&shared.clock);
    let signature = signature(
        job.secret.expose().as_bytes(),
        timestamp,
        job.body.as_bytes(),
    );
    if let Some(refusal) = refuse_literal(&job.url, shared.allow_loopback_notify) {
        let outcome = AttemptOutcome {
            timestamp,
            signature,
            http_status: None,
            error: Some(refusal),
            finished_at: shared.clock.now(),
        };
        shared.db().notifications.finish(&job, outcome);
        return;
    }
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
        Err(e) if non_public(&e).is_some() => (None, non_public(&e).map(|r| r.to_string())),
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
    shared.db().notifications.finish(&job, outcome);
}

/// The refusal of a target whose host (an IP literal, or a name such as `localhost`) is not
/// permitted, before any connection; `None` when it may be tried (names are then checked on
/// the addresses they resolve to).
fn refuse_literal(url: &str, allow_loopback: bool) -> Option<String> {
    let Ok(url) = url::Url::parse(url) else {
        return Some("refused: notify_url is not a valid URL".to_owned());
    };
    let Some(host) = url.host() else {
        return Some("refused: notify_url names no host".to_owned());
    };
    let reach = classify_host(&host);
    (!reach.permitted(allow_loopback)).then(|| {
        format!(
            "refused: {host} is not a public address ({})",
            reach.reason()
        )
    })
}

/// The resolver's refusal somewhere in a request error's source chain.
fn non_public(error: &reqwest::Error) -> Option<&NonPublicTarget> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<NonPublicTarget>() {
            return Some(refusal);
        }
        source = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_targets_are_checked_before_connecting() {
        assert!(refuse_literal("https://10.0.0.1/n", true).is_some());
        assert!(refuse_literal("https://[::ffff:127.0.0.1]/n", true).is_some());
        assert!(refuse_literal("http://127.0.0.1:9/n", false).is_some());
        assert!(refuse_literal("http://127.0.0.1:9/n", true).is_none());
        assert!(refuse_literal("https://LOCALHOST./n", false).is_some());
        assert!(refuse_literal("https://hooks.shop.example/n", false).is_none());
    }
}
