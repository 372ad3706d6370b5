//! `sf_client`: a core [`Client`] plus the tokio runtime its calls block on.

use std::ffi::c_char;
use std::future::Future;

use crate::{Client, Config};

use super::boundary;
use super::cancel::{Cancelled, block_on_cancellable};
use super::error::{Failure, sf_error};
use super::io::{Out, OutString, json_arg};
use super::result::sf_result;

/// A client: configuration, one connection pool, the client-credentials token cache, and the
/// runtime its calls block on. Created by `sf_client_new`, released by `sf_client_free`. Every
/// function taking `const sf_client *` may be called from several threads at once.
#[allow(non_camel_case_types)]
pub struct sf_client {
    client: Client,
    runtime: tokio::runtime::Runtime,
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
        match block_on_cancellable(&self.runtime, call) {
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

    /// The core client.
    pub(crate) fn core(&self) -> &Client {
        &self.client
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
/// `userinfo_endpoint`, `scopes`, `attempt_timeout_ms`, `overall_deadline_ms`, `retry`
/// (`max_attempts`, `base_delay_ms`, `max_delay_ms`, `max_retry_after_ms`), `user_agent`,
/// `root_ca_pem` (trust only these roots), `allow_insecure_loopback` (plain HTTP to loopback
/// hosts, sandbox only), `max_response_bytes`, `token_refresh_margin_ms`. HTTPS only otherwise.
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
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("storefront-ffi")
            .enable_all()
            .build()
            .map_err(|e| Failure::new(sf_result::Other, format!("cannot start runtime: {e}")))?;
        // reqwest's client must be built inside a runtime context.
        let client = {
            let _entered = runtime.enter();
            Client::new(config)?
        };
        out.write(Box::into_raw(Box::new(sf_client { client, runtime })));
        Ok(())
    })
}

/// Releases a client created by `sf_client_new`. Accepts NULL. No call on the handle may be
/// running or start afterwards.
///
/// # Safety
/// `client` must be NULL or a handle from `sf_client_new` that was not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_client_free(client: *mut sf_client) {
    boundary::value((), || {
        if !client.is_null() {
            // SAFETY: created by Box::into_raw in `sf_client_new`; freed once by the caller.
            let client = unsafe { Box::from_raw(client) };
            let sf_client { client, runtime } = *client;
            drop(client);
            // Connection tasks are detached: do not wait for them on the caller's thread.
            runtime.shutdown_background();
        }
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
        let granted = client.run(client.core().authenticate())?;
        out.write_json(&granted)
    })
}
