//! The client (client-credentials operations) and the user session (user-token operations).
//!
//! Contract rules: merchant-collection endpoints take client-credentials tokens only; catalog
//! orders and payments take user tokens only; profile and products take either. The client owns
//! one connection pool and one token cache; cloning it shares both.

use std::fmt;
use std::sync::Arc;

use crate::auth::{GrantedToken, UserToken, UserTokenState};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::operation::{Operation, TokenSubject};
use crate::secret::Secret;
use crate::transport::{Auth, Inner};

/// The SDK client: cheap to clone (an `Arc` inside), `Send + Sync`.
///
/// Client-credentials operations are methods here; user-token operations are on the
/// [`UserSession`] returned by [`Client::user`].
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.valid.base_url.as_str())
            .field("client_id", &self.inner.config.client_id)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Checks the configuration and builds the HTTP client (ring TLS provider, platform
    /// verifier or the given roots, no redirects followed).
    pub fn new(config: Config) -> Result<Self> {
        let valid = config.validate()?;
        let tls = crate::tls::client_config(config.root_ca_pem.as_deref())?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .https_only(!config.allow_insecure_loopback)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(valid.user_agent.clone())
            .connect_timeout(config.connect_timeout.min(config.attempt_timeout))
            .build()
            .map_err(|e| Error::Config(format!("HTTP client setup failed: {e}")))?;
        // The store is opened lazily: nothing connects here, so a client can be built while the
        // store is down, and a forked worker connects on its own.
        let shared = match &valid.shared_state {
            Some(url) => {
                let ns = crate::store::Namespace::new(
                    url.namespace.as_deref(),
                    &config.client_id,
                    valid.token_endpoint.as_str(),
                    &config.scopes,
                );
                Some(Arc::new(crate::store::SharedState::new(url, ns)?))
            }
            None => None,
        };
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                limiter: crate::rate_limit::RateLimiter::new(
                    config.rate_limits.clone(),
                    shared.clone(),
                ),
                in_flight: tokio::sync::Semaphore::new(config.max_in_flight),
                tokens: crate::auth::ClientTokenCache::new(shared.clone()),
                shared,
                config,
                valid,
            }),
        })
    }

    /// Round trips this client value has sent to its shared store (0 without one): each
    /// admitted call is one, a 429 one more, a token miss one or two. For the benches and for
    /// operators checking the cost of the store; not part of the stable API.
    #[doc(hidden)]
    pub fn shared_state_round_trips(&self) -> u64 {
        self.inner.shared.as_ref().map_or(0, |s| s.round_trips())
    }

    /// Where this client's rate budgets and token live ([`crate::Config::shared_state`]) and
    /// what the shared store holds now: the windows, the pause after a 429, whether a token is
    /// shared (never its value). One store round trip; `available` is false while the store
    /// does not answer (calls then use this process's own state).
    pub async fn shared_state(&self) -> crate::SharedStateStatus {
        match &self.inner.shared {
            None => crate::SharedStateStatus {
                backend: "memory".into(),
                available: true,
                stored: None,
            },
            Some(shared) => {
                let span = self.inner.limiter.span();
                let stored = shared.inspect(span.as_millis() as u64).await;
                crate::SharedStateStatus {
                    backend: shared.backend().into(),
                    available: stored.is_some(),
                    stored,
                }
            }
        }
    }

    /// The client-side rate limiter's budgets now: one entry per [`crate::LimitClass`], shared
    /// by every clone of this client and every session built from it.
    pub fn rate_limit_state(&self) -> Vec<crate::RateLimitState> {
        self.inner.limiter.state()
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Obtains (or reuses) the client-credentials token and returns what was granted. Other
    /// calls do this on demand; calling it first only surfaces credential problems early.
    pub async fn authenticate(&self) -> Result<GrantedToken> {
        Ok(self.inner.client_token_entry().await?.granted)
    }

    /// The current client-credentials access token (cached or freshly requested), for tools
    /// outside the SDK on the same server. Keep it on the merchant server; never log it.
    pub async fn access_token(&self) -> Result<Secret> {
        self.inner.client_token().await
    }

    /// The token subject an operation needs (the contract's endpoint index).
    pub fn token_subject_for(operation: Operation) -> TokenSubject {
        operation.token_subject()
    }

    /// A session for calls made on behalf of a user, with a token value or a
    /// [`crate::UserTokenProvider`].
    pub fn user(&self, token: impl Into<UserToken>) -> UserSession {
        UserSession {
            client: self.clone(),
            token: Arc::new(UserTokenState::new(token.into())),
        }
    }

    pub(crate) fn auth(&self) -> Auth<'_> {
        Auth::Client
    }
}

/// Calls on behalf of one user (catalog orders and payments, userinfo, and profile/products
/// with the user's token). Cheap to clone.
#[derive(Clone)]
pub struct UserSession {
    pub(crate) client: Client,
    pub(crate) token: Arc<UserTokenState>,
}

impl fmt::Debug for UserSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserSession").finish_non_exhaustive()
    }
}

impl UserSession {
    /// The client this session belongs to.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Refuses a client-credentials token passed as a user token, before anything is sent.
    pub(crate) async fn checked_auth(&self, operation: Operation) -> Result<Auth<'_>> {
        let user_token = self.token.get().await?;
        if self.client.inner.tokens.is_client_token(&user_token.token)
            && !operation.token_subject().accepts(TokenSubject::Client)
        {
            return Err(Error::WrongTokenSubject {
                operation,
                required: operation.token_subject(),
            });
        }
        Ok(Auth::User(&self.token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync + Clone>() {}

    #[test]
    fn client_and_session_are_send_sync_clone() {
        assert_send_sync::<Client>();
        assert_send_sync::<UserSession>();
    }

    #[test]
    fn new_rejects_plain_http_to_remote_hosts() {
        let c = Config::new("http://api.example/api", "https://a/t", "id", "s");
        assert!(matches!(Client::new(c), Err(Error::Config(_))));
    }
}
