//! The inbox in one SQLite file: one host, any number of receiver and worker processes. Each
//! operation is one `BEGIN IMMEDIATE` transaction ([`SqliteFile`]), so a delivery is committed
//! before it is acknowledged and two workers never claim one event.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{OptionalExtension, Transaction, params};

use super::{
    EventSource, InboxError, InboxEvent, InboxFuture, InboxResult, InboxStatus, InboxStore,
    Incoming, Inserted, Replay, Watermark, amount_of, status_of,
};
use crate::sqlite_file::{OpenError, SqliteFile};

/// The tables (shared with [`super::postgres`] in meaning; see the module docs of
/// [`super`]). `seq` orders events as received.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS storefront_inbox_events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    order_no TEXT NOT NULL,
    external_reference TEXT NOT NULL,
    status TEXT NOT NULL,
    status_version INTEGER NOT NULL,
    event_id TEXT,
    amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL,
    test_mode INTEGER NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    claim TEXT,
    lease_until INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    book INTEGER NOT NULL DEFAULT 0,
    replayed INTEGER NOT NULL DEFAULT 0,
    received_at INTEGER NOT NULL,
    finished_at INTEGER);
CREATE INDEX IF NOT EXISTS storefront_inbox_events_open ON storefront_inbox_events (order_no, seq)
    WHERE state IN ('pending', 'claimed');
