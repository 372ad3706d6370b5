//! One conformance suite for every shared-state backend, run against real servers (SQLite
//! file, `redis-server`, PostgreSQL from [`super::test_servers`]): the per-client limits
//! shared by every process, the 429 pause for the client, one token per client fetched by one
//! lease holder, the shared failure back-off, namespaces that keep shops apart, and exactly
//! `budget` admissions when eight processes race.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

#[allow(unused_imports)] // each backend's test uses its own server
use super::test_servers::{PostgresServer, RedisServer, ScratchDir};
use super::*;

/// Builds a separate store object (as a separate process would have) for a namespace.
type Factory<'a> = &'a (dyn Fn(Namespace) -> Box<dyn Store> + Sync);

/// The store timeout of the tests.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A namespace no other check of this run uses.
fn fresh_ns(label: &str) -> Namespace {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Namespace::new(
        Some(&format!("t{}-{n}", std::process::id())),
        &format!("client-{label}"),
        "https://service.test/oauth/token",
        &["payments".to_owned()],
    )
}

fn token(value: &str, refresh_in_ms: u64, expires_in_ms: u64) -> StoredToken {
    StoredToken {
        token: Secret::new(value),
        scope: "payments catalog".into(),
        expires_in: expires_in_ms / 1000,
        refresh_in_ms,
        expires_in_ms,
    }
}

fn failure(in_a_row: u32) -> StoredFailure {
    StoredFailure {
        status: Some(503),
        error: "temporarily_unavailable".into(),
        description: Some("token endpoint down".into()),
        in_a_row,
    }
}

fn admit(class: LimitClass, budget: u32, span_ms: u64) -> Admit {
    Admit {
        class,
        budget,
        span_ms,
    }
}

fn window(state: &StoredState, class: LimitClass) -> &StoredWindow {
    state
        .windows
        .iter()
        .find(|w| w.class == class)
        .expect("one window per class")
}

/// The whole suite against one backend.
async fn conformance(make: Factory<'_>) {
    concurrent_processes_admit_exactly_the_budget(make).await;
    budget_then_wait_then_room_after_the_span(make).await;
    a_pause_stops_only_its_class(make).await;
    namespaces_are_independent(make).await;
    one_lease_holder_then_a_shared_token(make).await;
    an_expired_lease_passes_to_another_holder(make).await;
    a_failure_is_shared_until_its_back_off_ends(make).await;
    tokens_due_or_expired_are_not_fresh(make).await;
    drop_token_drops_only_the_rejected_value(make).await;
}

