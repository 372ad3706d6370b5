//! The shared client state: one rate budget and one client-credentials token per OAuth client,
//! shared by every process and host of a shop through SQLite, Redis or PostgreSQL.
//!
//! Contract rules: the service counts its limits per client ("60 per client per minute", "300
//! per client per minute, shared", "30 per client per minute"), across every process of the
//! shop, and `Retry-After` on a 429 applies to the client, not to one process; the
//! client-credentials token is "kept only on the merchant server" and its "lifetime managed by
//! `expires_in`". So the budget, the pause after a 429 and the token live in one place that
//! every process reads ([`Store`]), chosen by one URL in the configuration
//! ([`crate::Config::shared_state`]):
//!
//! | URL | Backend | For |
//! |---|---|---|
//! | `sqlite:///var/lib/shop/storefront.db` | [`sqlite`] (feature `store-sqlite`) | one host, many processes (php-fpm, gunicorn) |
//! | `redis://127.0.0.1:6379/0` | [`redis`](self) (feature `store-redis`) | many hosts |
//! | `postgres://user@db/shop` | [`postgres`](self) (feature `store-postgres`) | many hosts without Redis |
//!
//! Query parameters of the URL that belong to the SDK (removed before the backend sees it):
//! `namespace` (a prefix for the shop, default none), `timeout_ms` (the bound on one store
//! round trip, default [`DEFAULT_STORE_TIMEOUT`]) and `token_lease_ms` (how long a process may
//! hold the right to fetch the token, default [`DEFAULT_TOKEN_LEASE`]).
//!
//! Every admitted call costs one store round trip ([`Store::admit`]); a 429 costs one more
//! ([`Store::pause`]); a token miss costs one ([`Store::token`]) and the fetching process one
//! more ([`Store::put_token`]). The client secret is never stored; the token is (it is what is
//! shared), with its expiry, so an entry never outlives the token.
//!
//! A store that fails (stopped, locked, unreachable, slower than `timeout_ms`) never fails a
//! call: [`SharedState`] logs one warning per outage, the calls go on with the process's own
//! limiter and token cache, and the store is tried again after [`PROBE_INTERVAL`].

// Without a backend feature nothing builds the backends' half of these types.
#![cfg_attr(
    not(any(
        feature = "store-sqlite",
        feature = "store-redis",
        feature = "store-postgres"
    )),
    allow(dead_code)
)]

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::error::{ApiError, Error, ErrorCode, TransportKind};
use crate::rate_limit::LimitClass;
use crate::secret::Secret;

#[cfg(all(
    test,
    any(
        feature = "store-sqlite",
        feature = "store-redis",
        feature = "store-postgres"
    )
))]
mod conformance;
#[cfg(feature = "store-postgres")]
pub(crate) mod postgres;
#[cfg(feature = "store-redis")]
pub(crate) mod redis;
#[cfg(feature = "store-sqlite")]
pub(crate) mod sqlite;
#[cfg(all(
    test,
    any(
        feature = "store-sqlite",
        feature = "store-redis",
        feature = "store-postgres"
    )
))]
#[allow(dead_code)] // each backend's test uses its own server
// Also the servers of the inbox's suite (src/inbox/conformance.rs).
pub(crate) mod test_servers;

/// Default bound on one store round trip: past it the call goes on with in-process state.
pub const DEFAULT_STORE_TIMEOUT: Duration = Duration::from_millis(500);
/// Default time a process may hold the right to fetch the token: a process killed while
/// fetching blocks the others at most this long.
pub const DEFAULT_TOKEN_LEASE: Duration = Duration::from_secs(10);
/// After a store failure, how long calls use in-process state before the store is tried again.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// Boxed future of a store operation.
pub(crate) type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = StoreResult<T>> + Send + 'a>>;
/// Result of one store round trip.
pub(crate) type StoreResult<T> = std::result::Result<T, StoreError>;

/// Why a store round trip failed (never shown to callers as a call failure: it only switches
/// the process to its own state for a while). Carries no secret: backends build it from their
/// error's kind and text, never from the URL.
#[derive(Debug, Clone)]
pub(crate) struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One admission request to a class's sliding window: at most `budget` admissions in any
/// `span` (the window plus the margin), and none while the class is paused.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Admit {
    pub class: LimitClass,
    pub budget: u32,
    /// Window plus margin, in milliseconds.
    pub span_ms: u64,
}

