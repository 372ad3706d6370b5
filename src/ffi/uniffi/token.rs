//! The host app's user-token provider: a foreign-implemented async trait (Kotlin `suspend fun`,
//! Swift `async`).
//!
//! Contract rules: catalog orders and payments need a user-authorized token from "real user
//! authorization", which the host app performs (the authorization-code flow is not shown); the
//! SDK asks the provider for a token on a session's first call and once more, with the rejected
//! token, after a 401 `invalid_token`.

use std::sync::Arc;

use crate::auth::{TokenFuture, UserTokenProvider as CoreProvider};
use crate::error::Error as CoreError;
use crate::secret::Secret as CoreSecret;

use super::error::StorefrontError;
use super::secret::Secret;

/// Supplies user-authorized access tokens. Implement it in Kotlin or Swift; throw
/// `StorefrontException.TokenProvider` (Swift: `StorefrontError.TokenProvider`) when no token
/// can be had (for example the user is signed out).
#[uniffi::export(with_foreign, async_runtime = "tokio")]
#[async_trait::async_trait]
pub trait UserTokenProvider: Send + Sync {
    /// Returns a current user access token. `rejected` is the token the service just refused
    /// with 401 `invalid_token` (refresh or re-authorize), or null on the first call.
    async fn user_token(&self, rejected: Option<Arc<Secret>>) -> Result<String, StorefrontError>;
}

impl From<uniffi::UnexpectedUniFFICallbackError> for StorefrontError {
    fn from(error: uniffi::UnexpectedUniFFICallbackError) -> Self {
        StorefrontError::TokenProvider {
            detail: format!("provider raised an unexpected error: {}", error.reason),
        }
    }
}

/// Adapts a foreign provider to the core's provider trait.
pub(crate) struct ForeignProvider(pub Arc<dyn UserTokenProvider>);

impl CoreProvider for ForeignProvider {
    fn user_token(&self, rejected: Option<&CoreSecret>) -> TokenFuture<'_> {
        let rejected = rejected.map(|s| Secret::wrap(s.clone()));
        Box::pin(async move {
            match self.0.user_token(rejected).await {
                Ok(token) => Ok(CoreSecret::new(token)),
                Err(StorefrontError::TokenProvider { detail }) => {
                    Err(CoreError::TokenProvider(detail))
                }
                Err(other) => Err(CoreError::TokenProvider(other.to_string())),
            }
        })
    }
}
