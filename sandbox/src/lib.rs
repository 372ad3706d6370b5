//! A stateful simulator of the merchant collection and catalog order service.
//!
//! [`Sandbox::start`] runs it in-process on `127.0.0.1` with an ephemeral port, over real HTTP
//! (or HTTPS with a generated CA); the `storefront-sandbox` binary runs it standalone. Its
//! seeded data is in [`seed`]; its control endpoints (clock, buyers paying, faults) are
//! documented in the crate's README.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

mod app;
pub mod auth;
pub mod catalog;
pub mod checkout;
pub mod clock;
pub mod control;
pub mod dashboard;
mod db;
pub mod directory;
pub mod error;
pub mod extract;
pub mod faults;
pub mod guard;
mod ids;
pub mod inspect;
pub mod limits;
pub mod merchant_payments;
pub mod notifications;
pub mod openapi;
pub mod requests;
pub mod seed;
mod server;
pub mod state;
mod workers;

pub use inspect::Inspect;
pub use state::AppState;

/// How to start a sandbox.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// Address to listen on (default `127.0.0.1`).
    pub host: IpAddr,
    /// Port to listen on; 0 picks a free port (default).
    pub port: u16,
    /// Serve HTTPS with a CA and certificate generated at start (default false).
    pub tls: bool,
    /// Accept loopback notification targets, plain HTTP or HTTPS (default true): `127.0.0.0/8`,
    /// `::1`, `localhost`, `*.localhost`, and names resolving to loopback at delivery. The real
    /// service accepts only public HTTPS addresses; the sandbox allows loopback so local
    /// receivers can be tested. With `false` it refuses them at creation and at delivery.
    pub allow_loopback_notify: bool,
    /// Length of the rate-limit windows in seconds (default 60, the contract's minute). The
    /// budgets stay the contract's; a shorter window lets tests see pacing in seconds.
    pub rate_limit_window_seconds: u32,
    /// Lifetime of client-credentials tokens in seconds of the sandbox clock: the grant's
    /// `expires_in`, after which the token gets 401 `invalid_token`. `None` (default) keeps
    /// [`auth::TOKEN_LIFETIME_SECONDS`] (3600). From 0 (expired at once) to
    /// [`auth::MAX_TOKEN_LIFETIME_SECONDS`]; anything else makes [`Sandbox::start_with`] fail
    /// with `InvalidInput`. `PUT /_sandbox/token-lifetime` changes it at run time.
    pub token_lifetime_seconds: Option<i64>,
    /// Which clock stamps `X-Service-Timestamp` on notification deliveries (default: real time,
    /// so receivers that check the timestamp against their own clock keep accepting deliveries
    /// after the sandbox clock is advanced). See [`clock::DeliveryTimestamp`].
    pub delivery_timestamp: clock::DeliveryTimestamp,
    /// Extra `Host` values the sandbox answers besides `127.0.0.1`, `localhost`, `[::1]` and
    /// its origin's host on its own port (the host rule of [`guard`], against DNS rebinding):
    /// `NAME` (any port, e.g. a tunnel's name) or `NAME:PORT`. Default none; an entry that is
    /// not a host makes [`Sandbox::start_with`] fail with `InvalidInput`.
    pub allowed_hosts: Vec<String>,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            tls: false,
            allow_loopback_notify: true,
            rate_limit_window_seconds: limits::WINDOW_SECONDS as u32,
            token_lifetime_seconds: None,
            delivery_timestamp: clock::DeliveryTimestamp::WallClock,
            allowed_hosts: Vec::new(),
        }
    }
}

/// A running sandbox. Dropping it stops the server and its background work.
#[derive(Debug)]
pub struct Sandbox {
    shared: Arc<AppState>,
    address: SocketAddr,
    ca_pem: Option<String>,
    tasks: Vec<JoinHandle<()>>,
}

