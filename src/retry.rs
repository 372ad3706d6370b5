//! The resend decision as a pure function: what the request path does after one attempt.
//!
//! Contract rules: branch on HTTP status and `error`; 202 `provider_result_pending` "is not
//! success of payment" and is never re-sent; "429 rate_limited: wait per the `Retry-After`
//! header"; 5xx and the 503 codes are retried with limited backoff; reads, token requests and
//! merchant-payment create with the same key are safe to re-send; catalog order creation and
//! payment start are never re-sent once they may have been processed ("repeated POSTs may
//! create different orders, and a timeout does not prove failure"): only a definite rejection
//! (400, 403, 404, 409, 410, 422) is a plain error, anything else is an unknown outcome. A 401
//! `invalid_token` renews the token and re-sends once (a never-resent write only renews).
//!
//! [`decide`] takes what the attempt brought and where the call stands and returns a
//! [`Decision`]; `transport.rs` carries it out (I/O, sleeping, spans). The table tests below
//! mirror the rows of `docs/fault-matrix.md`, which the fault-matrix test proves over real HTTP.

use std::time::Duration;

use crate::error::{ErrorCode, TransportKind};
use crate::operation::Resend;

/// What one attempt brought, as the decision needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen<'a> {
    /// A usable 2xx answer.
    Answer,
    /// An error answer (or 202 `provider_result_pending`).
    Api {
        status: u16,
        error: &'a ErrorCode,
        retry_after: Option<Duration>,
    },
    /// No answer: `sent` tells whether the request may have reached the service.
    Transport { kind: TransportKind, sent: bool },
}

/// Where the call stands when the attempt is over.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Standing {
    /// Whether the operation may be sent again.
    pub resend: Resend,
    /// Attempts made so far, this one included (a token refresh does not count).
    pub attempts: u32,
    /// The policy's cap on attempts.
    pub max_attempts: u32,
    /// Whether this call already renewed its token after a 401.
    pub token_renewed: bool,
    /// Whether the attempt carried a bearer token.
    pub carried_token: bool,
    /// Longest `Retry-After` the policy waits for.
    pub max_retry_after: Duration,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Return the answer.
    Success,
    /// Return 202 `provider_result_pending`: not success, never re-sent.
    Pending,
    /// Return the error as it is (`Error::Api` or `Error::Transport`).
    Fail,
    /// Return `Error::OutcomeUnknown`: the request may have been processed.
    OutcomeUnknown,
    /// A never-resent write answered 401: make sure the next call does not carry the rejected
    /// token, then return (a definite rejection is not; 401 is an unknown outcome).
    RenewTokenThenOutcomeUnknown,
    /// Renew the rejected token and send again (not counted as a retry).
    RenewTokenAndResend,
    /// Send again after `Retry-After` (`Some`) or after the policy's backoff (`None`).
    Resend { after: Option<Duration> },
}

/// Whether an error answer to a request that is never re-sent proves it was not processed: the
/// contract's own rejections of the request's content (400, 422), its permission or ownership
/// (403, 404), or its state (409, 410). A 401 or 429 may come from a layer other than the one
/// that processes the order (and the contract sets no catalog rate limit), a 3xx is not followed,
/// and 5xx says nothing; those leave the outcome unknown.
pub(crate) fn definite_rejection(status: u16) -> bool {
    matches!(status, 400 | 403 | 404 | 409 | 410 | 422)
}

