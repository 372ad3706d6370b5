//! The inbox on PostgreSQL: many hosts, any number of receiver and worker processes on each,
//! with exactly the semantics of the SQLite backend ([`super::sqlite`], the reference): the same
//! tables and columns, each operation one transaction with the database's clock
//! (`clock_timestamp()` in milliseconds, read once the operation's locks are held, so hosts with
//! other clocks agree on leases and retention).
//!
//! Each operation is ONE statement, so one round trip and one implicit transaction: receiving
//! is one prepared `INSERT … ON CONFLICT (id) DO NOTHING`; the other hot ones (claim, complete,
//! release) call PL/pgSQL functions created with the tables (`storefront_inbox_claim`,
//! `storefront_inbox_complete`, `storefront_inbox_release`), prepared once per connection; the
//! others are single statements. No operation opens an explicit transaction, so concurrent
//! operations pipeline on one connection (tokio-postgres sends a request as soon as it is made)
//! and a few connections ([`CONNECTIONS`], used in turn) let the server run them in parallel.
//!
//! Concurrency across hosts (PostgreSQL runs these functions at READ COMMITTED, each statement
//! of a function with a fresh snapshot, like the statements of a transaction):
//! - [`InboxStore::insert`] takes no lock: it stores the notification as `pending`
//!   ("deduplicate by notification `id`" even when two receivers store one id at once, by the
//!   unique `id`) and neither reads nor writes the watermark, so receiving costs what a
//!   hand-written receiver's INSERT costs.
//! - [`InboxStore::claim`] holds one advisory lock for every claim of the database and decides
//!   the versions there ("a lower version must not overwrite a higher one"): the watermark is
//!   the highest `status_version` handed to the app (and the event that set it), written only
//!   under that lock, so no event is handed to two workers, no payment has two events out at
//!   once, and a payment's handed-out versions only rise. Every state change it makes is
//!   conditional on the row still being open, so a late completion is never overwritten.
//!
//! The tables and functions are created on first use of each connection (`CREATE TABLE IF NOT
//! EXISTS`, `CREATE OR REPLACE FUNCTION`, under an advisory lock so that processes starting
//! together do not collide). A connection opens on the first operation that uses it (never in
//! [`PostgresInbox::new`]: a forked worker opens its own) and is opened again after it breaks.
//! Errors carry the server's message, never the URL or password.
//!
//! Text values are stored with [`enc`]: PostgreSQL's `text` cannot hold U+0000, which the
//! contract's strings may carry, so such a value is stored in a one-to-one encoding and handed
//! back exactly as received (as on SQLite).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls, Row, Statement};

use super::{
    EventSource, InboxError, InboxEvent, InboxFuture, InboxResult, InboxStatus, InboxStore,
    Incoming, Inserted, Replay, Watermark, amount_of, status_of,
};
use crate::secret::Secret;

/// The tables (the same names and columns as [`super::sqlite::SCHEMA`]; integers are `BIGINT`,
/// flags `BOOLEAN`) and the operations' functions, created in one transaction under an advisory
/// lock. `seq` orders events as received. Nothing of the previous design (receive-time
/// watermarks) was released, so there is no migration: the old indexes and function are only
/// dropped if present.
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
-- The open events (waiting, or claimed): the claim's candidate scan, and its per-payment
-- "a newer open event" and "busy" checks.
CREATE INDEX IF NOT EXISTS storefront_inbox_events_open ON storefront_inbox_events (order_no, seq)
    WHERE state IN ('pending', 'claimed');
