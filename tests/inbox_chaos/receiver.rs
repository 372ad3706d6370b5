//! A receiver process: the test executable run again with [`ROLE_ENV`] set. It serves
//! `POST /hook` (store in the inbox, answer the receipt's status) on 127.0.0.1 on a free port,
//! prints `CHAOS_READY {port}` on stdout, and runs one worker (claim, handle in the app's own
//! transaction, complete in it). Its clock is the sandbox's (re-read every 200 ms). It exits
//! when its stdin closes (the test ended or died) — or when the test kills it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
const CONTROL_ENV: &str = "STOREFRONT_CHAOS_CONTROL";
const READY: &str = "CHAOS_READY ";

/// The lease of a claimed event.
const LEASE: Duration = Duration::from_secs(2);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

async fn clock_offset(http: &reqwest::Client, control: &str) -> Option<i64> {
    let v: serde_json::Value = http
        .get(format!("{control}/clock"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    v["offset_seconds"].as_i64()
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
        let control = env(CONTROL_ENV);
        let http = reqwest::Client::new();
        let offset = Arc::new(AtomicI64::new(loop {
            if let Some(o) = clock_offset(&http, &control).await {
                break o;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }));
        {
            let offset = Arc::clone(&offset);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if let Some(o) = clock_offset(&http, &control).await {
                        offset.store(o, Ordering::SeqCst);
                    }
                }
            });
        }
        let clock_offset = Arc::clone(&offset);
        let verifier = WebhookVerifier::new([env(SECRET_ENV)])
            .expect("verifier")
            .with_clock(Arc::new(move || {
                unix_now() + clock_offset.load(Ordering::SeqCst)
            }));
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

/// A receiver child process; dropping it kills it (SIGKILL) and waits for it.
pub struct ReceiverProcess {
    child: Child,
    /// The port its `/hook` listens on.
    pub port: u16,
}

impl ReceiverProcess {
    /// Starts a receiver and waits until it listens.
    pub fn spawn(db: &str, secret: &str, control: &str) -> ReceiverProcess {
        let mut child = Command::new(std::env::current_exe().expect("current exe"))
            .args([
                "--exact",
                "chaos_receiver_role",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ROLE_ENV, "receiver")
            .env(DB_ENV, db)
            .env(SECRET_ENV, secret)
            .env(CONTROL_ENV, control)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("receiver starts");
        let stdout = child.stdout.take().expect("child stdout");
        let mut process = ReceiverProcess { child, port: 0 };
        process.port = read_ready(stdout);
        process
    }

    /// SIGKILL, then wait.
    pub fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ReceiverProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads the child's stdout up to its ready line (at most 30 s), then drains the rest on the
/// same thread (so the child never blocks on a full pipe).
fn read_ready(stdout: ChildStdout) -> u16 {
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
        Err(e) => panic!("the receiver did not start listening: {e}"),
    }
}
