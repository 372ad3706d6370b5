//! The headless-Chromium driver of the browser tests: a node script of `tests/browser`
//! (playwright-core driving Debian's `chromium`) that reads one JSON request on stdin and prints
//! JSON events on stdout, one a line (the script's side: `tests/browser/protocol.mjs`).
//! `.ci/suites/55-browser.sh` installs both.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The whole browser part (Chromium start included) must finish within this.
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a test's screenshots are kept (`target/test-artifacts/{name}`).
pub fn artifacts_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("test-artifacts")
        .join(name)
}

/// Asserts that the driver's `done` event lists `count` screenshots, each a non-empty PNG, and
/// prints their paths.
pub fn assert_screenshots(done: &Value, count: usize) {
    let shots: Vec<PathBuf> = done["screenshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    assert_eq!(shots.len(), count, "{done:#}");
    for shot in &shots {
        let png = std::fs::read(shot).expect("screenshot written");
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{} is a PNG",
            shot.display()
        );
        assert!(png.len() > 2_000, "{} is not empty", shot.display());
        println!("screenshot: {}", shot.display());
    }
}

/// The node driver: JSON lines on stdout, one request on stdin.
pub struct Driver {
    child: Child,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<String>,
    deadline: Instant,
}

impl Driver {
    /// Starts `node {script}` in `tests/browser`; the [`BROWSER_TIMEOUT`] runs from now.
    pub fn start(script: &str) -> Driver {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
        assert!(
            dir.join("node_modules/playwright-core").is_dir(),
            "run `npm ci` in {} first (.ci/suites/55-browser.sh does)",
            dir.display()
        );
        let chromium = std::env::var("CHROMIUM_BIN").unwrap_or_else(|_| "/usr/bin/chromium".into());
        assert!(
            Path::new(&chromium).exists(),
            "{chromium} is missing: apt-get install chromium (.ci/suites/55-browser.sh does)"
        );
        let mut child = Command::new("node")
            .arg(script)
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Driver {
            stdin: child.stdin.take(),
            child,
            events,
            deadline: Instant::now() + BROWSER_TIMEOUT,
        }
    }

    /// The next JSON event; panics on an `error` event, a closed driver or the deadline.
    pub fn next(&self, expected: &str) -> Value {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let line = tokio::task::block_in_place(|| self.events.recv_timeout(left))
            .unwrap_or_else(|e| panic!("browser driver: no {expected} event ({e})"));
        let event: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("browser driver printed {line:?}: {e}"));
        assert_eq!(event["event"], expected, "browser driver: {event:#}");
        event
    }

    /// Sends the driver its one request.
    pub fn send(&mut self, request: Value) {
        let mut stdin = self.stdin.take().expect("one request");
        writeln!(stdin, "{request}").expect("driver reads its request");
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Normally exited already; on a failed test, do not leave Chromium behind.
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}
