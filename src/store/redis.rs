//! The Redis backend of the shared state: one Redis for every host of a shop, so the
//! per-client limits ("per client per minute", `Retry-After` for the client) are shared by
//! every process on every host, and the client-credentials token, "kept only on the merchant
//! server", is fetched by one process and read by the others.
//!
//! Every operation is one Lua script (`EVALSHA`, loaded again after a Redis restart), atomic in
//! Redis, with Redis's own clock (`redis.call('TIME')`), so hosts with other clocks agree; the
//! times handed back are relative milliseconds. Every key carries an expiry: a rate window its
//! span, a pause its end, the token its `expires_in` (the secret at rest never outlives the
//! token), the lease its length, a failure record its back-off plus [`FAILURE_MEMORY_MS`].
//!
//! Keys, namespaced so that several clients and shops share one Redis:
//! `storefront:{<client>}:rate:<class>` (sorted set of admissions), `…:pause:<class>`,
//! `storefront:{<client#scopes>}:token` (hash), `…:lease`, `…:failure`.
//!
//! The multiplexed connection opens on the first operation (never in [`RedisStore::new`]: a
//! forked worker opens its own) and is dropped after a connection error, so the next operation
//! connects again: a Redis that was stopped and comes back is used again by the same store.

use std::sync::LazyLock;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError, Script};

use super::{
    Admission, Admit, Namespace, Store, StoreError, StoreFuture, StoreResult, StoredFailure,
    StoredState, StoredToken, TokenLookup, parse_count, parse_failure, parse_inspect,
};
use crate::error::Error;
use crate::rate_limit::LimitClass;
use crate::secret::Secret;

/// How long a failure record outlives its back-off, so the next failure's back-off still
/// grows (`in_a_row`); a stored token clears it at once.
pub(crate) const FAILURE_MEMORY_MS: u64 = 3_600_000;

/// The common head of every script: `now` in ms from Redis's clock, and `s()` formatting a
/// number as an integer string (Lua's default would print large numbers as floats).
const PRELUDE: &str = "
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function s(x) return string.format('%d', x) end
";

/// KEYS: rate window, pause. ARGV: budget, span_ms, member suffix.
/// Returns 0 when admitted, else the wait in ms.
static ADMIT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{PRELUDE}
local budget = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', s(now - span))
local paused = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if paused > now then return paused - now end
if budget <= 0 then return math.max(span, 1) end
local count = redis.call('ZCARD', KEYS[1])
if count < budget then
  redis.call('ZADD', KEYS[1], s(now), s(now) .. '-' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], s(span))
  return 0
end
local at = redis.call('ZRANGE', KEYS[1], count - budget, count - budget, 'WITHSCORES')
return math.max(tonumber(at[2]) + span - now, 1)
"
    ))
});

/// KEYS: pause. ARGV: for_ms. The later end wins.
static PAUSE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{PRELUDE}
local till = now + tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if current > till then till = current end
redis.call('SET', KEYS[1], s(till), 'PX', s(math.max(till - now, 1)))
return 0
"
    ))
});

/// KEYS: token, failure, lease. ARGV: holder, lease_ms.
/// Returns {'fresh', token, scope, expires_in, refresh_in, expires_in_ms} | {'failed', record,
/// retry_in} | {'busy', poll} | {'leased'}.
static TOKEN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{PRELUDE}
local tok = redis.call('HMGET', KEYS[1], 'token', 'scope', 'expires_in', 'refresh_at', 'expires_at')
if tok[1] then
  local refresh_at = tonumber(tok[4]) or 0
  local expires_at = tonumber(tok[5]) or 0
  if expires_at <= now then
    redis.call('DEL', KEYS[1])
  elseif now < refresh_at then
    return {{'fresh', tok[1], tok[2], tok[3], s(refresh_at - now), s(expires_at - now)}}
  end
end
local fail = redis.call('HMGET', KEYS[2], 'record', 'retry_at')
if fail[1] and (tonumber(fail[2]) or 0) > now then
  return {{'failed', fail[1], s(tonumber(fail[2]) - now)}}