/// The answer to [`Store::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Counted: the call may be sent now.
    Admitted,
    /// Not counted: ask again after this many milliseconds (room opens, or the pause ends).
    Wait(u64),
}

/// A client-credentials token as the store holds it. Times are relative to the store's own
/// clock at the moment of the round trip, so hosts with different clocks agree.
#[derive(Clone)]
pub(crate) struct StoredToken {
    pub token: Secret,
    /// Granted scopes, space-separated, as the token endpoint sent them.
    pub scope: String,
    /// `expires_in` as granted.
    pub expires_in: u64,
    /// Milliseconds until it should be renewed (a process renews from then on).
    pub refresh_in_ms: u64,
    /// Milliseconds until it expires (it is never sent after that).
    pub expires_in_ms: u64,
}

impl fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredToken")
            .field("token", &"[REDACTED]")
            .field("scope", &self.scope)
            .field("refresh_in_ms", &self.refresh_in_ms)
            .field("expires_in_ms", &self.expires_in_ms)
            .finish()
    }
}

/// A failed token request as the store holds it (what the other processes answer until its
/// back-off ends): the HTTP status and `error` code, or the transport failure. Never a secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StoredFailure {
    /// HTTP status of the token endpoint's answer; `None` for a transport failure.
    #[serde(default)]
    pub status: Option<u16>,
    /// The `error` code (HTTP) or the transport kind's name.
    pub error: String,
    /// `error_description` or the transport message.
    #[serde(default)]
    pub description: Option<String>,
    /// Failures in a row, for the back-off.
    pub in_a_row: u32,
}

impl StoredFailure {
    /// The record of `error` (the `in_a_row`-th failure in a row).
    pub fn of(error: &Error, in_a_row: u32) -> StoredFailure {
        match error {
            Error::Api(api) => StoredFailure {
                status: Some(api.status),
                error: api.error.as_str().to_owned(),
                description: api.error_description.clone(),
                in_a_row,
            },
            Error::DeadlineExceeded { last: Some(last) } => StoredFailure::of(last, in_a_row),
            other => StoredFailure {
                status: other.status(),
                error: other.kind().as_str().to_owned(),
                description: Some(other.to_string()),
                in_a_row,
            },
        }
    }

    /// The error the other processes report while the failure's back-off runs.
    pub fn to_error(&self) -> Error {
        match self.status {
            Some(status) => Error::Api(ApiError {
                status,
                error: ErrorCode::parse(&self.error),
                error_description: self.description.clone(),
                field: None,
                retry_after: None,
            }),
            None => Error::Transport {
                kind: TransportKind::Connection,
                message: format!(
                    "token request failed in another process: {}",
                    self.description.as_deref().unwrap_or(&self.error)
                ),
            },
        }
    }
}

/// The answer to [`Store::token`].
#[derive(Debug, Clone)]
pub(crate) enum TokenLookup {
    /// A token that is not due for renewal.
    Fresh(StoredToken),
    /// The last token request failed and its back-off runs for this many more milliseconds.
    Failed(StoredFailure, u64),
    /// No fresh token and no other holder: this process now holds the lease and fetches.
    Leased,
    /// Another process holds the lease: ask again (at most this many milliseconds later).
    Busy(u64),
}

/// What the store holds for this client now (for tests, dashboards and operators).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredState {
    /// Per limit class: admissions within the current window and the pause left, in ms.
    pub windows: Vec<StoredWindow>,
    /// Whether a token is stored and not due for renewal (its value is never shown).
    pub token_shared: bool,
    /// Milliseconds until the stored token expires, when one is stored.
    pub token_expires_in_ms: Option<u64>,
    /// Whether a process holds the token lease now.
    pub token_lease_held: bool,
    /// Failures of the token endpoint in a row, as shared.
    pub token_failures_in_a_row: u32,
}

/// Where a client's rate budgets and token live now, and what the shared store holds
/// ([`crate::Client::shared_state`]): for tests, dashboards and operators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedStateStatus {
    /// `memory` (no `shared_state` configured), `sqlite`, `redis` or `postgres`.
    pub backend: String,
    /// Whether the store answered this read (false during an outage: calls then use the
    /// process's own limiter and token cache).
    pub available: bool,
    /// What the store holds, when it answered.
    #[serde(default)]
    pub stored: Option<StoredState>,
}

