//! Fork safety of the SDK's SQLite connections (issue 27, item 2).
//!
//! SQLite keeps per-process state beside each connection: which POSIX locks the process holds
//! on a database file and its `-shm` index, shared by every connection of the process to that
//! file. A child of `fork()` inherits that state but none of the locks themselves, so a
//! connection the child opens to the same file believes it holds locks it does not, or waits
//! for ever on a lock that a parent thread was holding at the fork (every delivery then
//! answered 503). SQLite's rule is that a connection must not be carried across `fork()`.
//!
//! Two parts keep that rule without asking the app to do anything:
//! - a **fork gate**: every operation on an SDK connection (and every registration, close) runs
//!   inside the gate, and a `pthread_atfork` prepare handler waits until none is running and
//!   holds new ones back until the fork is done, so no connection is ever mid-transaction (and
//!   no SDK lock is held) in the child;
//! - a **sweep**: the first SDK operation in a new process closes every connection that the
//!   process inherited (idle, thanks to the gate), so its lock state is gone before the child
//!   opens its own. Closing an idle inherited connection releases nothing of the parent's:
//!   POSIX record locks belong to the process that took them.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, PoisonError, Weak};
use std::time::Duration;

use rusqlite::Connection;

/// An open connection and the process that opened it.
pub(crate) struct Owned {
    pub pid: u32,
    pub conn: Connection,
}

/// Where a [`super::SqliteFile`] keeps its connection (none until the first operation).
pub(crate) type Slot = Mutex<Option<Owned>>;

/// Operations inside the gate now.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Forks being prepared now (prepare handler entered, parent handler not yet run).
static FORKING: AtomicUsize = AtomicUsize::new(0);
/// Every live slot of the process, for the sweep after a fork.
static SLOTS: Mutex<Vec<Weak<Slot>>> = Mutex::new(Vec::new());
/// The process whose inherited connections were last swept (0: none yet).
static SWEPT: AtomicU32 = AtomicU32::new(0);
static HANDLERS: Once = Once::new();

/// Proof of being inside the gate, with the calling process's id; leaving it is dropping this.
pub(crate) struct Inside {
    pub pid: u32,
}

impl Drop for Inside {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Enters the gate (waiting while a fork is being prepared), after closing what this process
/// inherited if it is a new process.
pub(crate) fn enter() -> Inside {
    HANDLERS.call_once(install_handlers);
    loop {
        while FORKING.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        if FORKING.load(Ordering::SeqCst) == 0 {
            break;
        }
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
    let inside = Inside {
        pid: std::process::id(),
    };
    sweep_inherited(inside.pid);
    inside
}

/// Records a new slot so that a forked child closes its inherited connection.
pub(crate) fn register(_inside: &Inside, slot: &Arc<Slot>) {
    let mut slots = lock(&SLOTS);
    slots.retain(|weak| weak.strong_count() > 0);
    slots.push(Arc::downgrade(slot));
}

/// Locks a mutex, recovering it if a thread panicked while holding it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// In a process other than the one that last swept (a forked child), closes every connection
/// opened by another process. They are idle: the fork happened outside the gate.
fn sweep_inherited(pid: u32) {
    if SWEPT.load(Ordering::Acquire) == pid {
        return;
    }
    let slots = lock(&SLOTS);
    if SWEPT.load(Ordering::Acquire) == pid {
        return;
    }
    for slot in slots.iter().filter_map(Weak::upgrade) {
        let mut conn = lock(&slot);
        if conn.as_ref().is_some_and(|owned| owned.pid != pid) {
            drop(conn.take());
        }
    }
    SWEPT.store(pid, Ordering::Release);
}

fn install_handlers() {
    #[cfg(unix)]
    // SAFETY: the handlers are `extern "C"` functions that touch only atomics (and sleep).
    unsafe {
        libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
    }
}

/// Before `fork()`: hold new operations back and wait for the running ones to end.
#[cfg(unix)]
extern "C" fn prepare() {
    FORKING.fetch_add(1, Ordering::SeqCst);
    while ACTIVE.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// After `fork()`, in the parent: let operations run again.
#[cfg(unix)]
extern "C" fn parent() {
    FORKING.fetch_sub(1, Ordering::SeqCst);
}

/// After `fork()`, in the child: its one thread runs no operation; the next one sweeps.
#[cfg(unix)]
extern "C" fn child() {
    FORKING.store(0, Ordering::SeqCst);
    ACTIVE.store(0, Ordering::SeqCst);
}
