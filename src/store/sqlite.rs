//! The SQLite backend of the shared state: one database file shared by every process of one
//! host (php-fpm, gunicorn workers), so the per-client limits and the token are shared by every
//! process, as the contract counts them per client.
//!
//! Each operation is one short `BEGIN IMMEDIATE` transaction (the write lock is taken first, so
//! two processes never interleave a read and a write of one window); the time is the host's
//! clock in milliseconds since the epoch, read inside the transaction. The file holds the
//! client-credentials token (a secret at rest, "kept only on the merchant server"): it is
//! created with mode 0600 before SQLite opens it (the WAL and shared-memory files take the
//! database file's mode), and `secure_delete` overwrites a dropped token's bytes.
//!
//! rusqlite is synchronous: the work runs on [`tokio::task::spawn_blocking`], with the
//! connection behind a [`std::sync::Mutex`]. The connection opens on the first operation (never
//! in [`SqliteStore::new`]: a forked worker opens its own) and is reopened after an error.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{OptionalExtension, Transaction, params};

use super::{
    Admission, Admit, Namespace, Store, StoreError, StoreFuture, StoreResult, StoredFailure,
    StoredState, StoredToken, StoredWindow, TokenLookup,
};
use crate::rate_limit::LimitClass;
use crate::secret::Secret;
use crate::sqlite_file::{OpenError, SqliteFile};

/// The tables, created on first use. Rate entries and pauses are keyed by the client's
/// namespace (one budget per client, shared by every process); the token, its lease and its
/// failure record by the token namespace (client and scopes).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS storefront_rate (
    client TEXT NOT NULL, class TEXT NOT NULL, at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS storefront_rate_window ON storefront_rate (client, class, at);
CREATE TABLE IF NOT EXISTS storefront_pause (
    client TEXT NOT NULL, class TEXT NOT NULL, until INTEGER NOT NULL,
    PRIMARY KEY (client, class));
CREATE TABLE IF NOT EXISTS storefront_token (
    ns TEXT PRIMARY KEY, token TEXT NOT NULL, scope TEXT NOT NULL, expires_in INTEGER NOT NULL,
    refresh_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_lease (
    ns TEXT PRIMARY KEY, holder TEXT NOT NULL, until INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_failure (
    ns TEXT PRIMARY KEY, record TEXT NOT NULL, retry_at INTEGER NOT NULL);
";

/// The shared state in one SQLite file (one host, many processes).
pub(crate) struct SqliteStore {
    inner: Arc<Inner>,
}

/// What the blocking workers share: the file and the keys.
struct Inner {
    file: SqliteFile,
    ns: Namespace,
}

/// Every rusqlite error becomes a store error with its text (SQLite's messages carry neither
/// the token nor a password).
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(format!("sqlite: {e}"))
    }
}

impl From<OpenError> for StoreError {
    fn from(e: OpenError) -> Self {
        StoreError(format!("sqlite: {}", e.0))
    }
}

impl SqliteStore {
    /// A store on the file at `path` for the client `ns`; nothing is opened until the first
    /// operation. `timeout` bounds one round trip: SQLite waits for another process's lock a
    /// little less than that.
    pub fn new(path: PathBuf, ns: Namespace, timeout: Duration) -> Self {
        SqliteStore {
            inner: Arc::new(Inner {
                file: SqliteFile::new(path, timeout.saturating_sub(timeout / 10), SCHEMA),
                ns,
            }),
        }
    }

    /// Runs `op` in one `BEGIN IMMEDIATE` transaction on a blocking thread, with the store's
    /// clock (ms since the epoch, read once the write lock is held).
    fn run<T, F>(&self, op: F) -> StoreFuture<'_, T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>, i64, &Namespace) -> StoreResult<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let work = move || inner.file.run(|tx, now| op(tx, now, &inner.ns));
            match tokio::task::spawn_blocking(work).await {
                Ok(outcome) => outcome,
                Err(e) => Err(StoreError(format!("sqlite: worker thread failed: {e}"))),
            }
        })
    }
}

/// A duration in ms as stored (bounded so that `now + ms` never overflows).
fn ms(value: u64) -> i64 {
    i64::try_from(value.min(1 << 52)).unwrap_or(1 << 52)
}

/// `at - now` in ms, 0 when past.
fn until(at: i64, now: i64) -> u64 {
    u64::try_from(at.saturating_sub(now)).unwrap_or(0)
}

/// The class's key in the tables.
fn class_key(class: LimitClass) -> &'static str {
    match class {
        LimitClass::Create => "create",
        LimitClass::Read => "read",
        LimitClass::Requeue => "requeue",
    }
}