/// One class's window in the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredWindow {
    /// The class.
    pub class: LimitClass,
    /// Admissions within the last span.
    pub in_window: u32,
    /// Milliseconds left of a pause set by a 429, if any.
    pub paused_for_ms: Option<u64>,
}

/// A number in a store's text answer (negative reads as 0).
#[cfg_attr(
    not(any(feature = "store-redis", feature = "store-postgres")),
    allow(dead_code)
)]
pub(crate) fn parse_count(backend: &str, text: &str, what: &str) -> StoreResult<u64> {
    text.parse::<i64>()
        .map(|n| u64::try_from(n).unwrap_or(0))
        .map_err(|_| {
            StoreError(format!(
                "{backend}: unexpected {what} in the store's answer"
            ))
        })
}

/// A failure record as a store keeps it (JSON text).
#[cfg_attr(
    not(any(feature = "store-redis", feature = "store-postgres")),
    allow(dead_code)
)]
pub(crate) fn parse_failure(backend: &str, record: &str) -> StoreResult<StoredFailure> {
    serde_json::from_str(record)
        .map_err(|e| StoreError(format!("{backend}: unreadable failure record: {e}")))
}

/// The inspect answer of a Redis script or a PostgreSQL function, as text columns: per class (in
/// [`LimitClass::ALL`] order) its count and the pause left (empty: none), then the token's
/// refresh time and expiry (empty: none), the lease column (read by `lease_held`) and the
/// failure record (empty: none).
#[cfg_attr(
    not(any(feature = "store-redis", feature = "store-postgres")),
    allow(dead_code)
)]
pub(crate) fn parse_inspect(
    backend: &str,
    out: &[String],
    lease_held: impl Fn(&str) -> StoreResult<bool>,
) -> StoreResult<StoredState> {
    let base = 2 * LimitClass::ALL.len();
    if out.len() != base + 4 {
        return Err(StoreError(format!("{backend}: unexpected inspect answer")));
    }
    let optional = |text: &str, what: &str| -> StoreResult<Option<u64>> {
        if text.is_empty() {
            Ok(None)
        } else {
            parse_count(backend, text, what).map(Some)
        }
    };
    let mut windows = Vec::with_capacity(LimitClass::ALL.len());
    for (i, class) in LimitClass::ALL.into_iter().enumerate() {
        windows.push(StoredWindow {
            class,
            in_window: u32::try_from(parse_count(backend, &out[2 * i], "count")?)
                .unwrap_or(u32::MAX),
            paused_for_ms: optional(&out[2 * i + 1], "pause")?,
        });
    }
    let refresh_in = optional(&out[base], "refresh time")?;
    let failures = if out[base + 3].is_empty() {
        0
    } else {
        parse_failure(backend, &out[base + 3])?.in_a_row
    };
    Ok(StoredState {
        windows,
        token_shared: refresh_in.is_some_and(|ms| ms > 0),
        token_expires_in_ms: optional(&out[base + 1], "expiry")?,
        token_lease_held: lease_held(&out[base + 2])?,
        token_failures_in_a_row: failures,
    })
}

