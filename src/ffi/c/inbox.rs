//! `sf_inbox`: the webhook inbox ([`crate::inbox`]) over the C ABI: store each notification
//! before acknowledging it, hand each payment's state changes to a worker once and in order,
//! book each paid payment event once.
//!
//! The handle owns the tokio runtime its calls block on, like `sf_client`, and is fork-aware the
//! same way: a call in a process forked after the handle was made rebuilds the inbox (a new
//! runtime and database connections, from the saved URL and secrets) and leaves the inherited
//! ones alone. Open the inbox after the fork all the same (one per worker process): nothing is
//! shared through a handle across processes, the database is.

use std::ffi::c_char;
use std::future::Future;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::collection::model::MerchantPaymentStatus;
use crate::inbox::{Inbox, InboxError, InboxEvent, Receipt, Replay};
use crate::money::MinorAmount;
use crate::{MerchantPayment, Secret, WebhookVerifier};

use super::boundary;
use super::cancel::{Cancelled, block_on_cancellable};
use super::error::{Failure, sf_error};
use super::io::{
    Out, OutString, bytes_arg, json_arg, opt_str_arg, parse_json, response_json_arg, str_arg,
};
use super::result::sf_result;

/// A webhook inbox: one database (`sqlite:///path.db` or `postgres://…`), the verifier's
/// secrets, and the runtime its calls block on. Created by `sf_inbox_open`, released by
/// `sf_inbox_free`. Every function taking `const sf_inbox *` may be called from several threads
/// at once; several processes and hosts may open the same database.
#[allow(non_camel_case_types)]
pub struct sf_inbox {
    settings: Settings,
    /// The [`Live`] inbox of the process that made it; replaced (the old one leaked) in a
    /// forked child, as for `sf_client`.
    live: AtomicPtr<Live>,
}

/// What an inbox is rebuilt from after a `fork()`.
struct Settings {
    url: Secret,
    secrets: Vec<Secret>,
    tolerance: Option<Duration>,
}

/// The options object of `sf_inbox_open` (strict: unknown keys are refused).
#[derive(Deserialize, Default)]
struct Options {
    /// The timestamp tolerance in seconds, both directions (the contract's is 300).
    #[serde(default)]
    tolerance_s: Option<u64>,
}

/// An inbox and the runtime it runs on, made by the process `pid`.
struct Live {
    pid: u32,
    inbox: Inbox,
    runtime: tokio::runtime::Runtime,
}

impl Settings {
    fn verifier(&self) -> Result<WebhookVerifier, Failure> {
        let verifier = WebhookVerifier::new(self.secrets.iter().cloned())?;
        Ok(match self.tolerance {
            Some(tolerance) => verifier.with_tolerance(tolerance),
            None => verifier,
        })
    }
}

impl Live {
    fn start(settings: &Settings) -> Result<Live, Failure> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("storefront-inbox")
            .enable_all()
            .build()
            .map_err(|e| Failure::new(sf_result::Other, format!("cannot start runtime: {e}")))?;
        let inbox = {
            let _entered = runtime.enter();
            Inbox::open(settings.url.expose(), settings.verifier()?)?
        };
        Ok(Live {
            pid: std::process::id(),
            inbox,
            runtime,
        })
    }

    /// Shut down in the process that made it; forgotten in a forked child (its runtime's
    /// threads exist only in the parent).
    fn release(self: Box<Live>) {
        if self.pid == std::process::id() {
            let Live { inbox, runtime, .. } = *self;
            drop(inbox);
            runtime.shutdown_background();
        } else {
            std::mem::forget(self);
        }
    }
}

