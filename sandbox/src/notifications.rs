//! Notification events and their delivery records.

use std::sync::Arc;

use axum::Router;

use crate::state::Shared;

/// Notification events and their delivery records.
#[derive(Debug, Default)]
pub struct NotificationStore {}

/// Routes of this module.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
}
