//! The SDK's log records for Kotlin and Swift: a foreign-implemented [`LogSink`] receives each
//! SDK event and request span close as a [`LogRecord`] (see `crate::log_sink`). Kotlin's
//! `StorefrontLogging` forwards them to `java.lang.System.Logger`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::log_sink::{self, SinkSlot};

/// One log record of the SDK. Never carries a secret, a token, a checkout URL or a query.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct LogRecord {
    /// 1 error, 2 warn, 3 info, 4 debug, 5 trace.
    pub level: u32,
    /// The Rust module that logged (`storefront::transport`).
    pub target: String,
    /// The event's message, or `"<span name> closed"` for a span close.
    pub message: String,
    /// The record's fields as text: `method`, `path` (the path template), `status`, `attempt`,
    /// `duration_ms`, `delay_ms`, ...
    pub fields: HashMap<String, String>,
}

impl From<&log_sink::LogRecord> for LogRecord {
    fn from(record: &log_sink::LogRecord) -> Self {
        LogRecord {
            level: record.level_number(),
            target: record.target.clone(),
            message: record.message.clone(),
            fields: record
                .fields
                .iter()
                .map(|(k, v)| {
                    let text = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect(),
        }
    }
}

/// Receives the SDK's log records. Implement it in Kotlin or Swift. Called on the SDK's own
/// threads (tokio workers) as well as the caller's, possibly concurrently: do not block, and
/// do not throw (a thrown exception is dropped).
#[uniffi::export(with_foreign)]
pub trait LogSink: Send + Sync {
    /// One record.
    fn log(&self, record: LogRecord);
}

/// Sends the SDK's log records up to `max_level` (1 error … 5 trace) to `sink`, replacing the
/// previous sink; `null` or `max_level` 0 removes it. Process-wide.
#[uniffi::export]
pub fn set_log_sink(sink: Option<Arc<dyn LogSink>>, max_level: u32) {
    let sink = sink.map(|sink| {
        Arc::new(move |record: &log_sink::LogRecord| sink.log(LogRecord::from(record)))
            as log_sink::Sink
    });
    log_sink::set_sink(SinkSlot::Foreign, sink, max_level);
}
