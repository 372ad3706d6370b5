//! Real Redis and PostgreSQL servers for the store tests (Debian's `redis-server` and
//! `postgresql` packages): each on 127.0.0.1 on a free port with its files in a temporary
//! directory, stopped by process id when dropped (SIGTERM, then wait), so no test leaves a
//! process running.
//!
//! Missing binaries fail the test with how to install them (`bash .ci/install-servers.sh`),
//! unless `STOREFRONT_SKIP_SERVER_TESTS=1` is set: then the test prints a loud skip line and
//! passes.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a server may take to answer after it is started.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// `None` (with a loud skip line) when the binary is missing and skipping is allowed; panics
/// with how to install the servers otherwise.
fn missing(what: &str) -> Option<std::convert::Infallible> {
    if std::env::var("STOREFRONT_SKIP_SERVER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!(
            "\n!!!!! SKIPPED: {what} is not installed and STOREFRONT_SKIP_SERVER_TESTS=1: \
             this store backend was NOT tested !!!!!\n"
        );
        return None;
    }
    panic!(
        "{what} is not installed: run `bash .ci/install-servers.sh` (or set \
         STOREFRONT_SKIP_SERVER_TESTS=1 to skip the store backend tests)"
    );
}

/// A fresh temporary directory, removed by [`TempDir`]'s drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(kind: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "storefront-{kind}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        // Private, as the SQLite files' folder must be (src/sqlite_file/trust.rs).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                .expect("make the temporary directory private");
        }
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A temporary directory for a SQLite database (removed on drop).
pub(crate) struct ScratchDir(TempDir);

impl ScratchDir {
    pub fn new() -> ScratchDir {
        ScratchDir(TempDir::new("sqlite"))
    }

    pub fn path(&self) -> &Path {
        &self.0.0
    }
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

/// Sends SIGTERM to `pid` and waits for the child to exit (SIGKILL after 10 s).
fn terminate(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// The first of `candidates` that exists.
fn find(candidates: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    candidates.into_iter().find(|p| p.is_file())
}

/// `name` in `PATH`, `/usr/bin` or `/usr/sbin`.
fn in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    find(
        std::env::split_paths(&path)
            .chain(["/usr/bin".into(), "/usr/sbin".into()])
            .map(|d| d.join(name)),
    )
}

/// A `redis-server` child on 127.0.0.1, without persistence.
pub(crate) struct RedisServer {
    binary: PathBuf,
    port: u16,
    dir: TempDir,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts a server and waits until it answers PING; `None` when skipped (see the module).
    pub fn start() -> Option<RedisServer> {
        let Some(binary) = in_path("redis-server") else {
            missing("redis-server")?;
            return None;
        };
        let mut server = RedisServer {
            binary,
            port: free_port(),
            dir: TempDir::new("redis"),
            child: None,
        };
        server.restart();
        Some(server)
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// The port (kept across restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server (SIGTERM, then wait).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            terminate(&mut child);
        }
    }

    /// Starts the server again on the same port (stopping it first if it runs).
    pub fn restart(&mut self) {
        self.stop();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let mut child = Command::new(&self.binary)
                .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&self.dir.0)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn redis-server");
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // exited (port still held?): start it again
                }
                if ping(self.port) {
                    self.child = Some(child);
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            terminate(&mut child);
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer on port {} within {START_TIMEOUT:?}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether a Redis server answers PING on `port`.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut answer = [0u8; 7];
    matches!(stream.read(&mut answer), Ok(n) if answer[..n].starts_with(b"+PONG"))
}

/// A PostgreSQL cluster in a temporary directory (initdb, pg_ctl start), run as `postgres`
/// when the tests run as root (PostgreSQL refuses root).
pub(crate) struct PostgresServer {
    bin: PathBuf,
    port: u16,
    dir: TempDir,
    as_postgres: bool,
    running: bool,
}

impl PostgresServer {
    /// Creates and starts a cluster; `None` when skipped (see the module).
    pub fn start() -> Option<PostgresServer> {
        let Some(bin) = postgres_bin() else {
            missing("PostgreSQL (initdb, pg_ctl)")?;
            return None;
        };
        // SAFETY: geteuid has no preconditions.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = TempDir::new("postgres");
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir.0)
                .status()
                .expect("run chown");
            assert!(status.success(), "chown of the postgres directory failed");
        }
        let mut server = PostgresServer {
            bin,
            port: free_port(),
            dir,
            as_postgres,
            running: false,
        };
        let data = server.dir.0.join("data");
        let out = server
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "--no-sync"])
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        server.restart();
        Some(server)
    }

    /// Starts the cluster (again, on the same port).
    pub fn restart(&mut self) {
        self.stop();
        let data = self.dir.0.join("data");
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.0.display()
        );
        self.running = true; // from here on, stop() and Drop stop it
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["-o", &options, "-l"])
            .arg(self.dir.0.join("log"))
            .args(["-w", "-t", "30", "start"])
            .output()
            .expect("run pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.0.join("log")).unwrap_or_default()
        );
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A command of the server's binary directory, run as `postgres` when we are root.
    fn command(&self, tool: &str) -> Command {
        let program = self.bin.join(tool);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        command.stdin(Stdio::null());
        command
    }

    /// The postmaster's process id, from its pid file.
    fn postmaster_pid(&self) -> Option<libc::pid_t> {
        std::fs::read_to_string(self.dir.0.join("data").join("postmaster.pid"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }
}

impl PostgresServer {
    /// Stops the cluster (`pg_ctl stop -m fast`, then SIGTERM/SIGKILL by process id).
    pub fn stop(&mut self) {
        if !self.running {
            return;
        }
        let pid = self.postmaster_pid();
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.0.join("data"))
            .args(["-m", "fast", "-w", "-t", "20", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // If pg_ctl could not stop it, stop the postmaster by its id.
        if let Some(pid) = pid {
            // SAFETY: kill(2) with signal 0 (existence) and then SIGTERM/SIGKILL on the
            // postmaster this server started.
            unsafe {
                if libc::kill(pid, 0) == 0 {
                    libc::kill(pid, libc::SIGTERM);
                    std::thread::sleep(Duration::from_secs(2));
                    if libc::kill(pid, 0) == 0 {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        self.running = false;
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The binary directory of the newest PostgreSQL installed (`/usr/lib/postgresql/*/bin`).
fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((major, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}
