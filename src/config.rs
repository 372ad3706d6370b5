//! Client configuration: endpoints, credentials, timeouts, retry policy, trust.
//!
//! Contract rules: `{base_url}` is "the full API base address assigned to the client, including
//! its path prefix"; `{token_endpoint}` and `{userinfo_endpoint}` are separately assigned. The
//! SDK speaks HTTPS only; plain HTTP is accepted only for loopback hosts and only when
//! [`Config::with_insecure_loopback`] is set (local sandboxes).
//!
//! Every default is a `DEFAULT_*` constant of this module, listed with its reason in the README
//! section "Defaults" (a test compares that table with [`Config::new`], so the two cannot drift).

use std::net::IpAddr;
use std::time::Duration;

use serde::Deserialize;
use url::{Host, Url};

use crate::error::{Error, Result};
use crate::rate_limit::RateLimits;
use crate::secret::Secret;

mod env;
pub use env::{
    ENV_ALLOW_INSECURE_LOOPBACK, ENV_BASE_URL, ENV_CLIENT_ID, ENV_CLIENT_SECRET,
    ENV_ROOT_CA_PEM_FILE, ENV_SCOPES, ENV_SHARED_STATE, ENV_TOKEN_ENDPOINT, ENV_USERINFO_ENDPOINT,
    ENV_VARIABLES,
};

/// Default scopes of the client-credentials token: merchant profile, products and merchant
/// collection.
pub const DEFAULT_CLIENT_SCOPES: &[&str] = &[
    "merchant.profile.read",
    "products.read",
    "merchant_payments.read",
    "merchant_payments.create",
];

/// Largest value any duration of the configuration may take (one day): the attempt timeout, the
/// overall deadline, the retry delays, the `Retry-After` cap and the token refresh margin.
///
/// Deadlines are computed as `now + duration`; a bound keeps that addition far from the clock's
/// range, so `Duration::MAX` (or `u64::MAX` milliseconds in JSON) is a configuration error
/// instead of a panic on the first call.
pub const MAX_CONFIG_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// Largest [`Config::max_in_flight`] accepted (a semaphore of more permits cannot be built, and
/// no connection pool needs that many).
pub const MAX_IN_FLIGHT: usize = 65_536;

/// Default [`Config::connect_timeout`]: 3 s. A reachable service completes TCP and TLS well
/// within a second even on a mobile network; an address that does not answer in 3 s is down,
/// and failing fast leaves the deadline room for a retry (a connection never made was not sent,
/// so even an order creation may be tried again after it).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Default [`Config::attempt_timeout`]: 8 s, the contract's own bound for one exchange (a
/// notification delivery "waits at most 8 seconds"). Long enough that order creation and
/// payment start, which are never re-sent, rarely end as an unknown outcome; short enough that a
/// stalled attempt leaves the deadline room for another.
pub const DEFAULT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(8);

/// Default [`Config::overall_deadline`]: 20 s for one call across its retries and waits: two
/// full attempts and the backoff between them, about as long as a user watches a spinner.
pub const DEFAULT_OVERALL_DEADLINE: Duration = Duration::from_secs(20);

/// Default [`Config::token_refresh_margin`]: 30 s, longer than [`DEFAULT_OVERALL_DEADLINE`], so
/// a token taken at the start of a call never runs out during its retries.
pub const DEFAULT_TOKEN_REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// Default [`Config::max_response_bytes`]: 4 MiB, far above the largest answer of the contract
/// (100 products or payments per page) and small enough for a phone.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// Default [`Config::max_in_flight`]: 64 requests on the wire at once, beyond what the
/// contract's per-minute budgets keep busy, while bounding sockets and memory in a burst.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// SDK user agent prefix (`storefront-rust/<version>`).
pub const SDK_USER_AGENT: &str = concat!("storefront-rust/", env!("CARGO_PKG_VERSION"));

