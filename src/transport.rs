//! The one request path: token, headers, JSON, error mapping, retries, `Retry-After`, deadline,
//! response size cap, and a tracing span per attempt.
//!
//! Contract rules: branch on HTTP status and `error`; 202 `provider_result_pending` is not
//! success; reads, token requests and merchant-payment create (same key, same parameters) are
//! retried; catalog order creation and payment start are never re-sent once they may have been
//! processed; 401 `invalid_token` leads to one token refresh and one retry of the operations that
//! may be re-sent.
//!
//! An operation that is never re-sent (catalog order creation, payment start) gets a plain
//! [`Error::Api`] only for a definite rejection ([`crate::retry::definite_rejection`]); every other answer once
//! the request may have reached the service (timeout, lost connection, 401, 429, 5xx, a redirect,
//! an oversized or undecodable 2xx) is [`Error::OutcomeUnknown`]: the order may exist, the wallet
//! may be debited, and reporting a plain failure would invite a duplicate.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;
use tracing::Instrument;
use url::Url;

use crate::auth::{Bearer, CachedToken, ClientTokenCache, TokenResponse, UserTokenState};
use crate::config::{Config, ValidConfig};
use crate::error::{ApiError, Error, ErrorCode, Result, TransportKind};
use crate::operation::{Operation, Resend, TokenSubject};
use crate::rate_limit::{LimitClass, RateLimiter};
use crate::retry::{self, Decision, Seen, Standing};
use crate::secret::Secret;

/// Shared state of a [`crate::Client`]: one connection pool, one token cache, one set of rate
/// budgets, one cap on requests in flight.
pub(crate) struct Inner {
    pub http: reqwest::Client,
    pub config: Config,
    pub valid: ValidConfig,
    pub tokens: ClientTokenCache,
    pub limiter: RateLimiter,
    pub in_flight: tokio::sync::Semaphore,
    /// The shared store behind `tokens` and `limiter`, when configured.
    pub shared: Option<Arc<crate::store::SharedState>>,
}

/// Which token a request carries.
#[derive(Clone, Copy)]
pub(crate) enum Auth<'a> {
    /// The client-credentials token.
    Client,
    /// A user session's token.
    User(&'a UserTokenState),
    /// No bearer token (the token request itself).
    None,
}

impl Auth<'_> {
    fn subject(&self) -> Option<TokenSubject> {
        match self {
            Auth::Client => Some(TokenSubject::Client),
            Auth::User(_) => Some(TokenSubject::User),
            Auth::None => None,
        }
    }
}

/// Request body.
pub(crate) enum Body {
    Empty,
    Json(Vec<u8>),
    Form(Vec<(&'static str, String)>),
}

impl Body {
    /// A JSON body, serialized once so that every retry sends the same bytes.
    pub fn json<T: serde::Serialize>(value: &T) -> Result<Body> {
        serde_json::to_vec(value)
            .map(Body::Json)
            .map_err(|e| Error::validation("body", e.to_string()))
    }
}

impl Drop for Body {
    /// The token request's form carries the client secret: wipe it once sent.
    fn drop(&mut self) {
        if let Body::Form(fields) = self {
            for (_, value) in fields.iter_mut() {
                zeroize::Zeroize::zeroize(value);
            }
        }
    }
}

/// One logical request (retries resend it).
pub(crate) struct Request<'a> {
    pub op: Operation,
    pub url: Url,
    pub query: Vec<(&'static str, String)>,
    pub body: Body,
    pub auth: Auth<'a>,
}

/// A successful (2xx) response.
pub(crate) struct Response {
    pub status: u16,
    pub body: Vec<u8>,
    /// The operation answered, which decides what an unreadable answer means.
    pub op: Operation,
}

impl Response {
    /// Decodes the JSON body; a body that cannot be decoded is [`Response::unreadable`].
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_slice(&self.body).map_err(|e| self.unreadable(e.to_string()))
    }

    /// The error for a 2xx answer whose content cannot be used (undecodable, missing a field,
    /// refused by a client-side check). For an operation that is never re-sent the service has
    /// processed the request, so this is [`Error::OutcomeUnknown`], never a plain decode error
    /// an app might answer by sending the order again.
    pub fn unreadable(&self, message: impl Into<String>) -> Error {
        let message = message.into();
        if self.op.resend() == Resend::Never {
            outcome_unknown(
                self.op,
                format!("HTTP {} answer unusable: {message}", self.status),
                None,
            )
        } else {
            Error::decode(self.status, message)
        }
    }
}

/// [`Error::OutcomeUnknown`] for `op` with the contract's advice.
fn outcome_unknown(op: Operation, cause: String, api: Option<ApiError>) -> Error {
    Error::OutcomeUnknown {
        operation: op,
        cause,
        advice: op.outcome_unknown_advice(),
        api: api.map(Box::new),
        lookup: Box::default(),
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
    #[serde(default)]
    field: Option<String>,
}

/// Outcome of one attempt, before the retry decision.
enum Attempt {
    Done(Response),
    Api(ApiError),
    /// Transport failure; `sent` tells whether the request may have reached the service.
    Transport {
        kind: TransportKind,
        message: String,
        sent: bool,
    },
}

/// Parses `Retry-After`: delay seconds or an HTTP date.
fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let date =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc2822).ok()?;
    let delta = date - time::OffsetDateTime::now_utc();
    Some(Duration::try_from(delta).unwrap_or(Duration::ZERO))
}