impl sf_inbox {
    /// The inbox of the calling process, rebuilt after a `fork()` (see `sf_client`).
    fn live(&self) -> Result<&Live, Failure> {
        let pid = std::process::id();
        loop {
            let current = self.live.load(Ordering::Acquire);
            // SAFETY: `live` always holds a pointer from Box::into_raw, freed only on drop;
            // replaced pointers are never freed.
            let live = unsafe { &*current };
            if live.pid == pid {
                return Ok(live);
            }
            let fresh = Box::into_raw(Box::new(Live::start(&self.settings)?));
            match self
                .live
                .compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // SAFETY: just installed; freed only with the handle.
                Ok(_) => return Ok(unsafe { &*fresh }),
                // SAFETY: `fresh` was never shared.
                Err(_) => unsafe { Box::from_raw(fresh) }.release(),
            }
        }
    }

    /// The core inbox of the calling process (rebuilt after a `fork()`).
    fn core(&self) -> Result<&Inbox, Failure> {
        Ok(&self.live()?.inbox)
    }

    /// Runs an inbox call to completion on the handle's runtime, blocking the calling thread,
    /// unless the thread's cancellation token is or becomes cancelled.
    fn run<F: Future>(&self, call: F) -> Result<F::Output, Failure> {
        block_on_cancellable(&self.live()?.runtime, call).map_err(|cancelled| {
            Failure::new(
                sf_result::Cancelled,
                match cancelled {
                    Cancelled::BeforeStart => "cancelled before the call started",
                    Cancelled::WhileRunning => {
                        "cancelled; the inbox transaction may still commit (a delivery answered \
                         with an error is delivered again and then acknowledged as a duplicate)"
                    }
                },
            )
        })
    }
}

impl Drop for sf_inbox {
    fn drop(&mut self) {
        let live = *self.live.get_mut();
        // SAFETY: the handle frees its current live inbox once.
        unsafe { Box::from_raw(live) }.release();
    }
}

impl From<InboxError> for Failure {
    fn from(error: InboxError) -> Self {
        let result = match &error {
            InboxError::Config(_) => sf_result::Config,
            InboxError::Store(_) => sf_result::InboxStore,
            InboxError::LeaseLost(_) => sf_result::InboxLeaseLost,
            InboxError::NotFound(_) => sf_result::InboxNotFound,
        };
        // Messages name the database failure or the event id, never the URL or a secret.
        Failure::new(result, error.to_string())
    }
}

/// Borrows the inbox behind a handle argument.
///
/// # Safety
/// `inbox` must be NULL or a live handle from `sf_inbox_open`.
unsafe fn inbox_arg<'a>(inbox: *const sf_inbox) -> Result<&'a sf_inbox, Failure> {
    // SAFETY: the caller promises NULL or a live handle.
    unsafe { inbox.as_ref() }.ok_or_else(|| Failure::null("inbox"))
}

/// A claimed event as `complete` and `release` need it: its id and claim token.
fn claimed(id: &str, claim: &str) -> InboxEvent {
    InboxEvent {
        id: id.to_owned(),
        claim: claim.to_owned(),
        order_no: String::new(),
        external_reference: String::new(),
        status: MerchantPaymentStatus::parse("pending"),
        status_version: 0,
        event_id: None,
        amount_minor: MinorAmount::new(1).expect("1 is a valid amount"),
        currency: String::new(),
        test_mode: false,
        book: false,
        source: crate::inbox::EventSource::Notification,
        replayed: false,
        attempts: 0,
        body: String::new(),
    }
}

/// The receipt handed to the caller: the core's receipt plus the answer body.
#[derive(Serialize)]
struct ReceiptJson<'a> {
    #[serde(flatten)]
    receipt: &'a Receipt,
    body: String,
}

