//! The sandbox clock: real time plus an offset that tests and people move forward.
//!
//! Expiry, background sweeps, token lifetimes and notification retry schedules all read this
//! clock, so a test can make an hour pass without sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use time::{Duration, OffsetDateTime};
use tokio::sync::Notify;

/// Largest offset the clock runs ahead of real time: 100 years (in seconds). Far beyond any
/// test's need, and far inside what [`OffsetDateTime`] holds (year 9999) even after the
/// longest lifetimes and expiries are added to the sandbox's "now".
pub const MAX_OFFSET_SECONDS: i64 = 100 * 366 * 24 * 3600;

/// Why an advance was refused (rule: the clock never wraps and never leaves the range
/// [`OffsetDateTime`] can hold, so no later request can fail on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AdvanceError {
    /// A negative advance: time never runs back.
    #[error("the clock only moves forward")]
    Backwards,
    /// The offset would pass [`MAX_OFFSET_SECONDS`] (or overflow).
    #[error(
        "the clock cannot run more than {MAX_OFFSET_SECONDS} seconds (100 years) ahead of real time; it is {current} seconds ahead"
    )]
    TooFar {
        /// The offset when the advance was refused.
        current: i64,
    },
}

/// Real time shifted by an offset that only grows, up to [`MAX_OFFSET_SECONDS`].
#[derive(Debug, Default)]
pub struct Clock {
    offset_seconds: AtomicI64,
    moved: Notify,
}

impl Clock {
    /// The sandbox's current time (UTC). The offset is bounded, so the sum always fits; should
    /// it not, the time saturates instead of panicking.
    pub fn now(&self) -> OffsetDateTime {
        let real = OffsetDateTime::now_utc();
        real.checked_add(Duration::seconds(self.offset_seconds()))
            .unwrap_or(real)
    }

    /// How far the clock runs ahead of real time, in seconds.
    pub fn offset_seconds(&self) -> i64 {
        self.offset_seconds.load(Ordering::SeqCst)
    }

    /// Moves the clock forward by `seconds` and wakes the background workers so that what became
    /// due runs at once; returns the new offset. Refuses a negative advance and one that would
    /// put the clock more than [`MAX_OFFSET_SECONDS`] ahead (checked arithmetic in a
    /// compare-exchange loop: concurrent advances never wrap nor pass the bound). Zero is
    /// allowed and only wakes the workers.
    pub fn advance(&self, seconds: i64) -> Result<i64, AdvanceError> {
        if seconds < 0 {
            return Err(AdvanceError::Backwards);
        }
        let mut current = self.offset_seconds();
        let new = loop {
            let next = current
                .checked_add(seconds)
                .filter(|next| *next <= MAX_OFFSET_SECONDS)
                .ok_or(AdvanceError::TooFar { current })?;
            match self.offset_seconds.compare_exchange(
                current,
                next,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => break next,
                Err(actual) => current = actual,
            }
        };
        self.moved.notify_waiters();
        Ok(new)
    }

    /// Completes when the clock is next advanced.
    pub async fn advanced(&self) {
        self.moved.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_refuses_advances_it_cannot_hold_and_never_wraps() {
        let clock = Clock::default();
        assert_eq!(clock.advance(-1), Err(AdvanceError::Backwards));
        assert_eq!(clock.advance(60), Ok(60));
        assert_eq!(
            clock.advance(i64::MAX),
            Err(AdvanceError::TooFar { current: 60 })
        );
        assert_eq!(
            clock.advance(MAX_OFFSET_SECONDS),
            Err(AdvanceError::TooFar { current: 60 })
        );
        assert_eq!(
            clock.advance(MAX_OFFSET_SECONDS - 60),
            Ok(MAX_OFFSET_SECONDS)
        );
        assert_eq!(clock.offset_seconds(), MAX_OFFSET_SECONDS);
        assert!(clock.now() > OffsetDateTime::now_utc());
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
