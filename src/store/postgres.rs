//! The PostgreSQL backend of the shared state: one database for every host of a shop (when it
//! has no Redis), so the per-client limits ("per client per minute", `Retry-After` for the
//! client) are shared by every process on every host, and the client-credentials token, "kept
//! only on the merchant server", is fetched by one process and read by the others.
//!
//! Every operation is one call of a plpgsql function (`SELECT storefront_admit($1,$2,$3,$4)`,
//! a statement prepared once per connection): one round trip, one transaction, serialized per
//! client and class (or per token namespace) by `pg_advisory_xact_lock`, with the database's
//! clock (`clock_timestamp()`, read once the lock is held), so hosts with other clocks agree;
//! the times handed back are relative milliseconds. A token row past its expiry counts as
//! absent and is purged (the secret at rest never outlives the token).
//!
//! The tables (prefixed `storefront_`) and functions are created on first use of each
//! connection (`CREATE TABLE IF NOT EXISTS`, `CREATE OR REPLACE FUNCTION`, under an advisory
//! lock so that processes starting together do not collide). The connection opens on the first
//! operation (never in [`PostgresStore::new`]: a forked worker opens its own) and is opened
//! again after it breaks.

use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::{Client, NoTls, Statement};

use super::{
    Admission, Admit, Namespace, Store, StoreError, StoreFuture, StoreResult, StoredFailure,
    StoredState, StoredToken, TokenLookup, parse_count, parse_failure, parse_inspect,
};
use crate::error::Error;
use crate::rate_limit::LimitClass;
use crate::secret::Secret;

/// The tables and functions, created in one transaction under an advisory lock.
const SETUP: &str = r#"
BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended('storefront_schema', 0));
CREATE TABLE IF NOT EXISTS storefront_rate (
    id bigserial PRIMARY KEY, client text NOT NULL, cls text NOT NULL, at_ms bigint NOT NULL);
CREATE INDEX IF NOT EXISTS storefront_rate_window ON storefront_rate (client, cls, at_ms);
CREATE TABLE IF NOT EXISTS storefront_pause (
    client text NOT NULL, cls text NOT NULL, until_ms bigint NOT NULL,
    PRIMARY KEY (client, cls));