/// Opens the inbox at `url` (`sqlite:///var/lib/shop/inbox.db`, or `postgres://user@host/db`),
/// verifying deliveries with the secrets of the JSON array `secrets_json` (`["new", "old"]`:
/// several during a rotation; none gives `SF_RESULT_WEBHOOK_NO_SECRETS`). `options_json` is NULL
/// or `{"tolerance_s": 300}` (the timestamp tolerance both ways, default the contract's 5
/// minutes; strict: an unknown key is `SF_RESULT_VALIDATION`). Tables are created on first use;
/// nothing connects here; the SQLite file is created here, mode 0600, in a folder only this user
/// can write. A bad or unsupported URL, or a SQLite file or folder that cannot be trusted (another
/// user's, readable by others, a link; the message names it), gives `SF_RESULT_CONFIG`.
///
/// On success `*inbox_out` receives a handle owned by the caller, released with
/// `sf_inbox_free`. Open it in the process that uses it (after `fork()`, like a client: in a
/// process forked after it was opened, the first call rebuilds its runtime and connections).
///
/// # Safety
/// Strings NULL (only `options_json`) or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_open(
    url: *const c_char,
    secrets_json: *const c_char,
    options_json: *const c_char,
    inbox_out: *mut *mut sf_inbox,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(inbox_out, "inbox_out")?;
        // SAFETY: caller contract of this export.
        let (url, secrets, options) = unsafe {
            let url = str_arg(url, "url")?;
            let secrets: Vec<Secret> = json_arg(secrets_json, "secrets_json")?;
            let options: Options = match opt_str_arg(options_json, "options_json")? {
                Some(text) => parse_json(text, "options_json")?,
                None => Options::default(),
            };
            (url, secrets, options)
        };
        let settings = Settings {
            url: Secret::new(url),
            secrets,
            tolerance: options.tolerance_s.map(Duration::from_secs),
        };
        let live = Box::new(Live::start(&settings)?);
        out.write(Box::into_raw(Box::new(sf_inbox {
            settings,
            live: AtomicPtr::new(Box::into_raw(live)),
        })));
        Ok(())
    })
}

/// Releases an inbox. Accepts NULL. No call on the handle may be running or start afterwards.
/// Committed events stay in the database. In a process forked after the inbox was opened, the
/// inherited runtime is left alone, never waited for.
///
/// # Safety
/// `inbox` must be NULL or a handle from `sf_inbox_open` not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_free(inbox: *mut sf_inbox) {
    boundary::value((), || {
        if !inbox.is_null() {
            // SAFETY: created by Box::into_raw in `sf_inbox_open`; freed once by the caller.
            drop(unsafe { Box::from_raw(inbox) });
        }
    })
}

/// Shared body of the two receive exports.
///
/// # Safety
/// As for `sf_inbox_receive`.
#[allow(clippy::too_many_arguments)]
unsafe fn receive(
    inbox: *const sf_inbox,
    now_unix: Option<i64>,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    http_status_out: *mut u16,
    receipt_json_out: *mut *mut c_char,
) -> Result<(), Failure> {
    let status_out = Out::new(http_status_out, "http_status_out")?;
    let out = OutString::new(receipt_json_out, "receipt_json_out")?;
    // SAFETY: forwarded caller contract.
    let (inbox, event_id, timestamp, signature, body) = unsafe {
        (
            inbox_arg(inbox)?,
            opt_str_arg(event_id, "event_id")?,
            opt_str_arg(timestamp, "timestamp")?,
            opt_str_arg(signature, "signature")?,
            body_arg(body, body_len)?,
        )
    };
    let core = inbox.core()?;
    let receipt = inbox.run(async move {
        match now_unix {
            Some(now) => {
                core.receive_at(now, event_id, timestamp, signature, body)
                    .await
            }
            None => core.receive(event_id, timestamp, signature, body).await,
        }
    })?;
    let text = serde_json::to_string(&ReceiptJson {
        receipt: &receipt,
        body: receipt.body(),
    })
    .map_err(|e| Failure::new(sf_result::Other, format!("cannot encode result: {e}")))?;
    out.write_string(text)?;
    status_out.write(receipt.status);
    Ok(())
}

