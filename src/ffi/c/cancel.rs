//! `sf_cancel_token`: stopping a blocking call from another thread.
//!
//! A host binds a token to the thread that is about to make blocking calls
//! (`sf_cancel_scope_enter`); cancelling the token from any thread (`sf_cancel_token_cancel`)
//! makes the call running on that thread, and every later one in the scope, return
//! `SF_RESULT_CANCELLED` at once. The call's future is dropped, which aborts its request.
//!
//! Built on `tokio::sync::Notify` and an `AtomicBool` (no extra dependency): the flag answers
//! `sf_cancel_token_is_cancelled` and the check before a call; the notification wakes a call
//! already blocked in `block_on`.

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use super::boundary;

#[derive(Default)]
pub(crate) struct CancelState {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancelState {
    pub(crate) fn cancel(&self) {
        if !self.cancelled.swap(true, Ordering::SeqCst) {
            self.notify.notify_waiters();
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when the token is cancelled.
    pub(crate) async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Registered before the flag is read, so a cancel in between is not lost.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// A cancellation token. Created by `sf_cancel_token_new`, released by `sf_cancel_token_free`;
/// every function taking `const sf_cancel_token *` may be called from any thread at any time.
#[allow(non_camel_case_types)]
pub struct sf_cancel_token {
    state: Arc<CancelState>,
}

thread_local! {
    /// The scopes entered on this thread, innermost last (`None`: a scope entered with NULL).
    static SCOPES: RefCell<Vec<Option<Arc<CancelState>>>> = const { RefCell::new(Vec::new()) };
}

/// The token bound to the calling thread by its innermost scope, if any.
pub(crate) fn bound_token() -> Option<Arc<CancelState>> {
    SCOPES.with(|s| s.borrow().last().cloned().flatten())
}

/// How a call ended when the thread's token was cancelled.
pub(crate) enum Cancelled {
    /// Cancelled before the call started: nothing was sent.
    BeforeStart,
    /// Cancelled while the call ran: its future was dropped (a request may have been sent).
    WhileRunning,
}

/// Runs `call` on `runtime`, blocking the calling thread, unless the thread's bound token is or
/// becomes cancelled; then the future is dropped and `Err(Cancelled)` returned at once.
pub(crate) fn block_on_cancellable<T>(
    runtime: &tokio::runtime::Runtime,
    call: impl Future<Output = T>,
) -> Result<T, Cancelled> {
    let token = bound_token();
    if token.as_ref().is_some_and(|t| t.is_cancelled()) {
        return Err(Cancelled::BeforeStart);
    }
    // One `block_on` and one poll site per call type, with or without a token: every export
    // instantiates this, so a second path would double each call's code in the library.
    let cancelled = async move {
        match token {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    runtime.block_on(async {
        tokio::select! {
            biased;
            () = cancelled => Err(Cancelled::WhileRunning),
            value = call => Ok(value),
        }
    })
}

/// Creates a cancellation token, not cancelled. Returns NULL only if memory cannot be
/// allocated (or on an internal panic).
///
/// The returned token is owned by the caller and released with `sf_cancel_token_free`, after
/// every scope it is bound to has been exited.
#[unsafe(no_mangle)]
pub extern "C" fn sf_cancel_token_new() -> *mut sf_cancel_token {
    boundary::value(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(sf_cancel_token {
            state: Arc::new(CancelState::default()),
        }))
    })
}

/// Cancels the token: a blocking call on a thread bound to it (see `sf_cancel_scope_enter`)
/// returns `SF_RESULT_CANCELLED` promptly (well under 100 ms), its request aborted, and so does
/// every later call in that scope. Thread-safe, callable from any thread (a signal-handling or
/// watchdog thread included), idempotent; a token cannot be reset. NULL is ignored.
///
/// # Safety
/// `token` must be NULL or a live token from `sf_cancel_token_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_cancel_token_cancel(token: *const sf_cancel_token) {
    boundary::value((), || {
        // SAFETY: the caller promises NULL or a live token.
        if let Some(token) = unsafe { token.as_ref() } {
            token.state.cancel();
        }
    })
}

/// Whether the token was cancelled (false for NULL). Thread-safe. The result is a C99 `bool`
/// (one byte; ctypes `c_bool`).
///
/// # Safety
/// `token` must be NULL or a live token from `sf_cancel_token_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_cancel_token_is_cancelled(token: *const sf_cancel_token) -> bool {
    boundary::value(false, || {
        // SAFETY: the caller promises NULL or a live token.
        unsafe { token.as_ref() }.is_some_and(|t| t.state.is_cancelled())
    })
}

/// Releases a token. Accepts NULL. Exit every scope bound to it first (the library keeps its
/// own reference while a scope is entered, so an early free is not a memory error, but the
/// token can no longer be cancelled through the freed pointer).
///
/// # Safety
/// `token` must be NULL or a token from `sf_cancel_token_new` not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_cancel_token_free(token: *mut sf_cancel_token) {
    boundary::value((), || {
        if !token.is_null() {
            // SAFETY: created by Box::into_raw in `sf_cancel_token_new`; freed once.
            drop(unsafe { Box::from_raw(token) });
        }
    })
}

/// Binds `token` to the calling thread: the blocking calls this thread makes until the matching
/// `sf_cancel_scope_exit` stop with `SF_RESULT_CANCELLED` when the token is (or becomes)
/// cancelled. Scopes nest (the innermost token applies); each enter needs one exit on the same
/// thread. NULL enters a scope with no token (calls in it are not cancellable), which keeps
/// enters and exits paired. The token must outlive the scope.
///
/// # Safety
/// `token` must be NULL or a live token from `sf_cancel_token_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_cancel_scope_enter(token: *const sf_cancel_token) {
    boundary::value((), || {
        // SAFETY: the caller promises NULL or a live token.
        let state = unsafe { token.as_ref() }.map(|t| Arc::clone(&t.state));
        SCOPES.with(|s| s.borrow_mut().push(state));
    })
}

/// Ends the calling thread's innermost scope (see `sf_cancel_scope_enter`). Without an entered
/// scope it does nothing.
#[unsafe(no_mangle)]
pub extern "C" fn sf_cancel_scope_exit() {
    boundary::value((), || {
        SCOPES.with(|s| s.borrow_mut().pop());
    })
}