/// Maps an error response to an [`ApiError`]; a body without `error` keeps an empty code.
fn api_error(status: u16, retry_after: Option<Duration>, body: &[u8]) -> ApiError {
    let parsed: Option<ErrorBody> = serde_json::from_slice(body).ok();
    let (error, error_description, field) = match parsed {
        Some(b) => (ErrorCode::parse(&b.error), b.error_description, b.field),
        None => (ErrorCode::Other(String::new()), None, None),
    };
    ApiError {
        status,
        error,
        error_description,
        field,
        retry_after,
    }
}

/// Whether `e` is, or wraps through `io::Error`s, a rustls error.
fn is_rustls(e: &(dyn std::error::Error + 'static)) -> bool {
    if e.downcast_ref::<rustls::Error>().is_some() {
        return true;
    }
    // io::Error hides a wrapped error from `source()`; look inside explicitly (tokio-rustls
    // nests one io::Error in another).
    match e
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref())
    {
        Some(inner) => is_rustls(inner),
        None => false,
    }
}

/// Whether a TLS failure (certificate, handshake) is somewhere in the error's source chain.
fn is_tls_failure(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if is_rustls(s) {
            return true;
        }
        source = s.source();
    }
    false
}

/// Transport kind and whether the request may have reached the service.
fn classify_reqwest(e: &reqwest::Error) -> (TransportKind, bool) {
    if e.is_connect() {
        let kind = if is_tls_failure(e) {
            TransportKind::Tls
        } else if e.is_timeout() {
            TransportKind::Timeout
        } else {
            TransportKind::Connect
        };
        (kind, false)
    } else if e.is_timeout() {
        (TransportKind::Timeout, true)
    } else {
        (TransportKind::Connection, true)
    }
}

impl Inner {
    /// Builds `{base_url}` + the given path segments (each percent-encoded).
    pub fn api_url(&self, fixed: &[&str], params: &[&str]) -> Result<Url> {
        let mut url = self.valid.base_url.clone();
        {
            let mut segs = url
                .path_segments_mut()
                .map_err(|_| Error::Config("base_url cannot be a base".into()))?;
            segs.pop_if_empty();
            segs.extend(fixed);
            segs.extend(params);
        }
        Ok(url)
    }

    /// The client-credentials token, from the cache or one token request.
    pub async fn client_token(&self) -> Result<Secret> {
        Ok(self.client_bearer().await?.token.clone())
    }

    /// The client-credentials token with its header value (the request path): the cached one
    /// without any lock to wait for, else [`Inner::client_token_entry`].
    async fn client_bearer(&self) -> Result<Arc<Bearer>> {
        match self.tokens.fresh_bearer(Instant::now()) {
            Some(bearer) => Ok(bearer),
            None => Ok(self.client_token_entry().await?.bearer),
        }
    }

    /// The cached token and its grant, else one token request ([`ClientTokenCache::get`]: single
    /// flight, shared through the store when one is configured).
    pub async fn client_token_entry(&self) -> Result<CachedToken> {
        self.tokens
            .get(|| Box::pin(self.request_client_token()))
            .await
    }