CREATE TABLE IF NOT EXISTS storefront_token (
    ns text PRIMARY KEY, token text NOT NULL, scope text NOT NULL, expires_in bigint NOT NULL,
    refresh_at bigint NOT NULL, expires_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_lease (
    ns text PRIMARY KEY, holder text NOT NULL, until_ms bigint NOT NULL);
CREATE TABLE IF NOT EXISTS storefront_failure (
    ns text PRIMARY KEY, record text NOT NULL, retry_at bigint NOT NULL);

CREATE OR REPLACE FUNCTION storefront_now() RETURNS bigint LANGUAGE sql VOLATILE AS $f$
    SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
$f$;

-- 0 when admitted, else the wait in ms.
CREATE OR REPLACE FUNCTION storefront_admit(
    p_client text, p_class text, p_budget bigint, p_span bigint)
RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE v_now bigint; v_paused bigint; v_count bigint; v_at bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(
        hashtextextended('storefront_rate:' || p_client || ':' || p_class, 0));
    v_now := storefront_now();
    DELETE FROM storefront_rate
        WHERE client = p_client AND cls = p_class AND at_ms <= v_now - p_span;
    SELECT until_ms INTO v_paused FROM storefront_pause
        WHERE client = p_client AND cls = p_class;
    IF v_paused IS NOT NULL AND v_paused > v_now THEN
        RETURN v_paused - v_now;
    END IF;
    IF p_budget <= 0 THEN
        RETURN greatest(p_span, 1);
    END IF;
    SELECT count(*) INTO v_count FROM storefront_rate WHERE client = p_client AND cls = p_class;
    IF v_count < p_budget THEN
        INSERT INTO storefront_rate (client, cls, at_ms) VALUES (p_client, p_class, v_now);
        RETURN 0;
    END IF;
    SELECT at_ms INTO v_at FROM storefront_rate WHERE client = p_client AND cls = p_class
        ORDER BY at_ms OFFSET v_count - p_budget LIMIT 1;
    RETURN greatest(v_at + p_span - v_now, 1);
END
$f$;

CREATE OR REPLACE FUNCTION storefront_pause(p_client text, p_class text, p_for bigint)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE v_now bigint;
BEGIN
    v_now := storefront_now();
    INSERT INTO storefront_pause (client, cls, until_ms) VALUES (p_client, p_class, v_now + p_for)
        ON CONFLICT (client, cls)
        DO UPDATE SET until_ms = greatest(storefront_pause.until_ms, excluded.until_ms);
END
$f$;

-- {fresh, token, scope, expires_in, refresh_in, expires_in_ms} | {failed, record, retry_in}
-- | {busy, poll} | {leased}
CREATE OR REPLACE FUNCTION storefront_token(p_ns text, p_holder text, p_lease bigint)
RETURNS text[] LANGUAGE plpgsql AS $f$
DECLARE v_now bigint; v_t storefront_token%ROWTYPE; v_f storefront_failure%ROWTYPE;
        v_l storefront_lease%ROWTYPE;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('storefront_token:' || p_ns, 0));
    v_now := storefront_now();
    DELETE FROM storefront_token WHERE ns = p_ns AND expires_at <= v_now;
    SELECT * INTO v_t FROM storefront_token WHERE ns = p_ns;
    IF FOUND AND v_now < v_t.refresh_at THEN
        RETURN ARRAY['fresh', v_t.token, v_t.scope, v_t.expires_in::text,
                     (v_t.refresh_at - v_now)::text, (v_t.expires_at - v_now)::text];
    END IF;
    SELECT * INTO v_f FROM storefront_failure WHERE ns = p_ns;
    IF FOUND AND v_f.retry_at > v_now THEN
        RETURN ARRAY['failed', v_f.record, (v_f.retry_at - v_now)::text];
    END IF;
    SELECT * INTO v_l FROM storefront_lease WHERE ns = p_ns;
    IF FOUND AND v_l.until_ms > v_now AND v_l.holder <> p_holder THEN
        RETURN ARRAY['busy', least(greatest(v_l.until_ms - v_now, 1), 100)::text];
    END IF;
    INSERT INTO storefront_lease (ns, holder, until_ms) VALUES (p_ns, p_holder, v_now + p_lease)
        ON CONFLICT (ns) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms;
    RETURN ARRAY['leased'];
END
$f$;

CREATE OR REPLACE FUNCTION storefront_put_token(
    p_ns text, p_holder text, p_token text, p_scope text, p_expires_in bigint,
    p_refresh_in bigint, p_expires_in_ms bigint)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE v_now bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('storefront_token:' || p_ns, 0));
    v_now := storefront_now();
    IF p_expires_in_ms > 0 THEN
        INSERT INTO storefront_token (ns, token, scope, expires_in, refresh_at, expires_at)
            VALUES (p_ns, p_token, p_scope, p_expires_in, v_now + p_refresh_in,
                    v_now + p_expires_in_ms)
            ON CONFLICT (ns) DO UPDATE SET token = excluded.token, scope = excluded.scope,
                expires_in = excluded.expires_in, refresh_at = excluded.refresh_at,
                expires_at = excluded.expires_at;
    ELSE
        DELETE FROM storefront_token WHERE ns = p_ns;
    END IF;
    DELETE FROM storefront_failure WHERE ns = p_ns;
    DELETE FROM storefront_lease WHERE ns = p_ns AND holder = p_holder;
END
$f$;

CREATE OR REPLACE FUNCTION storefront_put_failure(
    p_ns text, p_holder text, p_record text, p_backoff bigint)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE v_now bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('storefront_token:' || p_ns, 0));
    v_now := storefront_now();
    INSERT INTO storefront_failure (ns, record, retry_at) VALUES (p_ns, p_record, v_now + p_backoff)
        ON CONFLICT (ns) DO UPDATE SET record = excluded.record, retry_at = excluded.retry_at;
    DELETE FROM storefront_lease WHERE ns = p_ns AND holder = p_holder;
