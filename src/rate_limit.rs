//! The client-side rate limiter: the contract's per-client budgets, kept by the client so that a
//! burst waits for room instead of earning 429 answers.
//!
//! Contract ("Limits"): create merchant payment, 60 per client per minute; query, filtered list
//! and channel directory, 300 per client per minute, shared; notification retry endpoint, 30 per
//! client per minute. One [`RateLimiter`] lives in each client's shared state, so every clone of
//! a client and every session built from it draw on the same budgets.
//!
//! Each budget is a sliding window: at most `budget` requests are sent in any window (plus a
//! small margin against latency differences between the client's and the service's clocks).
//! That is never more than a fixed-window, sliding-window or token-bucket limiter of the same
//! budget admits, whichever the service uses. Every attempt counts, retries included. A 429 from
//! the service still wins: its `Retry-After` pauses the class for every caller of the client.
//!
//! The service counts per OAuth client id. Without a shared store the limiter counts per
//! [`crate::Client`] value (and its clones); with one ([`crate::Config::shared_state`]) every
//! process and host using the client id admits through the same window in the store, one round
//! trip per admitted attempt, and a 429's pause is seen by all of them. When the store does not
//! answer, the process falls back to its own window until it does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::operation::Operation;
use crate::store::{Admission, Admit, SharedState};

/// A budget of the contract's "Limits" table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitClass {
    /// Create merchant payment (60 per client per minute).
    Create,
    /// Query, filtered list and channel directory, shared (300 per client per minute). The
    /// notification-record list is counted here too: its limit is not shown, and counting it can
    /// only make the client wait, never earn a 429.
    Read,
    /// Notification retry endpoint (30 per client per minute).
    Requeue,
}

impl LimitClass {
    /// Every class, in a stable order.
    pub const ALL: [LimitClass; 3] = [LimitClass::Create, LimitClass::Read, LimitClass::Requeue];

    /// The class an operation draws on; `None` where the contract sets no per-client limit
    /// (catalog, profile, products, the token request).
    pub fn of(op: Operation) -> Option<LimitClass> {
        match op {
            Operation::CreateMerchantPayment => Some(LimitClass::Create),
            Operation::GetMerchantPayment
            | Operation::ListMerchantPayments
            | Operation::ListChannels
            | Operation::ListNotifications => Some(LimitClass::Read),
            Operation::RetryNotification => Some(LimitClass::Requeue),
            _ => None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Client-side rate limits (configuration). The defaults are the contract's budgets per minute.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimits {
    /// Whether the client paces its requests at all (default true).
    pub enabled: bool,
    /// Merchant-payment creates per window (default 60).
    pub create_per_window: u32,
    /// Queries, filtered lists and channel-directory reads per window, shared (default 300).
    pub read_per_window: u32,
    /// Notification re-queues per window (default 30).
    pub requeue_per_window: u32,
    /// The window (default one minute).
    #[serde(rename = "window_ms", with = "crate::config::duration_ms")]
    pub window: Duration,
    /// Extra time a request waits beyond the window, against the difference between when the
    /// client sends and when the service counts (default 500 ms).
    #[serde(rename = "margin_ms", with = "crate::config::duration_ms")]
    pub margin: Duration,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            enabled: true,
            create_per_window: 60,
            read_per_window: 300,
            requeue_per_window: 30,
            window: Duration::from_secs(60),
            margin: Duration::from_millis(500),
        }
    }
}

impl RateLimits {
    /// No client-side pacing (the service's 429s are still honoured per call).
    pub fn disabled() -> Self {
        RateLimits {
            enabled: false,
            ..RateLimits::default()
        }
    }

    /// The budget of `class` per window.
    pub fn budget(&self, class: LimitClass) -> u32 {
        match class {
            LimitClass::Create => self.create_per_window,
            LimitClass::Read => self.read_per_window,
            LimitClass::Requeue => self.requeue_per_window,
        }
    }
}

/// What a limit class looks like now (for tests, dashboards and logs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimitState {
    /// The class.
    pub class: LimitClass,
    /// Requests allowed per window.
    pub budget: u32,
    /// Requests sent within the current window.
    pub in_window: u32,
    /// Time left of a pause a 429 `Retry-After` imposed, if any.
    pub paused_for: Option<Duration>,
}

/// One request counted in a window: from when it was sent, then from when its answer came
/// (the service counted it somewhere in between, so the later time is the safe one).
struct Slot {
    id: u64,
    at: Instant,
}

#[derive(Default)]
struct Window {
    slots: Vec<Slot>,
    next_id: u64,
    paused_until: Option<Instant>,
}

/// A request's place in its class's budget. Dropped when the attempt is over (answered, failed
/// or abandoned), which moves the slot's time to then: a request the service received late
/// (queued behind others) is never counted by the client earlier than by the service.
pub(crate) struct Permit<'a> {
    limiter: &'a RateLimiter,
    class: LimitClass,
    id: Option<u64>,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        if let Ok(mut window) = self.limiter.windows[self.class.index()].lock()
            && let Some(slot) = window.slots.iter_mut().find(|s| s.id == id)
        {
            slot.at = Instant::now();
        }
    }
}