/// When and how often safe requests are retried (see [`crate::Operation::resend`]).
///
/// Backoff is exponential with jitter (`base_delay * 2^n`, capped at `max_delay`, each delay
/// drawn uniformly from its upper half); a `Retry-After` is honoured up to `max_retry_after`;
/// every wait stays within the overall deadline.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct RetryPolicy {
    /// Total attempts for a safe request, including the first (1 = no retries).
    pub max_attempts: u32,
    /// First backoff delay.
    #[serde(rename = "base_delay_ms", with = "duration_ms")]
    pub base_delay: Duration,
    /// Largest backoff delay.
    #[serde(rename = "max_delay_ms", with = "duration_ms")]
    pub max_delay: Duration,
    /// Largest `Retry-After` the SDK waits for; a longer one is returned to the caller.
    #[serde(rename = "max_retry_after_ms", with = "duration_ms")]
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, backoff from 200 ms up to 5 s, `Retry-After` honoured up to 30 s (README
    /// "Defaults"): quick failures (connection refused, 503) heal within the overall deadline,
    /// which bounds the total anyway.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }
}

/// Everything a [`crate::Client`] needs. Build with [`Config::new`] and the `with_*` methods,
/// read it from `STOREFRONT_*` environment variables with [`Config::from_env`] (the same code for
/// production and the sandbox), or deserialize from JSON (durations as `*_ms` fields), then pass
/// to [`crate::Client::new`].
///
/// Defaults (the README section "Defaults" is the same table, checked by a test):
///
/// | Setting | Default | Why |
/// |---|---|---|
/// | `connect_timeout` | 3 s | a reachable service connects (TCP and TLS) in well under a second, even on a phone; failing fast leaves the deadline room for a retry, and a connection never made sent nothing |
/// | `attempt_timeout` | 8 s | the contract's own bound for one exchange (a notification delivery waits at most 8 s); long enough that order creation and payment start, never re-sent, rarely end as an unknown outcome |
/// | `overall_deadline` | 20 s | one call across retries and waits: two full attempts and the backoff between them, about as long as a user watches a spinner |
/// | `retry.max_attempts` | 4 | quick failures (connection refused, 503) heal; the deadline bounds the total; order creation and payment start are never re-sent whatever this says |
/// | `retry.base_delay` | 200 ms | first backoff, doubled per retry and jittered |
/// | `retry.max_delay` | 5 s | largest backoff; keeps retries inside the deadline |
/// | `retry.max_retry_after` | 30 s | a longer `Retry-After` is returned to the caller instead of waited for |
/// | `token_refresh_margin` | 30 s | longer than the overall deadline, so a token never expires in the middle of a call |
/// | `max_response_bytes` | 4 MiB | far above the largest answer of the contract (100 items a page), small enough for a phone |
/// | `max_in_flight` | 64 | more than the per-minute budgets keep busy; bounds sockets and memory in a burst |
/// | `rate_limits.enabled` | true | waiting for the contract's per-client budget is cheaper than earning a 429 |
/// | `rate_limits.create_per_window` | 60 | the contract: 60 merchant-payment creates per client per minute |
/// | `rate_limits.read_per_window` | 300 | the contract: 300 queries, filtered lists and channel reads per minute, shared |
/// | `rate_limits.requeue_per_window` | 30 | the contract: 30 notification re-queues per minute |
/// | `rate_limits.window` | 60 s | the contract's minute |
/// | `rate_limits.margin` | 500 ms | against clock and latency differences with the service |
/// | `shared_state` | none | in-process budgets and token; a store URL shares them across processes and hosts ("Rate limits") |
/// | `allow_insecure_loopback` | false | HTTPS only; plain HTTP to loopback hosts is for local sandboxes |
/// | `wait.interval` | 2 s | payment-status poll interval (`DEFAULT_WAIT_INTERVAL`): a paid buyer sees it within about 2 s; 30 light reads a minute |
/// | `wait.timeout` | 60 s | payment wait (`DEFAULT_WAIT_TIMEOUT`): about as long as a "confirming payment" screen; then the wait reports still pending (an outcome) and the app checks later |
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    /// `{base_url}`: full API base address with its path prefix (`https://host/api`).
    pub base_url: String,
    /// `{token_endpoint}`.
    pub token_endpoint: String,
    /// `{userinfo_endpoint}`, if assigned.
    #[serde(default)]
    pub userinfo_endpoint: Option<String>,
    /// OAuth client id.
    pub client_id: String,
    /// OAuth client secret (confidential clients). Redacted in `Debug`.
    #[serde(default)]
    pub client_secret: Option<Secret>,
    /// Scopes asked for in the client-credentials token request.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// Time allowed to establish one connection (TCP and TLS), within the attempt timeout.
    #[serde(
        default = "default_connect_timeout",
        rename = "connect_timeout_ms",
        with = "duration_ms"
    )]
    pub connect_timeout: Duration,
    /// Timeout of one HTTP attempt.
    #[serde(
        default = "default_attempt_timeout",
        rename = "attempt_timeout_ms",
        with = "duration_ms"
    )]
    pub attempt_timeout: Duration,
    /// Deadline of one call across all its retries and waits.
    #[serde(
        default = "default_deadline",
        rename = "overall_deadline_ms",
        with = "duration_ms"
    )]
    pub overall_deadline: Duration,
    /// Retry policy for safe requests.
    #[serde(default)]
    pub retry: RetryPolicy,
    /// Host application's product token, appended to the SDK's user agent.
    #[serde(default)]
    pub user_agent: Option<String>,
    /// PEM certificates: when set, only these roots are trusted (for example the sandbox CA);
    /// when unset, the platform verifier decides.
    #[serde(default)]
    pub root_ca_pem: Option<String>,
    /// Accept plain `http://` for loopback hosts (127.0.0.0/8, ::1, `localhost`) and loopback
    /// notification receivers. Local development against the sandbox only.
    #[serde(default)]
    pub allow_insecure_loopback: bool,
    /// Largest response body the SDK reads.
    #[serde(default = "default_max_body")]
    pub max_response_bytes: usize,
    /// A cached client token is renewed this long before its `expires_in` runs out.
    #[serde(
        default = "default_refresh_margin",
        rename = "token_refresh_margin_ms",
        with = "duration_ms"
    )]
    pub token_refresh_margin: Duration,
    /// The client-side rate limiter (the contract's per-client budgets; on by default).
    #[serde(default)]
    pub rate_limits: RateLimits,
    /// Most requests of this client on the wire at once (default 64); more calls wait for a
    /// slot, which bounds connections and memory under any burst.
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: usize,
    /// Where the rate budgets, the pause after a 429 and the client-credentials token are shared
    /// by every process and host using this client id (`sqlite:///path.db`, `redis://host:6379/0`,
    /// `postgres://user@host/db`; see [`crate::store`'s table](crate::SharedStateStatus)). `None`
    /// (the default) keeps them in this client value. The URL may carry a password: it is a
    /// secret, redacted in `Debug`.
    #[serde(default)]
    pub shared_state: Option<Secret>,
}

