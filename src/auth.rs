//! Access tokens: the client-credentials token cache and user tokens from the host app.
//!
//! Contract rules: the token request is a form-encoded POST with `grant_type=client_credentials`,
//! `client_id`, `client_secret` and space-separated `scope`; "manage lifetime by `expires_in`";
//! no refresh token is issued, so after expiry a new token is requested with the server
//! credentials. User tokens come from real user authorization, which the host app performs.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::HeaderValue;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::secret::Secret;
use crate::store::{SharedState, StoredFailure, StoredToken, TokenLookup};

/// Longest time a client-credentials token is kept before it is renewed, whatever `expires_in`
/// the token endpoint grants (one day).
pub(crate) const MAX_TOKEN_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// Boxed future returned by [`UserTokenProvider::user_token`].
pub type TokenFuture<'a> = Pin<Box<dyn Future<Output = Result<Secret>> + Send + 'a>>;

/// Supplies user-authorized access tokens (the host app runs the authorization-code flow,
/// which the contract does not show).
///
/// The SDK calls it for the first request of a [`crate::UserSession`] and once more, with the
/// rejected token, when the service answers 401 `invalid_token`.
pub trait UserTokenProvider: Send + Sync {
    /// Returns a current user token. `rejected` is the token the service just refused, if any.
    fn user_token(&self, rejected: Option<&Secret>) -> TokenFuture<'_>;
}

/// The token response of the token endpoint, as the service sends it.
#[derive(Deserialize)]
pub(crate) struct TokenResponse {
    pub access_token: Secret,
    #[serde(default)]
    pub scope: Option<String>,
    pub expires_in: u64,
}

/// What the service granted for the client-credentials token (the token itself stays inside).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantedToken {
    /// Granted scopes (the `scope` field split on spaces).
    pub scope: Vec<String>,
    /// `expires_in` in seconds as granted.
    pub expires_in: u64,
}

/// An access token with its `Authorization: Bearer` header value, built once per token so that
/// a request clones a reference instead of formatting and copying the token (the header value is
/// marked sensitive: hyper and reqwest redact it in `Debug`; it is never logged).
pub(crate) struct Bearer {
    pub token: Secret,
    pub header: HeaderValue,
    /// When a client-credentials token expires ("manage lifetime by `expires_in`"): the request
    /// path never sends it at or after this instant. `None` for user tokens (the host app
    /// manages their lifetime).
    pub expires_at: Option<Instant>,
}

impl Bearer {
    /// The token and its header value. A token that cannot be a header value (control
    /// characters) gets a placeholder value the service refuses with 401, as before.
    pub fn new(token: Secret) -> Bearer {
        Bearer::expiring(token, None)
    }

    /// [`Bearer::new`] for a token that expires at `expires_at`.
    pub fn expiring(token: Secret, expires_at: Option<Instant>) -> Bearer {
        let mut text = String::with_capacity(7 + token.len());
        text.push_str("Bearer ");
        text.push_str(token.expose());
        let mut header = HeaderValue::from_str(&text)
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer invalid"));
        zeroize::Zeroize::zeroize(&mut text);
        header.set_sensitive(true);
        Bearer {
            token,
            header,
            expires_at,
        }
    }

    /// Whether this is the token `other` (the same value): the same allocation answers at once,
    /// anything else is compared in constant time.
    pub fn same_token(self: &Arc<Self>, other: &Arc<Bearer>) -> bool {
        Arc::ptr_eq(self, other) || self.token == other.token
    }

    /// Whether the token has expired at `now` (never for user tokens).
    pub fn expired(&self, now: Instant) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }
}

/// A client-credentials token in the cache, with when to renew it and what was granted.
#[derive(Clone)]
pub(crate) struct CachedToken {
    pub bearer: Arc<Bearer>,
    pub refresh_at: Instant,
    pub granted: GrantedToken,
}

