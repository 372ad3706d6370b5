//! `sf_client`: a core [`Client`] plus the tokio runtime its calls block on.

use std::collections::HashMap;
use std::ffi::c_char;
use std::future::Future;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, TryLockError};

use crate::{Client, Config};

use super::boundary;
use super::cancel::{Cancelled, block_on_cancellable};
use super::error::{Failure, sf_error};
use super::io::{Out, OutString, json_arg};
use super::result::sf_result;

/// A client: configuration, one connection pool, the client-credentials token cache, and the
/// runtime its calls block on. Created by `sf_client_new` or `sf_client_persistent`, released by
/// `sf_client_free`. Every function taking `const sf_client *` may be called from several
/// threads at once.
#[allow(non_camel_case_types)]
pub struct sf_client {
    shared: Arc<Shared>,
}

/// What a handle points to: the saved configuration and the live client of the current
/// process. Persistent handles with the same configuration share one.
pub(crate) struct Shared {
    config: Config,
    /// The [`Live`] client of the process that made it. Replaced (never freed: see
    /// [`Shared::live`]) when a call finds it was made by another process, i.e. the handle was
    /// inherited through `fork()`.
    live: AtomicPtr<Live>,
}

/// A core client and the runtime it runs on, made by the process `pid`.
struct Live {
    pid: u32,
    client: Client,
    runtime: tokio::runtime::Runtime,
}

impl Live {
    fn start(config: &Config) -> Result<Live, Failure> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("storefront-ffi")
            .enable_all()
            .build()
            .map_err(|e| Failure::new(sf_result::Other, format!("cannot start runtime: {e}")))?;
        // reqwest's client must be built inside a runtime context.
        let client = {
            let _entered = runtime.enter();
            Client::new(config.clone())?
        };
        Ok(Live {
            pid: std::process::id(),
            client,
            runtime,
        })
    }

    /// Releases a live client: shut down in the process that made it; in a forked child,
    /// forgotten, because its runtime's worker threads and the token cache's waiters exist only
    /// in the parent and dropping it would wait for them for ever.
    fn release(self: Box<Live>) {
        if self.pid == std::process::id() {
            let Live {
                client, runtime, ..
            } = *self;
            drop(client);
            // Connection tasks are detached: do not wait for them on the caller's thread.
            runtime.shutdown_background();
        } else {
            std::mem::forget(self);
        }
    }
}

impl Shared {
    fn new(config: Config) -> Result<Arc<Shared>, Failure> {
        let live = Box::new(Live::start(&config)?);
        Ok(Arc::new(Shared {
            config,
            live: AtomicPtr::new(Box::into_raw(live)),
        }))
    }

    /// The live client of the calling process. In a process forked after the live client was
    /// made, a fresh runtime, HTTP client and token cache are built from the saved configuration
    /// and the inherited ones are left untouched (leaked): a lock or a worker thread of the
    /// parent would otherwise never be released in the child. No lock is taken, so a lock held
    /// by a parent thread at the fork cannot block the child.
    fn live(&self) -> Result<&Live, Failure> {
        let pid = std::process::id();
        loop {
            let current = self.live.load(Ordering::Acquire);
            // SAFETY: `live` always holds a pointer from Box::into_raw that is freed only when
            // the Shared is dropped; replaced pointers are never freed.
            let live = unsafe { &*current };
            if live.pid == pid {
                return Ok(live);
            }
            let fresh = Box::into_raw(Box::new(Live::start(&self.config)?));
            match self
                .live
                .compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The inherited live client is leaked on purpose (see `Live::release`).
                // SAFETY: just installed; freed only with the Shared.
                Ok(_) => return Ok(unsafe { &*fresh }),
                // Another thread of this process won the race: use its client.
                // SAFETY: `fresh` was never shared.
                Err(_) => unsafe { Box::from_raw(fresh) }.release(),
            }
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let live = *self.live.get_mut();
        // SAFETY: the last owner frees the current live client once.
        unsafe { Box::from_raw(live) }.release();
    }
}

impl sf_client {
    /// Runs a core call to completion on the client's runtime, blocking the calling thread,
    /// unless the thread's cancellation token (see `sf_cancel_scope_enter`) is or becomes
    /// cancelled: then the call's future is dropped and `SF_RESULT_CANCELLED` returned.
    pub(crate) fn run<T>(
        &self,
        call: impl Future<Output = crate::Result<T>>,
    ) -> Result<T, Failure> {
        self.run_as(call, Resent::Safe)
    }