fn default_scopes() -> Vec<String> {
    DEFAULT_CLIENT_SCOPES
        .iter()
        .map(|s| s.to_string())
        .collect()
}
fn default_connect_timeout() -> Duration {
    DEFAULT_CONNECT_TIMEOUT
}
fn default_attempt_timeout() -> Duration {
    DEFAULT_ATTEMPT_TIMEOUT
}
fn default_deadline() -> Duration {
    DEFAULT_OVERALL_DEADLINE
}
fn default_max_body() -> usize {
    DEFAULT_MAX_RESPONSE_BYTES
}
fn default_refresh_margin() -> Duration {
    DEFAULT_TOKEN_REFRESH_MARGIN
}
fn default_max_in_flight() -> usize {
    DEFAULT_MAX_IN_FLIGHT
}

pub(crate) mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

impl Config {
    /// A configuration with the given endpoints and credentials and default settings.
    pub fn new(
        base_url: impl Into<String>,
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<Secret>,
    ) -> Self {
        Config {
            base_url: base_url.into(),
            token_endpoint: token_endpoint.into(),
            userinfo_endpoint: None,
            client_id: client_id.into(),
            client_secret: Some(client_secret.into()),
            scopes: default_scopes(),
            connect_timeout: default_connect_timeout(),
            attempt_timeout: default_attempt_timeout(),
            overall_deadline: default_deadline(),
            retry: RetryPolicy::default(),
            user_agent: None,
            root_ca_pem: None,
            allow_insecure_loopback: false,
            max_response_bytes: default_max_body(),
            token_refresh_margin: default_refresh_margin(),
            rate_limits: RateLimits::default(),
            max_in_flight: default_max_in_flight(),
            shared_state: None,
        }
    }

