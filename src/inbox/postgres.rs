//! The inbox on PostgreSQL: many hosts, any number of receiver and worker processes on each,
//! with exactly the semantics of the SQLite backend ([`super::sqlite`], the reference): the same
//! tables and columns, each operation one transaction with the database's clock
//! (`clock_timestamp()` in milliseconds, read once the operation's locks are held, so hosts with
//! other clocks agree on leases and retention).
//!
//! Concurrency across hosts (PostgreSQL runs these transactions at READ COMMITTED):
//! - [`InboxStore::insert`] holds a per-payment advisory lock (keyed by `order_no`) while it
//!   reads the watermark, stores the notification (`INSERT … ON CONFLICT (id) DO NOTHING`:
//!   "deduplicate by notification `id`" even when two receivers store one id at once) and raises
//!   the watermark, so two receivers storing two versions of one payment at once keep "a lower
//!   version must not overwrite a higher one".
//! - [`InboxStore::claim`] holds one advisory lock for every claim of the database, so no event
//!   is handed to two workers and no payment has two events out at once. It touches a
//!   payment's rows only once it holds that payment's lock too (`pg_try_advisory_xact_lock`: a
//!   payment being stored right now is left for the next claim, so claims and receivers never
//!   deadlock on row locks), and every state change it makes is conditional on the row still
//!   waiting, so a late completion is never overwritten.
//!
//! The tables are created on first use of each connection (`CREATE TABLE IF NOT EXISTS`, under
//! an advisory lock so that processes starting together do not collide). The connection opens on
//! the first operation (never in [`PostgresInbox::new`]: a forked worker opens its own) and is
//! opened again after it breaks. Errors carry the server's message, never the URL or password.

use std::collections::HashSet;
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::{Client, NoTls, Row, Transaction};

use super::{
    EventSource, InboxError, InboxEvent, InboxFuture, InboxResult, InboxStatus, InboxStore,
    Incoming, Inserted, Replay, Watermark, amount_of, status_of,
};
use crate::secret::Secret;

/// The tables (the same names and columns as [`super::sqlite::SCHEMA`]; integers are `BIGINT`,
/// flags `BOOLEAN`), created in one transaction under an advisory lock. `seq` orders events as
/// received.
const SCHEMA: &str = r#"
BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended('storefront_inbox_schema', 0));
CREATE TABLE IF NOT EXISTS storefront_inbox_events (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    order_no TEXT NOT NULL,
    external_reference TEXT NOT NULL,
    status TEXT NOT NULL,
    status_version BIGINT NOT NULL,
    event_id TEXT,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    test_mode BOOLEAN NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    claim TEXT,
    lease_until BIGINT,
    attempts BIGINT NOT NULL DEFAULT 0,
    book BOOLEAN NOT NULL DEFAULT FALSE,
    replayed BOOLEAN NOT NULL DEFAULT FALSE,
    received_at BIGINT NOT NULL,
    finished_at BIGINT);