END
$f$;

-- Per class of p_classes: {count, pause left or ''}; then refresh_in or '', expires_in or '',
-- lease held '1' or '0', failure record or ''.
CREATE OR REPLACE FUNCTION storefront_inspect(
    p_client text, p_ns text, p_classes text[], p_span bigint)
RETURNS text[] LANGUAGE plpgsql AS $f$
DECLARE v_now bigint; v_out text[] := ARRAY[]::text[]; v_class text; v_count bigint;
        v_paused bigint; v_t storefront_token%ROWTYPE; v_held boolean; v_record text;
BEGIN
    v_now := storefront_now();
    FOREACH v_class IN ARRAY p_classes LOOP
        SELECT count(*) INTO v_count FROM storefront_rate
            WHERE client = p_client AND cls = v_class AND at_ms > v_now - p_span;
        SELECT until_ms INTO v_paused FROM storefront_pause
            WHERE client = p_client AND cls = v_class;
        v_out := v_out || v_count::text;
        IF v_paused IS NOT NULL AND v_paused > v_now THEN
            v_out := v_out || (v_paused - v_now)::text;
        ELSE
            v_out := v_out || ''::text;
        END IF;
    END LOOP;
    SELECT * INTO v_t FROM storefront_token WHERE ns = p_ns AND expires_at > v_now;
    IF FOUND THEN
        v_out := v_out || greatest(v_t.refresh_at - v_now, 0)::text
                       || (v_t.expires_at - v_now)::text;
    ELSE
        v_out := v_out || ''::text || ''::text;
    END IF;
    SELECT EXISTS (SELECT 1 FROM storefront_lease WHERE ns = p_ns AND until_ms > v_now)
        INTO v_held;
    v_out := v_out || (CASE WHEN v_held THEN '1' ELSE '0' END)::text;
    SELECT record INTO v_record FROM storefront_failure WHERE ns = p_ns;
    v_out := v_out || coalesce(v_record, '');
    RETURN v_out;
END
$f$;
COMMIT;
"#;

/// The shared state in one PostgreSQL database (many hosts without Redis).
pub(crate) struct PostgresStore {
    config: tokio_postgres::Config,
    /// The URL's password, removed from any error text.
    password: Option<Secret>,
    ns: Namespace,
    /// The open connection (`None` before the first operation and after it broke).
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
}

/// An open connection and its prepared statements (each operation is then one round trip).
struct Conn {
    client: Client,
    admit: Statement,
    pause: Statement,
    token: Statement,
    put_token: Statement,
    put_failure: Statement,
    failure: Statement,
    drop_token: Statement,
    inspect: Statement,
}

impl PostgresStore {
    /// A store on the database at `url` for the client `ns`; the URL is only parsed here
    /// (nothing connects until the first operation). `timeout` bounds connecting.
    pub fn new(url: &Secret, ns: Namespace, timeout: Duration) -> crate::Result<Self> {
        let mut config: tokio_postgres::Config = url
            .expose()
            .parse()
            .map_err(|_| Error::Config("shared_state: not a usable postgres URL".to_owned()))?;
        config.connect_timeout(timeout);
        let password = config
            .get_password()
            .map(|p| Secret::new(String::from_utf8_lossy(p).into_owned()));
        Ok(PostgresStore {
            config,
            password,
            ns,
            conn: tokio::sync::Mutex::new(None),
        })
    }

    /// The error's text (with the server's message) without the URL's password.
    fn error(&self, e: &tokio_postgres::Error) -> StoreError {
        let mut text = match e.as_db_error() {
            Some(db) => format!("postgres: {e}: {}", db.message()),
            None => format!("postgres: {e}"),
        };
        if let Some(pw) = self.password.as_ref().filter(|p| !p.is_empty()) {
            text = text.replace(pw.expose(), "[REDACTED]");
        }
        StoreError(text)
    }

    /// The open connection, connecting (and creating the schema) first if there is none or
    /// it broke.
    async fn connection(&self) -> StoreResult<Arc<Conn>> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref()
            && !conn.client.is_closed()
        {
            return Ok(Arc::clone(conn));
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
        let conn = Arc::new(self.prepare(client).await.map_err(|e| self.error(&e))?);
        *slot = Some(Arc::clone(&conn));
        Ok(conn)
    }

