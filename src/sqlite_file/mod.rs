//! One SQLite database file shared by the processes of one host, as the shared client state
//! (`store/sqlite.rs`) and the webhook inbox (`inbox/sqlite.rs`) use it: created mode 0600
//! in a folder no other user can write, refused when it or its `-wal`/`-shm` files are another
//! user's or readable by others ([`trust`]), WAL journal, a busy timeout, the tables created on
//! first use, and every operation one `BEGIN IMMEDIATE` transaction (the write lock first, so
//! two processes never interleave a read and a write).
//!
//! rusqlite is synchronous: callers run [`SqliteFile::run`] on a blocking thread. The
//! connection opens on the first operation and is reopened after an error. A forked child
//! never uses or inherits a connection's lock state: see [`fork`].

mod fork;
mod trust;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use fork::{Owned, Slot};

/// A lazily opened SQLite file.
pub(crate) struct SqliteFile {
    path: PathBuf,
    busy: Duration,
    schema: &'static str,
    conn: Arc<Slot>,
}

impl SqliteFile {
    /// The file at `path`, waiting up to `busy` for another process's lock, with `schema`
    /// (idempotent statements) run when it opens.
    pub fn new(path: PathBuf, busy: Duration, schema: &'static str) -> Self {
        let conn = Arc::new(Slot::new(None));
        let inside = fork::enter();
        fork::register(&inside, &conn);
        SqliteFile {
            path,
            busy: busy.max(Duration::from_millis(1)),
            schema,
            conn,
        }
    }

    /// Creates the file at `path` now, or checks the one there ([`trust`]: a private folder, a
    /// regular 0600 file of this user), without opening it in SQLite.
    pub fn create_private(path: &std::path::Path) -> Result<(), OpenError> {
        let _inside = fork::enter();
        trust::prepare_private(path)
    }

    /// Opens the connection if needed, runs `op` in one immediate transaction with the host's
    /// clock (ms since the epoch, read once the write lock is held), commits; after an error
    /// the connection is dropped and the next operation opens a new one.
    pub fn run<T, E>(&self, op: impl FnOnce(&Transaction<'_>, i64) -> Result<T, E>) -> Result<T, E>
    where
        E: From<rusqlite::Error> + From<OpenError>,
    {
        let inside = fork::enter();
        // A worker that panicked cannot have left a transaction open (rusqlite rolls back on
        // drop), but reopen the connection to be safe.
        let mut guard = match self.conn.lock() {
            Ok(guard) => guard,
            Err(poisoned) => {
                let mut guard = poisoned.into_inner();
                *guard = None;
                guard
            }
        };
        let outcome = self.run_locked(inside.pid, &mut guard, op);
        if outcome.is_err() {
            *guard = None;
        }
        outcome
    }

    fn run_locked<T, E>(
        &self,
        pid: u32,
        slot: &mut Option<Owned>,
        op: impl FnOnce(&Transaction<'_>, i64) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<rusqlite::Error> + From<OpenError>,
    {
        if slot.as_ref().is_some_and(|owned| owned.pid != pid) {
            // Inherited through fork() (the sweep normally closed it already).
            *slot = None;
        }
        if slot.is_none() {
            *slot = Some(Owned {
                pid,
                conn: self.open::<E>()?,
            });
        }
        let Some(owned) = slot.as_mut() else {
            return Err(OpenError("no connection".into()).into());
        };
        let tx = owned
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = op(&tx, now_ms())?;
        tx.commit()?;
        Ok(value)
    }

    /// Checks and creates the file ([`trust`]), opens it in WAL mode with the busy timeout,
    /// creates the tables, and checks the companion files SQLite made.
    fn open<E>(&self) -> Result<Connection, E>
    where
        E: From<rusqlite::Error> + From<OpenError>,
    {
        trust::prepare_private(&self.path)?;
        // Switching a fresh file to WAL can answer "database is locked" at once while other
        // processes open it too (SQLite does not always call the busy handler there): the first
        // opening is retried, bounded by the busy timeout.
        let until = std::time::Instant::now() + self.busy;
        loop {
            match self.prepare() {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if matches!(
                        e.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    ) && std::time::Instant::now() < until =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(e.into()),
                Ok(Ok(conn)) => {
                    trust::check_companions(&self.path)?;
                    return Ok(conn);
                }
                Ok(Err(e)) => return Err(e.into()),
            }
        }
    }

    /// Opens the connection in WAL mode with the busy timeout and creates the tables.
    fn prepare(&self) -> Result<Result<Connection, OpenError>, rusqlite::Error> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW,
        )?;
        conn.busy_timeout(self.busy)?;
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Ok(Err(OpenError(format!(
                "the database stays in {mode} journal mode (WAL needed)"
            ))));
        }
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA secure_delete=ON;")?;
        conn.execute_batch(self.schema)?;
        Ok(Ok(conn))
    }
}

impl Drop for SqliteFile {
    /// Closes the connection inside the fork gate, so a fork never lands inside SQLite's close.
    fn drop(&mut self) {
        let _inside = fork::enter();
        fork::lock(&self.conn).take();
    }
}

/// Why the file could not be opened as needed.
#[derive(Debug)]
pub(crate) struct OpenError(pub String);

/// The host's clock in milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 4))
        .unwrap_or(0)
}
