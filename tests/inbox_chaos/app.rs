//! The app's own tables on the inbox's database, and the app's transaction that books a payment,
//! moves its state and completes the inbox event together ([`storefront::inbox::Inbox::completion_sql`]).
//! Used by the receiver processes (handling) and by the test (the final checks).

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use storefront::inbox::InboxEvent;

/// The app's tables. `times` counts how often the app booked an `event_id` (the upsert never
/// fails, so a second booking is seen, not hidden); `regressions` counts the state changes
/// handed to the app at or below the version it already had; `handled` counts the changes.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS app_bookings (
    event_id TEXT PRIMARY KEY,
    order_no TEXT NOT NULL,
    inbox_id TEXT NOT NULL,
    times BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS app_states (
    order_no TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    status_version BIGINT NOT NULL,
    regressions BIGINT NOT NULL,
    handled BIGINT NOT NULL);
";

const BOOK_SQLITE: &str = "INSERT INTO app_bookings (event_id, order_no, inbox_id, times) \
    VALUES (?1, ?2, ?3, 1) ON CONFLICT (event_id) DO UPDATE SET times = app_bookings.times + 1";
const BOOK_PG: &str = "INSERT INTO app_bookings (event_id, order_no, inbox_id, times) \
    VALUES ($1, $2, $3, 1) ON CONFLICT (event_id) DO UPDATE SET times = app_bookings.times + 1";

const STATE_SQLITE: &str = "INSERT INTO app_states \
    (order_no, status, status_version, regressions, handled) VALUES (?1, ?2, ?3, 0, 1) \
    ON CONFLICT (order_no) DO UPDATE SET status = excluded.status, \
    status_version = excluded.status_version, handled = app_states.handled + 1, \
    regressions = app_states.regressions \
        + (CASE WHEN excluded.status_version <= app_states.status_version THEN 1 ELSE 0 END)";
const STATE_PG: &str = "INSERT INTO app_states \
    (order_no, status, status_version, regressions, handled) VALUES ($1, $2, $3, 0, 1) \
    ON CONFLICT (order_no) DO UPDATE SET status = excluded.status, \
    status_version = excluded.status_version, handled = app_states.handled + 1, \
    regressions = app_states.regressions \
        + (CASE WHEN excluded.status_version <= app_states.status_version THEN 1 ELSE 0 END)";

const RECLAIMED: &str =
    "SELECT CAST(COUNT(*) AS BIGINT) FROM storefront_inbox_events WHERE attempts > 1";

/// What the app's transaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// Booked (if asked), state moved, event completed: committed together.
    Committed,
    /// The completion's first statement changed no row (the lease ran out and another worker
    /// holds the event): rolled back.
    LeaseLost,
}

/// A connection of the app to the inbox's database.
pub enum AppDb {
    Sqlite(rusqlite::Connection),
    Postgres(tokio_postgres::Client),
}

/// What the final checks read.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// event_id → (order_no, times booked).
    pub bookings: BTreeMap<String, (String, i64)>,
    /// order_no → (status, status_version, regressions, handled).
    pub states: BTreeMap<String, (String, i64, i64, i64)>,
    /// Every notification id stored in the inbox.
    pub inbox_ids: HashSet<String>,
    /// Inbox events claimed more than once (a lease ran out: their worker was killed or slow).
    pub reclaimed: i64,
}