end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[1] then
  local left = redis.call('PTTL', KEYS[3])
  if left > 0 then return {{'busy', s(math.min(left, 100))}} end
end
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
return {{'leased'}}
"
    ))
});

/// KEYS: token, failure, lease. ARGV: token, scope, expires_in, refresh_in_ms, expires_in_ms,
/// holder.
static PUT_TOKEN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{PRELUDE}
local expires = tonumber(ARGV[5])
redis.call('DEL', KEYS[1])
if expires > 0 then
  redis.call('HSET', KEYS[1], 'token', ARGV[1], 'scope', ARGV[2], 'expires_in', ARGV[3],
    'refresh_at', s(now + tonumber(ARGV[4])), 'expires_at', s(now + expires))
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
redis.call('DEL', KEYS[2])
if redis.call('GET', KEYS[3]) == ARGV[6] then redis.call('DEL', KEYS[3]) end
return 0
"
    ))
});

/// KEYS: failure, lease. ARGV: record (JSON), backoff_ms, holder, memory_ms.
static PUT_FAILURE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{PRELUDE}
local backoff = tonumber(ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'retry_at', s(now + backoff))
redis.call('PEXPIRE', KEYS[1], s(backoff + tonumber(ARGV[4])))
if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
return 0
"
    ))
});

/// KEYS: token. ARGV: the rejected token.
static DROP_TOKEN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
",
    )
});