/// The raw body of a delivery, of any length: the core inbox refuses one above its
/// [`crate::inbox::MAX_BODY_BYTES`] (413 `body_too_large`, counted) before reading it, so the
/// C ABI's input limit is not applied here (one limit and one answer for every binding).
///
/// # Safety
/// `ptr` must be NULL (only with length 0) or valid for reading `len` bytes.
unsafe fn body_arg<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], Failure> {
    if len <= crate::inbox::MAX_BODY_BYTES {
        // SAFETY: forwarded caller contract.
        return unsafe { bytes_arg(ptr, len, "body") };
    }
    if ptr.is_null() {
        return Err(Failure::null("body"));
    }
    if isize::try_from(len).is_err() {
        return Err(Failure::new(
            sf_result::InvalidArgument,
            "`body_len` is not a buffer length",
        )
        .with_field("body_len"));
    }
    // SAFETY: the caller guarantees `len` readable bytes; the core reads none of them past
    // its limit (it looks at the length only).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Receives one delivery: the three header values as received (`X-Service-Event-ID`,
/// `X-Service-Timestamp`, `X-Service-Signature`; NULL when absent) and the raw body bytes
/// exactly as received. Verifies it (the checks of `sf_webhook_verify`, on the system clock),
/// then stores it (deduplicated by notification `id`; its order by `status_version` is decided
/// when a worker claims).
///
/// Every delivery is a successful call: `*http_status_out` receives the HTTP status to answer
/// the service with (200 stored or already stored, 400 refused by verification, 413 a body
/// above the inbox's 1 MiB limit, reason `body_too_large`, counted and never read; 422 a
/// verified notification that breaks the contract, reason `contract_violation`; 503 the store
/// could not commit: the service delivers again) and `*receipt_json_out` the receipt
/// `{"status", "outcome": "stored"|"duplicate"|"rejected"|"contract_violation"|"store_failed",
/// "id", "reason", "body"}` where `body` is the small JSON answer body to send. The string is
/// owned by the caller (free with `sf_string_free`). A failure result means a bad argument (NULL
/// handle or out-pointer, invalid UTF-8 in a header, a header value too large) or a cancelled
/// call: answer 503 then.
///
/// # Safety
/// `inbox` NULL or live; strings NULL or NUL-terminated; `body` NULL (only with length 0) or
/// readable for `body_len` bytes; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_receive(
    inbox: *const sf_inbox,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    http_status_out: *mut u16,
    receipt_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe {
            receive(
                inbox,
                None,
                event_id,
                timestamp,
                signature,
                body,
                body_len,
                http_status_out,
                receipt_json_out,
            )
        }
    })
}

/// `sf_inbox_receive` with the current time given in Unix seconds instead of the system clock
/// (for tests, and for servers with their own time source).
///
/// # Safety
/// As for `sf_inbox_receive`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_receive_at(
    inbox: *const sf_inbox,
    now_unix: i64,
    event_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    http_status_out: *mut u16,
    receipt_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe {
            receive(
                inbox,
                Some(now_unix),
                event_id,
                timestamp,
                signature,
                body,
                body_len,
                http_status_out,
                receipt_json_out,
            )
        }
    })
}

/// Claims up to `n` (at least 1) events for `lease_ms` milliseconds (at least 1): the oldest
/// waiting ones, at most one per payment, none of a payment whose previous event is still out.
/// An event whose lease ran out is claimed again (with a new claim token).
///
/// On success `*events_json_out` receives a JSON array (empty when nothing waits) of events
/// `{"id", "claim", "order_no", "external_reference", "status", "status_version", "event_id",
/// "amount_minor", "currency", "test_mode", "book", "source", "replayed", "attempts", "body"}`,
/// owned by the caller (free with `sf_string_free`). Book the payment when `book` is true, then
/// complete the event with `sf_inbox_complete` (or `sf_inbox_completion_sql` in your own
/// transaction) before the lease runs out.
///
/// # Safety
/// `inbox` NULL or live; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_claim(
    inbox: *const sf_inbox,
    n: u32,
    lease_ms: u64,
    events_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(events_json_out, "events_json_out")?;
        // SAFETY: caller contract of this export.
        let inbox = unsafe { inbox_arg(inbox) }?;
        if n == 0 {
            return Err(
                Failure::new(sf_result::InvalidArgument, "`n` must be at least 1").with_field("n"),
            );
        }
        if lease_ms == 0 {
            return Err(
                Failure::new(sf_result::InvalidArgument, "`lease_ms` must be at least 1")
                    .with_field("lease_ms"),
            );
        }
        let lease = Duration::from_millis(lease_ms);
        let events = inbox.run(inbox.core()?.claim(n, lease))??;
        out.write_json(&events)
    })
}