CREATE TABLE IF NOT EXISTS storefront_inbox_watermarks (
    order_no TEXT PRIMARY KEY,
    external_reference TEXT NOT NULL,
    status TEXT NOT NULL,
    status_version INTEGER NOT NULL,
    amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL,
    event_ref TEXT NOT NULL,
    updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_inbox_bookings (
    event_id TEXT PRIMARY KEY,
    order_no TEXT NOT NULL,
    inbox_id TEXT NOT NULL,
    booked_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_inbox_rejections (
    reason TEXT PRIMARY KEY,
    count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_inbox_event_ids (
    event_id TEXT PRIMARY KEY,
    order_no TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_inbox_violations (
    rule TEXT PRIMARY KEY,
    count INTEGER NOT NULL);
";

/// The statements that complete an event in the app's own transaction (see
/// [`super::Inbox::completion_sql`]).
const COMPLETION_SQL: &str = "\
UPDATE storefront_inbox_events SET state = 'completed', finished_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) WHERE id = :id AND claim = :claim AND state = 'claimed';
INSERT INTO storefront_inbox_bookings (event_id, order_no, inbox_id, booked_at) SELECT event_id, order_no, id, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) FROM storefront_inbox_events WHERE id = :id AND claim = :claim AND book = 1 AND event_id IS NOT NULL ON CONFLICT (event_id) DO NOTHING;";

/// How long a transaction waits for another process's write lock.
const BUSY: Duration = Duration::from_secs(5);

/// A waiting event as a claim considers it: id, order_no, status_version, status, event_id,
/// the payment's watermark, replayed.
type Candidate = (String, String, i64, String, Option<String>, i64, i64);

/// The inbox in one SQLite file.
pub(crate) struct SqliteInbox {
    file: Arc<SqliteFile>,
}

impl From<rusqlite::Error> for InboxError {
    fn from(e: rusqlite::Error) -> Self {
        InboxError::Store(format!("sqlite: {e}"))
    }
}

impl From<OpenError> for InboxError {
    fn from(e: OpenError) -> Self {
        InboxError::Store(format!("sqlite: {}", e.0))
    }
}

impl SqliteInbox {
    /// The inbox on the file at `path`, created now (mode 0600, [`SqliteFile::create_private`])
    /// so that an untrusted or unusable path is a configuration error at open, and so that the
    /// app's own driver, connecting later for its completing transaction, finds the private file
    /// instead of creating one with its umask. Tables are created on first use.
    pub fn new(path: PathBuf) -> InboxResult<Self> {
        SqliteFile::create_private(&path).map_err(|e| InboxError::Config(e.0))?;
        Ok(SqliteInbox {
            file: Arc::new(SqliteFile::new(path, BUSY, SCHEMA)),
        })
    }

    /// Runs `op` in one immediate transaction on a blocking thread.
    fn run<T, F>(&self, op: F) -> InboxFuture<'_, T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>, i64) -> InboxResult<T> + Send + 'static,
    {
        let file = Arc::clone(&self.file);
        Box::pin(async move {
            match tokio::task::spawn_blocking(move || file.run(op)).await {
                Ok(outcome) => outcome,
                Err(e) => Err(InboxError::Store(format!(
                    "sqlite: worker thread failed: {e}"
                ))),
            }
        })
    }
}

/// An amount or version as SQLite stores it (its integers are signed 64-bit).
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl InboxStore for SqliteInbox {
    /// "Store the notification reliably before returning": one statement, the least a
    /// correct receiver does (a duplicate `id` changes nothing). Ordering by version is the
    /// claim's work, so the acknowledgement waits for nothing else.
    ///
    /// An `event_id` is a "stable unique payment event number": the first payment stored with
    /// it owns it (`storefront_inbox_event_ids`), and an event of another payment carrying it
    /// is not stored ([`Inserted::EventIdTaken`]).
    fn insert<'a>(&'a self, event: &'a Incoming) -> InboxFuture<'a, Inserted> {
        let e = event.clone();
        self.run(move |tx, now| {
            if let Some(event_id) = &e.event_id {
                tx.prepare_cached(
                    "INSERT INTO storefront_inbox_event_ids (event_id, order_no) VALUES (?1, ?2)
                     ON CONFLICT (event_id) DO NOTHING",
                )?
                .execute(params![event_id, e.order_no])?;
                let owner: String = tx
                    .prepare_cached(
                        "SELECT order_no FROM storefront_inbox_event_ids WHERE event_id = ?1",
                    )?
                    .query_row(params![event_id], |row| row.get(0))?;
                if owner != e.order_no {
                    return Ok(Inserted::EventIdTaken);
                }
            }
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO storefront_inbox_events (id, source, order_no, external_reference,
                       status, status_version, event_id, amount_minor, currency, test_mode, body,
                       state, received_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'pending', ?12)
                     ON CONFLICT (id) DO NOTHING",
                )?
                .execute(params![
                    e.id,
                    e.source.as_str(),
                    e.order_no,
                    e.external_reference,
                    e.status,
                    int(e.status_version),
                    e.event_id,
                    int(e.amount_minor),
                    e.currency,
                    e.test_mode,
                    e.body,
                    now,
                ])?;
            Ok(if inserted == 0 {
                Inserted::Duplicate
            } else {
                Inserted::Stored
            })
        })
    }

    fn reject<'a>(&'a self, reason: &'a str) -> InboxFuture<'a, ()> {
        let reason = reason.to_owned();
        self.run(move |tx, _| {
            tx.prepare_cached(
                "INSERT INTO storefront_inbox_rejections (reason, count) VALUES (?1, 1)
                 ON CONFLICT (reason) DO UPDATE SET count = count + 1",
            )?
            .execute(params![reason])?;
            Ok(())
        })
    }

    fn violation<'a>(&'a self, rule: &'a str) -> InboxFuture<'a, ()> {
        let rule = rule.to_owned();
        self.run(move |tx, _| {
            tx.prepare_cached(
                "INSERT INTO storefront_inbox_violations (rule, count) VALUES (?1, 1)
                 ON CONFLICT (rule) DO UPDATE SET count = count + 1",
            )?
            .execute(params![rule])?;
            Ok(())
        })
    }

    /// Hands out up to `n` open events, oldest first, at most one per payment and none of a
    /// payment with an event out under a live lease. "A lower version must not overwrite a
    /// higher one": an event at or below its payment's watermark (the highest version handed
    /// out; an equal one under another id), or below another open event of the payment, becomes
    /// `stale` and is never handed out. "Book payments idempotently by `data.event_id`": a
    /// `paid` event whose `event_id` is booked becomes a `duplicate`; `book` is set on the first
    /// event handed out that carries a not-yet-booked `event_id`.
    fn claim<'a>(
        &'a self,
        n: u32,
        lease_ms: u64,
        claim: &'a str,
    ) -> InboxFuture<'a, Vec<InboxEvent>> {
        let claim = claim.to_owned();
        self.run(move |tx, now| {
            let lease_until = now.saturating_add(int(lease_ms));
            let candidates: Vec<Candidate> = {
                let mut stmt = tx.prepare_cached(
                    "SELECT id, order_no, status_version, status, event_id, replayed, attempts
                     FROM storefront_inbox_events
                     WHERE state IN ('pending', 'claimed')
                       AND (state = 'pending' OR lease_until <= ?1)
                     ORDER BY seq LIMIT ?2",
                )?;
                let limit = i64::from(n).saturating_mul(8).saturating_add(64);
                stmt.query_map(params![now, limit], |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                        row.get(5)?,
                        row.get(6)?,
                    ))
                })?
                .collect::<Result<_, _>>()?
            };
            let mut taken = Vec::new();
            let mut out = std::collections::HashSet::new();
            for (id, order_no, version, status, event_id, replayed, attempts) in candidates {
                if taken.len() >= n as usize {
                    break;
                }
                if replayed == 0 && superseded(tx, &id, &order_no, version, attempts)? {
                    // A newer state of the payment was handed out or waits: never this one.
                    tx.prepare_cached(
                        "UPDATE storefront_inbox_events SET state = 'stale', finished_at = ?1,
                           claim = NULL, lease_until = NULL WHERE id = ?2",
                    )?
                    .execute(params![now, id])?;
                    continue;
                }
                if out.contains(&order_no) {
                    continue;
                }
                let busy: Option<i64> = tx
                    .prepare_cached(
                        "SELECT 1 FROM storefront_inbox_events WHERE order_no = ?1
                           AND state IN ('pending', 'claimed') AND state = 'claimed'
                           AND lease_until > ?2 LIMIT 1",
                    )?
                    .query_row(params![order_no, now], |row| row.get(0))
                    .optional()?;
                if busy.is_some() {
                    out.insert(order_no);
                    continue;
                }
                // Any state carrying an `event_id` (paid, and refunded or chargeback after it)
                // is a confirmed payment event: booked once, whichever state the app first sees.
                let booked = match &event_id {
                    Some(event_id) => tx
                        .prepare_cached(
                            "SELECT 1 FROM storefront_inbox_bookings WHERE event_id = ?1",
                        )?
                        .query_row(params![event_id], |row| row.get::<_, i64>(0))
                        .optional()?
                        .is_some(),
                    _ => false,
                };
                if booked && replayed == 0 && status == "paid" {
                    // The payment event reached the app under another id: once is enough. The
                    // app has this state (paid) already, so its version is the watermark.
                    tx.prepare_cached(
                        "UPDATE storefront_inbox_events SET state = 'duplicate', finished_at = ?1,
                           claim = NULL, lease_until = NULL WHERE id = ?2",
                    )?
                    .execute(params![now, id])?;
                    raise_watermark(tx, &id, now)?;
                    continue;
                }
                let book = event_id.is_some() && !booked;
                tx.prepare_cached(
                    "UPDATE storefront_inbox_events SET state = 'claimed', claim = ?1,
                       lease_until = ?2, attempts = attempts + 1, book = ?3 WHERE id = ?4",
                )?
                .execute(params![claim, lease_until, book, id])?;
                raise_watermark(tx, &id, now)?;
                out.insert(order_no);
                taken.push(id);
            }
            let mut events = Vec::with_capacity(taken.len());
            for id in taken {
                events.push(
                    tx.prepare_cached(
                        "SELECT id, claim, order_no, external_reference, status, status_version,
                       event_id, amount_minor, currency, test_mode, book, source, replayed,
                       attempts, body
                     FROM storefront_inbox_events WHERE id = ?1",
                    )?
                    .query_row(params![id], |row| {
                        Ok(InboxEvent {
                            id: row.get(0)?,
                            claim: row.get(1)?,
                            order_no: row.get(2)?,
                            external_reference: row.get(3)?,
                            status: status_of(&row.get::<_, String>(4)?),
                            status_version: row.get::<_, i64>(5)?.max(0) as u64,
                            event_id: row.get(6)?,
                            amount_minor: amount_of(row.get(7)?),
                            currency: row.get(8)?,
                            test_mode: row.get(9)?,
                            book: row.get(10)?,
                            source: EventSource::parse(&row.get::<_, String>(11)?),
                            replayed: row.get(12)?,
                            attempts: row.get::<_, i64>(13)?.saturating_sub(1).max(0) as u32,
                            body: row.get(14)?,
                        })
                    })?,
                );
            }
            Ok(events)
        })
    }

    fn complete<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()> {
        let (id, claim) = (id.to_owned(), claim.to_owned());
        self.run(move |tx, now| {
            let changed = tx
                .prepare_cached(
                    "UPDATE storefront_inbox_events SET state = 'completed', finished_at = ?1
                 WHERE id = ?2 AND claim = ?3 AND state = 'claimed'",
                )?
                .execute(params![now, id, claim])?;
            if changed != 1 {
                return Err(lost_or_missing(tx, &id)?);
            }
            tx.prepare_cached(
                "INSERT INTO storefront_inbox_bookings (event_id, order_no, inbox_id, booked_at)
                 SELECT event_id, order_no, id, ?1 FROM storefront_inbox_events
                 WHERE id = ?2 AND book = 1 AND event_id IS NOT NULL
                 ON CONFLICT (event_id) DO NOTHING",
            )?
            .execute(params![now, id])?;
            Ok(())
        })
    }

    fn release<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()> {
        let (id, claim) = (id.to_owned(), claim.to_owned());
        self.run(move |tx, _| {
            let changed = tx
                .prepare_cached(
                    "UPDATE storefront_inbox_events SET state = 'pending', claim = NULL,
                   lease_until = NULL WHERE id = ?1 AND claim = ?2 AND state = 'claimed'",
                )?
                .execute(params![id, claim])?;
            if changed != 1 {
                return Err(lost_or_missing(tx, &id)?);
            }
            Ok(())
        })
    }

    fn status(&self) -> InboxFuture<'_, InboxStatus> {
        self.run(move |tx, now| {
            let mut status = InboxStatus::default();
            let mut stmt = tx.prepare(
                "SELECT CASE WHEN state = 'claimed' AND lease_until <= ?1 THEN 'pending'
                   ELSE state END AS s, COUNT(*) FROM storefront_inbox_events GROUP BY s",
            )?;
            for row in stmt.query_map(params![now], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
            })? {
                let (state, count) = row?;
                let count = count.max(0) as u64;
                match state.as_str() {
                    "pending" => status.pending += count,
                    "claimed" => status.claimed += count,
                    "completed" => status.completed += count,
                    "stale" => status.stale += count,
                    "duplicate" => status.duplicate += count,
                    _ => {}
                }
            }
            let mut stmt = tx.prepare("SELECT reason, count FROM storefront_inbox_rejections")?;
            for row in stmt.query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
            })? {
                let (reason, count) = row?;
                status.rejected.insert(reason, count.max(0) as u64);
            }
            let mut stmt = tx.prepare("SELECT rule, count FROM storefront_inbox_violations")?;
            for row in stmt.query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
            })? {
                let (rule, count) = row?;
                status.contract_violations.insert(rule, count.max(0) as u64);
            }
            let oldest: Option<i64> = tx.query_row(
                "SELECT MIN(received_at) FROM storefront_inbox_events
                 WHERE state = 'pending' OR (state = 'claimed' AND lease_until <= ?1)",
                params![now],
                |row| row.get(0),
            )?;
            status.oldest_pending_ms = oldest.map(|at| now.saturating_sub(at).max(0) as u64);
            status.booked = tx
                .query_row(
                    "SELECT COUNT(*) FROM storefront_inbox_bookings",
                    [],
                    |row| row.get::<_, i64>(0),
                )?
                .max(0) as u64;
            Ok(status)
        })
    }

    fn purge(&self, older_than_ms: u64) -> InboxFuture<'_, u64> {
        self.run(move |tx, now| {
            let before = now.saturating_sub(int(older_than_ms));
            let n = tx
                .prepare_cached(
                    "DELETE FROM storefront_inbox_events
                 WHERE state IN ('completed', 'stale', 'duplicate') AND finished_at <= ?1",
                )?
                .execute(params![before])?;
            Ok(n as u64)
        })
    }

    fn replay<'a>(&'a self, which: &'a Replay) -> InboxFuture<'a, u64> {
        let which = which.clone();
        self.run(move |tx, _| {
            let n = match which {
                Replay::Event(id) => {
                    let n = tx
                        .prepare_cached(
                            "UPDATE storefront_inbox_events SET state = 'pending', replayed = 1,
                           claim = NULL, lease_until = NULL, finished_at = NULL
                         WHERE id = ?1 AND state IN ('completed', 'stale', 'duplicate')",
                        )?
                        .execute(params![id])?;
                    if n == 0 {
                        let exists: Option<i64> = tx
                            .query_row(
                                "SELECT 1 FROM storefront_inbox_events WHERE id = ?1",
                                params![id],
                                |row| row.get(0),
                            )
                            .optional()?;
                        if exists.is_none() {
                            return Err(InboxError::NotFound(id));
                        }
                    }
                    n
                }
                Replay::Received { from_ms, to_ms } => tx
                    .prepare_cached(
                        "UPDATE storefront_inbox_events SET state = 'pending', replayed = 1,
                       claim = NULL, lease_until = NULL, finished_at = NULL
                     WHERE state = 'completed' AND received_at >= ?1 AND received_at < ?2",
                    )?
                    .execute(params![from_ms, to_ms])?,
            };
            Ok(n as u64)
        })
    }

    fn watermarks(&self) -> InboxFuture<'_, Vec<Watermark>> {
        self.run(move |tx, _| {
            let mut stmt = tx.prepare(
                "SELECT w.order_no, w.external_reference, w.status_version, w.status,
                   w.amount_minor, w.currency,
                   (SELECT b.event_id FROM storefront_inbox_bookings b
                    WHERE b.order_no = w.order_no LIMIT 1)
                 FROM storefront_inbox_watermarks w ORDER BY w.order_no",
            )?;
            let rows = stmt
                .query_map([], |row| {
                    Ok(Watermark {
                        order_no: row.get(0)?,
                        external_reference: row.get(1)?,
                        status_version: row.get::<_, i64>(2)?.max(0) as u64,
                        status: status_of(&row.get::<_, String>(3)?),
                        amount_minor: amount_of(row.get(4)?),
                        currency: row.get(5)?,
                        booked_event_id: row.get(6)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    fn completion_sql(&self) -> &'static str {
        COMPLETION_SQL
    }
}

/// The payment's watermark, the highest version whose state the app has, raised to event
/// `id`'s (a replay of an older event leaves it).
fn raise_watermark(tx: &Transaction<'_>, id: &str, now: i64) -> InboxResult<()> {
    tx.prepare_cached(
        "INSERT INTO storefront_inbox_watermarks (order_no, external_reference, status,
           status_version, amount_minor, currency, event_ref, updated_at)
         SELECT order_no, external_reference, status, status_version, amount_minor, currency,
           id, ?2 FROM storefront_inbox_events WHERE id = ?1
         ON CONFLICT (order_no) DO UPDATE SET status = excluded.status,
           status_version = excluded.status_version, event_ref = excluded.event_ref,
           updated_at = excluded.updated_at
         WHERE excluded.status_version >= storefront_inbox_watermarks.status_version",
    )?
    .execute(params![id, now])?;
    Ok(())
}

/// Whether event `id` (payment `order_no`, version `version`, claimed `attempts` times) must
/// never be handed out: the payment's watermark is above it, or equal under another event, or
/// equal under this id for a row never claimed (a very late redelivery of a notification whose
/// row retention already purged), or another open event of the payment has a higher version.
fn superseded(
    tx: &Transaction<'_>,
    id: &str,
    order_no: &str,
    version: i64,
    attempts: i64,
) -> InboxResult<bool> {
    let mark: Option<(i64, String)> = tx
        .prepare_cached(
            "SELECT status_version, event_ref FROM storefront_inbox_watermarks WHERE order_no = ?1",
        )?
        .query_row(params![order_no], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    if let Some((handed, by)) = mark
        && (handed > version || (handed == version && (by != id || attempts == 0)))
    {
        return Ok(true);
    }
    let newer: Option<i64> = tx
        .prepare_cached(
            "SELECT 1 FROM storefront_inbox_events WHERE order_no = ?1
               AND state IN ('pending', 'claimed') AND status_version > ?2 LIMIT 1",
        )?
        .query_row(params![order_no, version], |row| row.get(0))
        .optional()?;
    Ok(newer.is_some())
}

/// After a completion or release changed nothing: the lease was lost, or there is no such
/// event.
fn lost_or_missing(tx: &Transaction<'_>, id: &str) -> InboxResult<InboxError> {
    let exists: Option<i64> = tx
        .query_row(
            "SELECT 1 FROM storefront_inbox_events WHERE id = ?1",
            params![id],
            |row| row.get(0),
        )
        .optional()?;
    Ok(match exists {
        Some(_) => InboxError::LeaseLost(id.to_owned()),
        None => InboxError::NotFound(id.to_owned()),
    })
}
