//! The receivers the test starts, kills and restarts ([`ReceiverProcess`], of a [`Kind`]).
//!
//! The Rust receiver: the test executable run again with [`ROLE_ENV`] set. It serves
//! `POST /hook` (store in the inbox, answer the receipt's status) on 127.0.0.1 on a free port,
//! prints `CHAOS_READY {port}` on stdout, and runs one worker (claim, handle in the app's own
//! transaction, complete in it). It checks timestamps on real time, as deliveries are stamped. It exits
//! when its stdin closes (the test ended or died) — or when the test kills it.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use storefront::WebhookVerifier;
use storefront::inbox::Inbox;

use super::app::{AppDb, Handled};

/// The environment variable that makes the test executable a receiver.
pub const ROLE_ENV: &str = "STOREFRONT_CHAOS_ROLE";
const DB_ENV: &str = "STOREFRONT_CHAOS_DB";
const SECRET_ENV: &str = "STOREFRONT_CHAOS_SECRET";
const READY: &str = "CHAOS_READY ";

/// The lease of a claimed event.
const LEASE: Duration = Duration::from_secs(2);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

async fn hook(
    State(inbox): State<Arc<Inbox>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let receipt = inbox.receive_headers(&headers, &body).await;
    (
        StatusCode::from_u16(receipt.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        receipt.body(),
    )
}

/// Runs the receiver when this process was started as one (never returns then).
pub fn run_if_child() {
    if std::env::var(ROLE_ENV).as_deref() != Ok("receiver") {
        return;
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("receiver runtime");
    rt.block_on(async {
        let db = env(DB_ENV);
        // Deliveries are stamped with the real time of the attempt (the sandbox's default),
        // so the verifier's ordinary clock accepts them however far the sandbox clock moved.
        let verifier = WebhookVerifier::new([env(SECRET_ENV)]).expect("verifier");
        let inbox = Arc::new(Inbox::open(&db, verifier).expect("inbox opens"));
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .with_state(Arc::clone(&inbox));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        tokio::spawn(worker(Arc::clone(&inbox), db));
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{READY}{port}").expect("stdout");
            out.flush().expect("stdout");
        }
        // The parent holds our stdin: its end (or the parent's death) ends this process.
        let _ = tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
        })
        .await;
    });
    std::process::exit(0);
}