fn split(sql: &str) -> Vec<&str> {
    sql.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

impl AppDb {
    /// Connects to `url` (`sqlite:///abs/path` or `postgres://…`).
    pub async fn connect(url: &str) -> Result<AppDb, String> {
        if let Some(path) = url.strip_prefix("sqlite://") {
            let conn = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
            conn.busy_timeout(Duration::from_secs(10))
                .map_err(|e| e.to_string())?;
            Ok(AppDb::Sqlite(conn))
        } else {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .map_err(|e| e.to_string())?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            Ok(AppDb::Postgres(client))
        }
    }

    /// Creates the app's tables.
    pub async fn create_schema(&mut self) -> Result<(), String> {
        match self {
            AppDb::Sqlite(conn) => conn.execute_batch(SCHEMA).map_err(|e| e.to_string()),
            AppDb::Postgres(client) => client
                .batch_execute(SCHEMA)
                .await
                .map_err(|e| e.to_string()),
        }
    }

    /// Handles `event` in one transaction: books it when `event.book`, moves the payment's state,
    /// runs `completion_sql`, and commits only if its first statement changed exactly one row.
    pub async fn handle(
        &mut self,
        event: &InboxEvent,
        completion_sql: &str,
    ) -> Result<Handled, String> {
        let event_id = event.event_id.clone().unwrap_or_default();
        let version = i64::try_from(event.status_version).unwrap_or(i64::MAX);
        let status = event.status.as_str().to_owned();
        match self {
            AppDb::Sqlite(conn) => tokio::task::block_in_place(|| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(|e| e.to_string())?;
                if event.book {
                    tx.execute(
                        BOOK_SQLITE,
                        rusqlite::params![event_id, event.order_no, event.id],
                    )
                    .map_err(|e| e.to_string())?;
                }
                tx.execute(
                    STATE_SQLITE,
                    rusqlite::params![event.order_no, status, version],
                )
                .map_err(|e| e.to_string())?;
                for (i, statement) in split(completion_sql).into_iter().enumerate() {
                    let mut named: Vec<(&str, &dyn rusqlite::ToSql)> = Vec::new();
                    if statement.contains(":id") {
                        named.push((":id", &event.id));
                    }
                    if statement.contains(":claim") {
                        named.push((":claim", &event.claim));
                    }
                    let changed = tx
                        .prepare(statement)
                        .and_then(|mut s| s.execute(named.as_slice()))
                        .map_err(|e| e.to_string())?;
                    if i == 0 && changed != 1 {
                        return Ok(Handled::LeaseLost); // dropping `tx` rolls back
                    }
                }
                tx.commit().map_err(|e| e.to_string())?;
                Ok(Handled::Committed)
            }),
            AppDb::Postgres(client) => {
                let tx = client.transaction().await.map_err(|e| e.to_string())?;
                if event.book {
                    tx.execute(BOOK_PG, &[&event_id, &event.order_no, &event.id])
                        .await
                        .map_err(|e| e.to_string())?;
                }
                tx.execute(STATE_PG, &[&event.order_no, &status, &version])
                    .await
                    .map_err(|e| e.to_string())?;
                for (i, statement) in split(completion_sql).into_iter().enumerate() {
                    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
                        [&event.id, &event.claim];
                    let n = if statement.contains("$2") {
                        2
                    } else if statement.contains("$1") {
                        1
                    } else {
                        0
                    };
                    let changed = tx
                        .execute(statement, &params[..n])
                        .await
                        .map_err(|e| e.to_string())?;
                    if i == 0 && changed != 1 {
                        tx.rollback().await.map_err(|e| e.to_string())?;
                        return Ok(Handled::LeaseLost);
                    }
                }
                tx.commit().await.map_err(|e| e.to_string())?;
                Ok(Handled::Committed)
            }
        }
    }

    /// Reads the app's tables and the inbox's notification ids.
    pub async fn snapshot(&mut self) -> Result<Snapshot, String> {
        let mut snap = Snapshot::default();
        match self {
            AppDb::Sqlite(conn) => {
                let e = |e: rusqlite::Error| e.to_string();
                let mut s = conn
                    .prepare("SELECT event_id, order_no, times FROM app_bookings")
                    .map_err(e)?;
                let rows = s
                    .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
                    .map_err(e)?;
                for row in rows {
                    let (k, v) = row.map_err(e)?;
                    snap.bookings.insert(k, v);
                }
                let mut s = conn
                    .prepare(
                        "SELECT order_no, status, status_version, regressions, handled \
                         FROM app_states",
                    )
                    .map_err(e)?;
                let rows = s
                    .query_map([], |r| {
                        Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
                    })
                    .map_err(e)?;
                for row in rows {
                    let (k, v) = row.map_err(e)?;
                    snap.states.insert(k, v);
                }
                snap.reclaimed = conn.query_row(RECLAIMED, [], |r| r.get(0)).map_err(e)?;
                let mut s = conn
                    .prepare("SELECT id FROM storefront_inbox_events")
                    .map_err(e)?;
                let rows = s.query_map([], |r| r.get::<_, String>(0)).map_err(e)?;
                for row in rows {
                    snap.inbox_ids.insert(row.map_err(e)?);
                }
            }
            AppDb::Postgres(client) => {
                let e = |e: tokio_postgres::Error| e.to_string();
                for r in client
                    .query("SELECT event_id, order_no, times FROM app_bookings", &[])
                    .await
                    .map_err(e)?
                {
                    snap.bookings.insert(r.get(0), (r.get(1), r.get(2)));
                }
                for r in client
                    .query(
                        "SELECT order_no, status, status_version, regressions, handled \
                         FROM app_states",
                        &[],
                    )
                    .await
                    .map_err(e)?
                {
                    snap.states
                        .insert(r.get(0), (r.get(1), r.get(2), r.get(3), r.get(4)));
                }
                snap.reclaimed = client.query_one(RECLAIMED, &[]).await.map_err(e)?.get(0);
                for r in client
                    .query("SELECT id FROM storefront_inbox_events", &[])
                    .await
                    .map_err(e)?
                {
                    snap.inbox_ids.insert(r.get(0));
                }
            }
        }
        Ok(snap)
    }
}
