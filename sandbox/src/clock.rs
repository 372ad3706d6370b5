//! The sandbox clock: real time plus an offset that tests and people move forward.
//!
//! Expiry, background sweeps, token lifetimes and notification retry schedules all read this
//! clock, so a test can make an hour pass without sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use time::{Duration, OffsetDateTime};
use tokio::sync::Notify;

/// Real time shifted by an offset that only grows.
#[derive(Debug, Default)]
pub struct Clock {
    offset_seconds: AtomicI64,
    moved: Notify,
}

impl Clock {
    /// The sandbox's current time (UTC).
    pub fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc() + Duration::seconds(self.offset_seconds())
    }

    /// How far the clock runs ahead of real time, in seconds.
    pub fn offset_seconds(&self) -> i64 {
        self.offset_seconds.load(Ordering::SeqCst)
    }

    /// Moves the clock forward by `seconds` (negative values are ignored: time never runs back)
    /// and wakes the background workers so that what became due runs at once.
    pub fn advance(&self, seconds: i64) {
        if seconds > 0 {
            self.offset_seconds.fetch_add(seconds, Ordering::SeqCst);
        }
        self.moved.notify_waiters();
    }

    /// Completes when the clock is next advanced.
    pub async fn advanced(&self) {
        self.moved.notified().await;
    }
}