/// Shared body of complete and release.
///
/// # Safety
/// As for `sf_inbox_complete`.
unsafe fn finish(
    inbox: *const sf_inbox,
    id: *const c_char,
    claim: *const c_char,
    complete: bool,
) -> Result<(), Failure> {
    // SAFETY: forwarded caller contract.
    let (inbox, id, claim) = unsafe {
        (
            inbox_arg(inbox)?,
            str_arg(id, "id")?,
            str_arg(claim, "claim")?,
        )
    };
    let event = claimed(id, claim);
    let event = &event;
    if complete {
        inbox.run(inbox.core()?.complete(event))??;
    } else {
        inbox.run(inbox.core()?.release(event))??;
    }
    Ok(())
}

/// Marks the claimed event `id` (claimed under the token `claim`, both from
/// `sf_inbox_claim`) handled and, for a `book` event, its payment event booked.
/// `SF_RESULT_INBOX_LEASE_LOST` when its lease ran out and another worker claimed it: do not
/// book it here (roll back what the handler did, if it can).
///
/// # Safety
/// `inbox` NULL or live; strings NULL or NUL-terminated; `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_complete(
    inbox: *const sf_inbox,
    id: *const c_char,
    claim: *const c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe { finish(inbox, id, claim, true) }
    })
}

/// Gives the claimed event `id` back (the handler failed): it waits for a worker again at once.
/// `SF_RESULT_INBOX_LEASE_LOST` when another worker holds it now.
///
/// # Safety
/// `inbox` NULL or live; strings NULL or NUL-terminated; `error_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_release(
    inbox: *const sf_inbox,
    id: *const c_char,
    claim: *const c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        // SAFETY: caller contract of this export.
        unsafe { finish(inbox, id, claim, false) }
    })
}

/// Counts of the inbox: `{"pending", "claimed", "completed", "stale", "duplicate",
/// "rejected": {reason: count}, "contract_violations": {rule: count}, "oldest_pending_ms",
/// "booked"}` (`rejected` counts `body_too_large` too; `contract_violations` the verified
/// deliveries refused with 422 per rule: `missing_event_id`, `event_id_reused`,
/// `status_version_out_of_range`).
///
/// On success `*status_json_out` receives a string owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `inbox` NULL or live; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_status(
    inbox: *const sf_inbox,
    status_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(status_json_out, "status_json_out")?;
        // SAFETY: caller contract of this export.
        let inbox = unsafe { inbox_arg(inbox) }?;
        let status = inbox.run(inbox.core()?.status())??;
        out.write_json(&status)
    })
}

/// Deletes finished rows (completed, stale, duplicate) older than `retention_ms` milliseconds
/// (the core's default retention is 30 days, 2592000000 ms). Watermarks and bookings are kept.
///
/// On success `*deleted_out` receives the number of rows deleted.
///
/// # Safety
/// `inbox` NULL or live; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_purge(
    inbox: *const sf_inbox,
    retention_ms: u64,
    deleted_out: *mut u64,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(deleted_out, "deleted_out")?;
        // SAFETY: caller contract of this export.
        let inbox = unsafe { inbox_arg(inbox) }?;
        let retention = Duration::from_millis(retention_ms);
        out.write(inbox.run(inbox.core()?.purge(retention))??);
        Ok(())
    })
}