/// One backend of the shared state. Every method is one round trip (one Lua script, one short
/// transaction) and atomic across processes; keys are namespaced by [`Namespace`].
pub(crate) trait Store: Send + Sync {
    /// Counts one request of `admit.class` if the class is not paused and fewer than
    /// `admit.budget` were admitted in the last `admit.span_ms`; otherwise how long to wait.
    fn admit(&self, admit: Admit) -> StoreFuture<'_, Admission>;
    /// Nobody sends in `class` for the next `for_ms` milliseconds (a longer pause stays).
    fn pause(&self, class: LimitClass, for_ms: u64) -> StoreFuture<'_, ()>;
    /// The token if fresh; else the shared failure while its back-off runs; else the lease for
    /// `holder` (for `lease_ms`) if nobody holds it; else how long to wait.
    fn token<'a>(&'a self, holder: &'a str, lease_ms: u64) -> StoreFuture<'a, TokenLookup>;
    /// Stores a newly granted token, clears the failure record and releases `holder`'s lease.
    fn put_token<'a>(&'a self, holder: &'a str, token: &'a StoredToken) -> StoreFuture<'a, ()>;
    /// Records a failed token request with its back-off and releases `holder`'s lease.
    fn put_failure<'a>(
        &'a self,
        holder: &'a str,
        failure: &'a StoredFailure,
        backoff_ms: u64,
    ) -> StoreFuture<'a, ()>;
    /// The failures in a row recorded so far (0 after a success), for the next back-off.
    fn failures_in_a_row(&self) -> StoreFuture<'_, u32>;
    /// Forgets the stored token if it is still `rejected` (answered 401 `invalid_token`).
    fn drop_token<'a>(&'a self, rejected: &'a Secret) -> StoreFuture<'a, ()>;
    /// What the store holds now for this client (token value excluded).
    fn inspect(&self, span_ms: u64) -> StoreFuture<'_, StoredState>;
    /// The backend's name (`sqlite`, `redis`, `postgres`).
    fn backend(&self) -> &'static str;
}

/// The keys of one client in a shared store: `[namespace:]client_id@token_endpoint`, and for
/// the token also the scopes asked for (two configurations of one client with other scopes get
/// other tokens).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namespace {
    /// Key of the rate windows and pauses.
    pub client: String,
    /// Key of the token, its lease and its failure record.
    pub token: String,
}

impl Namespace {
    pub fn new(
        prefix: Option<&str>,
        client_id: &str,
        token_endpoint: &str,
        scopes: &[String],
    ) -> Self {
        let mut sorted: Vec<&str> = scopes.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let client = match prefix {
            Some(p) if !p.is_empty() => format!("{p}:{client_id}@{token_endpoint}"),
            _ => format!("{client_id}@{token_endpoint}"),
        };
        let token = format!("{client}#{}", sorted.join(" "));
        Namespace { client, token }
    }
}

/// The parsed `shared_state` URL: the backend's own URL (SDK parameters removed) and the SDK's
/// parameters.
#[derive(Debug, Clone)]
pub(crate) struct StoreUrl {
    pub scheme: Scheme,
    /// The URL the backend connects with (may hold a password: never logged or shown).
    #[cfg_attr(
        not(any(feature = "store-redis", feature = "store-postgres")),
        allow(dead_code)
    )]
    pub backend_url: Secret,
    /// For SQLite, the database file.
    #[cfg_attr(not(feature = "store-sqlite"), allow(dead_code))]
    pub path: Option<std::path::PathBuf>,
    pub namespace: Option<String>,
    pub timeout: Duration,
    pub token_lease: Duration,
}

/// The backend a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    Sqlite,
    Redis,
    Postgres,
}

impl StoreUrl {
    /// Parses a `shared_state` URL; the error names what is wrong, never the URL (it may carry
    /// a password).
    pub fn parse(text: &str) -> crate::Result<StoreUrl> {
        let bad = |why: &str| Error::Config(format!("shared_state: {why}"));
        let mut url = url::Url::parse(text.trim()).map_err(|e| bad(&format!("not a URL ({e})")))?;
        let scheme = match url.scheme() {
            "sqlite" => Scheme::Sqlite,
            "redis" | "rediss" => Scheme::Redis,
            "postgres" | "postgresql" => Scheme::Postgres,
            other => {
                return Err(bad(&format!(
                    "unsupported scheme {other} (use sqlite://, redis:// or postgres://)"
                )));
            }
        };
        let mut namespace = None;
        let mut timeout = DEFAULT_STORE_TIMEOUT;
        let mut token_lease = DEFAULT_TOKEN_LEASE;
        let mut kept: Vec<(String, String)> = Vec::new();
        for (key, value) in url.query_pairs() {
            let ms = |v: &str, name: &str| -> crate::Result<Duration> {
                match v.parse::<u64>() {
                    Ok(n) if (1..=600_000).contains(&n) => Ok(Duration::from_millis(n)),
                    _ => Err(bad(&format!("{name} must be 1 to 600000 milliseconds"))),
                }
            };
            match key.as_ref() {
                "namespace" => namespace = Some(value.into_owned()),
                "timeout_ms" => timeout = ms(&value, "timeout_ms")?,
                "token_lease_ms" => token_lease = ms(&value, "token_lease_ms")?,
                _ => kept.push((key.into_owned(), value.into_owned())),
            }
        }
        if kept.is_empty() {
            url.set_query(None);
        } else {
            url.query_pairs_mut().clear().extend_pairs(kept);
        }
        let path = if scheme == Scheme::Sqlite {
            if url.host_str().is_some_and(|h| !h.is_empty()) {
                return Err(bad(
                    "a sqlite URL names a local file: sqlite:///absolute/path.db (three slashes)",
                ));
            }
            let path = url
                .to_file_path()
                .map_err(|_| bad("a sqlite URL needs an absolute file path"))?;
            if path.as_os_str().is_empty() || path.ends_with("/") {
                return Err(bad("a sqlite URL needs a file name"));
            }
            Some(path)
        } else {
            None
        };
        Ok(StoreUrl {
            scheme,
            backend_url: Secret::new(url.to_string()),
            path,
            namespace,
            timeout,
            token_lease,
        })
    }

