//! Background work of the simulated service: the expiry sweep and notification delivery.
//! Runs on a short real-time tick and whenever the sandbox clock is advanced.

use std::sync::Arc;

use crate::state::Shared;

/// Runs the background work until the task is aborted.
pub async fn run(shared: Arc<Shared>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
            _ = shared.clock.advanced() => {}
        }
    }
}