    /// Creates the schema if needed and prepares every statement.
    async fn prepare(&self, client: Client) -> Result<Conn, tokio_postgres::Error> {
        client.batch_execute(SETUP).await?;
        Ok(Conn {
            admit: client
                .prepare("SELECT storefront_admit($1, $2, $3, $4)")
                .await?,
            pause: client
                .prepare("SELECT storefront_pause($1, $2, $3)")
                .await?,
            token: client
                .prepare("SELECT storefront_token($1, $2, $3)")
                .await?,
            put_token: client
                .prepare("SELECT storefront_put_token($1, $2, $3, $4, $5, $6, $7)")
                .await?,
            put_failure: client
                .prepare("SELECT storefront_put_failure($1, $2, $3, $4)")
                .await?,
            failure: client
                .prepare("SELECT record FROM storefront_failure WHERE ns = $1")
                .await?,
            drop_token: client
                .prepare("DELETE FROM storefront_token WHERE ns = $1 AND token = $2")
                .await?,
            inspect: client
                .prepare("SELECT storefront_inspect($1, $2, $3, $4)")
                .await?,
            client,
        })
    }

    /// After a failed operation: a connection-level error (no SQLSTATE) drops the connection,
    /// so the next operation connects again.
    async fn failed(&self, e: &tokio_postgres::Error) -> StoreError {
        if e.is_closed() || e.code().is_none() {
            *self.conn.lock().await = None;
        }
        self.error(e)
    }
}

/// The class's name in the tables.
fn class_key(class: LimitClass) -> &'static str {
    match class {
        LimitClass::Create => "create",
        LimitClass::Read => "read",
        LimitClass::Requeue => "requeue",
    }
}

/// A duration in ms as a parameter (bounded so that `now + ms` never overflows a bigint).
fn ms(value: u64) -> i64 {
    i64::try_from(value.min(1 << 52)).unwrap_or(1 << 52)
}

/// Runs one prepared statement returning one row and takes its first column.
macro_rules! one {
    ($self:ident, $stmt:ident, $ty:ty, $($param:expr),* $(,)?) => {{
        let conn = $self.connection().await?;
        match conn.client.query_one(&conn.$stmt, &[$(&$param),*]).await {
            Ok(row) => row.try_get::<_, $ty>(0).map_err(|e| $self.error(&e)),
            Err(e) => Err($self.failed(&e).await),
        }
    }};
}