    /// Opens the backend (lazily: nothing connects until the first round trip, so a client can
    /// be built with the store down, and a forked worker connects on its own).
    #[allow(unused_variables)] // without backend features
    pub fn open(&self, ns: Namespace) -> crate::Result<Box<dyn Store>> {
        match self.scheme {
            #[cfg(feature = "store-sqlite")]
            Scheme::Sqlite => Ok(Box::new(sqlite::SqliteStore::new(
                self.path.clone().expect("sqlite URL has a path"),
                ns,
                self.timeout,
            ))),
            #[cfg(feature = "store-redis")]
            Scheme::Redis => Ok(Box::new(redis::RedisStore::new(
                &self.backend_url,
                ns,
                self.timeout,
            )?)),
            #[cfg(feature = "store-postgres")]
            Scheme::Postgres => Ok(Box::new(postgres::PostgresStore::new(
                &self.backend_url,
                ns,
                self.timeout,
            )?)),
            #[allow(unreachable_patterns)]
            other => Err(Error::Config(format!(
                "shared_state: this build of storefront has no {} backend (cargo feature store-{})",
                other.name(),
                other.name()
            ))),
        }
    }
}

impl Scheme {
    fn name(self) -> &'static str {
        match self {
            Scheme::Sqlite => "sqlite",
            Scheme::Redis => "redis",
            Scheme::Postgres => "postgres",
        }
    }
}

/// The shared state of one client: the store, its health and the SDK's parameters. Every round
/// trip goes through [`SharedState::call`], which bounds it by the store timeout and switches
/// the process to its own state during an outage.
pub(crate) struct SharedState {
    store: Box<dyn Store>,
    pub timeout: Duration,
    pub token_lease: Duration,
    /// This process's holder id for the token lease (random per client value).
    pub holder: String,
    health: Mutex<Health>,
    /// Round trips sent to the store by this client (for the benches' "round trips per
    /// admitted call" and for operators).
    round_trips: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct Health {
    /// When the current outage began (None while the store answers).
    down_since: Option<Instant>,
    /// Until when calls skip the store.
    skip_until: Option<Instant>,
}

impl SharedState {
    pub fn new(url: &StoreUrl, ns: Namespace) -> crate::Result<SharedState> {
        let nonce = crate::random::hex::<12>()
            .map_err(|e| crate::Error::Config(format!("shared_state: no lease holder id: {e}")))?;
        Ok(SharedState {
            store: url.open(ns)?,
            timeout: url.timeout,
            token_lease: url.token_lease,
            holder: format!("{}-{nonce}", std::process::id()),
            health: Mutex::new(Health::default()),
            round_trips: Default::default(),
        })
    }

    /// The backend's name.
    pub fn backend(&self) -> &'static str {
        self.store.backend()
    }

    /// Whether calls use the store now (false during an outage, until the next probe).
    pub fn available(&self) -> bool {
        let now = Instant::now();
        self.health
            .lock()
            .map(|h| h.skip_until.is_none_or(|until| now >= until))
            .unwrap_or(true)
    }

