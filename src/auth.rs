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
use std::time::Duration;

use reqwest::header::HeaderValue;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::secret::Secret;

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
}

impl Bearer {
    /// The token and its header value. A token that cannot be a header value (control
    /// characters) gets a placeholder value the service refuses with 401, as before.
    pub fn new(token: Secret) -> Bearer {
        let mut text = String::with_capacity(7 + token.len());
        text.push_str("Bearer ");
        text.push_str(token.expose());
        let mut header = HeaderValue::from_str(&text)
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer invalid"));
        zeroize::Zeroize::zeroize(&mut text);
        header.set_sensitive(true);
        Bearer { token, header }
    }

    /// Whether this is the token `other` (the same value): the same allocation answers at once,
    /// anything else is compared in constant time.
    pub fn same_token(self: &Arc<Self>, other: &Arc<Bearer>) -> bool {
        Arc::ptr_eq(self, other) || self.token == other.token
    }
}

/// A client-credentials token in the cache, with when to renew it and what was granted.
#[derive(Clone)]
pub(crate) struct CachedToken {
    pub bearer: Arc<Bearer>,
    pub refresh_at: Instant,
    pub granted: GrantedToken,
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
}

/// Shortest time a granted token is reused, whatever `expires_in` says (`expires_in: 0` would
/// otherwise cost one token request per call); a token the service then refuses is dropped by
/// the 401 path and renewed once.
pub(crate) const MIN_TOKEN_REUSE: Duration = Duration::from_secs(5);
/// Back-off after a failed token request that may heal (transport, 5xx): doubles per failure in
/// a row from the first value up to the second.
pub(crate) const TOKEN_RETRY_BACKOFF: (Duration, Duration) =
    (Duration::from_secs(1), Duration::from_secs(30));
/// Back-off after the token endpoint refused the credentials (4xx such as `invalid_client`):
/// asking again with the same credentials gives the same answer.
pub(crate) const TOKEN_CREDENTIALS_BACKOFF: Duration = Duration::from_secs(30);

/// Client-credentials token cache. Reading a valid token takes no async lock and copies nothing
/// but a reference count (every request does it, [`ClientTokenCache::fresh_bearer`]); renewing
/// takes the `refresh` mutex, held across the token request, so however many calls wait, one
/// token request is in flight and all of them share its token or its failure.
#[derive(Default)]
pub(crate) struct ClientTokenCache {
    current: std::sync::RwLock<Option<CachedToken>>,
    pub refresh: Mutex<RefreshState>,
    /// The last token issued, readable without waiting for a token request in flight (used to
    /// refuse it where a user token is required).
    latest: std::sync::Mutex<Option<Secret>>,
}

impl ClientTokenCache {
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

    /// Stores a newly issued token.
    pub fn store(&self, cached: CachedToken) {
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some(cached.bearer.token.clone());
        }
        if let Ok(mut current) = self.current.write() {
            *current = Some(cached);
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
    /// replaced it, in which case the new token is kept).
    pub async fn invalidate(&self, rejected: &Arc<Bearer>) {
        if let Ok(mut current) = self.current.write()
            && current
                .as_ref()
                .is_some_and(|c| c.bearer.same_token(rejected))
        {
            *current = None;
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

    /// When a token granted for `expires_in` seconds should be renewed: `margin` before expiry,
    /// but never earlier than half its lifetime, nor sooner than [`MIN_TOKEN_REUSE`]. A lifetime above [`MAX_TOKEN_LIFETIME`] is
    /// treated as that maximum (the token is cached and renewed after about a day), so any
    /// `expires_in`, up to `u64::MAX`, gives a usable cached token and never overflows the clock.
    pub fn refresh_at(now: Instant, expires_in: u64, margin: Duration) -> Instant {
        let lifetime = Duration::from_secs(expires_in).min(MAX_TOKEN_LIFETIME);
        let early = margin.min(lifetime / 2);
        let wait = lifetime.saturating_sub(early).max(MIN_TOKEN_REUSE);
        now.checked_add(wait)
            .or_else(|| now.checked_add(Duration::from_secs(60)))
            .unwrap_or(now)
    }
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
        let at = ClientTokenCache::refresh_at(now, 3600, Duration::from_secs(30));
        assert_eq!(at - now, Duration::from_secs(3570));
        let short = ClientTokenCache::refresh_at(now, 20, Duration::from_secs(30));
        assert_eq!(short - now, Duration::from_secs(10));
    }

    /// Issue 10 item 3: an `expires_in` of 2^63 or more (up to `u64::MAX`) used to panic with
    /// "overflow when adding duration to instant"; it is capped at one day.
    #[test]
    fn huge_expires_in_is_capped_not_overflowed() {
        let now = Instant::now();
        for expires_in in [1u64 << 63, u64::MAX, u64::MAX / 1000] {
            let at = ClientTokenCache::refresh_at(now, expires_in, Duration::from_secs(30));
            assert_eq!(at - now, MAX_TOKEN_LIFETIME - Duration::from_secs(30));
        }
        let at = ClientTokenCache::refresh_at(now, u64::MAX, Duration::MAX);
        assert_eq!(at - now, MAX_TOKEN_LIFETIME / 2);
        // `expires_in: 0` is reused for the minimum time instead of one token request per call.
        assert_eq!(
            ClientTokenCache::refresh_at(now, 0, Duration::MAX) - now,
            MIN_TOKEN_REUSE
        );
    }

    #[test]
    fn user_token_debug_is_redacted() {
        let t = UserToken::from("user-token-value");
        assert!(!format!("{t:?}").contains("user-token-value"));
    }
}