/// KEYS: 3 rate windows, 3 pauses (in `LimitClass::ALL` order), token, lease, failure.
/// ARGV: span_ms. Returns per class {count, pause left or ''}, then refresh_in or '',
/// expires_in or '', the lease's PTTL, the failure record or ''.
static INSPECT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{PRELUDE}
local span = tonumber(ARGV[1])
local out = {{}}
for i = 1, 3 do
  out[#out + 1] = s(redis.call('ZCOUNT', KEYS[i], '(' .. s(now - span), '+inf'))
  local paused = tonumber(redis.call('GET', KEYS[3 + i]) or '0') or 0
  if paused > now then out[#out + 1] = s(paused - now) else out[#out + 1] = '' end
end
local tok = redis.call('HMGET', KEYS[7], 'refresh_at', 'expires_at')
local expires_at = tonumber(tok[2] or '0') or 0
if expires_at > now then
  out[#out + 1] = s(math.max((tonumber(tok[1]) or 0) - now, 0))
  out[#out + 1] = s(expires_at - now)
else
  out[#out + 1] = ''
  out[#out + 1] = ''
end
out[#out + 1] = s(redis.call('PTTL', KEYS[8]))
out[#out + 1] = redis.call('HGET', KEYS[9], 'record') or ''
return out
"
    ))
});

/// The shared state in one Redis (many hosts).
pub(crate) struct RedisStore {
    client: redis::Client,
    /// The URL's password, removed from any error text.
    password: Option<Secret>,
    ns: Namespace,
    timeout: Duration,
    /// The open connection (`None` before the first operation and after a connection error).
    conn: tokio::sync::Mutex<Option<MultiplexedConnection>>,
}

impl RedisStore {
    /// A store on the Redis at `url` for the client `ns`; the URL is only parsed here (nothing
    /// connects until the first operation). `timeout` bounds connecting and each answer.
    pub fn new(url: &Secret, ns: Namespace, timeout: Duration) -> crate::Result<Self> {
        let client = redis::Client::open(url.expose()).map_err(|e| {
            Error::Config(format!(
                "shared_state: not a usable redis URL ({:?})",
                e.kind()
            ))
        })?;
        let password = url::Url::parse(url.expose())
            .ok()
            .and_then(|u| u.password().map(Secret::new));
        Ok(RedisStore {
            client,
            password,
            ns,
            timeout,
            conn: tokio::sync::Mutex::new(None),
        })
    }

    /// The open connection, connecting first if there is none.
    async fn connection(&self) -> StoreResult<MultiplexedConnection> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref() {
            return Ok(conn.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout));
        let conn = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| self.error(&e))?;
        *slot = Some(conn.clone());
        Ok(conn)
    }

    /// After a failed operation: forget a connection that may be broken (a Redis restart, a
    /// dropped socket, a timeout), so the next operation connects again.
    async fn failed(&self, e: &RedisError) -> StoreError {
        if e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_timeout()
            || e.is_unrecoverable_error()
        {
            *self.conn.lock().await = None;
        }
        self.error(e)
    }

    /// The error's text without the URL's password.
    fn error(&self, e: &RedisError) -> StoreError {
        let mut text = format!("redis: {e}");
        if let Some(pw) = self.password.as_ref().filter(|p| !p.is_empty()) {
            text = text.replace(pw.expose(), "[REDACTED]");
        }
        StoreError(text)
    }

    /// Runs one script invocation on the connection.
    async fn invoke<T: redis::FromRedisValue>(
        &self,
        call: &redis::ScriptInvocation<'_>,
    ) -> StoreResult<T> {
        let mut conn = self.connection().await?;
        match call.invoke_async(&mut conn).await {
            Ok(value) => Ok(value),
            Err(e) => Err(self.failed(&e).await),
        }
    }

    fn rate_key(&self, class: LimitClass) -> String {
        format!(
            "storefront:{{{}}}:rate:{}",
            self.ns.client,
            class_key(class)
        )
    }

    fn pause_key(&self, class: LimitClass) -> String {
        format!(
            "storefront:{{{}}}:pause:{}",
            self.ns.client,
            class_key(class)
        )
    }

    fn token_key(&self, what: &str) -> String {
        format!("storefront:{{{}}}:{what}", self.ns.token)
    }
}

/// The class's name in keys.
fn class_key(class: LimitClass) -> &'static str {
    match class {
        LimitClass::Create => "create",
        LimitClass::Read => "read",
        LimitClass::Requeue => "requeue",
    }
}

/// A unique suffix for a rate entry (two admissions in one millisecond are two entries).
fn member_suffix() -> Result<String, StoreError> {
    crate::random::hex::<8>().map_err(|e| StoreError(e.to_string()))
}

/// A number of milliseconds as a script argument (bounded so Lua's doubles stay exact).
fn ms(value: u64) -> u64 {
    value.min(1 << 50)
}

impl Store for RedisStore {
    /// The client's sliding log of the class, shared by every process on every host.
    fn admit(&self, admit: Admit) -> StoreFuture<'_, Admission> {
        Box::pin(async move {
            let mut call = ADMIT.prepare_invoke();
            call.key(self.rate_key(admit.class))
                .key(self.pause_key(admit.class))
                .arg(admit.budget)
                .arg(ms(admit.span_ms))
                .arg(member_suffix()?);
            let wait: i64 = self.invoke(&call).await?;
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
            let mut call = PAUSE.prepare_invoke();
            call.key(self.pause_key(class)).arg(ms(for_ms));
            let _: i64 = self.invoke(&call).await?;
            Ok(())
        })
    }

    /// One token per client and scopes for every host, fetched by the lease holder only.
    fn token<'a>(&'a self, holder: &'a str, lease_ms: u64) -> StoreFuture<'a, TokenLookup> {
        Box::pin(async move {
            let mut call = TOKEN.prepare_invoke();
            call.key(self.token_key("token"))
                .key(self.token_key("failure"))
                .key(self.token_key("lease"))
                .arg(holder)
                .arg(ms(lease_ms).max(1));
            let answer: Vec<String> = self.invoke(&call).await?;
            let bad = || StoreError("redis: unexpected token script answer".into());
            match answer.first().map(String::as_str) {
                Some("fresh") if answer.len() == 6 => Ok(TokenLookup::Fresh(StoredToken {
                    token: Secret::new(answer[1].clone()),
                    scope: answer[2].clone(),
                    expires_in: parse_count("redis", &answer[3], "expires_in")?,
                    refresh_in_ms: parse_count("redis", &answer[4], "refresh time")?,
                    expires_in_ms: parse_count("redis", &answer[5], "expiry")?,
                })),
                Some("failed") if answer.len() == 3 => Ok(TokenLookup::Failed(
                    parse_failure("redis", &answer[1])?,
                    parse_count("redis", &answer[2], "retry time")?,
                )),
                Some("busy") if answer.len() == 2 => Ok(TokenLookup::Busy(
                    parse_count("redis", &answer[1], "lease time")?.clamp(1, 100),
                )),
                Some("leased") => Ok(TokenLookup::Leased),
                _ => Err(bad()),
            }
        })
    }

    /// Shares a granted token; the key expires with the token (the secret at rest never
    /// outlives it).
    fn put_token<'a>(&'a self, holder: &'a str, token: &'a StoredToken) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut call = PUT_TOKEN.prepare_invoke();
            call.key(self.token_key("token"))
                .key(self.token_key("failure"))
                .key(self.token_key("lease"))
                .arg(token.token.expose())
                .arg(&token.scope)
                .arg(token.expires_in)
                .arg(ms(token.refresh_in_ms))
                .arg(ms(token.expires_in_ms))
                .arg(holder);
            let _: i64 = self.invoke(&call).await?;
            Ok(())
        })
    }

    /// Shares a failed token request until its back-off ends (kept [`FAILURE_MEMORY_MS`]
    /// longer for the next back-off).
    fn put_failure<'a>(
        &'a self,
        holder: &'a str,
        failure: &'a StoredFailure,
        backoff_ms: u64,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let record = serde_json::to_string(failure)
                .map_err(|e| StoreError(format!("redis: cannot encode the failure: {e}")))?;
            let mut call = PUT_FAILURE.prepare_invoke();
            call.key(self.token_key("failure"))
                .key(self.token_key("lease"))
                .arg(record)
                .arg(ms(backoff_ms))
                .arg(holder)
                .arg(FAILURE_MEMORY_MS);
            let _: i64 = self.invoke(&call).await?;
            Ok(())
        })
    }

    /// Failures of the token endpoint in a row, as every host sees them (one `HGET`).
    fn failures_in_a_row(&self) -> StoreFuture<'_, u32> {
        Box::pin(async move {
            let mut conn = self.connection().await?;
            let record: Option<String> = match redis::cmd("HGET")
                .arg(self.token_key("failure"))
                .arg("record")
                .query_async(&mut conn)
                .await
            {
                Ok(record) => record,
                Err(e) => return Err(self.failed(&e).await),
            };
            match record {
                Some(record) => Ok(parse_failure("redis", &record)?.in_a_row),
                None => Ok(0),
            }
        })
    }

    /// Forgets a token the service rejected, unless another process already replaced it.
    fn drop_token<'a>(&'a self, rejected: &'a Secret) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut call = DROP_TOKEN.prepare_invoke();
            call.key(self.token_key("token")).arg(rejected.expose());
            let _: i64 = self.invoke(&call).await?;
            Ok(())
        })
    }

    /// The shared windows and token state of the client (never the token's value).
    fn inspect(&self, span_ms: u64) -> StoreFuture<'_, StoredState> {
        Box::pin(async move {
            let mut call = INSPECT.prepare_invoke();
            for class in LimitClass::ALL {
                call.key(self.rate_key(class));
            }
            for class in LimitClass::ALL {
                call.key(self.pause_key(class));
            }
            call.key(self.token_key("token"))
                .key(self.token_key("lease"))
                .key(self.token_key("failure"))
                .arg(ms(span_ms));
            let out: Vec<String> = self.invoke(&call).await?;
            // The lease column is its key's remaining time (-1: no expiry, -2: no key).
            parse_inspect("redis", &out, |lease| {
                let ttl: i64 = lease
                    .parse()
                    .map_err(|_| StoreError("redis: unexpected lease time".into()))?;
                Ok(ttl > 0 || ttl == -1)
            })
        })
    }

    fn backend(&self) -> &'static str {
        "redis"
    }
}