DROP INDEX IF EXISTS storefront_inbox_events_state;
DROP INDEX IF EXISTS storefront_inbox_events_order;
-- The highest status_version handed to the app per payment, and the event that set it
-- (written by storefront_inbox_claim only).
CREATE TABLE IF NOT EXISTS storefront_inbox_watermarks (
    order_no TEXT PRIMARY KEY,
    external_reference TEXT NOT NULL,
    status TEXT NOT NULL,
    status_version BIGINT NOT NULL,
    event_ref TEXT NOT NULL,
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
-- The payment that owns each event_id ("stable unique payment event number"): the first one
-- stored with it; an event of another payment carrying it is not stored.
CREATE TABLE IF NOT EXISTS storefront_inbox_event_ids (
    event_id TEXT PRIMARY KEY,
    order_no TEXT NOT NULL);
-- Verified deliveries refused for breaking the contract, per rule.
CREATE TABLE IF NOT EXISTS storefront_inbox_violations (
    rule TEXT PRIMARY KEY,
    count BIGINT NOT NULL);
-- Receiving is one INSERT now (INSERT above); versions are ordered by the claim.
DROP FUNCTION IF EXISTS storefront_inbox_insert(TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT,
    BIGINT, TEXT, BOOLEAN, TEXT);

-- Hands out up to p_n open events (pending, or claimed with the lease run out), oldest first,
-- under the claim lock, and decides "a lower version must not overwrite a higher one" here:
-- unless replayed, an event becomes 'stale' when its payment's watermark (the highest version
-- handed out) is above it, or equal but set by another event, or equal and set under its id
-- while this row was never claimed (a very late redelivery of a notification whose row
-- retention purged), or when another open event of the payment has a higher version (only the
-- highest open version is handed out). A payment with an event out under a live lease (or
-- taken by this claim) waits. A 'paid' event whose event_id is booked becomes a 'duplicate'
-- (unless replayed); book is set for the first event handed out that carries a not-yet-booked
-- event_id. An event handed out raises its payment's
-- watermark (a replayed one never lowers it). Every change to an event is conditional on the
-- row still being open, so a late completion or release is never overwritten.
CREATE OR REPLACE FUNCTION storefront_inbox_claim(p_n BIGINT, p_lease_ms BIGINT, p_claim TEXT)
RETURNS TABLE (o_id TEXT, o_claim TEXT, o_order_no TEXT, o_external_reference TEXT,
    o_status TEXT, o_status_version BIGINT, o_event_id TEXT, o_amount_minor BIGINT,
    o_currency TEXT, o_test_mode BOOLEAN, o_book BOOLEAN, o_source TEXT, o_replayed BOOLEAN,
    o_attempts BIGINT, o_body TEXT) LANGUAGE plpgsql AS $fn$