impl CachedToken {
    /// The token granted for `expires_in` seconds by a token request sent at `sent_at` (the
    /// service counts the lifetime from no earlier than that, so the expiry is never late).
    pub fn granted(
        token: Secret,
        scope: Option<&str>,
        expires_in: u64,
        sent_at: Instant,
        margin: Duration,
    ) -> Self {
        // A token granted for 0 s is handed only to the calls that waited for its request, at
        // once (never cached: its renewal time is its grant), so it carries no expiry for the
        // request path to refuse it by.
        let expires_at = (expires_in > 0).then(|| expiry(sent_at, expires_in));
        CachedToken {
            bearer: Arc::new(Bearer::expiring(token, expires_at)),
            refresh_at: refresh_at(sent_at, expires_in, margin),
            granted: GrantedToken {
                scope: scope
                    .unwrap_or_default()
                    .split(' ')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
                expires_in,
            },
        }
    }

    fn expires_at(&self) -> Instant {
        self.bearer.expires_at.unwrap_or(self.refresh_at)
    }
}

/// A failed token request, shared with every call that waited for it and with the calls that
/// come before `retry_at`, so a failing token endpoint gets one request per back-off period, not
/// one per call.
pub(crate) struct TokenFailure {
    pub error: Error,
    pub retry_at: Instant,
}

/// The single-flight side of the cache: held across the token request.
#[derive(Default)]
pub(crate) struct RefreshState {
    /// The last failure, while its back-off runs.
    pub failure: Option<TokenFailure>,
    /// Failures in a row (for the back-off), reset by a success.
    pub consecutive_failures: u32,
    /// The token the last token request brought, with the number of that request: a call that
    /// waited for that request takes it even when its lifetime is 0 (`expires_in: 0`), so one
    /// token request serves every waiter instead of one request per waiting call.
    pub last: Option<(u64, CachedToken)>,
}

/// Back-off after a failed token request that may heal (transport, 5xx): doubles per failure in
/// a row from the first value up to the second.
pub(crate) const TOKEN_RETRY_BACKOFF: (Duration, Duration) =
    (Duration::from_secs(1), Duration::from_secs(30));
/// Back-off after the token endpoint refused the credentials (4xx such as `invalid_client`):
/// asking again with the same credentials gives the same answer.
pub(crate) const TOKEN_CREDENTIALS_BACKOFF: Duration = Duration::from_secs(30);
/// Longest pause between two looks at the shared store while another process holds the token
/// lease.
const LEASE_POLL: Duration = Duration::from_millis(100);

/// Boxed future of one token request (the transport's), as the cache asks for it.
pub(crate) type FetchFuture<'a> = Pin<Box<dyn Future<Output = Result<CachedToken>> + Send + 'a>>;

/// Client-credentials token cache. Reading a valid token takes no async lock and copies nothing
/// but a reference count (every request does it, [`ClientTokenCache::fresh_bearer`]); renewing
/// takes the `refresh` mutex, held across the token request, so however many calls wait, one
/// token request is in flight and all of them share its token or its failure.
///
/// With a shared store ([`crate::Config::shared_state`]) the process first looks in the store: a
/// token another process fetched is used as is; when there is none, one process in the whole
/// shop takes the lease and fetches it while the others wait for it; a failure and its back-off
/// are shared the same way. The store failing never fails the call: the cache then works as
/// above, in this process alone.
pub(crate) struct ClientTokenCache {
    current: std::sync::RwLock<Option<CachedToken>>,
    refresh: Mutex<RefreshState>,
    /// Token requests finished (successfully) so far: the `last` token's number.
    requests: AtomicU64,
    /// The last token issued, readable without waiting for a token request in flight (used to
    /// refuse it where a user token is required).
    latest: std::sync::Mutex<Option<Secret>>,
    shared: Option<Arc<SharedState>>,
}

impl ClientTokenCache {
    /// A cache over `shared` when given.
    pub fn new(shared: Option<Arc<SharedState>>) -> Self {
        ClientTokenCache {
            current: Default::default(),
            refresh: Default::default(),
            requests: AtomicU64::new(0),
            latest: Default::default(),
            shared,
        }
    }

    /// The cached token while it is fresh (`now` before its renewal time), with its grant.
    pub fn fresh(&self, now: Instant) -> Option<CachedToken> {
        let current = self.current.read().ok()?;
        current.as_ref().filter(|c| now < c.refresh_at).cloned()
    }

