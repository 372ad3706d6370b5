//! `ClientConfig`: the configuration record the host app builds a `Client` from.
//!
//! Contract rules: `{base_url}` includes its path prefix; `{token_endpoint}` and
//! `{userinfo_endpoint}` are separately assigned; HTTPS only, plain HTTP only for loopback hosts
//! when explicitly allowed. The client secret is a `Secret`, so the record's `toString()` does
//! not show it.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, RetryPolicy as CoreRetry};

use super::error::Result;
use super::ints::{unsigned, unsigned_long};
use super::secret::Secret;

/// How safe requests (reads, token requests, merchant-payment create with the same key) are
/// retried. Catalog order creation and payment start are never re-sent, whatever this says.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RetryPolicy {
    /// Total attempts including the first (1 = no retries).
    #[uniffi(default = 4)]
    pub max_attempts: i32,
    /// First backoff delay in milliseconds (exponential, jittered).
    #[uniffi(default = 200)]
    pub base_delay_ms: i64,
    /// Largest backoff delay in milliseconds.
    #[uniffi(default = 5000)]
    pub max_delay_ms: i64,
    /// Largest `Retry-After` the SDK waits for, in milliseconds; a longer one is returned.
    #[uniffi(default = 30000)]
    pub max_retry_after_ms: i64,
}

impl RetryPolicy {
    fn to_core(&self) -> Result<CoreRetry> {
        Ok(CoreRetry {
            max_attempts: unsigned("retry.max_attempts", self.max_attempts)?,
            base_delay: millis("retry.base_delay_ms", self.base_delay_ms)?,
            max_delay: millis("retry.max_delay_ms", self.max_delay_ms)?,
            max_retry_after: millis("retry.max_retry_after_ms", self.max_retry_after_ms)?,
        })
    }
}

/// The client-side rate limiter: the contract's per-client budgets (60 merchant-payment creates,
/// 300 queries, filtered lists and channel reads shared, 30 re-queues per minute), waited for
/// instead of earning a 429; a 429 from the service pauses its class for every caller.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RateLimits {
    /// False turns pacing off (the service's 429s are still honoured per call).
    #[uniffi(default = true)]
    pub enabled: bool,
    /// Merchant-payment creates per window.
    #[uniffi(default = 60)]
    pub create_per_window: i32,
    /// Queries, filtered lists and channel reads per window, shared.
    #[uniffi(default = 300)]
    pub read_per_window: i32,
    /// Notification re-queues per window.
    #[uniffi(default = 30)]
    pub requeue_per_window: i32,
    /// The window in milliseconds (the contract's minute).
    #[uniffi(default = 60000)]
    pub window_ms: i64,
    /// Extra wait beyond the window in milliseconds, against clock and latency differences.
    #[uniffi(default = 500)]
    pub margin_ms: i64,
}

impl RateLimits {
    fn to_core(&self) -> Result<crate::RateLimits> {
        Ok(crate::RateLimits {
            enabled: self.enabled,
            create_per_window: unsigned("rate_limits.create_per_window", self.create_per_window)?,
            read_per_window: unsigned("rate_limits.read_per_window", self.read_per_window)?,
            requeue_per_window: unsigned(
                "rate_limits.requeue_per_window",
                self.requeue_per_window,
            )?,
            window: millis("rate_limits.window_ms", self.window_ms)?,
            margin: millis("rate_limits.margin_ms", self.margin_ms)?,
        })
    }
}

fn millis(field: &str, ms: i64) -> Result<Duration> {
    Ok(Duration::from_millis(unsigned_long(field, ms)?))
}