    /// One round trip, bounded by the store timeout. `None` when the store is skipped (outage)
    /// or failed now (the outage begins: one warning); the caller then uses in-process state.
    pub async fn call<'a, T>(
        &'a self,
        op: impl FnOnce(&'a dyn Store) -> StoreFuture<'a, T>,
    ) -> Option<T> {
        if !self.available() {
            return None;
        }
        self.round_trips
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let outcome = match tokio::time::timeout(self.timeout, op(self.store.as_ref())).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(e.0),
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        };
        let now = Instant::now();
        let Ok(mut health) = self.health.lock() else {
            return outcome.ok();
        };
        match outcome {
            Ok(value) => {
                if let Some(since) = health.down_since.take() {
                    tracing::warn!(
                        backend = self.store.backend(),
                        outage_ms = now.saturating_duration_since(since).as_millis() as u64,
                        "shared state store is back: rate budgets and token shared again"
                    );
                }
                health.skip_until = None;
                Some(value)
            }
            Err(why) => {
                if health.down_since.is_none() {
                    health.down_since = Some(now);
                    tracing::warn!(
                        backend = self.store.backend(),
                        error = %why,
                        "shared state store unavailable: this process uses its own rate limiter \
                         and token cache until the store answers again"
                    );
                }
                health.skip_until = now.checked_add(PROBE_INTERVAL);
                None
            }
        }
    }

    /// Round trips sent to the store so far (each backend operation is one).
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What the store holds now, or `None` when it cannot be read.
    pub async fn inspect(&self, span_ms: u64) -> Option<StoredState> {
        self.call(|s| s.inspect(span_ms)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_parameters_leave_the_backend_url() {
        let u = StoreUrl::parse(
            "redis://:pw@127.0.0.1:6379/0?namespace=shop-a&timeout_ms=250&token_lease_ms=3000",
        )
        .unwrap();
        assert_eq!(u.scheme, Scheme::Redis);
        assert_eq!(u.backend_url.expose(), "redis://:pw@127.0.0.1:6379/0");
        assert_eq!(u.namespace.as_deref(), Some("shop-a"));
        assert_eq!(u.timeout, Duration::from_millis(250));
        assert_eq!(u.token_lease, Duration::from_millis(3000));
        let p = StoreUrl::parse("postgres://u@h/db?sslmode=disable").unwrap();
        assert_eq!(p.backend_url.expose(), "postgres://u@h/db?sslmode=disable");
        let s = StoreUrl::parse("sqlite:///var/lib/shop/sf.db").unwrap();
        assert_eq!(
            s.path.as_deref(),
            Some(std::path::Path::new("/var/lib/shop/sf.db"))
        );
    }

    #[test]
    fn bad_urls_are_config_errors_without_the_url() {
        for bad in [
            "mysql://u:secretpw@h/db",
            "sqlite://host/file.db",
            "redis://:secretpw@h/0?timeout_ms=0",
            "not a url secretpw",
        ] {
            let e = StoreUrl::parse(bad).expect_err(bad);
            assert!(matches!(e, Error::Config(_)), "{bad}: {e:?}");
            assert!(!e.to_string().contains("secretpw"), "{e}");
        }
    }

    #[test]
    fn namespaces_separate_clients_shops_and_scopes() {
        let scopes = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let a = Namespace::new(None, "c1", "https://t/token", &scopes(&["b", "a"]));
        let b = Namespace::new(None, "c1", "https://t/token", &scopes(&["a", "b", "a"]));
        assert_eq!(a, b, "scope order and repeats do not matter");
        let c = Namespace::new(Some("shop2"), "c1", "https://t/token", &scopes(&["a", "b"]));
        assert_ne!(a.client, c.client);
        let d = Namespace::new(None, "c1", "https://t/token", &scopes(&["a"]));
        assert_eq!(a.client, d.client, "one budget per client");
        assert_ne!(a.token, d.token, "other scopes, other token");
    }

    #[test]
    fn a_stored_failure_gives_back_the_typed_error() {
        let api = Error::Api(ApiError {
            status: 401,
            error: ErrorCode::parse("invalid_client"),
            error_description: Some("client authentication failed".into()),
            field: None,
            retry_after: None,
        });
        let rec = StoredFailure::of(&api, 2);
        let json = serde_json::to_string(&rec).unwrap();
        let back: StoredFailure = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_error().status(), Some(401));
        assert!(
            matches!(back.to_error(), Error::Api(a) if a.error == ErrorCode::parse("invalid_client"))
        );
    }
}