    /// The cached token while it is fresh: the request path's read (a shared read lock and one
    /// reference count, no copy of the token or of the grant).
    pub fn fresh_bearer(&self, now: Instant) -> Option<Arc<Bearer>> {
        let current = self.current.read().ok()?;
        current
            .as_ref()
            .filter(|c| now < c.refresh_at)
            .map(|c| c.bearer.clone())
    }

    fn keep(&self, cached: &CachedToken) {
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some(cached.bearer.token.clone());
        }
        if let Ok(mut current) = self.current.write() {
            *current = Some(cached.clone());
        }
    }

    /// Whether `token` is the last client-credentials token this client obtained.
    pub fn is_client_token(&self, token: &Secret) -> bool {
        self.latest
            .lock()
            .map(|l| l.as_ref() == Some(token))
            .unwrap_or(false)
    }

    /// Forgets `rejected` if it is still the cached token (a concurrent refresh may already have
    /// replaced it, in which case the new token is kept), here and in the shared store.
    pub async fn invalidate(&self, rejected: &Arc<Bearer>) {
        if let Ok(mut current) = self.current.write()
            && current
                .as_ref()
                .is_some_and(|c| c.bearer.same_token(rejected))
        {
            *current = None;
        }
        if let Ok(mut refresh) = self.refresh.try_lock()
            && refresh
                .last
                .as_ref()
                .is_some_and(|(_, c)| c.bearer.same_token(rejected))
        {
            refresh.last = None;
        }
        if let Some(shared) = &self.shared {
            let _ = shared.call(|s| s.drop_token(&rejected.token)).await;
        }
    }

    /// How long to wait after a failed token request before the next one: a refused credential
    /// waits [`TOKEN_CREDENTIALS_BACKOFF`], anything else backs off from
    /// [`TOKEN_RETRY_BACKOFF`] by the number of failures in a row.
    pub fn failure_backoff(error: &Error, in_a_row: u32) -> Duration {
        let refused = error
            .status()
            .is_some_and(|status| (400..500).contains(&status) && status != 429);
        if refused {
            return TOKEN_CREDENTIALS_BACKOFF;
        }
        let (first, max) = TOKEN_RETRY_BACKOFF;
        first
            .saturating_mul(1u32 << in_a_row.saturating_sub(1).min(16))
            .min(max)
    }

    /// The cached token and its grant, else one token request (single flight in the process,
    /// one lease holder across processes with a shared store): the calls that wait for a token
    /// request share its token or its failure, and a failure is answered from memory until its
    /// back-off ends ([`ClientTokenCache::failure_backoff`]). `fetch` is the token request.
    pub async fn get<'a>(&'a self, fetch: impl FnOnce() -> FetchFuture<'a>) -> Result<CachedToken> {
        if let Some(c) = self.fresh(Instant::now()) {
            return Ok(c);
        }
        let seen = self.requests.load(Ordering::Acquire);
        let mut refresh = self.refresh.lock().await;
        let now = Instant::now();
        // Renewed while this call waited.
        if let Some(c) = self.fresh(now) {
            return Ok(c);
        }
        if let Some((n, c)) = &refresh.last
            && *n != seen
            && (now < c.expires_at() || c.granted.expires_in == 0)
        {
            return Ok(c.clone());
        }
        if let Some(failure) = &refresh.failure
            && now < failure.retry_at
        {
            return Err(failure.error.clone());
        }
        if let Some(shared) = self.shared.clone() {
            loop {
                let lookup = shared
                    .call(|s| s.token(&shared.holder, shared.token_lease.as_millis() as u64))
                    .await;
                match lookup {
                    None => break,
                    Some(TokenLookup::Fresh(stored)) => {
                        let now = Instant::now();
                        let cached = CachedToken {
                            bearer: Arc::new(Bearer::expiring(
                                stored.token,
                                Some(after(now, stored.expires_in_ms)),
                            )),
                            refresh_at: after(now, stored.refresh_in_ms.min(stored.expires_in_ms)),
                            granted: GrantedToken {
                                scope: stored
                                    .scope
                                    .split(' ')
                                    .filter(|s| !s.is_empty())
                                    .map(str::to_owned)
                                    .collect(),
                                expires_in: stored.expires_in,
                            },
                        };
                        self.keep(&cached);
                        return Ok(cached);
                    }
                    Some(TokenLookup::Failed(failure, left_ms)) => {
                        let error = failure.to_error();
                        refresh.failure = Some(TokenFailure {
                            error: error.clone(),
                            retry_at: after(Instant::now(), left_ms),
                        });
                        return Err(error);
                    }
                    Some(TokenLookup::Leased) => {
                        return self.fetch(&mut refresh, fetch, Some(&shared)).await;
                    }
                    Some(TokenLookup::Busy(ms)) => {
                        tokio::time::sleep(Duration::from_millis(ms.max(1)).min(LEASE_POLL)).await;
                    }
                }
            }
        }
        self.fetch(&mut refresh, fetch, None).await
    }

    /// Runs the token request and records its outcome here and, when this process holds the
    /// lease, in the shared store.
    async fn fetch<'a>(
        &'a self,
        refresh: &mut RefreshState,
        fetch: impl FnOnce() -> FetchFuture<'a>,
        shared: Option<&Arc<SharedState>>,
    ) -> Result<CachedToken> {
        match fetch().await {
            Ok(cached) => {
                refresh.failure = None;
                refresh.consecutive_failures = 0;
                let n = self.requests.fetch_add(1, Ordering::AcqRel) + 1;
                refresh.last = Some((n, cached.clone()));
                self.keep(&cached);
                if let Some(shared) = shared {
                    let now = Instant::now();
                    let stored = StoredToken {
                        token: cached.bearer.token.clone(),
                        scope: cached.granted.scope.join(" "),
                        expires_in: cached.granted.expires_in,
                        refresh_in_ms: millis_until(now, cached.refresh_at),
                        expires_in_ms: millis_until(now, cached.expires_at()),
                    };
                    let _ = shared.call(|s| s.put_token(&shared.holder, &stored)).await;
                }
                Ok(cached)
            }
            Err(error) => {
                refresh.consecutive_failures = refresh.consecutive_failures.saturating_add(1);
                let mut in_a_row = refresh.consecutive_failures;
                if let Some(shared) = shared
                    && let Some(before) = shared.call(|s| s.failures_in_a_row()).await
                {
                    in_a_row = in_a_row.max(before.saturating_add(1));
                }
                let backoff = ClientTokenCache::failure_backoff(&error, in_a_row);
                refresh.failure = Some(TokenFailure {
                    error: error.clone(),
                    retry_at: after(Instant::now(), backoff.as_millis() as u64),
                });
                if let Some(shared) = shared {
                    let record = StoredFailure::of(&error, in_a_row);
                    let ms = backoff.as_millis() as u64;
                    let _ = shared
                        .call(|s| s.put_failure(&shared.holder, &record, ms))
                        .await;
                }
                tracing::debug!(
                    backoff_ms = backoff.as_millis() as u64,
                    shared = shared.is_some(),
                    "token request failed; shared with waiting calls until the back-off ends"
                );
                Err(error)
            }
        }
    }
}