    /// [`Self::run`] for a call that is never re-sent (catalog order creation, payment
    /// start): a cancellation after it started says that the outcome is unknown.
    pub(crate) fn run_never_resent<T>(
        &self,
        call: impl Future<Output = crate::Result<T>>,
    ) -> Result<T, Failure> {
        self.run_as(call, Resent::Never)
    }

    fn run_as<T>(
        &self,
        call: impl Future<Output = crate::Result<T>>,
        resent: Resent,
    ) -> Result<T, Failure> {
        match block_on_cancellable(&self.shared.live()?.runtime, call) {
            Ok(outcome) => outcome.map_err(Failure::from),
            Err(Cancelled::BeforeStart) => Err(Failure::new(
                sf_result::Cancelled,
                "cancelled before the call started; nothing was sent",
            )),
            Err(Cancelled::WhileRunning) => Err(Failure::new(
                sf_result::Cancelled,
                match resent {
                    Resent::Safe => "cancelled; the request was aborted",
                    Resent::Never => {
                        "cancelled after the call started; the request may already have been \
                         processed, so its outcome is unknown: read the order before trying again"
                    }
                },
            )),
        }
    }

    /// Whether two handles share one client (persistent handles of one configuration).
    #[cfg(test)]
    pub(crate) fn shares_with(&self, other: &sf_client) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The core client of the calling process (rebuilt after a `fork()`, see [`Shared::live`]).
    pub(crate) fn core(&self) -> Result<&Client, Failure> {
        Ok(&self.shared.live()?.client)
    }
}

/// Whether an interrupted call may have had an effect that is never repeated.
#[derive(Clone, Copy)]
enum Resent {
    Safe,
    Never,
}

/// Borrows the client behind a handle argument.
///
/// # Safety
/// `client` must be NULL or a live handle from `sf_client_new`.
pub(crate) unsafe fn client_arg<'a>(client: *const sf_client) -> Result<&'a sf_client, Failure> {
    // SAFETY: the caller promises NULL or a live handle.
    unsafe { client.as_ref() }.ok_or_else(|| Failure::null("client"))
}

/// Creates a client from a JSON configuration (the core `Config` fields): `base_url` (with
/// its path prefix), `token_endpoint`, `client_id`, and optionally `client_secret`,
/// `userinfo_endpoint`, `scopes`, `connect_timeout_ms`, `attempt_timeout_ms`,
/// `overall_deadline_ms`, `retry` (`max_attempts`, `base_delay_ms`, `max_delay_ms`,
/// `max_retry_after_ms`), `user_agent`, `root_ca_pem` (trust only these roots),
/// `allow_insecure_loopback` (plain HTTP to loopback hosts, sandbox only), `max_response_bytes`,
/// `token_refresh_margin_ms`, `rate_limits`, `max_in_flight`, `shared_state` (a store URL shared by
/// every worker using the client id: `sqlite:///path.db`, `redis://…`, `postgres://…`). HTTPS only otherwise. A key left
/// out takes the core's default (README "Defaults": connect 3 s, attempt 8 s, deadline 20 s).
///
/// Strict: an unknown key at any depth (`atempt_timeout_ms`, `retry.max_attempt`) or a number
/// the field cannot hold gives `SF_RESULT_VALIDATION` with `sf_error_field` = the key's path.
///
/// On success `*client_out` receives a new handle owned by the caller, released with
/// `sf_client_free`. Nothing is sent until the first call.
///
/// # Safety
/// `config_json` must be NULL or a NUL-terminated string; `client_out` NULL or writable;
/// `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_client_new(
    config_json: *const c_char,
    client_out: *mut *mut sf_client,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(client_out, "client_out")?;
        // SAFETY: caller contract of this export.
        let config: Config = unsafe { json_arg(config_json, "config_json") }?;
        let shared = Shared::new(config)?;
        out.write(Box::into_raw(Box::new(sf_client { shared })));
        Ok(())
    })
}

/// The settings `Config::from_env` reads, borrowed for `sf_config_from_env`'s JSON (the keys of
/// `sf_client_new`; every other setting is left out and keeps its default).
#[derive(serde::Serialize)]
struct EnvConfigJson<'a> {
    base_url: &'a str,
    token_endpoint: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    userinfo_endpoint: Option<&'a str>,
    client_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<&'a str>,
    scopes: &'a [String],
    allow_insecure_loopback: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    root_ca_pem: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shared_state: Option<&'a str>,
}