    /// Sets `{userinfo_endpoint}`.
    pub fn with_userinfo_endpoint(mut self, url: impl Into<String>) -> Self {
        self.userinfo_endpoint = Some(url.into());
        self
    }

    /// Sets the scopes of the client-credentials token.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the connection timeout (TCP and TLS of one connection).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the per-attempt timeout.
    pub fn with_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = timeout;
        self
    }

    /// Sets the overall deadline across retries.
    pub fn with_overall_deadline(mut self, deadline: Duration) -> Self {
        self.overall_deadline = deadline;
        self
    }

    /// Sets the retry policy.
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Appends the host app's product token to the user agent.
    pub fn with_user_agent(mut self, product: impl Into<String>) -> Self {
        self.user_agent = Some(product.into());
        self
    }

    /// Trusts only the roots in this PEM text (for example the sandbox CA).
    pub fn with_root_ca_pem(mut self, pem: impl Into<String>) -> Self {
        self.root_ca_pem = Some(pem.into());
        self
    }

    /// Allows plain HTTP to loopback hosts and loopback notification receivers (sandbox only).
    /// Sets the field [`Config::allow_insecure_loopback`] (renamed from the 0.1 method
    /// `allow_insecure_loopback`, which collided with the field).
    pub fn with_insecure_loopback(mut self, allow: bool) -> Self {
        self.allow_insecure_loopback = allow;
        self
    }

    /// Sets the client-side rate limits ([`RateLimits::disabled`] turns pacing off).
    pub fn with_rate_limits(mut self, limits: RateLimits) -> Self {
        self.rate_limits = limits;
        self
    }

    /// Sets the most requests on the wire at once.
    pub fn with_max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max;
        self
    }

    /// Sets the largest response body the SDK reads.
    pub fn with_max_response_bytes(mut self, max: usize) -> Self {
        self.max_response_bytes = max;
        self
    }

    /// Shares the rate budgets and the token through the store at `url` (see
    /// [`Config::shared_state`]).
    pub fn with_shared_state(mut self, url: impl Into<String>) -> Self {
        self.shared_state = Some(Secret::new(url.into()));
        self
    }

    /// Sets how long before its expiry a cached client token is renewed.
    pub fn with_token_refresh_margin(mut self, margin: Duration) -> Self {
        self.token_refresh_margin = margin;
        self
    }

    /// Checks every field and parses the endpoints.
    pub(crate) fn validate(&self) -> Result<ValidConfig> {
        let mut base_url = self.endpoint("base_url", &self.base_url)?;
        if !base_url.path().ends_with('/') {
            let path = format!("{}/", base_url.path());
            base_url.set_path(&path);
        }
        let token_endpoint = self.endpoint("token_endpoint", &self.token_endpoint)?;
        let userinfo_endpoint = self
            .userinfo_endpoint
            .as_deref()
            .map(|u| self.endpoint("userinfo_endpoint", u))
            .transpose()?;
        if self.client_id.trim().is_empty() {
            return Err(Error::Config("client_id is empty".into()));
        }
        if self.attempt_timeout.is_zero()
            || self.overall_deadline.is_zero()
            || self.connect_timeout.is_zero()
        {
            return Err(Error::Config("timeouts must be positive".into()));
        }
        self.check_durations()?;
        if !(1..=MAX_IN_FLIGHT).contains(&self.max_in_flight) {
            return Err(Error::Config(format!(
                "max_in_flight must be 1 to {MAX_IN_FLIGHT} (got {})",
                self.max_in_flight
            )));
        }
        if self.retry.max_attempts == 0 {
            return Err(Error::Config(
                "retry.max_attempts must be at least 1".into(),
            ));
        }
        let origin = Url::parse(&base_url.origin().ascii_serialization())
            .map_err(|e| Error::Config(format!("base_url has no origin: {e}")))?;
        let user_agent = match &self.user_agent {
            Some(app) if !app.trim().is_empty() => format!("{SDK_USER_AGENT} {}", app.trim()),
            _ => SDK_USER_AGENT.to_owned(),
        };
        let shared_state = match &self.shared_state {
            Some(url) => Some(crate::store::StoreUrl::parse(url.expose())?),
            None => None,
        };
        Ok(ValidConfig {
            base_url,
            origin,
            token_endpoint,
            userinfo_endpoint,
            user_agent,
            shared_state,
        })
    }

    /// Every duration at most [`MAX_CONFIG_DURATION`], so that no `Instant + duration` built from
    /// the configuration can overflow.
    fn check_durations(&self) -> Result<()> {
        let fields = [
            ("connect_timeout", self.connect_timeout),
            ("attempt_timeout", self.attempt_timeout),
            ("overall_deadline", self.overall_deadline),
            ("token_refresh_margin", self.token_refresh_margin),
            ("retry.base_delay", self.retry.base_delay),
            ("retry.max_delay", self.retry.max_delay),
            ("retry.max_retry_after", self.retry.max_retry_after),
            ("rate_limits.window", self.rate_limits.window),
            ("rate_limits.margin", self.rate_limits.margin),
        ];
        for (name, value) in fields {
            if value > MAX_CONFIG_DURATION {
                return Err(Error::Config(format!(
                    "{name} must be at most {} s (got {} s)",
                    MAX_CONFIG_DURATION.as_secs(),
                    value.as_secs()
                )));
            }
        }
        Ok(())
    }

    fn endpoint(&self, name: &str, text: &str) -> Result<Url> {
        let url = Url::parse(text.trim())
            .map_err(|e| Error::Config(format!("{name} is not a valid URL: {e}")))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Error::Config(format!("{name} must not carry user info")));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(Error::Config(format!(
                "{name} must not carry a query or fragment"
            )));
        }
        match url.scheme() {
            "https" => Ok(url),
            "http" if self.allow_insecure_loopback && is_loopback(&url) => Ok(url),
            "http" => Err(Error::Config(format!(
                "{name} must use https (plain http only for loopback hosts with allow_insecure_loopback)"
            ))),
            other => Err(Error::Config(format!(
                "{name} has unsupported scheme {other}"
            ))),
        }
    }
}