/// `now + ms`, saturating (never panics on a huge value).
fn after(now: Instant, ms: u64) -> Instant {
    now.checked_add(Duration::from_millis(ms))
        .unwrap_or(now + MAX_TOKEN_LIFETIME)
}

/// Whole milliseconds from `now` until `at` (0 when past).
fn millis_until(now: Instant, at: Instant) -> u64 {
    at.saturating_duration_since(now).as_millis() as u64
}

/// When a token granted for `expires_in` seconds expires, counted from when its request was
/// sent. A lifetime above [`MAX_TOKEN_LIFETIME`] is treated as that maximum, so any
/// `expires_in`, up to `u64::MAX`, gives a usable cached token and never overflows the clock.
pub(crate) fn expiry(sent_at: Instant, expires_in: u64) -> Instant {
    let lifetime = Duration::from_secs(expires_in).min(MAX_TOKEN_LIFETIME);
    sent_at.checked_add(lifetime).unwrap_or(sent_at)
}

/// When a token granted for `expires_in` seconds should be renewed: `margin` before expiry, but
/// never earlier than half its lifetime, and never after its expiry (a token is never sent
/// after its stated expiry; `expires_in: 0` is not reused at all beyond the calls that waited
/// for it).
pub(crate) fn refresh_at(sent_at: Instant, expires_in: u64, margin: Duration) -> Instant {
    let lifetime = Duration::from_secs(expires_in).min(MAX_TOKEN_LIFETIME);
    let early = margin.min(lifetime / 2);
    sent_at
        .checked_add(lifetime.saturating_sub(early))
        .unwrap_or(sent_at)
}