/// Everything a `Client` needs. Optional fields left null take the SDK's defaults (the core's
/// `Config::new`, listed in the README section "Defaults"; no binding-specific values).
#[derive(Debug, Clone, uniffi::Record)]
pub struct ClientConfig {
    /// `{base_url}`: full API base address with its path prefix (`https://host/api`).
    pub base_url: String,
    /// `{token_endpoint}`.
    pub token_endpoint: String,
    /// OAuth client id.
    pub client_id: String,
    /// OAuth client secret (confidential clients; kept on the merchant server only).
    #[uniffi(default = None)]
    pub client_secret: Option<Arc<Secret>>,
    /// `{userinfo_endpoint}`, if assigned.
    #[uniffi(default = None)]
    pub userinfo_endpoint: Option<String>,
    /// Scopes of the client-credentials token (default: profile, products, merchant payments).
    #[uniffi(default = None)]
    pub scopes: Option<Vec<String>>,
    /// Time to establish one connection (TCP and TLS) in milliseconds (null: the SDK's
    /// default, 3 000; README "Defaults").
    #[uniffi(default = None)]
    pub connect_timeout_ms: Option<i64>,
    /// Timeout of one HTTP attempt in milliseconds (null: the SDK's default, 8 000).
    #[uniffi(default = None)]
    pub attempt_timeout_ms: Option<i64>,
    /// Deadline of one call across retries and waits in milliseconds (null: the SDK's default,
    /// 20 000).
    #[uniffi(default = None)]
    pub overall_deadline_ms: Option<i64>,
    /// Retry policy of safe requests (default: 4 attempts).
    #[uniffi(default = None)]
    pub retry: Option<RetryPolicy>,
    /// The host app's product token, appended to the SDK's user agent.
    #[uniffi(default = None)]
    pub user_agent: Option<String>,
    /// PEM certificates: when set, only these roots are trusted (for example the sandbox CA)
    /// and the platform verifier is not used; when null, the platform verifier decides.
    #[uniffi(default = None)]
    pub root_ca_pem: Option<String>,
    /// Accept plain `http://` for loopback hosts (local development against the sandbox only).
    #[uniffi(default = false)]
    pub allow_insecure_loopback: bool,
    /// The client-side rate limiter (default: on, with the contract's budgets).
    #[uniffi(default = None)]
    pub rate_limits: Option<RateLimits>,
    /// Most requests of this client on the wire at once (default 64).
    #[uniffi(default = None)]
    pub max_in_flight: Option<i32>,
    /// Where the rate budgets, the pause after a 429 and the client-credentials token are
    /// shared by every process (JVM instance) using this client id: `sqlite:///abs/path.db`
    /// (one host), `redis://host:port/db` or `postgres://user@host:port/db` (several hosts);
    /// SDK query parameters `namespace`, `timeout_ms`, `token_lease_ms`. Null (the default)
    /// keeps them in this client. A [`Secret`] like the client secret (the URL may carry a
    /// store password): redacted in the record's `toString()`, never logged, never read back.
    #[uniffi(default = None)]
    pub shared_state: Option<Arc<Secret>>,
}

impl ClientConfig {
    pub(crate) fn to_core(&self) -> Result<Config> {
        let secret = self
            .client_secret
            .as_ref()
            .map(|s| s.inner.clone())
            .unwrap_or_else(|| crate::secret::Secret::new(String::new()));
        let mut c = Config::new(
            self.base_url.clone(),
            self.token_endpoint.clone(),
            self.client_id.clone(),
            secret,
        );
        if self.client_secret.is_none() {
            c.client_secret = None;
        }
        c.userinfo_endpoint = self.userinfo_endpoint.clone();
        if let Some(scopes) = &self.scopes {
            c.scopes = scopes.clone();
        }
        if let Some(ms) = self.connect_timeout_ms {
            c.connect_timeout = millis("connect_timeout_ms", ms)?;
        }
        if let Some(ms) = self.attempt_timeout_ms {
            c.attempt_timeout = millis("attempt_timeout_ms", ms)?;
        }
        if let Some(ms) = self.overall_deadline_ms {
            c.overall_deadline = millis("overall_deadline_ms", ms)?;
        }
        if let Some(retry) = &self.retry {
            c.retry = retry.to_core()?;
        }
        c.user_agent = self.user_agent.clone();
        c.root_ca_pem = self.root_ca_pem.clone();
        c.allow_insecure_loopback = self.allow_insecure_loopback;
        if let Some(limits) = &self.rate_limits {
            c.rate_limits = limits.to_core()?;
        }
        if let Some(max) = self.max_in_flight {
            c.max_in_flight = unsigned("max_in_flight", max)? as usize;
        }
        c.shared_state = self.shared_state.as_ref().map(|s| s.inner.clone());
        Ok(c)
    }
}

/// The configuration from `STOREFRONT_*` environment variables, read by the core's
/// `Config::from_env` (the one implementation of the rule, shared by every binding):
/// `STOREFRONT_BASE_URL`, `STOREFRONT_TOKEN_ENDPOINT`, `STOREFRONT_CLIENT_ID`,
/// `STOREFRONT_CLIENT_SECRET` (required), `STOREFRONT_USERINFO_ENDPOINT`, `STOREFRONT_SCOPES`
/// (space-separated), `STOREFRONT_ALLOW_INSECURE_LOOPBACK` (`1`/`true`),
/// `STOREFRONT_ROOT_CA_PEM_FILE` (trust only this PEM file's roots, e.g. the sandbox's `--tls`
/// CA), `STOREFRONT_SHARED_STATE`. `storefront-sandbox` prints the lines that set them.
///
/// `env` null reads the process environment; a map is read instead (the JVM cannot set its own
/// environment, and an Android app has none: pass the values from wherever the app keeps them).
/// A missing required variable or a bad value is `StorefrontException.Config` naming the
/// variable, never showing a secret. Fields not listed stay null (the SDK's defaults); copy the
/// record to change them.
#[uniffi::export]
pub fn config_from_env(
    env: Option<std::collections::HashMap<String, String>>,
) -> Result<ClientConfig> {
    let core = match env {
        None => Config::from_env()?,
        Some(map) => Config::from_env_with(|name| map.get(name).cloned())?,
    };
    Ok(ClientConfig {
        base_url: core.base_url.clone(),
        token_endpoint: core.token_endpoint.clone(),
        client_id: core.client_id.clone(),
        client_secret: core.client_secret.clone().map(Secret::wrap),
        userinfo_endpoint: core.userinfo_endpoint.clone(),
        scopes: Some(core.scopes.clone()),
        connect_timeout_ms: None,
        attempt_timeout_ms: None,
        overall_deadline_ms: None,
        retry: None,
        user_agent: None,
        root_ca_pem: core.root_ca_pem.clone(),
        allow_insecure_loopback: core.allow_insecure_loopback,
        rate_limits: None,
        max_in_flight: None,
        shared_state: core.shared_state.clone().map(Secret::wrap),
    })
}

