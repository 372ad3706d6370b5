//! The round-robin proxy every payment notifies: it forwards each delivery to the next receiver,
//! sometimes to two (a duplicate), and sometimes drops the acknowledgement after the receiver
//! answered (closes the connection without answering), so the service delivers again. One HTTP/1.1
//! request per connection, answered with `Connection: close`.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A tiny seeded xorshift64* generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    /// A number in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }
}

/// What the proxy saw.
#[derive(Default)]
pub struct Stats {
    /// Deliveries the service made to the proxy.
    pub deliveries: AtomicU64,
    /// Requests forwarded to receivers.
    pub forwarded: AtomicU64,
    /// Deliveries sent to two receivers.
    pub duplicates: AtomicU64,
    /// Acknowledgements (2xx of a receiver) not passed on.
    pub dropped_acks: AtomicU64,
    /// Deliveries no receiver answered (killed, down): answered 502.
    pub forward_failures: AtomicU64,
    /// Notification ids some receiver acknowledged (2xx).
    pub acked: Mutex<HashSet<String>>,
    /// Receipt outcomes of the receivers' answers.
    pub outcomes: Mutex<BTreeMap<String, u64>>,
}

/// The proxy's settings and state.
pub struct Shared {
    /// Each receiver's port, `None` while it is down.
    pub targets: Mutex<Vec<Option<u16>>>,
    pub stats: Stats,
    rng: Mutex<Rng>,
    next: AtomicUsize,
    http: reqwest::Client,
    drop_ack: f64,
    duplicate: f64,
}

/// The running proxy; dropping it stops it.
pub struct Proxy {
    pub url: String,
    pub shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts the proxy for `receivers` targets (all down until set).
    pub async fn start(receivers: usize, seed: u64, drop_ack: f64, duplicate: f64) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let shared = Arc::new(Shared {
            targets: Mutex::new(vec![None; receivers]),
            stats: Stats::default(),
            rng: Mutex::new(Rng::new(seed)),
            next: AtomicUsize::new(0),
            http: reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(6))
                .build()
                .expect("proxy client"),
            drop_ack,
            duplicate,
        });
        let s = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(serve(Arc::clone(&s), socket));
            }
        });
        Proxy { url, shared, task }
    }

    pub fn set_target(&self, index: usize, port: Option<u16>) {
        self.shared.targets.lock().unwrap()[index] = port;
    }
}

/// One request: its headers (lowercase names) and body.
struct Request {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() > 64 * 1024 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).ok()?;
    let mut lines = head.split("\r\n");
    lines.next()?; // request line
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Some(Request { headers, body })
}

/// Forwards to the next receiver: its status and body, `None` when it could not be reached.
async fn forward(shared: &Shared, request: &Request) -> Option<(u16, String)> {
    let index = shared.next.fetch_add(1, Ordering::Relaxed);
    let port = {
        let targets = shared.targets.lock().unwrap();
        targets[index % targets.len()]
    }?;
    shared.stats.forwarded.fetch_add(1, Ordering::Relaxed);
    let mut rb = shared
        .http
        .post(format!("http://127.0.0.1:{port}/hook"))
        .body(request.body.clone());
    for (k, v) in &request.headers {
        if k.starts_with("x-service-") || k == "content-type" {
            rb = rb.header(k.as_str(), v.as_str());
        }
    }
    let response = rb.send().await.ok()?;
    let status = response.status().as_u16();
    let body = response.text().await.ok()?;
    if (200..300).contains(&status) {
        let id = request
            .headers
            .iter()
            .find(|(k, _)| k == "x-service-event-id")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        shared.stats.acked.lock().unwrap().insert(id);
    }
    let outcome = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["outcome"].as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("http_{status}"));
    *shared
        .stats
        .outcomes
        .lock()
        .unwrap()
        .entry(outcome)
        .or_default() += 1;
    Some((status, body))
}

async fn serve(shared: Arc<Shared>, mut socket: TcpStream) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    shared.stats.deliveries.fetch_add(1, Ordering::Relaxed);
    let (duplicate, drop_ack) = {
        let mut rng = shared.rng.lock().unwrap();
        (rng.chance(shared.duplicate), rng.chance(shared.drop_ack))
    };
    let answer = if duplicate {
        shared.stats.duplicates.fetch_add(1, Ordering::Relaxed);
        let (a, b) = tokio::join!(forward(&shared, &request), forward(&shared, &request));
        a.or(b)
    } else {
        forward(&shared, &request).await
    };
    let Some((status, body)) = answer else {
        shared
            .stats
            .forward_failures
            .fetch_add(1, Ordering::Relaxed);
        let _ = socket
            .write_all(
                b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            )
            .await;
        let _ = socket.shutdown().await;
        return;
    };
    if drop_ack {
        // The receiver stored it; the service never hears so.
        shared.stats.dropped_acks.fetch_add(1, Ordering::Relaxed);
        drop(socket);
        return;
    }
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(body.as_bytes()).await;
    let _ = socket.shutdown().await;
}