    /// One token request (with the token operation's retries) and its decoded grant.
    async fn request_client_token(&self) -> Result<CachedToken> {
        let secret = self.config.client_secret.as_ref().ok_or_else(|| {
            Error::Config("client_secret is required for client credentials".into())
        })?;
        let form = vec![
            ("grant_type", "client_credentials".to_owned()),
            ("client_id", self.config.client_id.clone()),
            ("client_secret", secret.expose().to_owned()),
            ("scope", self.config.scopes.join(" ")),
        ];
        // The lifetime is counted from before the request left: the service starts it no earlier.
        let sent_at = Instant::now();
        let resp = self
            .execute(Request {
                op: Operation::Token,
                url: self.valid.token_endpoint.clone(),
                query: Vec::new(),
                body: Body::Form(form),
                auth: Auth::None,
            })
            .await?;
        let token: TokenResponse = resp.json()?;
        if token.access_token.is_empty() {
            return Err(Error::decode(resp.status, "empty access_token"));
        }
        Ok(CachedToken::granted(
            token.access_token,
            token.scope.as_deref(),
            token.expires_in,
            sent_at,
            self.config.token_refresh_margin,
        ))
    }

    async fn current_token(&self, auth: Auth<'_>) -> Result<Option<Arc<Bearer>>> {
        match auth {
            Auth::None => Ok(None),
            Auth::Client => self.client_bearer().await.map(Some),
            Auth::User(u) => u.get().await.map(Some),
        }
    }

    /// Makes sure the next request does not carry `rejected` (answered 401 `invalid_token`):
    /// the client-credentials token is dropped from the cache, a user-token provider is asked
    /// again. Returns whether a new token can be had (false for a fixed user token).
    async fn renew_rejected(&self, auth: Auth<'_>, rejected: &Arc<Bearer>) -> Result<bool> {
        match auth {
            Auth::Client => {
                self.tokens.invalidate(rejected).await;
                Ok(true)
            }
            Auth::User(u) => u.refresh(rejected).await,
            Auth::None => Ok(false),
        }
    }

    /// A random backoff delay for retry number `retry` (1-based): uniformly in the upper half of
    /// `base * 2^(retry-1)`, capped at `max_delay`.
    fn backoff(&self, retry: u32) -> Duration {
        let p = &self.config.retry;
        let exp = p
            .base_delay
            .saturating_mul(1u32 << (retry.saturating_sub(1)).min(16))
            .min(p.max_delay);
        let half = exp / 2;
        let frac = match crate::random::bytes::<4>() {
            Ok(bytes) => u32::from_le_bytes(bytes) as u64,
            Err(e) => {
                // Without jitter, the longest delay of the range: never shorter than the policy.
                tracing::warn!(error = %e, "retry backoff without jitter");
                u32::MAX as u64
            }
        };
        half + Duration::from_nanos((half.as_nanos() as u64).saturating_mul(frac) >> 32)
    }