/// The SDK's defaults (README "Defaults"), as the core holds them: what a `ClientConfig` field
/// left null, a `RetryPolicy()` or a `RateLimits()` gives, and the suggested payment-wait
/// interval and timeout. Lets an app show or log them, and lets the tests prove the records'
/// own default values equal the core's.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SdkDefaults {
    /// Connection timeout in milliseconds.
    pub connect_timeout_ms: i64,
    /// Per-attempt timeout in milliseconds.
    pub attempt_timeout_ms: i64,
    /// Deadline of one call across retries in milliseconds.
    pub overall_deadline_ms: i64,
    /// Retry policy of safe requests.
    pub retry: RetryPolicy,
    /// How long before expiry a cached client token is renewed, in milliseconds.
    pub token_refresh_margin_ms: i64,
    /// Largest response body read, in bytes.
    pub max_response_bytes: i64,
    /// Most requests on the wire at once.
    pub max_in_flight: i32,
    /// The client-side rate limiter.
    pub rate_limits: RateLimits,
    /// Payment-wait poll interval in milliseconds.
    pub wait_interval_ms: i64,
    /// Payment-wait timeout in milliseconds (then the outcome is `StillPending`).
    pub wait_timeout_ms: i64,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The SDK's defaults, read from the core (`Config::new`, `DEFAULT_WAIT_*`).
#[uniffi::export]
pub fn sdk_defaults() -> SdkDefaults {
    let c = Config::new(
        "https://a.invalid/api",
        "https://a.invalid/t",
        "id",
        "secret",
    );
    let limits = &c.rate_limits;
    SdkDefaults {
        connect_timeout_ms: ms(c.connect_timeout),
        attempt_timeout_ms: ms(c.attempt_timeout),
        overall_deadline_ms: ms(c.overall_deadline),
        retry: RetryPolicy {
            max_attempts: i32::try_from(c.retry.max_attempts).unwrap_or(i32::MAX),
            base_delay_ms: ms(c.retry.base_delay),
            max_delay_ms: ms(c.retry.max_delay),
            max_retry_after_ms: ms(c.retry.max_retry_after),
        },
        token_refresh_margin_ms: ms(c.token_refresh_margin),
        max_response_bytes: i64::try_from(c.max_response_bytes).unwrap_or(i64::MAX),
        max_in_flight: i32::try_from(c.max_in_flight).unwrap_or(i32::MAX),
        rate_limits: RateLimits {
            enabled: limits.enabled,
            create_per_window: i32::try_from(limits.create_per_window).unwrap_or(i32::MAX),
            read_per_window: i32::try_from(limits.read_per_window).unwrap_or(i32::MAX),
            requeue_per_window: i32::try_from(limits.requeue_per_window).unwrap_or(i32::MAX),
            window_ms: ms(limits.window),
            margin_ms: ms(limits.margin),
        },
        wait_interval_ms: ms(crate::DEFAULT_WAIT_INTERVAL),
        wait_timeout_ms: ms(crate::DEFAULT_WAIT_TIMEOUT),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn config_from_env_map_round_trips_to_the_core_and_names_a_missing_variable() {
        let mut env: HashMap<String, String> = [
            ("STOREFRONT_BASE_URL", "http://127.0.0.1:8080/api"),
            (
                "STOREFRONT_TOKEN_ENDPOINT",
                "http://127.0.0.1:8080/oauth/token",
            ),
            ("STOREFRONT_CLIENT_ID", "sbx_merchant_client"),
            ("STOREFRONT_CLIENT_SECRET", "sbx-secret-value"),
            ("STOREFRONT_ALLOW_INSECURE_LOOPBACK", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let record = config_from_env(Some(env.clone())).unwrap();
        assert!(record.allow_insecure_loopback);
        assert!(!format!("{record:?}").contains("sbx-secret-value"));
        let core = record.to_core().unwrap();
        assert!(core.validate().is_ok());
        assert_eq!(
            core.client_secret.as_ref().map(|s| s.expose()),
            Some("sbx-secret-value")
        );
        env.remove("STOREFRONT_CLIENT_ID");
        let message = config_from_env(Some(env)).unwrap_err().to_string();
        assert!(message.contains("STOREFRONT_CLIENT_ID"), "{message}");
    }
}