CREATE INDEX IF NOT EXISTS storefront_inbox_events_state ON storefront_inbox_events (state, seq);
CREATE INDEX IF NOT EXISTS storefront_inbox_events_order ON storefront_inbox_events (order_no, state);
CREATE TABLE IF NOT EXISTS storefront_inbox_watermarks (
    order_no TEXT PRIMARY KEY,
    external_reference TEXT NOT NULL,
    status TEXT NOT NULL,
    status_version BIGINT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    updated_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_inbox_bookings (
    event_id TEXT PRIMARY KEY,
    order_no TEXT NOT NULL,
    inbox_id TEXT NOT NULL,
    booked_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_inbox_rejections (
    reason TEXT PRIMARY KEY,
    count BIGINT NOT NULL);
COMMIT;
"#;

/// The statements that complete an event in the app's own transaction (see
/// [`super::Inbox::completion_sql`]): `$1` is the event id, `$2` its claim token. The first
/// must change exactly one row (else the lease was lost: roll back); the second books the
/// payment event once ("book payments idempotently by `data.event_id`").
const COMPLETION_SQL: &str = "\
UPDATE storefront_inbox_events SET state = 'completed', finished_at = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint WHERE id = $1 AND claim = $2 AND state = 'claimed';
INSERT INTO storefront_inbox_bookings (event_id, order_no, inbox_id, booked_at) SELECT event_id, order_no, id, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM storefront_inbox_events WHERE id = $1 AND claim = $2 AND book AND event_id IS NOT NULL ON CONFLICT (event_id) DO NOTHING;";

/// The database's clock in milliseconds since the epoch (read after the locks are taken).
const NOW: &str = "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// The lock every claim of the database holds: no event is handed to two workers, no payment
/// has two events out at once.
const CLAIM_LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtextextended('storefront_inbox_claim', 0))";

/// The per-payment lock a receiver holds while it stores an event and raises the watermark ("a
/// lower version must not overwrite a higher one", also when two receivers store two versions
/// of one payment at once).
const ORDER_LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtextextended('storefront_inbox_order:' || $1, 0))";

/// [`ORDER_LOCK`] for a claim: taken if free, else the payment is left for the next claim.
const ORDER_TRY_LOCK: &str =
    "SELECT pg_try_advisory_xact_lock(hashtextextended('storefront_inbox_order:' || $1, 0))";

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The inbox in one PostgreSQL database (many hosts).
pub(crate) struct PostgresInbox {
    config: tokio_postgres::Config,
    /// The URL's password, removed from any error text.
    password: Option<Secret>,
    /// The open connection (`None` before the first operation and after it broke); held for
    /// the whole transaction of an operation.
    client: Mutex<Option<Client>>,
}

/// Why an operation's transaction failed: the database (mapped to [`InboxError::Store`]
/// without the password), or the inbox's own answer (lease lost, not found).
enum Fail {
    Pg(tokio_postgres::Error),
    Inbox(InboxError),
}

impl From<tokio_postgres::Error> for Fail {
    fn from(e: tokio_postgres::Error) -> Self {
        Fail::Pg(e)
    }
}

impl From<InboxError> for Fail {
    fn from(e: InboxError) -> Self {
        Fail::Inbox(e)
    }
}

/// The outcome of one operation's transaction.
type TxResult<T> = Result<T, Fail>;

/// Runs `$op(&tx, args…)` in one transaction on the (re)opened connection and commits: "store
/// the notification reliably before returning" (an insert is acknowledged only once committed).
macro_rules! in_transaction {
    ($self:ident, $op:ident ( $($arg:expr),* $(,)? )) => {{
        let mut slot = $self.connection().await?;
        let outcome: TxResult<_> = async {
            let Some(client) = slot.as_mut() else {
                return Err(Fail::Inbox(InboxError::Store("postgres: no connection".into())));
            };
            let tx = client.transaction().await?;
            let value = $op(&tx, $($arg),*).await?;
            tx.commit().await?;
            Ok(value)
        }
        .await;
        $self.settle(&mut slot, outcome)
    }};
}