/// The failure record of `ns` and its retry time, if any.
fn failure(tx: &Transaction<'_>, ns: &Namespace) -> StoreResult<Option<(StoredFailure, i64)>> {
    let row: Option<(String, i64)> = tx
        .query_row(
            "SELECT record, retry_at FROM storefront_failure WHERE ns = ?1",
            params![ns.token],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    match row {
        None => Ok(None),
        Some((record, retry_at)) => serde_json::from_str::<StoredFailure>(&record)
            .map(|f| Some((f, retry_at)))
            .map_err(|e| StoreError(format!("sqlite: unreadable failure record: {e}"))),
    }
}

/// Forgets the token of `ns` once it expired (an entry never outlives the token).
fn purge_expired_token(tx: &Transaction<'_>, ns: &Namespace, now: i64) -> StoreResult<()> {
    tx.execute(
        "DELETE FROM storefront_token WHERE ns = ?1 AND expires_at <= ?2",
        params![ns.token, now],
    )?;
    Ok(())
}

impl Store for SqliteStore {
    /// The sliding log of the client's class, shared by every process on the host: at most
    /// `budget` entries in the last `span_ms`, none while paused.
    fn admit(&self, admit: Admit) -> StoreFuture<'_, Admission> {
        self.run(move |tx, now, ns| {
            let class = class_key(admit.class);
            let span = ms(admit.span_ms);
            tx.execute(
                "DELETE FROM storefront_rate WHERE client = ?1 AND class = ?2 AND at <= ?3",
                params![ns.client, class, now - span],
            )?;
            let paused: Option<i64> = tx
                .query_row(
                    "SELECT until FROM storefront_pause WHERE client = ?1 AND class = ?2",
                    params![ns.client, class],
                    |row| row.get(0),
                )
                .optional()?;
            if let Some(paused) = paused.filter(|&p| p > now) {
                return Ok(Admission::Wait(until(paused, now).max(1)));
            }
            if admit.budget == 0 {
                return Ok(Admission::Wait(admit.span_ms.max(1)));
            }
            let count: i64 = tx.query_row(
                "SELECT COUNT(*) FROM storefront_rate WHERE client = ?1 AND class = ?2",
                params![ns.client, class],
                |row| row.get(0),
            )?;
            let budget = i64::from(admit.budget);
            if count < budget {
                tx.execute(
                    "INSERT INTO storefront_rate (client, class, at) VALUES (?1, ?2, ?3)",
                    params![ns.client, class, now],
                )?;
                return Ok(Admission::Admitted);
            }
            // Room opens when the entry that keeps the count at the budget leaves (the oldest
            // one when the count is exactly the budget).
            let at: i64 = tx.query_row(
                "SELECT at FROM storefront_rate WHERE client = ?1 AND class = ?2
                 ORDER BY at LIMIT 1 OFFSET ?3",
                params![ns.client, class, count - budget],
                |row| row.get(0),
            )?;
            Ok(Admission::Wait(until(at + span, now).max(1)))
        })
    }

    /// A 429's `Retry-After` applies to the client: every process of the host waits.
    fn pause(&self, class: LimitClass, for_ms: u64) -> StoreFuture<'_, ()> {
        self.run(move |tx, now, ns| {
            let class = class_key(class);
            tx.execute(
                "INSERT INTO storefront_pause (client, class, until) VALUES (?1, ?2, ?3)
                 ON CONFLICT (client, class) DO UPDATE SET until = max(until, excluded.until)",
                params![ns.client, class, now + ms(for_ms)],
            )?;
            Ok(())
        })
    }

    /// One token per client and scopes for every process (fetched by the lease holder only).
    fn token<'a>(&'a self, holder: &'a str, lease_ms: u64) -> StoreFuture<'a, TokenLookup> {
        let holder = holder.to_owned();
        self.run(move |tx, now, ns| {
            purge_expired_token(tx, ns, now)?;
            let row: Option<(String, String, i64, i64, i64)> = tx
                .query_row(
                    "SELECT token, scope, expires_in, refresh_at, expires_at
                     FROM storefront_token WHERE ns = ?1",
                    params![ns.token],
                    |row| {
                        Ok((
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                        ))
                    },
                )
                .optional()?;
            if let Some((token, scope, expires_in, refresh_at, expires_at)) = row
                && now < refresh_at
            {
                return Ok(TokenLookup::Fresh(StoredToken {
                    token: Secret::new(token),
                    scope,
                    expires_in: u64::try_from(expires_in).unwrap_or(0),
                    refresh_in_ms: until(refresh_at, now),
                    expires_in_ms: until(expires_at, now),
                }));
            }
            if let Some((failure, retry_at)) = failure(tx, ns)?
                && retry_at > now
            {
                return Ok(TokenLookup::Failed(failure, until(retry_at, now)));
            }
            let lease: Option<(String, i64)> = tx
                .query_row(
                    "SELECT holder, until FROM storefront_lease WHERE ns = ?1",
                    params![ns.token],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            match lease {
                Some((other, lease_until)) if lease_until > now && other != holder => {
                    Ok(TokenLookup::Busy(until(lease_until, now).clamp(1, 100)))
                }
                _ => {
                    tx.execute(
                        "INSERT INTO storefront_lease (ns, holder, until) VALUES (?1, ?2, ?3)
                         ON CONFLICT (ns) DO UPDATE SET holder = excluded.holder,
                                                        until = excluded.until",
                        params![ns.token, holder, now + ms(lease_ms)],
                    )?;
                    Ok(TokenLookup::Leased)
                }
            }
        })
    }

    /// Shares a granted token (kept only on this host, in the 0600 file) with its expiry.
    fn put_token<'a>(&'a self, holder: &'a str, token: &'a StoredToken) -> StoreFuture<'a, ()> {
        let holder = holder.to_owned();
        let token = token.clone();
        self.run(move |tx, now, ns| {
            tx.execute(
                "INSERT INTO storefront_token
                     (ns, token, scope, expires_in, refresh_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (ns) DO UPDATE SET token = excluded.token, scope = excluded.scope,
                     expires_in = excluded.expires_in, refresh_at = excluded.refresh_at,
                     expires_at = excluded.expires_at",
                params![
                    ns.token,
                    token.token.expose(),
                    token.scope,
                    ms(token.expires_in),
                    now + ms(token.refresh_in_ms),
                    now + ms(token.expires_in_ms)
                ],
            )?;
            tx.execute(
                "DELETE FROM storefront_failure WHERE ns = ?1",
                params![ns.token],
            )?;
            tx.execute(
                "DELETE FROM storefront_lease WHERE ns = ?1 AND holder = ?2",
                params![ns.token, holder],
            )?;
            Ok(())
        })
    }

    /// Shares a failed token request, so the other processes answer it until the back-off
    /// ends instead of asking the token endpoint too. The record stays (for the next back-off)
    /// until a token is stored.
    fn put_failure<'a>(
        &'a self,
        holder: &'a str,
        failure: &'a StoredFailure,
        backoff_ms: u64,
    ) -> StoreFuture<'a, ()> {
        let holder = holder.to_owned();
        let record = serde_json::to_string(failure);
        self.run(move |tx, now, ns| {
            let record = record
                .map_err(|e| StoreError(format!("sqlite: cannot encode the failure: {e}")))?;
            tx.execute(
                "INSERT INTO storefront_failure (ns, record, retry_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (ns) DO UPDATE SET record = excluded.record,
                                                retry_at = excluded.retry_at",
                params![ns.token, record, now + ms(backoff_ms)],
            )?;
            tx.execute(
                "DELETE FROM storefront_lease WHERE ns = ?1 AND holder = ?2",
                params![ns.token, holder],
            )?;
            Ok(())
        })
    }

    /// Failures of the token endpoint in a row, as every process sees them.
    fn failures_in_a_row(&self) -> StoreFuture<'_, u32> {
        self.run(|tx, _now, ns| Ok(failure(tx, ns)?.map_or(0, |(f, _)| f.in_a_row)))
    }

    /// Forgets a token the service rejected, unless another process already replaced it.
    fn drop_token<'a>(&'a self, rejected: &'a Secret) -> StoreFuture<'a, ()> {
        let rejected = rejected.clone();
        self.run(move |tx, _now, ns| {
            tx.execute(
                "DELETE FROM storefront_token WHERE ns = ?1 AND token = ?2",
                params![ns.token, rejected.expose()],
            )?;
            Ok(())
        })
    }

    /// The shared windows and token state of the client (never the token's value).
    fn inspect(&self, span_ms: u64) -> StoreFuture<'_, StoredState> {
        self.run(move |tx, now, ns| {
            let mut windows = Vec::with_capacity(LimitClass::ALL.len());
            for class in LimitClass::ALL {
                let key = class_key(class);
                let count: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM storefront_rate
                     WHERE client = ?1 AND class = ?2 AND at > ?3",
                    params![ns.client, key, now - ms(span_ms)],
                    |row| row.get(0),
                )?;
                let paused: Option<i64> = tx
                    .query_row(
                        "SELECT until FROM storefront_pause WHERE client = ?1 AND class = ?2",
                        params![ns.client, key],
                        |row| row.get(0),
                    )
                    .optional()?;
                windows.push(StoredWindow {
                    class,
                    in_window: u32::try_from(count).unwrap_or(u32::MAX),
                    paused_for_ms: paused.filter(|&p| p > now).map(|p| until(p, now)),
                });
            }
            let token: Option<(i64, i64)> = tx
                .query_row(
                    "SELECT refresh_at, expires_at FROM storefront_token
                     WHERE ns = ?1 AND expires_at > ?2",
                    params![ns.token, now],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let lease_held = tx
                .query_row(
                    "SELECT 1 FROM storefront_lease WHERE ns = ?1 AND until > ?2",
                    params![ns.token, now],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            Ok(StoredState {
                windows,
                token_shared: token.is_some_and(|(refresh_at, _)| now < refresh_at),
                token_expires_in_ms: token.map(|(_, expires_at)| until(expires_at, now)),
                token_lease_held: lease_held,
                token_failures_in_a_row: failure(tx, ns)?.map_or(0, |(f, _)| f.in_a_row),
            })
        })
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }
}