/// Reads the configuration from the process environment with the core's `Config::from_env`
/// (the one implementation of the rule; every binding calls it) and writes it as the JSON
/// configuration `sf_client_new` and `sf_client_persistent` take.
///
/// | Variable | Required | Sets |
/// |---|---|---|
/// | `STOREFRONT_BASE_URL` | yes | `base_url` (with its path prefix) |
/// | `STOREFRONT_TOKEN_ENDPOINT` | yes | `token_endpoint` |
/// | `STOREFRONT_CLIENT_ID` | yes | `client_id` |
/// | `STOREFRONT_CLIENT_SECRET` | yes | `client_secret` |
/// | `STOREFRONT_USERINFO_ENDPOINT` | no | `userinfo_endpoint` |
/// | `STOREFRONT_SCOPES` | no | `scopes`, space-separated (default: profile, products, merchant payments) |
/// | `STOREFRONT_ALLOW_INSECURE_LOOPBACK` | no | `allow_insecure_loopback`: `1`/`true`/`yes` or `0`/`false`/`no` |
/// | `STOREFRONT_ROOT_CA_PEM_FILE` | no | `root_ca_pem`, read from this PEM file (the sandbox's `--tls` CA) |
/// | `STOREFRONT_SHARED_STATE` | no | `shared_state` (a store URL; may carry a password) |
///
/// `storefront-sandbox` prints the lines that set them for its seeded merchant. An empty
/// variable counts as unset. A missing required variable, a value that is not UTF-8 or a bad
/// value (an `http://` URL without `STOREFRONT_ALLOW_INSECURE_LOOPBACK=1`, an unreadable PEM
/// file) is `SF_RESULT_CONFIG`, whose message names the variable and never holds a secret.
///
/// On success `*config_json_out` receives a JSON object owned by the caller (free with
/// `sf_string_free`) with `base_url`, `token_endpoint`, `client_id`, `client_secret`, `scopes`,
/// `allow_insecure_loopback` and, when set, `userinfo_endpoint`, `root_ca_pem`, `shared_state`;
/// the other settings are left out, so they take their defaults (a caller may add keys before
/// passing it on). It holds the client secret (and the store URL): do not log it. The string is
/// wiped when freed.
///
/// # Safety
/// `config_json_out` and `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_config_from_env(
    config_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(config_json_out, "config_json_out")?;
        let config = Config::from_env()?;
        let view = EnvConfigJson {
            base_url: &config.base_url,
            token_endpoint: &config.token_endpoint,
            userinfo_endpoint: config.userinfo_endpoint.as_deref(),
            client_id: &config.client_id,
            client_secret: config.client_secret.as_ref().map(|s| s.expose()),
            scopes: &config.scopes,
            allow_insecure_loopback: config.allow_insecure_loopback,
            root_ca_pem: config.root_ca_pem.as_deref(),
            shared_state: config.shared_state.as_ref().map(|s| s.expose()),
        };
        let mut encoded = serde_json::to_string(&view)
            .map_err(|e| Failure::new(sf_result::Other, format!("cannot encode result: {e}")))?;
        // Room for the NUL, so the handed-out string is never reallocated (a reallocation would
        // leave an unwiped copy of the secret behind).
        let mut text = String::with_capacity(encoded.len() + 1);
        text.push_str(&encoded);
        zeroize::Zeroize::zeroize(&mut encoded);
        out.write_string(text)
    })
}

/// The persistent clients of one process, keyed by the SHA-256 of their whole configuration.
struct Registry {
    pid: u32,
    clients: Mutex<HashMap<[u8; 32], Arc<Shared>>>,
}

/// The current process's registry; replaced (the old one leaked) in a forked child.
static REGISTRY: AtomicPtr<Registry> = AtomicPtr::new(std::ptr::null_mut());

/// The registry of the calling process. A child of `fork()` gets a new one holding the parent's
/// entries (whose live clients are rebuilt on first use, see [`Shared::live`]), or none when a
/// parent thread held the registry's lock at the fork.
fn registry() -> &'static Registry {
    let pid = std::process::id();
    loop {
        let current = REGISTRY.load(Ordering::Acquire);
        // SAFETY: registries are never freed.
        if let Some(registry) = unsafe { current.as_ref() }
            && registry.pid == pid
        {
            return registry;
        }
        // SAFETY: as above.
        let inherited = match unsafe { current.as_ref() }.map(|r| r.clients.try_lock()) {
            Some(Ok(clients)) => clients.clone(),
            Some(Err(TryLockError::Poisoned(poisoned))) => poisoned.into_inner().clone(),
            // Held by a thread that does not exist in this process: it stays locked.
            Some(Err(TryLockError::WouldBlock)) | None => HashMap::new(),
        };
        let fresh = Box::into_raw(Box::new(Registry {
            pid,
            clients: Mutex::new(inherited),
        }));
        match REGISTRY.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: installed, never freed.
            Ok(_) => return unsafe { &*fresh },
            // SAFETY: `fresh` was never shared.
            Err(_) => drop(unsafe { Box::from_raw(fresh) }),
        }
    }
}