/// The resend decision after one attempt (pure: no I/O, no clock).
pub(crate) fn decide(seen: Seen<'_>, at: Standing) -> Decision {
    let never = at.resend == Resend::Never;
    let retryable = |after: Option<Duration>| {
        if at.attempts >= at.max_attempts {
            Decision::Fail
        } else {
            Decision::Resend { after }
        }
    };
    match seen {
        Seen::Answer => Decision::Success,
        Seen::Api { error, .. } if *error == ErrorCode::ProviderResultPending => Decision::Pending,
        Seen::Api { status, .. } if never => {
            if definite_rejection(status) {
                Decision::Fail
            } else if status == 401 && at.carried_token {
                Decision::RenewTokenThenOutcomeUnknown
            } else {
                Decision::OutcomeUnknown
            }
        }
        Seen::Api {
            status: 401, error, ..
        } if *error == ErrorCode::InvalidToken && !at.token_renewed && at.carried_token => {
            Decision::RenewTokenAndResend
        }
        Seen::Api {
            status: 429,
            retry_after,
            ..
        } => match retry_after {
            Some(wait) if wait > at.max_retry_after => Decision::Fail,
            wait => retryable(wait),
        },
        Seen::Api {
            status,
            retry_after,
            ..
        } if status >= 500 => retryable(retry_after.filter(|wait| *wait <= at.max_retry_after)),
        Seen::Api { .. } => Decision::Fail,
        // Certificate and handshake failures do not heal by retrying.
        Seen::Transport {
            kind: TransportKind::Tls,
            ..
        } => Decision::Fail,
        Seen::Transport { sent: true, .. } if never => Decision::OutcomeUnknown,
        // The same request would bring the same oversized answer again.
        Seen::Transport {
            kind: TransportKind::BodyTooLarge,
            ..
        } => Decision::Fail,
        Seen::Transport { .. } => retryable(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fault columns of `docs/fault-matrix.md`, as the attempt sees them.
    fn fault(name: &str, code: &'static ErrorCode) -> Seen<'static> {
        let api = |status, retry_after| Seen::Api {
            status,
            error: code,
            retry_after,
        };
        match name {
            "latency > timeout" => Seen::Transport {
                kind: TransportKind::Timeout,
                sent: true,
            },
            // The sandbox closes the connection after reading the request: to the client the
            // request was sent (it cannot know the handler did not run).
            "drop before" => Seen::Transport {
                kind: TransportKind::Connection,
                sent: true,
            },
            "drop after" => Seen::Transport {
                kind: TransportKind::Connection,
                sent: true,
            },
            "2xx oversized" => Seen::Transport {
                kind: TransportKind::BodyTooLarge,
                sent: true,
            },
            "401" => api(401, None),
            "429 + Retry-After" => api(429, Some(Duration::from_secs(1))),
            "429" => api(429, None),
            "500" => api(500, None),
            "503" => api(503, None),
            "202 pending" => api(202, None),
            other => panic!("no fault {other}"),
        }
    }

    fn code(name: &str) -> &'static ErrorCode {
        static INVALID_TOKEN: ErrorCode = ErrorCode::InvalidToken;
        static RATE_LIMITED: ErrorCode = ErrorCode::RateLimited;
        static SERVER_ERROR: ErrorCode = ErrorCode::ServerError;
        static UNAVAILABLE: ErrorCode = ErrorCode::RateLimitUnavailable;
        static PENDING: ErrorCode = ErrorCode::ProviderResultPending;
        static NONE: ErrorCode = ErrorCode::ServerError;
        match name {
            "401" => &INVALID_TOKEN,
            "429" | "429 + Retry-After" => &RATE_LIMITED,
            "500" => &SERVER_ERROR,
            "503" => &UNAVAILABLE,
            "202 pending" => &PENDING,
            _ => &NONE,
        }
    }

    fn first_attempt(resend: Resend) -> Standing {
        Standing {
            resend,
            attempts: 1,
            max_attempts: 4,
            token_renewed: false,
            carried_token: true,
            max_retry_after: Duration::from_secs(5),
        }
    }

    /// One row per fault column of the matrix: what a safe operation (reads, token request,
    /// merchant-payment create, re-queue) and a never-resent one (catalog order, payment start)
    /// do after the first attempt. "RetriedThenOk" in the matrix is `Resend` here; the matrix's
    /// final `Api(429)` / `Api(500)` after 4 attempts is the capped row below.
    #[test]
    fn first_attempt_matches_the_fault_matrix() {
        use Decision::*;
        let rows: &[(&str, Decision, Decision)] = &[
            ("latency > timeout", Resend { after: None }, OutcomeUnknown),
            ("drop before", Resend { after: None }, OutcomeUnknown),
            ("drop after", Resend { after: None }, OutcomeUnknown),
            ("2xx oversized", Fail, OutcomeUnknown),
            ("401", RenewTokenAndResend, RenewTokenThenOutcomeUnknown),
            (
                "429 + Retry-After",
                Resend {
                    after: Some(Duration::from_secs(1)),
                },
                OutcomeUnknown,
            ),
            ("429", Resend { after: None }, OutcomeUnknown),
            ("500", Resend { after: None }, OutcomeUnknown),
            ("503", Resend { after: None }, OutcomeUnknown),
            ("202 pending", Pending, Pending),
        ];
        for (name, safe, never) in rows {
            let seen = fault(name, code(name));
            assert_eq!(
                decide(seen, first_attempt(crate::operation::Resend::Safe)),
                *safe,
                "safe, {name}"
            );
            assert_eq!(
                decide(seen, first_attempt(crate::operation::Resend::Never)),
                *never,
                "never, {name}"
            );
        }
        // A connection that was never made reached nobody: even a never-resent write goes again.
        let refused = Seen::Transport {
            kind: TransportKind::Connect,
            sent: false,
        };
        assert_eq!(
            decide(refused, first_attempt(crate::operation::Resend::Never)),
            Decision::Resend { after: None }
        );
    }

    /// The matrix's `Api(429)` and `Api(500)` columns: every attempt failed, the cap ends it.
    #[test]
    fn the_attempt_cap_ends_resending() {
        let last = Standing {
            attempts: 4,
            ..first_attempt(Resend::Safe)
        };
        for name in ["429", "500", "503", "drop after", "latency > timeout"] {
            assert_eq!(
                decide(fault(name, code(name)), last),
                Decision::Fail,
                "{name}"
            );
        }
    }

    /// The rest of the rules: a second 401 is returned, a `Retry-After` beyond the policy's
    /// longest wait is returned at once, a 5xx `Retry-After` within it is honoured, TLS never
    /// heals, and a never-resent write's definite rejections are plain errors.
    #[test]
    fn the_remaining_rules() {
        let safe = first_attempt(Resend::Safe);
        let renewed = Standing {
            token_renewed: true,
            ..safe
        };
        assert_eq!(decide(fault("401", code("401")), renewed), Decision::Fail);
        let no_token = Standing {
            carried_token: false,
            ..safe
        };
        assert_eq!(decide(fault("401", code("401")), no_token), Decision::Fail);
        let long = Seen::Api {
            status: 429,
            error: code("429"),
            retry_after: Some(Duration::from_secs(60)),
        };
        assert_eq!(decide(long, safe), Decision::Fail);
        let busy = Seen::Api {
            status: 503,
            error: code("503"),
            retry_after: Some(Duration::from_secs(2)),
        };
        assert_eq!(
            decide(busy, safe),
            Decision::Resend {
                after: Some(Duration::from_secs(2))
            }
        );
        let tls = Seen::Transport {
            kind: TransportKind::Tls,
            sent: false,
        };
        assert_eq!(decide(tls, safe), Decision::Fail);
        let never = first_attempt(Resend::Never);
        for status in [400, 403, 404, 409, 410, 422] {
            let seen = Seen::Api {
                status,
                error: code(""),
                retry_after: None,
            };
            assert_eq!(decide(seen, never), Decision::Fail, "{status}");
            assert_eq!(decide(seen, safe), Decision::Fail, "{status}");
        }
        for status in [301, 302, 401, 429, 500, 502] {
            let seen = Seen::Api {
                status,
                error: code(""),
                retry_after: None,
            };
            assert_ne!(decide(seen, never), Decision::Fail, "{status}");
        }
        assert_eq!(decide(Seen::Answer, never), Decision::Success);
    }
}