/// Claims events and handles each in the app's own transaction, forever.
async fn worker(inbox: Arc<Inbox>, db: String) {
    let mut app = loop {
        match AppDb::connect(&db).await {
            Ok(app) => break app,
            Err(e) => {
                eprintln!("chaos receiver: app database: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    loop {
        let events = match inbox.claim(10, LEASE).await {
            Ok(events) => events,
            Err(e) => {
                eprintln!("chaos receiver: claim: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if events.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        for event in events {
            // The app's own work on the event: a kill lands while events are claimed.
            tokio::time::sleep(Duration::from_millis(10)).await;
            match app.handle(&event, inbox.completion_sql()).await {
                Ok(Handled::Committed) | Ok(Handled::LeaseLost) => {}
                Err(e) => {
                    eprintln!("chaos receiver: handling {}: {e}", event.id);
                    let _ = inbox.release(&event).await;
                    if let Ok(again) = AppDb::connect(&db).await {
                        app = again;
                    }
                }
            }
        }
    }
}

/// Which receiver the test runs: this executable (axum and the Rust `Inbox`), or the same
/// receiver written with a wrapper over the C library (`bindings/python/tests/chaos_receiver.py`,
/// `bindings/php/tests/chaos_receiver.php`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Rust,
    Python,
    Php,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Rust => "rust",
            Kind::Python => "python",
            Kind::Php => "php",
        }
    }
}

/// What the wrapper receivers need: the C library, found by the wrappers through
/// `STOREFRONT_LIB`.
#[derive(Clone, Debug)]
pub struct Wrappers {
    pub lib: PathBuf,
}

/// The line a wrapper test prints when it is not asked to run.
pub const SKIP_HINT: &str = "set STOREFRONT_CHAOS_WRAPPERS=1 after \
    `cargo build -p storefront --features capi,uniffi`";

impl Wrappers {
    /// `None` (with a "skipped" line) unless `STOREFRONT_CHAOS_WRAPPERS=1`; then every piece
    /// `kind` needs must be there, or this panics saying which is missing.
    pub fn from_env(test: &str, kind: Kind) -> Option<Wrappers> {
        if std::env::var("STOREFRONT_CHAOS_WRAPPERS").as_deref() != Ok("1") {
            eprintln!("{test}: skipped: {SKIP_HINT}");
            return None;
        }
        let lib = match std::env::var_os("STOREFRONT_LIB") {
            Some(lib) => PathBuf::from(lib),
            // <target dir>/debug/deps/inbox_chaos-… → <target dir>/debug/libstorefront.so
            None => std::env::current_exe()
                .expect("current exe")
                .ancestors()
                .nth(3)
                .expect("target dir")
                .join("debug/libstorefront.so"),
        };
        assert!(
            lib.is_file(),
            "{test}: the C library {} is missing: run `cargo build -p storefront --features \
             capi,uniffi` (or point STOREFRONT_LIB at it)",
            lib.display()
        );
        let (program, args): (&str, &[&str]) = match kind {
            Kind::Rust => return Some(Wrappers { lib }),
            Kind::Python => ("python3", &["-c", "import ctypes, sqlite3, wsgiref"]),
            Kind::Php => (
                "php",
                &[
                    "-r",
                    "exit(extension_loaded('ffi') && extension_loaded('pdo_sqlite') ? 0 : 1);",
                ],
            ),
        };
        let ok = Command::new(program)
            .args(args)
            .status()
            .unwrap_or_else(|e| panic!("{test}: `{program}` does not run: {e}"));
        assert!(
            ok.success(),
            "{test}: `{program}` lacks what the receiver needs (python3: ctypes, sqlite3; php: \
             the FFI and pdo_sqlite extensions)"
        );
        Some(Wrappers { lib })
    }
}

/// A receiver: its processes (one process group: the receiver, and for PHP the built-in
/// server's workers and the worker process); dropping it kills them all (SIGKILL) and waits.
pub struct ReceiverProcess {
    /// The group's leader first.
    children: Vec<Child>,
    /// The leader was waited for (its id may name another process now).
    leader_reaped: bool,
    /// The port its `/hook` listens on.
    pub port: u16,
}

/// The repository's root (the `storefront` crate's manifest directory).
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

impl ReceiverProcess {
    /// Starts a receiver of `kind` and waits until it listens (at most 30 s).
    pub fn spawn(
        kind: Kind,
        wrappers: Option<&Wrappers>,
        db: &str,
        secret: &str,
    ) -> ReceiverProcess {
        let lib = || {
            &wrappers
                .expect("a wrapper receiver needs the C library")
                .lib
        };
        match kind {
            Kind::Rust => {
                let mut command = Command::new(std::env::current_exe().expect("current exe"));
                command
                    .args([
                        "--exact",
                        "chaos_receiver_role",
                        "--nocapture",
                        "--test-threads=1",
                    ])
                    .env(ROLE_ENV, "receiver")
                    .env(DB_ENV, db)
                    .env(SECRET_ENV, secret);
                Self::spawn_ready(kind, command)
            }
            Kind::Python => {
                let mut command = Command::new("python3");
                command
                    .arg(repo().join("bindings/python/tests/chaos_receiver.py"))
                    .args(["--db", db, "--secret", secret])
                    .env("STOREFRONT_LIB", lib())
                    .env("PYTHONUNBUFFERED", "1");
                Self::spawn_ready(kind, command)
            }
            Kind::Php => {
                for _ in 0..3 {
                    if let Some(p) = Self::spawn_php(lib(), db, secret) {
                        return p;
                    }
                }
                panic!("the PHP receiver did not start listening (three ports tried)");
            }
        }
    }

    /// A receiver that prints `CHAOS_READY {port}` once it listens, its stdin ours.
    fn spawn_ready(kind: Kind, mut command: Command) -> ReceiverProcess {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("the {} receiver does not start: {e}", kind.name()));
        let stdout = child.stdout.take().expect("child stdout");
        let mut process = ReceiverProcess {
            children: vec![child],
            leader_reaped: false,
            port: 0,
        };
        process.port = read_ready(kind, stdout);
        process
    }

    /// `php -S` (PHP_CLI_SERVER_WORKERS=2) on a free port and `php … work`, in one process
    /// group; `None` when the server could not listen (the port was taken meanwhile).
    fn spawn_php(lib: &Path, db: &str, secret: &str) -> Option<ReceiverProcess> {
        let script = repo().join("bindings/php/tests/chaos_receiver.php");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let php = |command: &mut Command| {
            command
                .env("STOREFRONT_LIB", lib)
                .env("INBOX_URL", db)
                .env("NOTIFY_SECRET", secret)
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
        };
        let mut server = Command::new("php");
        server
            .args(["-d", "ffi.enable=1", "-S", &format!("127.0.0.1:{port}")])
            .arg(&script)
            .env("PHP_CLI_SERVER_WORKERS", "2")
            .stdin(Stdio::null())
            .process_group(0);
        php(&mut server);
        let mut server = server
            .spawn()
            .unwrap_or_else(|e| panic!("`php -S` does not start: {e}"));
        forward_stderr(server.stderr.take().expect("php stderr"));
        let group = server.id() as i32;
        let mut process = ReceiverProcess {
            children: vec![server],
            leader_reaped: false,
            port,
        };
        let mut worker = Command::new("php");
        worker
            .args(["-d", "ffi.enable=1"])
            .arg(&script)
            .arg("work")
            .stdin(Stdio::piped())
            .process_group(group);
        php(&mut worker);
        let mut worker = worker
            .spawn()
            .unwrap_or_else(|e| panic!("the PHP worker does not start: {e}"));
        forward_stderr(worker.stderr.take().expect("php stderr"));
        process.children.push(worker);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(process);
            }
            if let Ok(Some(status)) = process.children[0].try_wait() {
                process.leader_reaped = true;
                eprintln!("chaos receiver: `php -S 127.0.0.1:{port}` ended: {status}");
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("`php -S 127.0.0.1:{port}` did not start listening within 30 s");
    }

    /// SIGKILL, then wait.
    pub fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        // The group (its leader, not waited for yet, keeps the id ours), then each child.
        if let (Some(leader), false) = (self.children.first(), self.leader_reaped) {
            // SAFETY: kill(2) with a process group id; no memory is involved.
            unsafe {
                libc::kill(-(leader.id() as i32), libc::SIGKILL);
            }
        }
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        // The built-in server's workers, handed to us by the killed server ([`Subreaper`]).
        if let Some(leader) = self.children.first() {
            // SAFETY: waitpid(2) on our process group's children; no status is read.
            while unsafe { libc::waitpid(-(leader.id() as i32), std::ptr::null_mut(), 0) } > 0 {}
        }
    }
}

