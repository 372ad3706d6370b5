//! Background work of the simulated service: the expiry sweep (once per sandbox-clock minute)
//! and notification delivery (each due attempt in its own task, without the lock).
//! Runs on a short real-time tick and whenever the sandbox clock is advanced.

use std::sync::Arc;

use crate::merchant_payments::rules;
use crate::notifications::delivery::deliver;
use crate::state::AppState;

/// Runs the background work until the task is aborted.
pub async fn run(shared: Arc<AppState>) {
    loop {
        sweep_if_due(&shared);
        dispatch_due(&shared);
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
            _ = shared.clock.advanced() => {}
        }
    }
}

/// The sweep runs once per sandbox-clock minute unless paused through the control endpoint.
fn sweep_if_due(shared: &AppState) {
    let now = shared.clock.now();
    let minute = now.unix_timestamp().div_euclid(60);
    let mut db = shared.db();
    let db = &mut *db;
    let state = &mut db.payments.sweep;
    if state.paused || state.last_minute == Some(minute) {
        return;
    }
    state.last_minute = Some(minute);
    let swept = rules::sweep(&mut db.payments, &db.directory.channels, now);
    db.notifications.record_events(swept.events);
}

/// Claims due deliveries under the lock, then sends each in its own task.
fn dispatch_due(shared: &Arc<AppState>) {
    let now = shared.clock.now();
    let jobs = shared.db().notifications.claim_due(now);
    for job in jobs {
        tokio::spawn(deliver(shared.clone(), job));
    }
}
