//! What the whole-process benches (`request_path`, `waiters`) share: the sandbox in a child
//! process (so the measuring process's CPU time and memory are the client's alone), process CPU
//! time from `getrusage`, resident memory from `/proc/self/status`, and the open connections to
//! the sandbox from `/proc/self/net/tcp`.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Environment variable that makes the bench executable serve the sandbox instead of measuring.
const ROLE: &str = "STOREFRONT_BENCH_ROLE";

/// Where the child's sandbox listens (one JSON line on the child's stdout).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInfo {
    pub base_url: String,
    pub token_endpoint: String,
    pub control_url: String,
    pub ca_pem: Option<String>,
    pub port: u16,
}

/// When this process was started as the server child: serves the sandbox (HTTPS when
/// `STOREFRONT_BENCH_TLS=1`) until its stdin closes, then exits. Returns false in the measuring
/// process.
pub fn serve_if_child() -> bool {
    if std::env::var(ROLE).as_deref() != Ok("server") {
        return false;
    }
    let tls = std::env::var("STOREFRONT_BENCH_TLS").as_deref() == Ok("1");
    let rt = tokio::runtime::Runtime::new().expect("server runtime");
    rt.block_on(async {
        let window = std::env::var("STOREFRONT_BENCH_RATE_WINDOW")
            .ok()
            .and_then(|w| w.parse().ok())
            .unwrap_or(60);
        let sandbox = storefront_sandbox::Sandbox::start_with(storefront_sandbox::SandboxOptions {
            tls,
            rate_limit_window_seconds: window,
            ..Default::default()
        })
        .await
        .expect("sandbox starts");
        let info = ServerInfo {
            base_url: sandbox.base_url(),
            token_endpoint: sandbox.token_endpoint(),
            control_url: sandbox.control_url(),
            ca_pem: sandbox.ca_pem(),
            port: sandbox.address().port(),
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string(&info).expect("info")).expect("stdout");
        out.flush().expect("stdout");
        drop(out);
        // The parent holds our stdin; its end (or the parent's death) stops the server.
        tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
        })
        .await
        .expect("stdin watcher");
        drop(sandbox);
    });
    true
}

/// The sandbox running in a child process of this executable; dropping it stops the child.
pub struct ServerChild {
    child: Child,
    pub info: ServerInfo,
}

impl ServerChild {
    /// Starts the child and waits for its address.
    pub fn spawn(tls: bool) -> ServerChild {
        ServerChild::spawn_with(tls, 60)
    }

    /// [`ServerChild::spawn`] with the sandbox's rate-limit window in seconds.
    pub fn spawn_with(tls: bool, rate_window_s: u32) -> ServerChild {
        let mut child = Command::new(std::env::current_exe().expect("current exe"))
            .env(ROLE, "server")
            .env("STOREFRONT_BENCH_RATE_WINDOW", rate_window_s.to_string())
            .env("STOREFRONT_BENCH_TLS", if tls { "1" } else { "0" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("server child starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("child stdout"))
            .read_line(&mut line)
            .expect("server child answers");
        let info = serde_json::from_str(&line).expect("server child prints its address");
        ServerChild { child, info }
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The system allocator, counting allocations (and reallocations) while [`count_allocations`]
/// is on; off, it costs one relaxed load of a flag nobody writes.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counter has no other effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Turns allocation counting on (resetting the count) or off; returns the count so far.
pub fn count_allocations(on: bool) -> u64 {
    if on {
        ALLOCATIONS.store(0, Ordering::Relaxed);
    }
    COUNTING.store(on, Ordering::Relaxed);
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// A reqwest client (ring TLS provider) trusting only `ca_pem`, if given; redirects not followed
/// (as the SDK).
pub fn reqwest_client(ca_pem: Option<&str>) -> reqwest::Client {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = ca_pem {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(cert.expect("CA PEM")).expect("CA");
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("reqwest client")
}

/// User + system CPU time of this whole process so far (`getrusage(RUSAGE_SELF)`).
pub fn process_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we own; RUSAGE_SELF is always valid.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
pub fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// Resets the peak resident size (`VmHWM`) to the current one (Linux `clear_refs` value 5).
/// Returns false where the kernel does not allow it (then the peak counts from process start).
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Established TCP connections from this machine to `port` on loopback (IPv4), with the local
/// ports they use: the client's connections to the sandbox.
pub fn connections_to(port: u16) -> Vec<u16> {
    let Ok(table) = std::fs::read_to_string("/proc/self/net/tcp") else {
        return Vec::new();
    };
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut cols = l.split_whitespace().skip(1);
            let local = cols.next()?;
            let remote = cols.next()?;
            let state = cols.next()?;
            let remote_port = u16::from_str_radix(remote.rsplit(':').next()?, 16).ok()?;
            let local_port = u16::from_str_radix(local.rsplit(':').next()?, 16).ok()?;
            // 01 = ESTABLISHED.
            (remote_port == port && state == "01").then_some(local_port)
        })
        .collect()
}

/// The median of `values` (sorted in place).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Whether the bench runs in its smoke mode (`--smoke` or `STOREFRONT_BENCH_SMOKE=1`): few
/// iterations, figures printed, nothing asserted about them.
pub fn smoke() -> bool {
    std::env::args().any(|a| a == "--smoke")
        || std::env::var("STOREFRONT_BENCH_SMOKE").as_deref() == Ok("1")
}

/// A numeric option from the environment, or `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