DECLARE
    v_now BIGINT;
    v_lease_until BIGINT;
    v_taken_orders TEXT[] := '{}';
    v_taken BIGINT := 0;
    v_rows BIGINT;
    v_mark_version BIGINT;
    v_mark_ref TEXT;
    v_newer BOOLEAN;
    v_busy BOOLEAN;
    v_booked BOOLEAN;
    c RECORD;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('storefront_inbox_claim', 0));
    v_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    v_lease_until := v_now + LEAST(GREATEST(p_lease_ms, 0), 9223372036854775807 - v_now);
    FOR c IN
        SELECT e.id, e.order_no, e.external_reference, e.status, e.status_version, e.event_id,
            e.amount_minor, e.currency, e.replayed, e.attempts
        FROM storefront_inbox_events e
        WHERE e.state IN ('pending', 'claimed')
          AND (e.state = 'pending' OR e.lease_until <= v_now)
        ORDER BY e.seq LIMIT p_n * 8 + 64
    LOOP
        EXIT WHEN v_taken >= p_n;
        -- The payment's watermark, whether another of its open events is newer, and whether
        -- it has an event out under a live lease (each statement sees this claim's changes).
        SELECT w.status_version, w.event_ref, o.newer, o.busy
            INTO v_mark_version, v_mark_ref, v_newer, v_busy
        FROM (SELECT
                coalesce(bool_or(x.status_version > c.status_version
                    AND (x.state = 'pending' OR x.lease_until <= v_now)), FALSE) AS newer,
                coalesce(bool_or(x.state = 'claimed' AND x.lease_until > v_now), FALSE) AS busy
              FROM storefront_inbox_events x
              WHERE x.order_no = c.order_no AND x.state IN ('pending', 'claimed')) o
        LEFT JOIN storefront_inbox_watermarks w ON w.order_no = c.order_no;
        IF NOT c.replayed AND (v_newer
            OR coalesce(v_mark_version > c.status_version
                OR (v_mark_version = c.status_version
                    AND (v_mark_ref <> c.id OR c.attempts = 0)), FALSE)) THEN
            -- A newer state of the payment was handed out or waits: never hand this one out.
            UPDATE storefront_inbox_events e SET state = 'stale', finished_at = v_now,
                claim = NULL, lease_until = NULL
            WHERE e.id = c.id
              AND (e.state = 'pending' OR (e.state = 'claimed' AND e.lease_until <= v_now));
            CONTINUE;
        END IF;
        CONTINUE WHEN v_busy OR c.order_no = ANY (v_taken_orders);
        -- Any state carrying an event_id (paid, and refunded or chargeback after it) is a
        -- confirmed payment event: booked once, whichever state the app first sees.
        v_booked := c.event_id IS NOT NULL AND EXISTS (
            SELECT 1 FROM storefront_inbox_bookings b WHERE b.event_id = c.event_id);
        IF v_booked AND NOT c.replayed AND c.status = 'paid' THEN
            -- The payment event reached the app under another id: once is enough. The app
            -- has this state (paid) already, so its version is the payment's watermark.
            UPDATE storefront_inbox_events e SET state = 'duplicate', finished_at = v_now,
                claim = NULL, lease_until = NULL
            WHERE e.id = c.id
              AND (e.state = 'pending' OR (e.state = 'claimed' AND e.lease_until <= v_now));
            INSERT INTO storefront_inbox_watermarks AS w (order_no, external_reference, status,
                status_version, event_ref, amount_minor, currency, updated_at)
            VALUES (c.order_no, c.external_reference, c.status, c.status_version, c.id,
                c.amount_minor, c.currency, v_now)
            ON CONFLICT (order_no) DO UPDATE SET status = excluded.status,
                status_version = excluded.status_version, event_ref = excluded.event_ref,
                updated_at = excluded.updated_at
            WHERE excluded.status_version > w.status_version;
            CONTINUE;
        END IF;
        RETURN QUERY
            UPDATE storefront_inbox_events e SET state = 'claimed', claim = p_claim,
                lease_until = v_lease_until, attempts = e.attempts + 1,
                book = (c.event_id IS NOT NULL AND NOT v_booked)
            WHERE e.id = c.id
              AND (e.state = 'pending' OR (e.state = 'claimed' AND e.lease_until <= v_now))
            RETURNING e.id, e.claim, e.order_no, e.external_reference, e.status,
                e.status_version, e.event_id, e.amount_minor, e.currency, e.test_mode, e.book,
                e.source, e.replayed, e.attempts, e.body;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        -- Nothing when its previous worker, whose lease ran out, completed it meanwhile.
        IF v_rows > 0 THEN
            v_taken := v_taken + 1;
            v_taken_orders := v_taken_orders || c.order_no;
            -- The highest version handed out (a replayed lower one leaves it).
            INSERT INTO storefront_inbox_watermarks AS w (order_no, external_reference, status,
                status_version, event_ref, amount_minor, currency, updated_at)
            VALUES (c.order_no, c.external_reference, c.status, c.status_version, c.id,
                c.amount_minor, c.currency, v_now)
            ON CONFLICT (order_no) DO UPDATE SET external_reference = excluded.external_reference,
                status = excluded.status, status_version = excluded.status_version,
                event_ref = excluded.event_ref, amount_minor = excluded.amount_minor,
                currency = excluded.currency, updated_at = excluded.updated_at
            WHERE excluded.status_version >= w.status_version;
        END IF;
    END LOOP;
END
$fn$;

-- Marks a claimed event handled and, for a book event, records its booking once ("book
-- payments idempotently by event_id"); a claim whose lease was lost changes nothing: 'lost',
-- or 'missing' without such an event.
CREATE OR REPLACE FUNCTION storefront_inbox_complete(p_id TEXT, p_claim TEXT)
RETURNS TEXT LANGUAGE plpgsql AS $fn$
DECLARE
    v_now BIGINT := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
    UPDATE storefront_inbox_events SET state = 'completed', finished_at = v_now
        WHERE id = p_id AND claim = p_claim AND state = 'claimed';
    IF NOT FOUND THEN
        IF EXISTS (SELECT 1 FROM storefront_inbox_events WHERE id = p_id) THEN
            RETURN 'lost';
        END IF;
        RETURN 'missing';
    END IF;
    INSERT INTO storefront_inbox_bookings (event_id, order_no, inbox_id, booked_at)
        SELECT e.event_id, e.order_no, e.id, v_now FROM storefront_inbox_events e
        WHERE e.id = p_id AND e.book AND e.event_id IS NOT NULL
        ON CONFLICT (event_id) DO NOTHING;
    RETURN 'done';
END
$fn$;

-- Gives a claimed event back: it waits for a worker again at once ('lost' or 'missing' as for
-- storefront_inbox_complete).
CREATE OR REPLACE FUNCTION storefront_inbox_release(p_id TEXT, p_claim TEXT)
RETURNS TEXT LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE storefront_inbox_events SET state = 'pending', claim = NULL, lease_until = NULL
        WHERE id = p_id AND claim = p_claim AND state = 'claimed';
    IF NOT FOUND THEN
        IF EXISTS (SELECT 1 FROM storefront_inbox_events WHERE id = p_id) THEN
            RETURN 'lost';
        END IF;
        RETURN 'missing';
    END IF;
    RETURN 'done';
END
$fn$;
COMMIT;
"#;

/// The statements that complete an event in the app's own transaction (see
/// [`super::Inbox::completion_sql`]): `$1` is the event id, `$2` its claim token. The first
/// must change exactly one row (else the lease was lost: roll back); the second books the
/// payment event once ("book payments idempotently by `data.event_id`").
const COMPLETION_SQL: &str = "\
UPDATE storefront_inbox_events SET state = 'completed', finished_at = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint WHERE id = $1 AND claim = $2 AND state = 'claimed';
INSERT INTO storefront_inbox_bookings (event_id, order_no, inbox_id, booked_at) SELECT event_id, order_no, id, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM storefront_inbox_events WHERE id = $1 AND claim = $2 AND book AND event_id IS NOT NULL ON CONFLICT (event_id) DO NOTHING;";

/// How many connections an inbox opens at most (each on its first use, used in turn): enough
/// for the server to run concurrent operations in parallel, each pipelining several.
const CONNECTIONS: usize = 4;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The hot operations' statements, prepared once per connection.
/// Receiving: one statement, no lock ("deduplicate by notification `id`": `ON CONFLICT (id) DO
/// NOTHING`, so no row inserted is a duplicate); the claim orders versions. An event carrying an
/// `event_id` first claims it for its payment (`ON CONFLICT … DO UPDATE` returns the owner that
/// committed first, even under concurrent receivers) and is stored only when its payment owns
/// it. Answers (rows stored, the event_id's owner).
const INSERT: &str = "WITH owner AS (
        INSERT INTO storefront_inbox_event_ids AS o (event_id, order_no)
        SELECT $7::text, $3::text WHERE $7::text IS NOT NULL
        ON CONFLICT (event_id) DO UPDATE SET event_id = o.event_id
        RETURNING o.order_no),
    stored AS (
        INSERT INTO storefront_inbox_events (id, source, order_no, external_reference, status,
            status_version, event_id, amount_minor, currency, test_mode, body, state, received_at)
        SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending',
            floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
        WHERE NOT EXISTS (SELECT 1 FROM owner WHERE owner.order_no <> $3::text)
        ON CONFLICT (id) DO NOTHING
        RETURNING 1)
    SELECT (SELECT count(*) FROM stored), (SELECT order_no FROM owner)";
const CLAIM: &str = "SELECT * FROM storefront_inbox_claim($1, $2, $3)";
const COMPLETE: &str = "SELECT storefront_inbox_complete($1, $2)";
const RELEASE: &str = "SELECT storefront_inbox_release($1, $2)";
/// Counts a refused delivery per reason (never stored: only verified notifications are).
const REJECT: &str = "INSERT INTO storefront_inbox_rejections (reason, count) VALUES ($1, 1)
    ON CONFLICT (reason) DO UPDATE SET count = storefront_inbox_rejections.count + 1";
/// Counts a verified delivery refused for breaking the contract, per rule.
const VIOLATION: &str = "INSERT INTO storefront_inbox_violations (rule, count) VALUES ($1, 1)
    ON CONFLICT (rule) DO UPDATE SET count = storefront_inbox_violations.count + 1";

/// The first character of a text value stored encoded (see [`enc`]).
const ENCODED: char = '\u{1}';

/// A text value as stored. PostgreSQL's `text` cannot hold U+0000, which the contract's strings
/// (`external_reference`, `order_no`, `event_id`, an unknown status, …) may carry, and the
/// inbox must hand back exactly what it received, on this backend as on SQLite. A value without
/// NUL that does not start with U+0001 is stored as it is (so [`COMPLETION_SQL`], bound by the
/// app's own driver, matches it); any other is stored as U+0001 followed by the lowercase hex of
/// its UTF-8 bytes. The encoding is one-to-one, so equality in SQL (dedupe, watermarks,
/// bookings, event ownership) is the values' equality, and [`dec`] restores the value exactly.
fn enc(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') || text.starts_with(ENCODED) {
        std::borrow::Cow::Owned(format!("{ENCODED}{}", hex::encode(text.as_bytes())))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A stored text value back as received (see [`enc`]).
fn dec(stored: String) -> OpResult<String> {
    match stored.strip_prefix(ENCODED) {
        None => Ok(stored),
        Some(hex_text) => hex::decode(hex_text)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| {
                Fail::Inbox(InboxError::Store(
                    "postgres: a stored text value is not in the inbox's encoding".to_owned(),
                ))
            }),
    }
}

/// [`dec`] of an optional value.
fn dec_opt(stored: Option<String>) -> OpResult<Option<String>> {
    stored.map(dec).transpose()
}

/// The database's clock in milliseconds since the epoch, read once per statement (a CTE with a
/// volatile function is evaluated once).
const NOW_CTE: &str =
    "WITH now AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)";

/// An open connection and its prepared statements.
struct Conn {
    client: Client,
    insert: Statement,
    claim: Statement,
    complete: Statement,
    release: Statement,
    reject: Statement,
    violation: Statement,
}

/// The inbox in one PostgreSQL database (many hosts).
pub(crate) struct PostgresInbox {
    config: tokio_postgres::Config,
    /// The URL's password, removed from any error text.
    password: Option<Secret>,
    /// The connections (`None` before their first use and after they broke); each slot is
    /// locked only to look at it or to connect, never across an operation.
    slots: [Mutex<Option<Arc<Conn>>>; CONNECTIONS],
    /// The slot the next operation uses.
    next: AtomicUsize,
}

/// Why an operation failed: the database (mapped to [`InboxError::Store`] without the
/// password), or the inbox's own answer (lease lost, not found).
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

/// The outcome of one operation.
type OpResult<T> = Result<T, Fail>;

/// Runs `$op(&conn, args…)` (one statement: one round trip, one implicit transaction committed
/// before it answers, so "store the notification reliably before returning" holds) on the next
/// (re)opened connection.
macro_rules! on_connection {
    ($self:ident, $op:ident ( $($arg:expr),* $(,)? )) => {{
        let (slot, conn) = $self.connection().await?;
        let outcome: OpResult<_> = $op(&conn, $($arg),*).await;
        $self.settle(slot, &conn, outcome).await
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
            slots: std::array::from_fn(|_| Mutex::new(None)),
            next: AtomicUsize::new(0),
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

    /// The next slot's open connection (shared: operations pipeline on it), connecting,
    /// creating the tables and functions and preparing the statements first if there is none
    /// or it broke.
    async fn connection(&self) -> InboxResult<(usize, Arc<Conn>)> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % CONNECTIONS;
        let mut slot = self.slots[i].lock().await;
        if let Some(conn) = slot.as_ref().filter(|c| !c.client.is_closed()) {
            return Ok((i, conn.clone()));
        }
        *slot = None;
        let conn = Arc::new(self.open().await.map_err(|e| self.error(&e))?);
        *slot = Some(conn.clone());
        Ok((i, conn))
    }

    /// A new connection with the tables, the functions and the prepared statements.
    async fn open(&self) -> Result<Conn, tokio_postgres::Error> {
        let (client, connection) = self.config.connect(NoTls).await?;
        tokio::spawn(async move {
            // Ends when the server closes or the client is dropped; the next operation on
            // this slot sees `is_closed` and connects again.
            let _ = connection.await;
        });
        client.batch_execute(SCHEMA).await?;
        // Prepared together: one round trip's wait for all six.
        let (insert, claim, complete, release, reject, violation) = tokio::try_join!(
            client.prepare(INSERT),
            client.prepare(CLAIM),
            client.prepare(COMPLETE),
            client.prepare(RELEASE),
            client.prepare(REJECT),
            client.prepare(VIOLATION),
        )?;
        Ok(Conn {
            client,
            insert,
            claim,
            complete,
            release,
            reject,
            violation,
        })
    }

    /// Maps an operation's outcome; a connection-level error (no SQLSTATE) drops the
    /// connection, so the next operation on its slot connects again (the object is never
    /// recreated).
    async fn settle<T>(
        &self,
        slot: usize,
        conn: &Arc<Conn>,
        outcome: OpResult<T>,
    ) -> InboxResult<T> {
        match outcome {
            Ok(value) => Ok(value),
            Err(Fail::Inbox(e)) => Err(e),
            Err(Fail::Pg(e)) => {
                if e.is_closed() || e.code().is_none() {
                    let mut current = self.slots[slot].lock().await;
                    if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
                        *current = None;
                    }
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

/// "Store the notification reliably before returning", "deduplicate by notification `id`": one
/// statement (no row inserted: the id was stored before, or the `event_id` is another
/// payment's). Text values are stored with [`enc`].
async fn insert_op(c: &Conn, e: &Incoming) -> OpResult<Inserted> {
    let order_no = enc(&e.order_no);
    let event_id = e.event_id.as_deref().map(enc);
    let row = c
        .client
        .query_one(
            &c.insert,
            &[
                &enc(&e.id),
                &e.source.as_str(),
                &order_no,
                &enc(&e.external_reference),
                &enc(&e.status),
                &int(e.status_version),
                &event_id,
                &int(e.amount_minor),
                &enc(&e.currency),
                &e.test_mode,
                &enc(&e.body),
            ],
        )
        .await?;
    let stored: i64 = row.try_get(0)?;
    let owner: Option<&str> = row.try_get(1)?;
    Ok(if stored > 0 {
        Inserted::Stored
    } else if owner.is_some_and(|owner| owner != order_no.as_ref()) {
        Inserted::EventIdTaken
    } else {
        Inserted::Duplicate
    })
}

/// Counts a delivery refused for breaking the contract.
async fn violation_op(c: &Conn, rule: &str) -> OpResult<()> {
    c.client.execute(&c.violation, &[&rule]).await?;
    Ok(())
}

/// An answer of a function this version does not know (an incompatible one replaced it).
fn unexpected(answer: &str) -> Fail {
    Fail::Inbox(InboxError::Store(format!(
        "postgres: unexpected answer {answer:?}"
    )))
}

/// Counts a refused delivery per reason.
async fn reject_op(c: &Conn, reason: &str) -> OpResult<()> {
    c.client.execute(&c.reject, &[&reason]).await?;
    Ok(())
}

/// Hands out up to `n` waiting events: `storefront_inbox_claim`.
async fn claim_op(c: &Conn, n: u32, lease_ms: u64, claim: &str) -> OpResult<Vec<InboxEvent>> {
    let rows = c
        .client
        .query(&c.claim, &[&i64::from(n), &int(lease_ms), &claim])
        .await?;
    let mut events = Vec::with_capacity(rows.len());
    for row in &rows {
        events.push(event_of(row)?);
    }
    Ok(events)
}

/// A claimed row as handed to the app (text values decoded: [`dec`]).
fn event_of(row: &Row) -> OpResult<InboxEvent> {
    Ok(InboxEvent {
        id: dec(row.try_get(0)?)?,
        claim: row.try_get(1)?,
        order_no: dec(row.try_get(2)?)?,
        external_reference: dec(row.try_get(3)?)?,
        status: status_of(&dec(row.try_get(4)?)?),
        status_version: row.try_get::<_, i64>(5)?.max(0) as u64,
        event_id: dec_opt(row.try_get(6)?)?,
        amount_minor: amount_of(row.try_get(7)?),
        currency: dec(row.try_get(8)?)?,
        test_mode: row.try_get(9)?,
        book: row.try_get(10)?,
        source: EventSource::parse(row.try_get::<_, &str>(11)?),
        replayed: row.try_get(12)?,
        attempts: u32::try_from(row.try_get::<_, i64>(13)?.saturating_sub(1).max(0))
            .unwrap_or(u32::MAX),
        body: dec(row.try_get(14)?)?,
    })
}

/// The answer of `storefront_inbox_complete` or `storefront_inbox_release` for event `id`.
fn done(answer: &str, id: &str) -> OpResult<()> {
    match answer {
        "done" => Ok(()),
        "lost" => Err(InboxError::LeaseLost(id.to_owned()).into()),
        "missing" => Err(InboxError::NotFound(id.to_owned()).into()),
        other => Err(unexpected(other)),
    }
}

/// Marks a claimed event handled and books it once: `storefront_inbox_complete`.
async fn complete_op(c: &Conn, id: &str, claim: &str) -> OpResult<()> {
    let row = c.client.query_one(&c.complete, &[&enc(id), &claim]).await?;
    done(row.try_get(0)?, id)
}

/// Gives a claimed event back: `storefront_inbox_release`.
async fn release_op(c: &Conn, id: &str, claim: &str) -> OpResult<()> {
    let row = c.client.query_one(&c.release, &[&enc(id), &claim]).await?;
    done(row.try_get(0)?, id)
}

/// Counts per state (a claim whose lease ran out counts as pending), rejections per reason,
/// the oldest waiting event's age and the bookings, in one statement (one snapshot).
async fn status_op(c: &Conn) -> OpResult<InboxStatus> {
    let rows = c
        .client
        .query(
            &format!(
                "{NOW_CTE}
                 SELECT 'state', CASE WHEN state = 'claimed' AND lease_until <= (SELECT ms FROM now)
                     THEN 'pending' ELSE state END, count(*)
                   FROM storefront_inbox_events GROUP BY 2
                 UNION ALL SELECT 'rejected', reason, count FROM storefront_inbox_rejections
                 UNION ALL SELECT 'violation', rule, count FROM storefront_inbox_violations
                 UNION ALL SELECT 'now', NULL, ms FROM now
                 UNION ALL SELECT 'oldest', NULL, min(received_at) FROM storefront_inbox_events
                   WHERE state = 'pending'
                      OR (state = 'claimed' AND lease_until <= (SELECT ms FROM now))
                 UNION ALL SELECT 'booked', NULL, count(*) FROM storefront_inbox_bookings"
            ),
            &[],
        )
        .await?;
    let mut status = InboxStatus::default();
    let (mut now, mut oldest) = (0i64, None);
    for row in &rows {
        let kind: &str = row.try_get(0)?;
        let name: Option<String> = row.try_get(1)?;
        let value: Option<i64> = row.try_get(2)?;
        let count = value.unwrap_or(0).max(0) as u64;
        match (kind, name) {
            ("state", Some(state)) => match state.as_str() {
                "pending" => status.pending += count,
                "claimed" => status.claimed += count,
                "completed" => status.completed += count,
                "stale" => status.stale += count,
                "duplicate" => status.duplicate += count,
                _ => {}
            },
            ("rejected", Some(reason)) => {
                status.rejected.insert(reason, count);
            }
            ("violation", Some(rule)) => {
                status.contract_violations.insert(rule, count);
            }
            ("now", _) => now = value.unwrap_or(0),
            ("oldest", _) => oldest = value,
            ("booked", _) => status.booked = count,
            _ => {}
        }
    }
    status.oldest_pending_ms = oldest.map(|at| now.saturating_sub(at).max(0) as u64);
    Ok(status)
}

/// Deletes finished rows older than the retention; watermarks and bookings stay (they make a
/// very late duplicate stale and a booking once).
async fn purge_op(c: &Conn, older_than_ms: u64) -> OpResult<u64> {
    Ok(c.client
        .execute(
            &format!(
                "{NOW_CTE}
                 DELETE FROM storefront_inbox_events
                 WHERE state IN ('completed', 'stale', 'duplicate')
                   AND finished_at <= (SELECT ms FROM now) - $1"
            ),
            &[&int(older_than_ms)],
        )
        .await?)
}

/// Hands finished events out again (`replayed`: never superseded, never a duplicate; `book`
/// only if the payment event is still not booked).
async fn replay_op(c: &Conn, which: &Replay) -> OpResult<u64> {
    match which {
        Replay::Event(id) => {
            let row = c
                .client
                .query_one(
                    "WITH replayed AS (
                       UPDATE storefront_inbox_events SET state = 'pending', replayed = TRUE,
                         claim = NULL, lease_until = NULL, finished_at = NULL
                       WHERE id = $1 AND state IN ('completed', 'stale', 'duplicate')
                       RETURNING 1)
                     SELECT (SELECT count(*) FROM replayed),
                       EXISTS (SELECT 1 FROM storefront_inbox_events WHERE id = $1)",
                    &[&enc(id)],
                )
                .await?;
            let n = row.try_get::<_, i64>(0)?.max(0) as u64;
            if n == 0 && !row.try_get::<_, bool>(1)? {
                return Err(InboxError::NotFound(id.clone()).into());
            }
            Ok(n)
        }
        Replay::Received { from_ms, to_ms } => Ok(c
            .client
            .execute(
                "UPDATE storefront_inbox_events SET state = 'pending', replayed = TRUE,
                   claim = NULL, lease_until = NULL, finished_at = NULL
                 WHERE state = 'completed' AND received_at >= $1 AND received_at < $2",
                &[from_ms, to_ms],
            )
            .await?),
    }
}

/// Every payment's watermark (the highest `status_version` handed out) and booking.
async fn watermarks_op(c: &Conn) -> OpResult<Vec<Watermark>> {
    let rows = c
        .client
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
            order_no: dec(row.try_get(0)?)?,
            external_reference: dec(row.try_get(1)?)?,
            status_version: row.try_get::<_, i64>(2)?.max(0) as u64,
            status: status_of(&dec(row.try_get(3)?)?),
            amount_minor: amount_of(row.try_get(4)?),
            currency: dec(row.try_get(5)?)?,
            booked_event_id: dec_opt(row.try_get(6)?)?,
        });
    }
    Ok(out)
}

impl InboxStore for PostgresInbox {
    /// "Store the notification reliably before returning" (committed before the receipt),
    /// "deduplicate by notification `id`" (versions are ordered by the claim).
    fn insert<'a>(&'a self, event: &'a Incoming) -> InboxFuture<'a, Inserted> {
        Box::pin(async move { on_connection!(self, insert_op(event)) })
    }

    /// Counts a delivery refused by verification.
    fn reject<'a>(&'a self, reason: &'a str) -> InboxFuture<'a, ()> {
        Box::pin(async move { on_connection!(self, reject_op(reason)) })
    }

    /// Counts a delivery refused for breaking the contract.
    fn violation<'a>(&'a self, rule: &'a str) -> InboxFuture<'a, ()> {
        Box::pin(async move { on_connection!(self, violation_op(rule)) })
    }

    /// Claims under the database-wide claim lock: one worker per event, one event per payment,
    /// "a lower version must not overwrite a higher one".
    fn claim<'a>(
        &'a self,
        n: u32,
        lease_ms: u64,
        claim: &'a str,
    ) -> InboxFuture<'a, Vec<InboxEvent>> {
        Box::pin(async move { on_connection!(self, claim_op(n, lease_ms, claim)) })
    }

    /// Completes a claimed event; "book payments idempotently by `data.event_id`".
    fn complete<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()> {
        Box::pin(async move { on_connection!(self, complete_op(id, claim)) })
    }

    /// Gives a claimed event back.
    fn release<'a>(&'a self, id: &'a str, claim: &'a str) -> InboxFuture<'a, ()> {
        Box::pin(async move { on_connection!(self, release_op(id, claim)) })
    }

    /// Counts for operators.
    fn status(&self) -> InboxFuture<'_, InboxStatus> {
        Box::pin(async move { on_connection!(self, status_op()) })
    }

    /// Retention of finished rows; watermarks and bookings are kept.
    fn purge(&self, older_than_ms: u64) -> InboxFuture<'_, u64> {
        Box::pin(async move { on_connection!(self, purge_op(older_than_ms)) })
    }

    /// Hands finished events out again.
    fn replay<'a>(&'a self, which: &'a Replay) -> InboxFuture<'a, u64> {
        Box::pin(async move { on_connection!(self, replay_op(which)) })
    }

    /// The payments' watermarks for the reconciler.
    fn watermarks(&self) -> InboxFuture<'_, Vec<Watermark>> {
        Box::pin(async move { on_connection!(self, watermarks_op()) })
    }

    /// `$1` = event id, `$2` = claim token; see [`COMPLETION_SQL`].
    fn completion_sql(&self) -> &'static str {
        COMPLETION_SQL
    }
}