impl PostgresInbox {
    /// An inbox on the database at `url`; the URL is only parsed here (nothing connects until
    /// the first operation), and a bad one is a [`InboxError::Config`] without its text.
    pub fn new(url: &Secret) -> InboxResult<Self> {
        let mut config: tokio_postgres::Config = url
            .expose()
            .parse()
            .map_err(|_| InboxError::Config("inbox: not a usable postgres URL".to_owned()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let password = config
            .get_password()
            .map(|p| Secret::new(String::from_utf8_lossy(p).into_owned()));
        Ok(PostgresInbox {
            config,
            password,
            client: Mutex::new(None),
        })
    }

    /// The error's text (with the server's message) without the URL's password.
    fn error(&self, e: &tokio_postgres::Error) -> InboxError {
        let mut text = match e.as_db_error() {
            Some(db) => format!("postgres: {e}: {}", db.message()),
            None => format!("postgres: {e}"),
        };
        if let Some(pw) = self.password.as_ref().filter(|p| !p.is_empty()) {
            text = text.replace(pw.expose(), "[REDACTED]");
        }
        InboxError::Store(text)
    }

    /// The open connection (locked for one operation), connecting and creating the tables
    /// first if there is none or it broke.
    async fn connection(&self) -> InboxResult<MutexGuard<'_, Option<Client>>> {
        let mut slot = self.client.lock().await;
        if slot.as_ref().is_some_and(|c| !c.is_closed()) {
            return Ok(slot);
        }
        *slot = None;
        let (client, connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(|e| self.error(&e))?;
        tokio::spawn(async move {
            // Ends when the server closes or the client is dropped; the next operation sees
            // `is_closed` and connects again.
            let _ = connection.await;
        });
        client
            .batch_execute(SCHEMA)
            .await
            .map_err(|e| self.error(&e))?;
        *slot = Some(client);
        Ok(slot)
    }

    /// Maps a transaction's outcome; a connection-level error (no SQLSTATE) drops the
    /// connection, so the next operation connects again (the object is never recreated).
    fn settle<T>(&self, slot: &mut Option<Client>, outcome: TxResult<T>) -> InboxResult<T> {
        match outcome {
            Ok(value) => Ok(value),
            Err(Fail::Inbox(e)) => Err(e),
            Err(Fail::Pg(e)) => {
                if e.is_closed() || e.code().is_none() {
                    *slot = None;
                }
                Err(self.error(&e))
            }
        }
    }
}

/// An amount or version as PostgreSQL stores it (`BIGINT` is signed 64-bit).
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The database's clock, ms since the epoch.
async fn now(tx: &Transaction<'_>) -> TxResult<i64> {
    Ok(tx.query_one(NOW, &[]).await?.try_get(0)?)
}

/// "Store the notification reliably before returning", "deduplicate by notification `id`"
/// (`ON CONFLICT (id) DO NOTHING`), and "a lower version must not overwrite a higher one": under
/// the payment's lock, a version at or below the watermark is stored as `stale`; a higher one
/// raises the watermark and supersedes the payment's waiting events of lower versions.
async fn insert_tx(tx: &Transaction<'_>, e: &Incoming) -> TxResult<Inserted> {
    tx.execute(ORDER_LOCK, &[&e.order_no]).await?;
    let now = now(tx).await?;
    let watermark: Option<i64> = match tx
        .query_opt(
            "SELECT status_version FROM storefront_inbox_watermarks WHERE order_no = $1",
            &[&e.order_no],
        )
        .await?
    {
        Some(row) => Some(row.try_get(0)?),
        None => None,
    };
    let version = int(e.status_version);
    let stale = watermark.is_some_and(|w| version <= w);
    let amount = int(e.amount_minor);
    let finished_at: Option<i64> = stale.then_some(now);
    let stored = tx
        .execute(
            "INSERT INTO storefront_inbox_events (id, source, order_no, external_reference,
               status, status_version, event_id, amount_minor, currency, test_mode, body,
               state, received_at, finished_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
             ON CONFLICT (id) DO NOTHING",
            &[
                &e.id,
                &e.source.as_str(),
                &e.order_no,
                &e.external_reference,
                &e.status,
                &version,
                &e.event_id,
                &amount,
                &e.currency,
                &e.test_mode,
                &e.body,
                &if stale { "stale" } else { "pending" },
                &now,
                &finished_at,
            ],
        )
        .await?;
    if stored == 0 {
        return Ok(Inserted::Duplicate);
    }
    if stale {
        return Ok(Inserted::Stale);
    }
    tx.execute(
        "INSERT INTO storefront_inbox_watermarks (order_no, external_reference, status,
           status_version, amount_minor, currency, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (order_no) DO UPDATE SET status = excluded.status,
           status_version = excluded.status_version, updated_at = excluded.updated_at",
        &[
            &e.order_no,
            &e.external_reference,
            &e.status,
            &version,
            &amount,
            &e.currency,
            &now,
        ],
    )
    .await?;
    // A waiting event of the same payment is superseded: the app only moves forward.
    tx.execute(
        "UPDATE storefront_inbox_events SET state = 'stale', finished_at = $1
         WHERE order_no = $2 AND state = 'pending' AND NOT replayed AND status_version < $3",
        &[&now, &e.order_no, &version],
    )
    .await?;
    Ok(Inserted::Stored)
}

/// Counts a refused delivery per reason (never stored: only verified notifications are).
async fn reject_tx(tx: &Transaction<'_>, reason: &str) -> TxResult<()> {
    tx.execute(
        "INSERT INTO storefront_inbox_rejections (reason, count) VALUES ($1, 1)
         ON CONFLICT (reason) DO UPDATE SET count = storefront_inbox_rejections.count + 1",
        &[&reason],
    )
    .await?;
    Ok(())
}

/// The condition of an event waiting for a worker (`$1` is now): pending, or claimed with its
/// lease run out.
const WAITING: &str = "(state = 'pending' OR (state = 'claimed' AND lease_until <= $1))";

/// Hands out up to `n` waiting events, oldest first, at most one per payment and none of a
/// payment with an event out under a live lease, all under the claim lock (and each payment's
/// rows under its receivers' lock, taken if free). "A lower version must
/// not overwrite a higher one": an event below its payment's watermark becomes `stale`. "Book
/// payments idempotently by `data.event_id`": a `paid` event whose `event_id` is booked becomes
/// a `duplicate` without being handed out (unless replayed), and `book` is set for the first
/// event handed out that carries a not-yet-booked `event_id` (paid, or refunded or chargeback
/// when the paid event was superseded before a worker took it).
async fn claim_tx(
    tx: &Transaction<'_>,
    n: u32,
    lease_ms: u64,
    claim: &str,
) -> TxResult<Vec<InboxEvent>> {
    tx.execute(CLAIM_LOCK, &[]).await?;
    let now = now(tx).await?;
    let lease_until = now.saturating_add(int(lease_ms));
    // Payments with an event out under a live lease wait.
    let mut busy = HashSet::new();
    for row in tx
        .query(
            "SELECT DISTINCT order_no FROM storefront_inbox_events
             WHERE state = 'claimed' AND lease_until > $1",
            &[&now],
        )
        .await?
    {
        busy.insert(row.try_get::<_, String>(0)?);
    }
    let limit = i64::from(n).saturating_mul(8).saturating_add(64);
    let candidates = tx
        .query(
            "SELECT e.id, e.order_no, e.status_version, e.status, e.event_id,
               COALESCE(w.status_version, e.status_version), e.replayed,
               EXISTS (SELECT 1 FROM storefront_inbox_bookings b WHERE b.event_id = e.event_id)
             FROM storefront_inbox_events e
             LEFT JOIN storefront_inbox_watermarks w ON w.order_no = e.order_no
             WHERE e.state = 'pending' OR (e.state = 'claimed' AND e.lease_until <= $1)
             ORDER BY e.seq LIMIT $2",
            &[&now, &limit],
        )
        .await?;
    let mut events = Vec::new();
    for row in candidates {
        if events.len() >= n as usize {
            break;
        }
        let id: String = row.try_get(0)?;
        let order_no: String = row.try_get(1)?;
        let version: i64 = row.try_get(2)?;
        let status: String = row.try_get(3)?;
        let event_id: Option<String> = row.try_get(4)?;
        let watermark: i64 = row.try_get(5)?;
        let replayed: bool = row.try_get(6)?;
        // Any state carrying an `event_id` (paid, and refunded or chargeback after it) is a
        // confirmed payment event: booked once, whichever state the app first sees.
        let booked = event_id.is_some() && row.try_get::<_, bool>(7)?;
        let stale = !replayed && version < watermark;
        if !stale && busy.contains(&order_no) {
            continue;
        }
        // The payment's lock before touching its rows (so a receiver superseding them, which
        // holds it, never waits on this claim's row locks while this claim waits on its own);
        // a payment being stored right now waits for the next claim.
        if !tx
            .query_one(ORDER_TRY_LOCK, &[&order_no])
            .await?
            .try_get::<_, bool>(0)?
        {
            continue;
        }
        if stale {
            // A newer state of the payment arrived: this one is never handed out.
            tx.execute(
                &format!(
                    "UPDATE storefront_inbox_events SET state = 'stale', finished_at = $1,
                       claim = NULL, lease_until = NULL WHERE id = $2 AND {WAITING}"
                ),
                &[&now, &id],
            )
            .await?;
            continue;
        }
        if booked && !replayed && status == "paid" {
            // The payment event reached the app under another id: once is enough.
            tx.execute(
                &format!(
                    "UPDATE storefront_inbox_events SET state = 'duplicate', finished_at = $1,
                       claim = NULL, lease_until = NULL WHERE id = $2 AND {WAITING}"
                ),
                &[&now, &id],
            )
            .await?;
            continue;
        }
        let book = event_id.is_some() && !booked;
        let taken = tx
            .query_opt(
                &format!(
                    "UPDATE storefront_inbox_events SET state = 'claimed', claim = $2,
                       lease_until = $3, attempts = attempts + 1, book = $4
                     WHERE id = $5 AND {WAITING}
                     RETURNING id, claim, order_no, external_reference, status, status_version,
                       event_id, amount_minor, currency, test_mode, book, source, replayed,
                       attempts, body"
                ),
                &[&now, &claim, &lease_until, &book, &id],
            )
            .await?;
        // Nothing when a receiver superseded it or its worker completed it meanwhile.
        if let Some(taken) = taken {
            events.push(event_of(&taken)?);
            busy.insert(order_no);
        }
    }
    Ok(events)
}

/// A claimed row as handed to the app.
fn event_of(row: &Row) -> Result<InboxEvent, tokio_postgres::Error> {
    Ok(InboxEvent {
        id: row.try_get(0)?,
        claim: row.try_get(1)?,
        order_no: row.try_get(2)?,
        external_reference: row.try_get(3)?,
        status: status_of(row.try_get::<_, &str>(4)?),
        status_version: row.try_get::<_, i64>(5)?.max(0) as u64,
        event_id: row.try_get(6)?,
        amount_minor: amount_of(row.try_get(7)?),
        currency: row.try_get(8)?,
        test_mode: row.try_get(9)?,
        book: row.try_get(10)?,
        source: EventSource::parse(row.try_get::<_, &str>(11)?),
        replayed: row.try_get(12)?,
        attempts: u32::try_from(row.try_get::<_, i64>(13)?.saturating_sub(1).max(0))
            .unwrap_or(u32::MAX),
        body: row.try_get(14)?,
    })
}

/// Marks a claimed event handled and, for a `book` event, records its booking once ("book
/// payments idempotently by `data.event_id`"); a claim whose lease was lost changes nothing.
async fn complete_tx(tx: &Transaction<'_>, id: &str, claim: &str) -> TxResult<()> {
    let now = now(tx).await?;
    let changed = tx
        .execute(
            "UPDATE storefront_inbox_events SET state = 'completed', finished_at = $1
             WHERE id = $2 AND claim = $3 AND state = 'claimed'",
            &[&now, &id, &claim],
        )
        .await?;
    if changed != 1 {
        return Err(lost_or_missing(tx, id).await?.into());
    }
    tx.execute(
        "INSERT INTO storefront_inbox_bookings (event_id, order_no, inbox_id, booked_at)
         SELECT event_id, order_no, id, $1 FROM storefront_inbox_events
         WHERE id = $2 AND book AND event_id IS NOT NULL
         ON CONFLICT (event_id) DO NOTHING",
        &[&now, &id],
    )
    .await?;
    Ok(())
}

/// Gives a claimed event back: it waits for a worker again at once.
async fn release_tx(tx: &Transaction<'_>, id: &str, claim: &str) -> TxResult<()> {
    let changed = tx
        .execute(
            "UPDATE storefront_inbox_events SET state = 'pending', claim = NULL,
               lease_until = NULL WHERE id = $1 AND claim = $2 AND state = 'claimed'",
            &[&id, &claim],
        )
        .await?;
    if changed != 1 {
        return Err(lost_or_missing(tx, id).await?.into());
    }
    Ok(())
}

/// Counts per state (a claim whose lease ran out counts as pending), rejections per reason,
/// the oldest waiting event's age and the bookings.
async fn status_tx(tx: &Transaction<'_>) -> TxResult<InboxStatus> {
    let now = now(tx).await?;
    let mut status = InboxStatus::default();
    for row in tx
        .query(
            "SELECT CASE WHEN state = 'claimed' AND lease_until <= $1 THEN 'pending'
               ELSE state END AS s, count(*) FROM storefront_inbox_events GROUP BY 1",
            &[&now],
        )
        .await?
    {
        let state: &str = row.try_get(0)?;
        let count = row.try_get::<_, i64>(1)?.max(0) as u64;
        match state {
            "pending" => status.pending += count,
            "claimed" => status.claimed += count,
            "completed" => status.completed += count,
            "stale" => status.stale += count,
            "duplicate" => status.duplicate += count,
            _ => {}
        }
    }
    for row in tx
        .query("SELECT reason, count FROM storefront_inbox_rejections", &[])
        .await?
    {
        let count = row.try_get::<_, i64>(1)?.max(0) as u64;
        status.rejected.insert(row.try_get(0)?, count);
    }
    let oldest: Option<i64> = tx
        .query_one(
            &format!(
                "SELECT min(received_at) FROM storefront_inbox_events
                 WHERE {WAITING}"
            ),
            &[&now],
        )
        .await?
        .try_get(0)?;
    status.oldest_pending_ms = oldest.map(|at| now.saturating_sub(at).max(0) as u64);
    status.booked = tx
        .query_one("SELECT count(*) FROM storefront_inbox_bookings", &[])
        .await?
        .try_get::<_, i64>(0)?
        .max(0) as u64;
    Ok(status)
}

/// Deletes finished rows older than the retention; watermarks and bookings stay (they make a
/// very late duplicate stale and a booking once).
async fn purge_tx(tx: &Transaction<'_>, older_than_ms: u64) -> TxResult<u64> {
    let now = now(tx).await?;
    let before = now.saturating_sub(int(older_than_ms));
    Ok(tx
        .execute(
            "DELETE FROM storefront_inbox_events
             WHERE state IN ('completed', 'stale', 'duplicate') AND finished_at < $1",
            &[&before],
        )
        .await?)
}

/// Hands finished events out again (`replayed`: never superseded, never a duplicate; `book`
/// only if the payment event is still not booked).
async fn replay_tx(tx: &Transaction<'_>, which: &Replay) -> TxResult<u64> {
    match which {
        Replay::Event(id) => {
            let n = tx
                .execute(
                    "UPDATE storefront_inbox_events SET state = 'pending', replayed = TRUE,
                       claim = NULL, lease_until = NULL, finished_at = NULL
                     WHERE id = $1 AND state IN ('completed', 'stale', 'duplicate')",
                    &[id],
                )
                .await?;
            if n == 0
                && tx
                    .query_opt("SELECT 1 FROM storefront_inbox_events WHERE id = $1", &[id])
                    .await?
                    .is_none()
            {
                return Err(InboxError::NotFound(id.clone()).into());
            }
            Ok(n)
        }
        Replay::Received { from_ms, to_ms } => Ok(tx
            .execute(
                "UPDATE storefront_inbox_events SET state = 'pending', replayed = TRUE,
                   claim = NULL, lease_until = NULL, finished_at = NULL
                 WHERE state = 'completed' AND received_at >= $1 AND received_at < $2",
                &[from_ms, to_ms],
            )
            .await?),
    }
}

/// Every payment's watermark (the highest `status_version` received) and booking.
async fn watermarks_tx(tx: &Transaction<'_>) -> TxResult<Vec<Watermark>> {
    let rows = tx
        .query(
            "SELECT w.order_no, w.external_reference, w.status_version, w.status,
               w.amount_minor, w.currency,
               (SELECT b.event_id FROM storefront_inbox_bookings b
                WHERE b.order_no = w.order_no LIMIT 1)
             FROM storefront_inbox_watermarks w ORDER BY w.order_no",
            &[],
        )
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(Watermark {
            order_no: row.try_get(0)?,
            external_reference: row.try_get(1)?,
            status_version: row.try_get::<_, i64>(2)?.max(0) as u64,
            status: status_of(row.try_get::<_, &str>(3)?),
            amount_minor: amount_of(row.try_get(4)?),
            currency: row.try_get(5)?,
            booked_event_id: row.try_get(6)?,
        });
    }
    Ok(out)
}

/// After a completion or release changed nothing: the lease was lost, or there is no such
/// event.
async fn lost_or_missing(tx: &Transaction<'_>, id: &str) -> TxResult<InboxError> {
    let exists = tx
        .query_opt(
            "SELECT 1 FROM storefront_inbox_events WHERE id = $1",
            &[&id],
        )
        .await?
        .is_some();
    Ok(if exists {
        InboxError::LeaseLost(id.to_owned())
    } else {
        InboxError::NotFound(id.to_owned())
    })
}

impl InboxStore for PostgresInbox {
    /// "Store the notification reliably before returning" (committed before the receipt),
    /// "deduplicate by notification `id`", "a lower version must not overwrite a higher one".
    fn insert<'a>(&'a self, event: &'a Incoming) -> InboxFuture<'a, Inserted> {
        Box::pin(async move { in_transaction!(self, insert_tx(event)) })
    }