/// The registry key of a configuration: SHA-256 over every setting (the parsed configuration,
/// defaults filled in, so key order and spelled-out defaults do not matter) and the client
/// secret. Only the hash is kept; the secret is never part of a string key or a log.
fn config_key(config: &Config) -> [u8; 32] {
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    // `Debug` shows every setting and redacts the secret, which is hashed on its own.
    digest.update(format!("{config:?}").as_bytes());
    digest.update(&[0]);
    if let Some(secret) = &config.client_secret {
        digest.update(&[1]);
        digest.update(secret.expose().as_bytes());
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(digest.finish().as_ref());
    key
}

/// Like `sf_client_new`, but every call in this process with the same configuration (compared
/// after parsing: key order and spelled-out defaults do not matter; the client secret counts)
/// gets a handle to one shared client: one runtime, one connection pool, one token cache, which
/// live until the process ends. Meant for hosts that rebuild their objects per request (PHP-FPM,
/// per-request Python handlers): the token and connections outlive the request.
///
/// On success `*client_out` receives a new handle owned by the caller; `sf_client_free` releases
/// only that handle, never the shared client. Thread-safe. Fork-aware: in a child process the
/// shared clients are rebuilt on first use (see `sf_client_free`). The configuration is only
/// kept as a SHA-256 hash for the lookup; the secret is never logged.
///
/// # Safety
/// `config_json` must be NULL or a NUL-terminated string; `client_out` NULL or writable;
/// `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_client_persistent(
    config_json: *const c_char,
    client_out: *mut *mut sf_client,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(client_out, "client_out")?;
        // SAFETY: caller contract of this export.
        let config: Config = unsafe { json_arg(config_json, "config_json") }?;
        let key = config_key(&config);
        let registry = registry();
        let shared = {
            let mut clients = registry
                .clients
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match clients.get(&key) {
                Some(shared) => Arc::clone(shared),
                None => {
                    let shared = Shared::new(config)?;
                    clients.insert(key, Arc::clone(&shared));
                    shared
                }
            }
        };
        out.write(Box::into_raw(Box::new(sf_client { shared })));
        Ok(())
    })
}

/// Releases a handle from `sf_client_new` or `sf_client_persistent`. Accepts NULL. No call on
/// the handle may be running or start afterwards. For `sf_client_new` this releases the client
/// (its runtime, connections and token); for `sf_client_persistent` only this handle: the
/// shared client stays for the process's later `sf_client_persistent` calls. In a process
/// forked after the client was made, the inherited runtime is left alone (its threads exist
/// only in the parent), never waited for.
///
/// # Safety
/// `client` must be NULL or a handle from `sf_client_new` that was not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_client_free(client: *mut sf_client) {
    boundary::value((), || {
        if !client.is_null() {
            // SAFETY: created by Box::into_raw in `sf_client_new` or `sf_client_persistent`;
            // freed once by the caller. Dropping the handle releases its reference; the shared
            // client goes when its last reference does (never, for a persistent client).
            drop(unsafe { Box::from_raw(client) });
        }
    })
}

/// Writes where the client's rate budgets and token live and what the shared store holds
/// ([`storefront::Client::shared_state`]): `{"backend": "memory"|"sqlite"|"redis"|"postgres",
/// "available": bool, "stored": null | {"windows": [{"class", "in_window", "paused_for_ms"}],
/// "token_shared", "token_expires_in_ms", "token_lease_held", "token_failures_in_a_row"}}`.
/// Never the token. One store round trip; `available` is false while the store does not answer.
///
/// On success `*state_json_out` receives a string owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; `state_json_out` and `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_client_shared_state(
    client: *const sf_client,
    state_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(state_json_out, "state_json_out")?;
        // SAFETY: caller contract of this export.
        let client = unsafe { client_arg(client) }?;
        let core = client.core()?;
        let state = client.run(async { Ok(core.shared_state().await) })?;
        out.write_json(&state)
    })
}

/// Obtains (or reuses) the client-credentials token and writes what was granted,
/// `{"scope": [..], "expires_in": seconds}`, never the token itself. Other calls do this on
/// demand; calling it first surfaces credential problems early.
///
/// On success `*granted_json_out` receives a string owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `client` NULL or live; `granted_json_out` and `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_client_authenticate(
    client: *const sf_client,
    granted_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(granted_json_out, "granted_json_out")?;
        // SAFETY: caller contract of this export.
        let client = unsafe { client_arg(client) }?;
        let granted = client.run(client.core()?.authenticate())?;
        out.write_json(&granted)
    })
}