/// Where a user session's token comes from.
#[derive(Clone)]
pub enum UserToken {
    /// A fixed token value; a 401 `invalid_token` is returned to the caller.
    Value(Secret),
    /// A provider the SDK asks again (once per call) when the token is rejected.
    Provider(Arc<dyn UserTokenProvider>),
}

impl fmt::Debug for UserToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UserToken::Value(_) => f.write_str("UserToken::Value([REDACTED])"),
            UserToken::Provider(_) => f.write_str("UserToken::Provider(..)"),
        }
    }
}

impl From<Secret> for UserToken {
    fn from(value: Secret) -> Self {
        UserToken::Value(value)
    }
}

impl From<&str> for UserToken {
    fn from(value: &str) -> Self {
        UserToken::Value(Secret::new(value))
    }
}

impl From<String> for UserToken {
    fn from(value: String) -> Self {
        UserToken::Value(Secret::new(value))
    }
}

impl From<Arc<dyn UserTokenProvider>> for UserToken {
    fn from(value: Arc<dyn UserTokenProvider>) -> Self {
        UserToken::Provider(value)
    }
}

/// The user token state of one session. Reading the current token takes a shared read lock
/// (every request of the session does it); asking the provider takes the `asking` mutex, held
/// across the provider call, so concurrent calls ask once and share the answer.
pub(crate) struct UserTokenState {
    pub source: UserToken,
    current: std::sync::RwLock<Option<Arc<Bearer>>>,
    asking: Mutex<()>,
}

impl UserTokenState {
    pub fn new(source: UserToken) -> Self {
        let current = match &source {
            UserToken::Value(v) => Some(Arc::new(Bearer::new(v.clone()))),
            UserToken::Provider(_) => None,
        };
        UserTokenState {
            source,
            current: std::sync::RwLock::new(current),
            asking: Mutex::new(()),
        }
    }

    fn current(&self) -> Option<Arc<Bearer>> {
        self.current.read().ok()?.clone()
    }

    fn set(&self, bearer: Arc<Bearer>) {
        if let Ok(mut current) = self.current.write() {
            *current = Some(bearer);
        }
    }

    /// The current token, asking the provider when there is none.
    pub async fn get(&self) -> Result<Arc<Bearer>> {
        if let Some(t) = self.current() {
            return Ok(t);
        }
        let UserToken::Provider(p) = &self.source else {
            return Err(Error::TokenProvider("no user token".into()));
        };
        let _asking = self.asking.lock().await;
        // Another call got one while this one waited.
        if let Some(t) = self.current() {
            return Ok(t);
        }
        let token = Arc::new(Bearer::new(ask(p.as_ref(), None).await?));
        self.set(token.clone());
        Ok(token)
    }

    /// After a 401 `invalid_token`: asks the provider again. Returns false for a fixed value
    /// (nothing to refresh).
    pub async fn refresh(&self, rejected: &Arc<Bearer>) -> Result<bool> {
        let UserToken::Provider(p) = &self.source else {
            return Ok(false);
        };
        let _asking = self.asking.lock().await;
        if self.current().is_some_and(|c| !c.same_token(rejected)) {
            return Ok(true); // another call already refreshed it
        }
        let token = ask(p.as_ref(), Some(&rejected.token)).await?;
        self.set(Arc::new(Bearer::new(token)));
        Ok(true)
    }
}