    /// Counts a delivery refused by verification.
    fn reject<'a>(&'a self, reason: &'a str) -> InboxFuture<'a, ()> {
        Box::pin(async move { in_transaction!(self, reject_tx(reason)) })
    }

    /// Claims under the database-wide claim lock: one worker per event, one event per payment.
    fn claim<'a>(
        &'a self,
        n: u32,
        lease_ms: u64,
        claim: &'a str,
    ) -> InboxFuture<'a, Vec<InboxEvent>> {
        Box::pin(async move { in_transaction!(self, claim_tx(n, lease_ms, claim)) })
    }

    /// Completes a claimed event; "book payments idempotently by `data.event_id`".
    fn complete<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()> {
        Box::pin(async move { in_transaction!(self, complete_tx(id, claim)) })
    }

    /// Gives a claimed event back.
    fn release<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()> {
        Box::pin(async move { in_transaction!(self, release_tx(id, claim)) })
    }

    /// Counts for operators.
    fn status(&self) -> InboxFuture<'_, InboxStatus> {
        Box::pin(async move { in_transaction!(self, status_tx()) })
    }

    /// Retention of finished rows; watermarks and bookings are kept.
    fn purge(&self, older_than_ms: u64) -> InboxFuture<'_, u64> {
        Box::pin(async move { in_transaction!(self, purge_tx(older_than_ms)) })
    }

    /// Hands finished events out again.
    fn replay<'a>(&'a self, which: &'a Replay) -> InboxFuture<'a, u64> {
        Box::pin(async move { in_transaction!(self, replay_tx(which)) })
    }

    /// The payments' watermarks for the reconciler.
    fn watermarks(&self) -> InboxFuture<'_, Vec<Watermark>> {
        Box::pin(async move { in_transaction!(self, watermarks_tx()) })
    }

    /// `$1` = event id, `$2` = claim token; see [`COMPLETION_SQL`].
    fn completion_sql(&self) -> &'static str {
        COMPLETION_SQL
    }
}