impl Sandbox {
    /// Starts a sandbox with default options: plain HTTP on 127.0.0.1, ephemeral port.
    pub async fn start() -> std::io::Result<Sandbox> {
        Self::start_with(SandboxOptions::default()).await
    }

    /// Starts a sandbox with the given options on the current tokio runtime.
    pub async fn start_with(options: SandboxOptions) -> std::io::Result<Sandbox> {
        let token_lifetime = options
            .token_lifetime_seconds
            .unwrap_or(auth::TOKEN_LIFETIME_SECONDS);
        if !auth::valid_token_lifetime(token_lifetime) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "token_lifetime_seconds must be from 0 to {}, not {token_lifetime}",
                    auth::MAX_TOKEN_LIFETIME_SECONDS
                ),
            ));
        }
        let listener = TcpListener::bind(SocketAddr::new(options.host, options.port)).await?;
        let address = listener.local_addr()?;
        let tls = if options.tls {
            Some(server::generate_tls().map_err(std::io::Error::other)?)
        } else {
            None
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        // Listening on every interface: addresses handed out (checkout_url, redirects) name
        // loopback, which a browser on this machine can open; 0.0.0.0 it cannot.
        let host = match address.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => Ipv4Addr::LOCALHOST.to_string(),
            IpAddr::V6(ip) if ip.is_unspecified() => "[::1]".to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        let origin = format!("{scheme}://{host}:{}", address.port());
        let guard = guard::Guard::new(&origin, &options.allowed_hosts)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let dns = notifications::resolve::DnsOverrides::default();
        let shared = Arc::new(AppState::new(
            origin,
            options.allow_loopback_notify,
            delivery_client(options.allow_loopback_notify, dns.clone())?,
            dns,
            options.delivery_timestamp,
            guard,
        ));
        {
            let mut db = shared.db();
            db.limits.set_window(time::Duration::seconds(
                options.rate_limit_window_seconds.into(),
            ));
            db.directory.token_lifetime_seconds = token_lifetime;
        }
        let app = app::router(shared.clone());
        let ca_pem = tls.as_ref().map(|t| t.ca_pem.clone());
        let tasks = vec![
            tokio::spawn(server::serve(listener, app, tls.map(|t| t.acceptor))),
            tokio::spawn(workers::run(shared.clone())),
        ];
        Ok(Sandbox {
            shared,
            address,
            ca_pem,
            tasks,
        })
    }

    /// Origin the sandbox listens on, e.g. `http://127.0.0.1:41234`.
    pub fn origin(&self) -> String {
        self.shared.origin.clone()
    }

    /// `{base_url}` of the contract: the origin plus the API path prefix.
    pub fn base_url(&self) -> String {
        format!("{}{}", self.shared.origin, seed::API_PREFIX)
    }

    /// `{token_endpoint}` of the contract.
    pub fn token_endpoint(&self) -> String {
        format!("{}{}", self.shared.origin, seed::TOKEN_PATH)
    }

    /// `{userinfo_endpoint}` of the contract.
    pub fn userinfo_endpoint(&self) -> String {
        format!("{}{}", self.shared.origin, seed::USERINFO_PATH)
    }

    /// The `STOREFRONT_*` environment variables that make an app's `Config::from_env` (every
    /// binding's `from_env`) reach this sandbox as the seeded merchant client: what the binary
    /// prints at start, writes to its ready file's `"env"` and to `--env-file`. Plain HTTP on
    /// loopback needs `STOREFRONT_ALLOW_INSECURE_LOOPBACK=1`; with `--tls`, `ca_pem_path` (where
    /// the generated CA was written) is trusted instead.
    pub fn app_env(&self, ca_pem_path: Option<&std::path::Path>) -> Vec<(String, String)> {
        let mut env = vec![
            ("STOREFRONT_BASE_URL", self.base_url()),
            ("STOREFRONT_TOKEN_ENDPOINT", self.token_endpoint()),
            ("STOREFRONT_USERINFO_ENDPOINT", self.userinfo_endpoint()),
            ("STOREFRONT_CLIENT_ID", seed::MERCHANT_CLIENT_ID.to_owned()),
            (
                "STOREFRONT_CLIENT_SECRET",
                seed::MERCHANT_CLIENT_SECRET.to_owned(),
            ),
        ];
        match ca_pem_path {
            Some(path) => env.push(("STOREFRONT_ROOT_CA_PEM_FILE", path.display().to_string())),
            None => env.push(("STOREFRONT_ALLOW_INSECURE_LOOPBACK", "1".to_owned())),
        }
        env.into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect()
    }

    /// Base address of the sandbox-only control endpoints.
    pub fn control_url(&self) -> String {
        format!("{}{}", self.shared.origin, seed::CONTROL_PREFIX)
    }

    /// Socket address the sandbox listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// PEM of the generated CA when serving HTTPS.
    pub fn ca_pem(&self) -> Option<String> {
        self.ca_pem.clone()
    }

    /// The sandbox's application state: its clock, origin and pinned host names. Its stored
    /// data is read through [`Sandbox::inspect`].
    pub fn shared(&self) -> &Arc<AppState> {
        &self.shared
    }

    /// A read-only view of everything the sandbox stores (wallets, catalog orders, merchant
    /// payments with their timelines, notification deliveries, faults, rate-limit windows,
    /// the clock). It holds the sandbox's lock until dropped: keep it short, never hold it
    /// across an await, and do not call the sandbox over HTTP while holding it.
    pub fn inspect(&self) -> Inspect<'_> {
        self.shared.inspect()
    }

    /// Sends every merchant payment created from now on without a `notify_url`, for each seeded
    /// active merchant, to `url`: the merchant-center default notification address (a plain-HTTP
    /// loopback address is allowed unless `allow_loopback_notify` is off). `secret` `None`
    /// generates one. Returns the signing secret in force; the caller shows it once.
    pub fn notify_to(&self, url: &str, secret: Option<String>) -> Result<String, error::ApiError> {
        let mut in_force = secret;
        for merchant_no in [seed::MERCHANT_NO, seed::OTHER_MERCHANT_NO] {
            in_force = Some(merchant_payments::control::set_notification_default(
                &self.shared,
                merchant_no,
                url,
                in_force.clone(),
                true,
            )?);
        }
        Ok(in_force.unwrap_or_default())
    }

    /// Moves the sandbox clock forward; sweeps and notification retries that became due run.
    /// Refuses (and leaves the clock) an advance that would put it more than
    /// [`clock::MAX_OFFSET_SECONDS`] ahead of real time; returns the new offset in seconds.
    pub fn try_advance_clock(&self, by: Duration) -> Result<i64, clock::AdvanceError> {
        let seconds = i64::try_from(by.as_secs()).unwrap_or(i64::MAX);
        self.shared.clock.advance(seconds)
    }

    /// Moves the sandbox clock forward; sweeps and notification retries that became due run.
    ///
    /// # Panics
    ///
    /// In the caller (a test), never in the sandbox, when the clock cannot hold the advance
    /// (see [`Sandbox::try_advance_clock`]).
    pub fn advance_clock(&self, by: Duration) {
        if let Err(error) = self.try_advance_clock(by) {
            panic!("advance_clock({by:?}): {error}");
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// HTTP client for notification delivery: 8 s per delivery, redirects never followed, ring TLS,
/// no proxy, and every resolved address checked ([`notifications::resolve::GuardedResolver`]).
fn delivery_client(
    allow_loopback: bool,
    overrides: notifications::resolve::DnsOverrides,
) -> std::io::Result<reqwest::Client> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_platform_verifier())
        .map_err(std::io::Error::other)?
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(Duration::from_secs(8))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(notifications::resolve::GuardedResolver {
            overrides,
            allow_loopback,
        })
        .build()
        .map_err(std::io::Error::other)
}
