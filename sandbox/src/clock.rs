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

/// Which clock stamps `X-Service-Timestamp` on notification deliveries (issue 17 item 5).
///
/// The contract defines the header as the Unix seconds of *this delivery*, and a receiver that
/// follows it compares the value with its own (real) clock. The sandbox clock only runs ahead of
/// real time, so signing with it would make every receiver refuse every delivery once the clock
/// is advanced by more than the receiver's tolerance (5 minutes by default). The business times
/// in the body (`paid_at`, ...) always stay on the sandbox clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeliveryTimestamp {
    /// Real time of the attempt (default): receivers verify with their ordinary clock.
    #[default]
    WallClock,
    /// The sandbox clock: for receivers that deliberately follow the sandbox's time.
    SandboxClock,
}

impl DeliveryTimestamp {
    /// The header value for an attempt made now, read from `clock` when it is chosen.
    pub fn now(self, clock: &Clock) -> i64 {
        match self {
            DeliveryTimestamp::WallClock => OffsetDateTime::now_utc().unix_timestamp(),
            DeliveryTimestamp::SandboxClock => clock.now().unix_timestamp(),
        }
    }

    /// Parses the command-line spelling: `wall` or `sandbox`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "wall" => Some(DeliveryTimestamp::WallClock),
            "sandbox" => Some(DeliveryTimestamp::SandboxClock),
            _ => None,
        }
    }
}