/// Whether the URL's host is a loopback address or `localhost`.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(d)) => {
            d.eq_ignore_ascii_case("localhost")
                || d.parse::<IpAddr>()
                    .map(|ip| ip.is_loopback())
                    .unwrap_or(false)
        }
        None => false,
    }
}

/// A checked configuration with parsed endpoints.
#[derive(Debug, Clone)]
pub(crate) struct ValidConfig {
    /// Base URL, path ending in `/`.
    pub base_url: Url,
    /// Origin of the base URL (the platform service address for relative redirects).
    pub origin: Url,
    pub token_endpoint: Url,
    pub userinfo_endpoint: Option<Url>,
    pub user_agent: String,
    /// The parsed [`Config::shared_state`] URL.
    pub shared_state: Option<crate::store::StoreUrl>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(base: &str) -> Config {
        Config::new(base, "https://auth.example/oauth/token", "id", "secret")
    }

    #[test]
    fn https_only_unless_loopback_explicitly_allowed() {
        assert!(cfg("https://api.example/api").validate().is_ok());
        assert!(matches!(
            cfg("http://api.example/api").validate(),
            Err(Error::Config(_))
        ));
        assert!(cfg("http://127.0.0.1:8080/api").validate().is_err());
        let mut local = cfg("http://127.0.0.1:8080/api").with_insecure_loopback(true);
        local.token_endpoint = "http://localhost:8080/oauth/token".into();
        assert!(local.validate().is_ok());
        let mut remote = cfg("http://10.0.0.1/api").with_insecure_loopback(true);
        remote.token_endpoint = "http://10.0.0.1/oauth/token".into();
        assert!(remote.validate().is_err());
    }