impl Drop for ReceiverProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// While it lives, this process adopts its descendants orphaned by a kill (`php -S` forks its
/// workers; SIGKILLed together, the server cannot wait for them), so that the receiver's `stop`
/// waits for them too.
pub struct Subreaper;

impl Subreaper {
    pub fn set() -> Subreaper {
        // SAFETY: prctl(2) with integer arguments.
        let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        assert_eq!(done, 0, "prctl(PR_SET_CHILD_SUBREAPER)");
        Subreaper
    }
}

impl Drop for Subreaper {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
        }
    }
}

/// Passes a PHP process's stderr on, without the built-in server's request log.
fn forward_stderr(stderr: ChildStderr) {
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            let log = [
                "Development Server (",
                " Accepted",
                " Closing",
                " Closed without sending a request",
                "]: POST /",
            ];
            if !log.iter().any(|l| line.contains(l)) {
                eprintln!("{line}");
            }
        }
    });
}

/// Reads the child's stdout up to its ready line (at most 30 s), then drains the rest on the
/// same thread (so the child never blocks on a full pipe).
fn read_ready(kind: Kind, stdout: ChildStdout) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return, // exited: the sender drops
                Ok(_) => {}
            }
            // libtest's "test chaos_receiver_role ... " precedes it on the same line.
            if let Some(at) = line.find(READY) {
                let _ = tx.send(line[at + READY.len()..].trim().parse::<u16>());
                break;
            }
        }
        let mut sink = Vec::new();
        let _ = reader.read_to_end(&mut sink);
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(port) => port.expect("receiver port"),
        Err(e) => panic!("the {} receiver did not start listening: {e}", kind.name()),
    }
}