/// Hands finished events to the handler again (`replayed` set; `book` false for a booking
/// already made): `replay_json` is `{"event": "<id>"}` for one event, or
/// `{"received": {"from_ms": .., "to_ms": ..}}` for the events received between these Unix
/// milliseconds (inclusive start, exclusive end). `SF_RESULT_INBOX_NOT_FOUND` for an unknown id.
///
/// On success `*count_out` receives how many events were handed out again.
///
/// # Safety
/// `inbox` NULL or live; `replay_json` NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_replay(
    inbox: *const sf_inbox,
    replay_json: *const c_char,
    count_out: *mut u64,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = Out::new(count_out, "count_out")?;
        // SAFETY: caller contract of this export.
        let (inbox, which) = unsafe {
            let inbox = inbox_arg(inbox)?;
            let which: Replay = json_arg(replay_json, "replay_json")?;
            (inbox, which)
        };
        let which = &which;
        out.write(inbox.run(inbox.core()?.replay(which))??);
        Ok(())
    })
}

/// The statements that complete an event inside the app's own transaction on the same
/// database, with the app's own driver: bind `:id` and `:claim` (SQLite) or `$1` and `$2`
/// (PostgreSQL), run them in order (separated by `;` and a line break), and roll back unless
/// the first changed exactly one row (the lease was lost).
///
/// On success `*sql_out` receives the text, owned by the caller (free with `sf_string_free`).
///
/// # Safety
/// `inbox` NULL or live; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_completion_sql(
    inbox: *const sf_inbox,
    sql_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(sql_out, "sql_out")?;
        // SAFETY: caller contract of this export.
        let inbox = unsafe { inbox_arg(inbox) }?;
        out.write_string(inbox.live()?.inbox.completion_sql().to_owned())
    })
}

/// Enters a payment the reconciler found (`payment_json`: a queried payment, as
/// `sf_merchant_payment_get` answers it) into the same flow, marked `"source":
/// "reconciliation"`: the one handler books it once. A version not above the watermark is
/// stale, as for a notification.
///
/// On success `*outcome_out` receives the outcome's name, `stored`, `duplicate`, or
/// `contract_violation` (not entered: `paid` without `event_id`, an `event_id` of another
/// payment, a `status_version` above 2^63 - 1; report the payment as needing attention) as
/// plain text, not JSON, owned by the caller (free with `sf_string_free`).
///
/// # Safety
/// `inbox` NULL or live; `payment_json` NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_enter_reconciled(
    inbox: *const sf_inbox,
    payment_json: *const c_char,
    outcome_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(outcome_out, "outcome_out")?;
        // SAFETY: caller contract of this export.
        let (inbox, payment) = unsafe {
            let inbox = inbox_arg(inbox)?;
            let payment: MerchantPayment = response_json_arg(payment_json, "payment_json")?;
            (inbox, payment)
        };
        let payment = &payment;
        let outcome = inbox.run(inbox.core()?.enter_reconciled(payment))??;
        let name = serde_json::to_value(outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        out.write_string(name)
    })
}

/// Every payment the inbox knows, with its watermark and booking: a JSON array of
/// `{"order_no", "external_reference", "status_version", "status", "amount_minor", "currency",
/// "booked_event_id"}` (the shop's local records for `sf_reconcile`).
///
/// On success `*watermarks_json_out` receives a string owned by the caller (free with
/// `sf_string_free`).
///
/// # Safety
/// `inbox` NULL or live; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_inbox_watermarks(
    inbox: *const sf_inbox,
    watermarks_json_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(watermarks_json_out, "watermarks_json_out")?;
        // SAFETY: caller contract of this export.
        let inbox = unsafe { inbox_arg(inbox) }?;
        let watermarks = inbox.run(inbox.core()?.watermarks())??;
        out.write_json(&watermarks)
    })
}