    #[test]
    fn base_url_keeps_its_path_prefix_and_origin() {
        let v = cfg("https://api.example/prefix/api").validate().unwrap();
        assert_eq!(v.base_url.as_str(), "https://api.example/prefix/api/");
        assert_eq!(v.origin.as_str(), "https://api.example/");
        assert!(v.user_agent.starts_with("storefront-rust/"));
    }

    /// Issue 10 item 3: `Duration::MAX` (or `u64::MAX` ms in JSON) in any duration field is a
    /// configuration error, never a panic when a deadline is computed from it.
    #[test]
    fn in_flight_cap_and_rate_window_are_bounded() {
        for bad in [0, MAX_IN_FLIGHT + 1, usize::MAX] {
            let mut c = cfg("https://api.example.com/api");
            c.max_in_flight = bad;
            assert!(matches!(c.validate(), Err(Error::Config(_))), "{bad}");
        }
        let mut c = cfg("https://api.example.com/api");
        c.rate_limits.window = Duration::MAX;
        assert!(matches!(c.validate(), Err(Error::Config(_))));
        let parsed: Config = serde_json::from_str(
            r#"{"base_url":"https://a.example/api","token_endpoint":"https://a.example/t",
                "client_id":"c","rate_limits":{"enabled":false,"window_ms":2000},"max_in_flight":8}"#,
        )
        .unwrap();
        assert!(!parsed.rate_limits.enabled);
        assert_eq!(parsed.rate_limits.window, Duration::from_secs(2));
        assert_eq!(parsed.rate_limits.create_per_window, 60);
        assert_eq!(parsed.max_in_flight, 8);
    }

    #[test]
    fn absurd_durations_are_rejected_not_added_to_the_clock() {
        type Set = fn(&mut Config, Duration);
        let setters: [(&str, Set); 7] = [
            ("connect_timeout", |c, d| c.connect_timeout = d),
            ("attempt_timeout", |c, d| c.attempt_timeout = d),
            ("overall_deadline", |c, d| c.overall_deadline = d),
            ("token_refresh_margin", |c, d| c.token_refresh_margin = d),
            ("retry.base_delay", |c, d| c.retry.base_delay = d),
            ("retry.max_delay", |c, d| c.retry.max_delay = d),
            ("retry.max_retry_after", |c, d| c.retry.max_retry_after = d),
        ];
        for (name, set) in setters {
            let mut c = cfg("https://api.example/api");
            set(&mut c, Duration::MAX);
            match c.validate() {
                Err(Error::Config(m)) => assert!(m.contains(name), "{name}: {m}"),
                other => panic!("{name}: {other:?}"),
            }
            let mut ok = cfg("https://api.example/api");
            set(&mut ok, MAX_CONFIG_DURATION);
            assert!(ok.validate().is_ok(), "{name} at the bound is accepted");
        }
        let c: Config = serde_json::from_str(
            r#"{"base_url":"https://a/api","token_endpoint":"https://a/t","client_id":"c",
                "overall_deadline_ms":18446744073709551615}"#,
        )
        .unwrap();
        assert!(matches!(c.validate(), Err(Error::Config(_))));
    }

    #[test]
    fn debug_output_redacts_the_client_secret() {
        let c = Config::new("https://a/api", "https://a/t", "id", "top-secret-value");
        assert!(!format!("{c:?}").contains("top-secret-value"));
    }

    #[test]
    fn deserializes_from_json_with_millisecond_durations() {
        let c: Config = serde_json::from_str(
            r#"{"base_url":"https://a/api","token_endpoint":"https://a/t","client_id":"c",
                "client_secret":"s","attempt_timeout_ms":1500,"retry":{"max_attempts":2}}"#,
        )
        .unwrap();
        assert_eq!(c.attempt_timeout, Duration::from_millis(1500));
        assert_eq!(c.retry.max_attempts, 2);
        assert_eq!(c.scopes, default_scopes());
    }
}