/// The budgets of one client (shared by its clones and sessions, and with a shared store by
/// every process using the client id).
pub(crate) struct RateLimiter {
    limits: RateLimits,
    windows: [Mutex<Window>; 3],
    shared: Option<Arc<SharedState>>,
    /// With a shared store, one waiting call per class at a time asks the store (the others
    /// queue behind it in order), so a process's backlog costs the store one round trip per
    /// opening, not one per waiting call.
    turns: [tokio::sync::Mutex<()>; 3],
}

/// What the shared store said to an admission.
enum SharedAdmission {
    Admitted,
    /// Room comes only after the deadline.
    TooLate,
    /// The store did not answer: use the process's own window.
    Unavailable,
}

impl RateLimiter {
    pub fn new(limits: RateLimits, shared: Option<Arc<SharedState>>) -> Self {
        RateLimiter {
            limits,
            windows: Default::default(),
            shared,
            turns: Default::default(),
        }
    }

    /// The window plus the margin: how long an admitted request counts.
    pub fn span(&self) -> Duration {
        self.limits.window.saturating_add(self.limits.margin)
    }

    /// Takes one request of `class`'s budget, waiting for room; gives up (`None`, nothing
    /// taken) when room would come only after `deadline`. Hold the permit for the attempt.
    pub async fn acquire(&self, class: LimitClass, deadline: Instant) -> Option<Permit<'_>> {
        let untracked = Permit {
            limiter: self,
            class,
            id: None,
        };
        if !self.limits.enabled {
            return Some(untracked);
        }
        if let Some(shared) = &self.shared
            && shared.available()
        {
            match self.acquire_shared(shared, class, deadline).await {
                SharedAdmission::Admitted => return Some(untracked),
                SharedAdmission::TooLate => return None,
                SharedAdmission::Unavailable => {}
            }
        }
        self.acquire_local(class, deadline).await
    }

    /// Admission through the shared store's window (one round trip when there is room).
    async fn acquire_shared(
        &self,
        shared: &SharedState,
        class: LimitClass,
        deadline: Instant,
    ) -> SharedAdmission {
        let Ok(_turn) = tokio::time::timeout_at(deadline, self.turns[class.index()].lock()).await
        else {
            return SharedAdmission::TooLate;
        };
        let admit = Admit {
            class,
            budget: self.limits.budget(class),
            span_ms: self.span().as_millis() as u64,
        };
        loop {
            match shared.call(|s| s.admit(admit)).await {
                None => return SharedAdmission::Unavailable,
                Some(Admission::Admitted) => return SharedAdmission::Admitted,
                Some(Admission::Wait(ms)) => {
                    let now = Instant::now();
                    let ready_at = now
                        .checked_add(Duration::from_millis(ms.max(1)))
                        .unwrap_or(deadline + Duration::from_secs(1));
                    if ready_at > deadline {
                        return SharedAdmission::TooLate;
                    }
                    tracing::debug!(
                        class = ?class,
                        delay_ms = ms,
                        "waiting for the shared rate limit"
                    );
                    tokio::time::sleep_until(ready_at).await;
                }
            }
        }
    }

    /// Admission through this process's own window.
    async fn acquire_local(&self, class: LimitClass, deadline: Instant) -> Option<Permit<'_>> {
        let untracked = Permit {
            limiter: self,
            class,
            id: None,
        };
        loop {
            let ready_at = {
                let now = Instant::now();
                let Ok(mut window) = self.windows[class.index()].lock() else {
                    return Some(untracked);
                };
                let span = self.span();
                window
                    .slots
                    .retain(|slot| now.saturating_duration_since(slot.at) < span);
                match window.paused_until {
                    Some(until) if until > now => until,
                    _ if window.slots.len() < self.limits.budget(class) as usize => {
                        let id = window.next_id;
                        window.next_id += 1;
                        window.slots.push(Slot { id, at: now });
                        return Some(Permit {
                            limiter: self,
                            class,
                            id: Some(id),
                        });
                    }
                    _ => match window.slots.iter().map(|slot| slot.at).min() {
                        Some(oldest) => oldest.checked_add(span).unwrap_or(now),
                        // A budget of 0 never has room.
                        None => return None,
                    },
                }
            };
            if ready_at > deadline {
                return None;
            }
            tracing::debug!(
                class = ?class,
                delay_ms = ready_at.saturating_duration_since(Instant::now()).as_millis() as u64,
                "waiting for the client-side rate limit"
            );
            tokio::time::sleep_until(ready_at).await;
        }
    }

    /// A 429 from the service: nobody sends in `class` before `retry_after` has passed: in
    /// this process, and through the shared store in every process of the client.
    pub async fn pause(&self, class: LimitClass, retry_after: Duration) {
        let Some(until) = Instant::now().checked_add(retry_after) else {
            return;
        };
        if let Ok(mut window) = self.windows[class.index()].lock() {
            window.paused_until = Some(window.paused_until.map_or(until, |p| p.max(until)));
        }
        if let Some(shared) = &self.shared {
            let ms = retry_after.as_millis() as u64;
            let _ = shared.call(|s| s.pause(class, ms)).await;
        }
    }

    /// The state of every class now.
    pub fn state(&self) -> Vec<RateLimitState> {
        let now = Instant::now();
        let span = self.span();
        LimitClass::ALL
            .iter()
            .map(|&class| {
                let window = self.windows[class.index()].lock();
                let (in_window, paused_for) = match window {
                    Ok(w) => (
                        w.slots
                            .iter()
                            .filter(|s| now.saturating_duration_since(s.at) < span)
                            .count() as u32,
                        w.paused_until
                            .filter(|p| *p > now)
                            .map(|p| p.saturating_duration_since(now)),
                    ),
                    Err(_) => (0, None),
                };
                RateLimitState {
                    class,
                    budget: self.limits.budget(class),
                    in_window,
                    paused_for,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl RateLimiter {
        fn new_local(limits: RateLimits) -> Self {
            RateLimiter::new(limits, None)
        }
    }

    fn limits(budget: u32, window_ms: u64) -> RateLimits {
        RateLimits {
            create_per_window: budget,
            window: Duration::from_millis(window_ms),
            margin: Duration::ZERO,
            ..RateLimits::default()
        }
    }

    #[test]
    fn each_limited_operation_has_the_contracts_class() {
        assert_eq!(
            LimitClass::of(Operation::CreateMerchantPayment),
            Some(LimitClass::Create)
        );
        for op in [
            Operation::GetMerchantPayment,
            Operation::ListMerchantPayments,
            Operation::ListChannels,
        ] {
            assert_eq!(LimitClass::of(op), Some(LimitClass::Read), "{op}");
        }
        assert_eq!(
            LimitClass::of(Operation::RetryNotification),
            Some(LimitClass::Requeue)
        );
        assert_eq!(LimitClass::of(Operation::CreateOrder), None);
        let d = RateLimits::default();
        assert_eq!(
            (d.create_per_window, d.read_per_window, d.requeue_per_window),
            (60, 300, 30)
        );
        assert_eq!(d.window, Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_window_waits_for_its_oldest_request_to_leave() {
        let limiter = RateLimiter::new_local(limits(2, 1000));
        let far = Instant::now() + Duration::from_secs(60);
        let start = Instant::now();
        assert!(limiter.acquire(LimitClass::Create, far).await.is_some());
        assert!(limiter.acquire(LimitClass::Create, far).await.is_some());
        assert_eq!(Instant::now(), start, "within the budget: no wait");
        assert!(limiter.acquire(LimitClass::Create, far).await.is_some());
        assert_eq!(Instant::now() - start, Duration::from_millis(1000));
        // The first two left the window as the third was sent.
        assert_eq!(limiter.state()[0].in_window, 1);
    }

    /// A request whose answer came late is counted from its answer: the service may have
    /// received it late, so room for the next request opens a window after the answer.
    #[tokio::test(start_paused = true)]
    async fn a_slot_counts_from_the_answer_of_its_request() {
        let limiter = RateLimiter::new_local(limits(1, 1000));
        let start = Instant::now();
        let far = start + Duration::from_secs(60);
        let permit = limiter.acquire(LimitClass::Create, far).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await; // the request is in flight
        drop(permit);
        assert!(limiter.acquire(LimitClass::Create, far).await.is_some());
        assert_eq!(Instant::now() - start, Duration::from_millis(1400));
    }

    #[tokio::test(start_paused = true)]
    async fn room_after_the_deadline_is_refused_without_taking_budget() {
        let limiter = RateLimiter::new_local(limits(1, 1000));
        let far = Instant::now() + Duration::from_secs(60);
        assert!(limiter.acquire(LimitClass::Create, far).await.is_some());
        let soon = Instant::now() + Duration::from_millis(500);
        assert!(limiter.acquire(LimitClass::Create, soon).await.is_none());
        assert_eq!(limiter.state()[0].in_window, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_pauses_the_class_for_everyone() {
        let limiter = RateLimiter::new_local(limits(100, 1000));
        limiter
            .pause(LimitClass::Create, Duration::from_secs(3))
            .await;
        assert_eq!(limiter.state()[0].paused_for, Some(Duration::from_secs(3)));
        let start = Instant::now();
        let far = start + Duration::from_secs(60);
        assert!(limiter.acquire(LimitClass::Create, far).await.is_some());
        assert_eq!(Instant::now() - start, Duration::from_secs(3));
        // Other classes are not paused.
        let t = Instant::now();
        assert!(limiter.acquire(LimitClass::Read, far).await.is_some());
        assert_eq!(Instant::now(), t);
    }

    #[tokio::test(start_paused = true)]
    async fn disabled_limits_never_wait() {
        let limiter = RateLimiter::new_local(RateLimits {
            create_per_window: 0,
            ..RateLimits::disabled()
        });
        let start = Instant::now();
        assert!(limiter.acquire(LimitClass::Create, start).await.is_some());
        assert_eq!(Instant::now(), start);
    }
}