    /// Sends one attempt and reads the body within the size cap.
    async fn attempt(
        &self,
        req: &Request<'_>,
        token: Option<&Bearer>,
        timeout: Duration,
    ) -> Attempt {
        let method = match req.op.method() {
            "POST" => reqwest::Method::POST,
            _ => reqwest::Method::GET,
        };
        let mut rb = self
            .http
            .request(method, req.url.clone())
            .timeout(timeout)
            .header(header::ACCEPT, "application/json");
        if !req.query.is_empty() {
            rb = rb.query(&req.query);
        }
        if let Some(t) = token {
            // Built once per token (sensitive: never shown by Debug); cloning shares it.
            rb = rb.header(header::AUTHORIZATION, t.header.clone());
        }
        rb = match &req.body {
            Body::Empty => rb,
            Body::Json(bytes) => rb
                .header(header::CONTENT_TYPE, "application/json")
                .body(bytes.clone()),
            Body::Form(fields) => rb.form(fields),
        };
        let mut resp = match rb.send().await {
            Ok(r) => r,
            Err(e) => {
                let (kind, sent) = classify_reqwest(&e);
                return Attempt::Transport {
                    kind,
                    message: error_chain(&e),
                    sent,
                };
            }
        };
        let status = resp.status();
        // The one header an answer needs later; read now instead of keeping the whole map.
        let retry_after = parse_retry_after(resp.headers());
        let cap = self.config.max_response_bytes;
        let too_large = || Attempt::Transport {
            kind: TransportKind::BodyTooLarge,
            message: format!("response body larger than {cap} bytes"),
            sent: true,
        };
        if resp.content_length().is_some_and(|l| l as usize > cap) {
            return too_large();
        }
        // Sized from Content-Length when given (within the cap): one allocation, no regrowth.
        let mut body = Vec::with_capacity(resp.content_length().map_or(0, |l| l as usize));
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > cap {
                        return too_large();
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => {
                    let (kind, _) = classify_reqwest(&e);
                    return Attempt::Transport {
                        kind,
                        message: error_chain(&e),
                        sent: true,
                    };
                }
            }
        }
        if status.is_success() {
            if status == StatusCode::ACCEPTED {
                let api = api_error(status.as_u16(), retry_after, &body);
                if api.error == ErrorCode::ProviderResultPending {
                    return Attempt::Api(api);
                }
            }
            Attempt::Done(Response {
                status: status.as_u16(),
                body,
                op: req.op,
            })
        } else {
            Attempt::Api(api_error(status.as_u16(), retry_after, &body))
        }
    }

    /// Runs a request with the token, retry and deadline rules of its operation.
    ///
    /// Boxed with an explicit `Send` type: the token request goes through here too, and the
    /// named type breaks the recursion (execute -> token -> execute). The box also keeps a
    /// caller's future small between requests (a waiter sleeping between polls holds 744 bytes
    /// instead of 1,920; BENCHMARKS.md, "Waiters"), for one allocation per request.
    pub fn execute<'a>(
        &'a self,
        req: Request<'a>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response>> + Send + 'a>> {
        Box::pin(self.execute_impl(req))
    }

    async fn execute_impl(&self, req: Request<'_>) -> Result<Response> {
        if let Some(held) = req.auth.subject()
            && !req.op.token_subject().accepts(held)
        {
            return Err(Error::WrongTokenSubject {
                operation: req.op,
                required: req.op.token_subject(),
            });
        }
        let policy = &self.config.retry;
        let deadline = Instant::now() + self.config.overall_deadline;
        let mut attempts = 0u32;
        let mut refreshed_token = false;
        loop {
            attempts += 1;
            // The token request (or the wait for one in flight) counts against this call's
            // deadline; dropping a waiter leaves the shared token cache consistent. A call whose
            // token cannot be had fails here, before it takes any of the rate budget.
            let mut token = tokio::time::timeout_at(deadline, self.current_token(req.auth))
                .await
                .map_err(|_| Error::DeadlineExceeded { last: None })??;
            // Pace to the contract's per-client budget instead of earning a 429 (every attempt
            // counts), then take a slot among the requests in flight.
            let permit = match LimitClass::of(req.op) {
                Some(class) => match self.limiter.acquire(class, deadline).await {
                    Some(permit) => Some(permit),
                    None => return Err(Error::DeadlineExceeded { last: None }),
                },
                None => None,
            };
            let Ok(slot) = tokio::time::timeout_at(deadline, self.in_flight.acquire()).await else {
                return Err(Error::DeadlineExceeded { last: None });
            };
            // A client token is never sent at or after its stated expiry ("manage lifetime by
            // `expires_in`"): one that expired while this call waited for room or a slot is
            // renewed (from the cache, or one token request for every such call).
            if token.as_ref().is_some_and(|t| t.expired(Instant::now())) {
                token = tokio::time::timeout_at(deadline, self.current_token(req.auth))
                    .await
                    .map_err(|_| Error::DeadlineExceeded { last: None })??;
                if token.as_ref().is_some_and(|t| t.expired(Instant::now())) {
                    return Err(Error::DeadlineExceeded { last: None });
                }
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(Error::DeadlineExceeded { last: None });
            }
            let timeout = self.config.attempt_timeout.min(remaining);
            let span = tracing::info_span!(
                "storefront.request",
                method = req.op.method(),
                path = req.op.path_template(),
                attempt = attempts,
                status = tracing::field::Empty,
                duration_ms = tracing::field::Empty,
            );
            let started = Instant::now();
            let outcome = self
                .attempt(&req, token.as_deref(), timeout)
                .instrument(span.clone())
                .await;
            // The attempt is over: free its place among the requests in flight and count its
            // budget slot from now (not through a retry's back-off).
            drop(slot);
            drop(permit);
            span.record("duration_ms", started.elapsed().as_millis() as u64);
            match &outcome {
                Attempt::Done(r) => span.record("status", r.status),
                Attempt::Api(a) => span.record("status", a.status),
                Attempt::Transport { kind, .. } => span.record("status", format!("{kind:?}")),
            };
            span.in_scope(|| tracing::debug!("request finished"));

            if let Attempt::Api(api) = &outcome
                && api.status == 429
                && let Some(class) = LimitClass::of(req.op)
            {
                // The service's answer wins: nobody using this client sends in the class before
                // `Retry-After` (one second when absent), in this process or, with a shared
                // store, in any other.
                let pause = api.retry_after.unwrap_or(Duration::from_secs(1));
                self.limiter
                    .pause(class, pause.min(policy.max_retry_after))
                    .await;
            }
            let seen = match &outcome {
                Attempt::Done(_) => Seen::Answer,
                Attempt::Api(api) => Seen::Api {
                    status: api.status,
                    error: &api.error,
                    retry_after: api.retry_after,
                },
                Attempt::Transport { kind, sent, .. } => Seen::Transport {
                    kind: *kind,
                    sent: *sent,
                },
            };
            let decision = retry::decide(
                seen,
                Standing {
                    resend: req.op.resend(),
                    attempts,
                    max_attempts: policy.max_attempts,
                    token_renewed: refreshed_token,
                    carried_token: token.is_some(),
                    max_retry_after: policy.max_retry_after,
                },
            );
            let error = match outcome {
                Attempt::Done(r) => return Ok(r),
                Attempt::Api(api) if decision == Decision::Pending => {
                    return Err(Error::provider_result_pending(api));
                }
                Attempt::Api(api) => {
                    let unknown = |api: ApiError| {
                        let cause = format!("HTTP {} {}", api.status, api.error);
                        outcome_unknown(req.op, cause, Some(api))
                    };
                    match decision {
                        Decision::RenewTokenThenOutcomeUnknown => {
                            if let Some(rejected) = token.as_ref() {
                                // Not re-sent, but the next call must not carry the rejected
                                // token.
                                let _ = tokio::time::timeout_at(
                                    deadline,
                                    self.renew_rejected(req.auth, rejected),
                                )
                                .await;
                            }
                            return Err(unknown(api));
                        }
                        Decision::OutcomeUnknown => return Err(unknown(api)),
                        Decision::RenewTokenAndResend => {
                            refreshed_token = true;
                            let rejected = token.take().expect("decided on a carried token");
                            if !self.renew_rejected(req.auth, &rejected).await? {
                                return Err(Error::Api(api));
                            }
                            attempts -= 1; // the refresh does not use up the retry budget
                            continue;
                        }
                        _ => Error::Api(api),
                    }
                }
                Attempt::Transport {
                    kind,
                    message,
                    sent: _,
                } => {
                    if decision == Decision::OutcomeUnknown {
                        return Err(outcome_unknown(
                            req.op,
                            format!("{kind:?}: {message}"),
                            None,
                        ));
                    }
                    Error::Transport { kind, message }
                }
            };
            let wait = match decision {
                Decision::Resend { after } => after,
                _ => return Err(error),
            };
            let delay = wait.unwrap_or_else(|| self.backoff(attempts));
            if Instant::now() + delay >= deadline {
                return Err(Error::DeadlineExceeded {
                    last: Some(Box::new(error)),
                });
            }
            tracing::debug!(
                path = req.op.path_template(),
                delay_ms = delay.as_millis() as u64,
                "retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }
}

/// The error and its sources, without the request URL.
fn error_chain(e: &reqwest::Error) -> String {
    let mut msg = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&s.to_string());
        source = s.source();
    }
    if msg.is_empty() {
        msg = if e.is_timeout() {
            "timed out".into()
        } else {
            "request failed".into()
        };
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        let mut h = HeaderMap::new();
        h.insert(
            header::RETRY_AFTER,
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        assert_eq!(
            parse_retry_after(&h),
            Some(Duration::ZERO),
            "a past date means now"
        );
        let future = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
        let text = future
            .format(&time::format_description::well_known::Rfc2822)
            .unwrap();
        h.insert(header::RETRY_AFTER, text.parse().unwrap());
        let d = parse_retry_after(&h).unwrap();
        assert!(
            d > Duration::from_secs(3500) && d <= Duration::from_secs(3600),
            "{d:?}"
        );
        h.insert(header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(parse_retry_after(&h), None);
    }

    #[test]
    fn error_body_maps_code_description_field_and_retry_after() {
        let mut h = HeaderMap::new();
        h.insert(header::RETRY_AFTER, "7".parse().unwrap());
        let a = api_error(
            400,
            parse_retry_after(&h),
            br#"{"error":"invalid_expires_in","error_description":"x","field":"expires_in"}"#,
        );
        assert_eq!(a.error, ErrorCode::InvalidExpiresIn);
        assert_eq!(a.field.as_deref(), Some("expires_in"));
        assert_eq!(a.retry_after, Some(Duration::from_secs(7)));
        let b = api_error(502, None, b"<html>bad gateway</html>");
        assert_eq!(b.error, ErrorCode::Other(String::new()));
    }
}