impl Store for PostgresStore {
    /// The client's sliding log of the class, shared by every process on every host.
    fn admit(&self, admit: Admit) -> StoreFuture<'_, Admission> {
        Box::pin(async move {
            let wait = one!(
                self,
                admit,
                i64,
                self.ns.client.as_str(),
                class_key(admit.class),
                i64::from(admit.budget),
                ms(admit.span_ms),
            )?;
            Ok(match u64::try_from(wait) {
                Ok(0) => Admission::Admitted,
                Ok(ms) => Admission::Wait(ms),
                Err(_) => Admission::Wait(1),
            })
        })
    }

    /// A 429's `Retry-After` applies to the client: every process on every host waits.
    fn pause(&self, class: LimitClass, for_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let conn = self.connection().await?;
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
                [&self.ns.client.as_str(), &class_key(class), &ms(for_ms)];
            match conn.client.execute(&conn.pause, &params).await {
                Ok(_) => Ok(()),
                Err(e) => Err(self.failed(&e).await),
            }
        })
    }

    /// One token per client and scopes for every host, fetched by the lease holder only.
    fn token<'a>(&'a self, holder: &'a str, lease_ms: u64) -> StoreFuture<'a, TokenLookup> {
        Box::pin(async move {
            let answer = one!(
                self,
                token,
                Vec<String>,
                self.ns.token.as_str(),
                holder,
                ms(lease_ms).max(1),
            )?;
            match answer.first().map(String::as_str) {
                Some("fresh") if answer.len() == 6 => Ok(TokenLookup::Fresh(StoredToken {
                    token: Secret::new(answer[1].clone()),
                    scope: answer[2].clone(),
                    expires_in: parse_count("postgres", &answer[3], "expires_in")?,
                    refresh_in_ms: parse_count("postgres", &answer[4], "refresh time")?,
                    expires_in_ms: parse_count("postgres", &answer[5], "expiry")?,
                })),
                Some("failed") if answer.len() == 3 => Ok(TokenLookup::Failed(
                    parse_failure("postgres", &answer[1])?,
                    parse_count("postgres", &answer[2], "retry time")?,
                )),
                Some("busy") if answer.len() == 2 => Ok(TokenLookup::Busy(
                    parse_count("postgres", &answer[1], "lease time")?.clamp(1, 100),
                )),
                Some("leased") => Ok(TokenLookup::Leased),
                _ => Err(StoreError(
                    "postgres: unexpected storefront_token answer".into(),
                )),
            }
        })
    }

    /// Shares a granted token; the row counts as absent past its expiry and is purged.
    fn put_token<'a>(&'a self, holder: &'a str, token: &'a StoredToken) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let conn = self.connection().await?;
            let expires_in = ms(token.expires_in);
            let refresh_in = ms(token.refresh_in_ms);
            let expires_in_ms = ms(token.expires_in_ms);
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
                &self.ns.token.as_str(),
                &holder,
                &token.token.expose(),
                &token.scope.as_str(),
                &expires_in,
                &refresh_in,
                &expires_in_ms,
            ];
            match conn.client.execute(&conn.put_token, &params).await {
                Ok(_) => Ok(()),
                Err(e) => Err(self.failed(&e).await),
            }
        })
    }

    /// Shares a failed token request until its back-off ends (the record stays, for the next
    /// back-off, until a token is stored).
    fn put_failure<'a>(
        &'a self,
        holder: &'a str,
        failure: &'a StoredFailure,
        backoff_ms: u64,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let record = serde_json::to_string(failure)
                .map_err(|e| StoreError(format!("postgres: cannot encode the failure: {e}")))?;
            let conn = self.connection().await?;
            let backoff = ms(backoff_ms);
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
                [&self.ns.token.as_str(), &holder, &record.as_str(), &backoff];
            match conn.client.execute(&conn.put_failure, &params).await {
                Ok(_) => Ok(()),
                Err(e) => Err(self.failed(&e).await),
            }
        })
    }

    /// Failures of the token endpoint in a row, as every host sees them.
    fn failures_in_a_row(&self) -> StoreFuture<'_, u32> {
        Box::pin(async move {
            let conn = self.connection().await?;
            let rows = match conn
                .client
                .query(&conn.failure, &[&self.ns.token.as_str()])
                .await
            {
                Ok(rows) => rows,
                Err(e) => return Err(self.failed(&e).await),
            };
            match rows.first() {
                Some(row) => {
                    let record: String = row.try_get(0).map_err(|e| self.error(&e))?;
                    Ok(parse_failure("postgres", &record)?.in_a_row)
                }
                None => Ok(0),
            }
        })
    }

    /// Forgets a token the service rejected, unless another process already replaced it.
    fn drop_token<'a>(&'a self, rejected: &'a Secret) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let conn = self.connection().await?;
            match conn
                .client
                .execute(
                    &conn.drop_token,
                    &[&self.ns.token.as_str(), &rejected.expose()],
                )
                .await
            {
                Ok(_) => Ok(()),
                Err(e) => Err(self.failed(&e).await),
            }
        })
    }

    /// The shared windows and token state of the client (never the token's value).
    fn inspect(&self, span_ms: u64) -> StoreFuture<'_, StoredState> {
        Box::pin(async move {
            let classes: Vec<&str> = LimitClass::ALL.into_iter().map(class_key).collect();
            let out = one!(
                self,
                inspect,
                Vec<String>,
                self.ns.client.as_str(),
                self.ns.token.as_str(),
                classes,
                ms(span_ms),
            )?;
            parse_inspect("postgres", &out, |lease| Ok(lease == "1"))
        })
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }
}