/// Asks the host app's provider for a token; an empty one is a provider failure.
async fn ask(provider: &dyn UserTokenProvider, rejected: Option<&Secret>) -> Result<Secret> {
    let token = provider.user_token(rejected).await?;
    if token.is_empty() {
        return Err(Error::TokenProvider(
            "provider returned an empty token".into(),
        ));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_happens_before_expiry() {
        let now = Instant::now();
        let at = refresh_at(now, 3600, Duration::from_secs(30));
        assert_eq!(at - now, Duration::from_secs(3570));
        let short = refresh_at(now, 20, Duration::from_secs(30));
        assert_eq!(short - now, Duration::from_secs(10));
    }

    /// Issue 10 item 3: an `expires_in` of 2^63 or more (up to `u64::MAX`) used to panic with
    /// "overflow when adding duration to instant"; it is capped at one day.
    #[test]
    fn huge_expires_in_is_capped_not_overflowed() {
        let now = Instant::now();
        for expires_in in [1u64 << 63, u64::MAX, u64::MAX / 1000] {
            let at = refresh_at(now, expires_in, Duration::from_secs(30));
            assert_eq!(at - now, MAX_TOKEN_LIFETIME - Duration::from_secs(30));
            assert_eq!(expiry(now, expires_in) - now, MAX_TOKEN_LIFETIME);
        }
        let at = refresh_at(now, u64::MAX, Duration::MAX);
        assert_eq!(at - now, MAX_TOKEN_LIFETIME / 2);
    }

    /// Issue 15 item 4 ("manage lifetime by `expires_in`"): a token is renewed before its stated
    /// expiry and never kept past it, however short the lifetime (it used to be reused for 5 s
    /// whatever `expires_in` said).
    #[test]
    fn a_short_token_is_never_kept_past_its_expiry() {
        let now = Instant::now();
        for expires_in in [0u64, 1, 3, 10] {
            let r = refresh_at(now, expires_in, Duration::from_secs(30));
            assert!(r <= expiry(now, expires_in), "{expires_in}");
        }
        assert_eq!(
            refresh_at(now, 3, Duration::from_secs(30)) - now,
            Duration::from_millis(1500)
        );
        assert_eq!(refresh_at(now, 0, Duration::MAX), now);
    }

    fn grant(token: &str, expires_in: u64) -> CachedToken {
        CachedToken::granted(
            Secret::new(token),
            Some("a b"),
            expires_in,
            Instant::now(),
            Duration::from_secs(30),
        )
    }

    /// `expires_in: 0` floods: every call waiting for one token request takes its token, so
    /// 20 concurrent calls make one token request; a later call makes its own.
    #[tokio::test(start_paused = true)]
    async fn one_token_request_serves_every_waiter_even_with_expires_in_0() {
        let cache = Arc::new(ClientTokenCache::new(None));
        let fetches = Arc::new(AtomicU64::new(0));
        let mut calls = Vec::new();
        for _ in 0..20 {
            let (cache, fetches) = (cache.clone(), fetches.clone());
            calls.push(tokio::spawn(async move {
                cache
                    .get(|| {
                        Box::pin(async move {
                            fetches.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            Ok(grant("t0", 0))
                        })
                    })
                    .await
                    .map(|c| c.bearer.token.expose().to_owned())
            }));
        }
        for call in calls {
            assert_eq!(call.await.unwrap().unwrap(), "t0");
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        assert!(
            cache.fresh(Instant::now()).is_none(),
            "not kept for later calls"
        );
        let f = fetches.clone();
        cache
            .get(|| {
                Box::pin(async move {
                    f.fetch_add(1, Ordering::SeqCst);
                    Ok(grant("t1", 0))
                })
            })
            .await
            .unwrap();
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }

    /// A token granted for 3 s is served for calls within its lifetime, and a call 4 s after the
    /// grant brings a new token instead of the expired one.
    #[tokio::test(start_paused = true)]
    async fn a_call_after_expiry_gets_a_new_token() {
        let cache = ClientTokenCache::new(None);
        let first = cache
            .get(|| Box::pin(async { Ok(grant("t-3s", 3)) }))
            .await
            .unwrap();
        assert!(!first.bearer.expired(Instant::now()));
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(cache.fresh_bearer(Instant::now()).is_some());
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(first.bearer.expired(Instant::now()));
        assert!(cache.fresh_bearer(Instant::now()).is_none());
        let next = cache
            .get(|| Box::pin(async { Ok(grant("t-new", 3)) }))
            .await
            .unwrap();
        assert_eq!(next.bearer.token.expose(), "t-new");
    }

    #[test]
    fn user_token_debug_is_redacted() {
        let t = UserToken::from("user-token-value");
        assert!(!format!("{t:?}").contains("user-token-value"));
    }
}