/// Per-client limits shared by every process: 8 store objects admitting 50 times each, at once,
/// with budget 60 → exactly 60 admitted (also the concurrent first use of a fresh store).
async fn concurrent_processes_admit_exactly_the_budget(make: Factory<'_>) {
    let ns = fresh_ns("race");
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let store = make(ns.clone());
        tasks.push(tokio::spawn(async move {
            let mut admitted = 0u32;
            for _ in 0..50 {
                match store.admit(admit(LimitClass::Create, 60, 60_000)).await {
                    Ok(Admission::Admitted) => admitted += 1,
                    Ok(Admission::Wait(ms)) => assert!(ms > 0 && ms <= 60_000, "{ms}"),
                    Err(e) => panic!("{} admit failed: {e}", store.backend()),
                }
            }
            admitted
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("task");
    }
    assert_eq!(total, 60, "exactly the budget across 8 processes");
    let state = make(ns).inspect(60_000).await.expect("inspect");
    assert_eq!(window(&state, LimitClass::Create).in_window, 60);
    assert_eq!(window(&state, LimitClass::Read).in_window, 0);
}

async fn budget_then_wait_then_room_after_the_span(make: Factory<'_>) {
    let store = make(fresh_ns("budget"));
    let span = 600;
    let started = Instant::now();
    for i in 0..3 {
        let a = store.admit(admit(LimitClass::Read, 3, span)).await.unwrap();
        assert_eq!(a, Admission::Admitted, "admission {i}");
    }
    let Admission::Wait(wait) = store.admit(admit(LimitClass::Read, 3, span)).await.unwrap() else {
        panic!("the fourth admission must wait");
    };
    let elapsed = started.elapsed().as_millis() as u64;
    assert!(
        wait >= 1 && wait <= span && wait + elapsed + 50 >= span,
        "wait {wait} after {elapsed} ms"
    );
    let state = store.inspect(span).await.unwrap();
    assert_eq!(window(&state, LimitClass::Read).in_window, 3);
    // The refused attempt was not counted; after the span the entries leave.
    tokio::time::sleep(Duration::from_millis(wait + 30)).await;
    assert_eq!(
        store.admit(admit(LimitClass::Read, 3, span)).await.unwrap(),
        Admission::Admitted
    );
    let state = store.inspect(span).await.unwrap();
    assert_eq!(window(&state, LimitClass::Read).in_window, 1);
    // Budget 0: never admitted.
    assert_eq!(
        store
            .admit(admit(LimitClass::Requeue, 0, 700))
            .await
            .unwrap(),
        Admission::Wait(700)
    );
}

/// A 429's Retry-After applies to the client's class, in every process; other classes go on.
async fn a_pause_stops_only_its_class(make: Factory<'_>) {
    let ns = fresh_ns("pause");
    let store = make(ns.clone());
    let other_process = make(ns);
    store.pause(LimitClass::Create, 500).await.unwrap();
    // A shorter pause does not shorten it.
    other_process.pause(LimitClass::Create, 10).await.unwrap();
    let Admission::Wait(wait) = other_process
        .admit(admit(LimitClass::Create, 10, 60_000))
        .await
        .unwrap()
    else {
        panic!("a paused class waits");
    };
    assert!((300..=500).contains(&wait), "{wait}");
    assert_eq!(
        other_process
            .admit(admit(LimitClass::Read, 10, 60_000))
            .await
            .unwrap(),
        Admission::Admitted
    );
    let state = store.inspect(60_000).await.unwrap();
    let paused = window(&state, LimitClass::Create).paused_for_ms.unwrap();
    assert!((200..=500).contains(&paused), "{paused}");
    assert_eq!(window(&state, LimitClass::Create).in_window, 0);
    assert_eq!(window(&state, LimitClass::Read).paused_for_ms, None);
    assert_eq!(window(&state, LimitClass::Read).in_window, 1);
    tokio::time::sleep(Duration::from_millis(wait + 30)).await;
    assert_eq!(
        store
            .admit(admit(LimitClass::Create, 10, 60_000))
            .await
            .unwrap(),
        Admission::Admitted
    );
}

async fn namespaces_are_independent(make: Factory<'_>) {
    let a = make(fresh_ns("shop-a"));
    let b = make(fresh_ns("shop-b"));
    assert_eq!(
        a.admit(admit(LimitClass::Create, 1, 60_000)).await.unwrap(),
        Admission::Admitted
    );
    assert!(matches!(
        a.admit(admit(LimitClass::Create, 1, 60_000)).await.unwrap(),
        Admission::Wait(_)
    ));
    a.pause(LimitClass::Read, 60_000).await.unwrap();
    assert_eq!(
        b.admit(admit(LimitClass::Create, 1, 60_000)).await.unwrap(),
        Admission::Admitted
    );
    assert_eq!(
        b.admit(admit(LimitClass::Read, 1, 60_000)).await.unwrap(),
        Admission::Admitted
    );
    assert!(matches!(
        a.token("h1", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    assert!(
        matches!(b.token("h2", 5_000).await.unwrap(), TokenLookup::Leased),
        "another client's lease is not ours"
    );
    a.put_token("h1", &token("tok-of-a", 60_000, 120_000))
        .await
        .unwrap();
    assert!(matches!(
        b.token("h2", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    assert!(!b.inspect(60_000).await.unwrap().token_shared);
    // Other scopes of one client: one budget, another token.
    let ns = fresh_ns("scopes");
    let mut other_scopes = ns.clone();
    other_scopes.token.push_str(" catalog");
    let s1 = make(ns);
    let s2 = make(other_scopes);
    s1.token("h1", 5_000).await.unwrap();
    s1.put_token("h1", &token("tok-s1", 60_000, 120_000))
        .await
        .unwrap();
    assert!(matches!(
        s2.token("h2", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    s1.admit(admit(LimitClass::Create, 1, 60_000))
        .await
        .unwrap();
    assert!(matches!(
        s2.admit(admit(LimitClass::Create, 1, 60_000))
            .await
            .unwrap(),
        Admission::Wait(_)
    ));
}

/// The token is kept only on the merchant server and fetched by one process: the first asker
/// leases, the others wait, then everyone reads the stored token.
async fn one_lease_holder_then_a_shared_token(make: Factory<'_>) {
    let ns = fresh_ns("token");
    let p1 = make(ns.clone());
    let p2 = make(ns);
    assert!(matches!(
        p1.token("h1", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    let TokenLookup::Busy(poll) = p2.token("h2", 5_000).await.unwrap() else {
        panic!("a second holder waits");
    };
    assert!((1..=100).contains(&poll), "{poll}");
    // The holder itself renews its lease.
    assert!(matches!(
        p1.token("h1", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    let state = p2.inspect(60_000).await.unwrap();
    assert!(state.token_lease_held && !state.token_shared);
    assert_eq!(state.token_expires_in_ms, None);

    p1.put_token("h1", &token("tok-shared-1", 2_000, 4_000))
        .await
        .unwrap();
    for p in [&p1, &p2] {
        let TokenLookup::Fresh(t) = p.token("h2", 5_000).await.unwrap() else {
            panic!("a stored token is fresh for every process");
        };
        assert_eq!(t.token.expose(), "tok-shared-1");
        assert_eq!(t.scope, "payments catalog");
        assert_eq!(t.expires_in, 4);
        assert!((1_500..=2_000).contains(&t.refresh_in_ms), "{t:?}");
        assert!((3_500..=4_000).contains(&t.expires_in_ms), "{t:?}");
    }
    let state = p2.inspect(60_000).await.unwrap();
    assert!(state.token_shared, "{state:?}");
    assert!(!state.token_lease_held, "put_token released the lease");
    let expires = state.token_expires_in_ms.unwrap();
    assert!((3_500..=4_000).contains(&expires), "{expires}");
    assert_eq!(state.token_failures_in_a_row, 0);
    let shown = format!(
        "{state:?} {} {:?}",
        serde_json::to_string(&state).unwrap(),
        p1.token("h1", 1).await.unwrap()
    );
    assert!(!shown.contains("tok-shared-1"), "{shown}");
}

async fn an_expired_lease_passes_to_another_holder(make: Factory<'_>) {
    let ns = fresh_ns("lease");
    let p1 = make(ns.clone());
    let p2 = make(ns);
    assert!(matches!(
        p1.token("h1", 200).await.unwrap(),
        TokenLookup::Leased
    ));
    assert!(matches!(
        p2.token("h2", 200).await.unwrap(),
        TokenLookup::Busy(_)
    ));
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(!p2.inspect(1_000).await.unwrap().token_lease_held);
    assert!(matches!(
        p2.token("h2", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    assert!(matches!(
        p1.token("h1", 5_000).await.unwrap(),
        TokenLookup::Busy(_)
    ));
    // A holder that lost its lease cannot release the new holder's lease.
    p1.put_failure("h1", &failure(1), 1).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(p1.inspect(1_000).await.unwrap().token_lease_held);
}

/// A failed token request is answered to every process until its back-off ends.
async fn a_failure_is_shared_until_its_back_off_ends(make: Factory<'_>) {
    let ns = fresh_ns("failure");
    let p1 = make(ns.clone());
    let p2 = make(ns);
    assert_eq!(p2.failures_in_a_row().await.unwrap(), 0);
    assert!(matches!(
        p1.token("h1", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    p1.put_failure("h1", &failure(2), 400).await.unwrap();
    let TokenLookup::Failed(f, left) = p2.token("h2", 5_000).await.unwrap() else {
        panic!("the failure is shared");
    };
    assert_eq!(f, failure(2));
    assert!((250..=400).contains(&left), "{left}");
    assert_eq!(p2.failures_in_a_row().await.unwrap(), 2);
    let state = p2.inspect(1_000).await.unwrap();
    assert_eq!(state.token_failures_in_a_row, 2);
    assert!(!state.token_lease_held, "put_failure released the lease");
    tokio::time::sleep(Duration::from_millis(left + 30)).await;
    assert!(matches!(
        p2.token("h2", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    assert_eq!(
        p1.failures_in_a_row().await.unwrap(),
        2,
        "kept for the next back-off"
    );
    p2.put_failure("h2", &failure(3), 60_000).await.unwrap();
    assert_eq!(p1.failures_in_a_row().await.unwrap(), 3);
    p2.put_token("h2", &token("tok-after-failure", 60_000, 120_000))
        .await
        .unwrap();
    assert_eq!(p1.failures_in_a_row().await.unwrap(), 0);
    assert!(matches!(
        p1.token("h1", 5_000).await.unwrap(),
        TokenLookup::Fresh(_)
    ));
}

/// The token's lifetime is managed by `expires_in`: due for renewal → not fresh (one process
/// leases), expired → gone.
async fn tokens_due_or_expired_are_not_fresh(make: Factory<'_>) {
    let store = make(fresh_ns("due"));
    store.token("h1", 5_000).await.unwrap();
    store
        .put_token("h1", &token("tok-due", 100, 60_000))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(matches!(
        store.token("h2", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    let state = store.inspect(1_000).await.unwrap();
    assert!(!state.token_shared);
    assert!(state.token_expires_in_ms.is_some_and(|ms| ms > 50_000));

    let store = make(fresh_ns("expired"));
    store.token("h1", 5_000).await.unwrap();
    store
        .put_token("h1", &token("tok-expired", 150, 150))
        .await
        .unwrap();
    assert!(matches!(
        store.token("h2", 5_000).await.unwrap(),
        TokenLookup::Fresh(_)
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let state = store.inspect(1_000).await.unwrap();
    assert!(!state.token_shared);
    assert_eq!(state.token_expires_in_ms, None);
}

/// A 401 `invalid_token` forgets the rejected token, not one another process stored since.
async fn drop_token_drops_only_the_rejected_value(make: Factory<'_>) {
    let store = make(fresh_ns("drop"));
    store.token("h1", 5_000).await.unwrap();
    store
        .put_token("h1", &token("tok-current", 60_000, 120_000))
        .await
        .unwrap();
    store.drop_token(&Secret::new("tok-old")).await.unwrap();
    let TokenLookup::Fresh(t) = store.token("h1", 5_000).await.unwrap() else {
        panic!("another value does not drop the token");
    };
    assert_eq!(t.token.expose(), "tok-current");
    store.drop_token(&Secret::new("tok-current")).await.unwrap();
    assert!(matches!(
        store.token("h1", 5_000).await.unwrap(),
        TokenLookup::Leased
    ));
    assert!(!store.inspect(1_000).await.unwrap().token_shared);
}

#[cfg(feature = "store-sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_store_conforms() {
    use std::os::unix::fs::PermissionsExt;
    let dir = ScratchDir::new();
    let path = dir.path().join("shared.db");
    let make = |ns| Box::new(sqlite::SqliteStore::new(path.clone(), ns, TIMEOUT)) as Box<dyn Store>;
    let lazy = make(fresh_ns("lazy"));
    assert!(
        !path.exists(),
        "nothing is opened before the first operation"
    );
    assert_eq!(lazy.backend(), "sqlite");
    conformance(&make).await;
    // The token is a secret at rest: the database and its WAL files are the owner's only.
    for suffix in ["", "-wal", "-shm"] {
        let file = dir.path().join(format!("shared.db{suffix}"));
        if let Ok(meta) = std::fs::metadata(&file) {
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{file:?}");
        }
    }
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    // An existing file with a wider mode is refused, never narrowed (issue 27, item 1).
    let wide = dir.path().join("wide.db");
    std::fs::write(&wide, b"").unwrap();
    std::fs::set_permissions(&wide, std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = sqlite::SqliteStore::new(wide.clone(), fresh_ns("wide"), TIMEOUT);
    let refused = store.pause(LimitClass::Read, 10).await.unwrap_err();
    assert!(
        refused.0.contains("wide.db") && refused.0.contains("chmod 600"),
        "{refused:?}"
    );
    let mode = std::fs::metadata(&wide).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    // A -wal planted by someone else (here a world-readable one) is refused by name: the
    // token would be written into it.
    let planted = dir.path().join("planted.db");
    std::fs::write(dir.path().join("planted.db-wal"), b"").unwrap();
    std::fs::set_permissions(
        dir.path().join("planted.db-wal"),
        std::fs::Permissions::from_mode(0o666),
    )
    .unwrap();
    let store = sqlite::SqliteStore::new(planted.clone(), fresh_ns("planted"), TIMEOUT);
    let refused = store.pause(LimitClass::Read, 10).await.unwrap_err();
    assert!(refused.0.contains("planted.db-wal"), "{refused:?}");
    assert_eq!(
        std::fs::metadata(dir.path().join("planted.db-wal"))
            .unwrap()
            .len(),
        0
    );
    // An unusable path is an error, not a panic.
    let bad = sqlite::SqliteStore::new(
        dir.path().join("missing-dir").join("x.db"),
        fresh_ns("bad"),
        TIMEOUT,
    );
    assert!(bad.admit(admit(LimitClass::Read, 1, 1_000)).await.is_err());
}

#[cfg(feature = "store-redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_store_conforms() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let url = Secret::new(server.url());
    let make = |ns| {
        Box::new(redis::RedisStore::new(&url, ns, TIMEOUT).expect("redis store")) as Box<dyn Store>
    };
    assert_eq!(make(fresh_ns("name")).backend(), "redis");
    conformance(&make).await;
}

/// A stopped Redis fails operations (bounded by the timeout, no panic), and the same store
/// object works again once Redis is back on its port.
#[cfg(feature = "store-redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_store_survives_a_restart() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let timeout = Duration::from_millis(500);
    let url = Secret::new(server.url());
    let store = redis::RedisStore::new(&url, fresh_ns("restart"), timeout).unwrap();
    let op = || store.admit(admit(LimitClass::Read, 100, 60_000));
    assert_eq!(op().await.unwrap(), Admission::Admitted);
    server.stop();
    for _ in 0..3 {
        let started = Instant::now();
        let outcome = tokio::time::timeout(timeout * 4, op()).await;
        assert!(
            matches!(outcome, Ok(Err(_))),
            "an error while Redis is down, within the timeout: {outcome:?}"
        );
        assert!(started.elapsed() < timeout * 3);
    }
    server.restart();
    assert_eq!(op().await.unwrap(), Admission::Admitted);
    assert!(store.inspect(60_000).await.is_ok());
    // A password in the URL never shows in an error.
    let secret_url = Secret::new(format!("redis://:sekret-pw@127.0.0.1:{}/0", server.port()));
    let with_password = redis::RedisStore::new(&secret_url, fresh_ns("pw"), timeout).unwrap();
    let e = with_password.failures_in_a_row().await.unwrap_err();
    assert!(!e.0.contains("sekret-pw"), "{e}");
    server.stop();
    let e = with_password.failures_in_a_row().await.unwrap_err();
    assert!(!e.0.contains("sekret-pw"), "{e}");
}

#[cfg(feature = "store-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_store_conforms() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = Secret::new(server.url());
    let make = |ns| {
        Box::new(postgres::PostgresStore::new(&url, ns, TIMEOUT).expect("postgres store"))
            as Box<dyn Store>
    };
    assert_eq!(make(fresh_ns("name")).backend(), "postgres");
    conformance(&make).await;
    // A password in the URL never shows in an error (nothing listens on port 1).
    let secret_url = Secret::new("postgres://postgres:sekret-pw@127.0.0.1:1/postgres");
    let store = postgres::PostgresStore::new(&secret_url, fresh_ns("pw"), TIMEOUT).unwrap();
    let e = store.failures_in_a_row().await.unwrap_err();
    assert!(!e.0.contains("sekret-pw"), "{e}");
    drop(server);
}

/// A stopped PostgreSQL fails operations (no panic, no hang), and the same store object
/// connects again once the server is back.
#[cfg(feature = "store-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_survives_a_restart() {
    let Some(mut server) = PostgresServer::start() else {
        return;
    };
    let url = Secret::new(server.url());
    let store = postgres::PostgresStore::new(&url, fresh_ns("restart"), TIMEOUT).unwrap();
    let op = || store.admit(admit(LimitClass::Read, 100, 60_000));
    assert_eq!(op().await.unwrap(), Admission::Admitted);
    server.stop();
    for _ in 0..2 {
        let outcome = tokio::time::timeout(TIMEOUT * 2, op()).await;
        assert!(
            matches!(outcome, Ok(Err(_))),
            "an error while PostgreSQL is down, within the timeout: {outcome:?}"
        );
    }
    server.restart();
    assert_eq!(op().await.unwrap(), Admission::Admitted);
    let state = store.inspect(60_000).await.unwrap();
    assert_eq!(window(&state, LimitClass::Read).in_window, 2);
}
