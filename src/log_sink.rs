//! The SDK's log records for hosts without a Rust logging stack (the C ABI, Kotlin, Swift).
//!
//! A small [`tracing`] subscriber, installed process-wide on the first [`set_sink`] (only when
//! no other global subscriber was set: a Rust application keeps its own), turns every event of
//! the SDK (target `storefront` or `storefront::…`) and every span close into one [`LogRecord`]: level, target,
//! message, and the fields of the event and of the spans it happened in: `method`, `path` (the
//! operation's path template, never a URL with its query), `status`, `attempt`, `duration_ms`,
//! `delay_ms` of a retry. The SDK's spans and events never carry secrets, tokens or checkout
//! URLs (see `transport.rs`); other crates' events are not forwarded.
//!
//! Sinks are kept in named slots (the C callback, the C buffer, the uniffi sink), each with its
//! own maximum level. A sink is called on whichever thread logged (often a runtime worker);
//! events logged while a sink runs on the same thread are dropped, so a sink that calls back into
//! the SDK cannot recurse.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, RwLock};
use std::time::Instant;

use serde::Serialize;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// Error (1), the most severe level.
pub const LEVEL_ERROR: u32 = 1;
/// Warn (2).
pub const LEVEL_WARN: u32 = 2;
/// Info (3).
pub const LEVEL_INFO: u32 = 3;
/// Debug (4).
pub const LEVEL_DEBUG: u32 = 4;
/// Trace (5), the most verbose level.
pub const LEVEL_TRACE: u32 = 5;

/// One log record: an SDK event or a span close.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogRecord {
    /// `"error"`, `"warn"`, `"info"`, `"debug"` or `"trace"`.
    pub level: &'static str,
    /// The Rust module that logged (`storefront::transport`).
    pub target: String,
    /// The event's message; for a span close, `"<span name> closed"`.
    pub message: String,
    /// The event's fields and those of its enclosing spans (the event's win on a clash).
    pub fields: BTreeMap<String, serde_json::Value>,
}

impl LogRecord {
    /// The level as a number, 1 (error) to 5 (trace).
    pub fn level_number(&self) -> u32 {
        match self.level {
            "error" => LEVEL_ERROR,
            "warn" => LEVEL_WARN,
            "info" => LEVEL_INFO,
            "debug" => LEVEL_DEBUG,
            _ => LEVEL_TRACE,
        }
    }

    /// The record as one JSON line (no newline): `{"level","target","message","fields":{...}}`.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A receiver of log records.
pub type Sink = Arc<dyn Fn(&LogRecord) + Send + Sync>;

/// Where a sink is installed; each slot holds at most one sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SinkSlot {
    /// The C ABI's callback (`sf_log_set_callback`).
    CCallback,
    /// The C ABI's ring buffer (`sf_log_buffer_enable`).
    CBuffer,
    /// The uniffi sink (`set_log_sink`).
    Foreign,
    /// Tests.
    Test,
}

struct Installed {
    slot: SinkSlot,
    max_level: u32,
    sink: Sink,
}

static SINKS: RwLock<Vec<Installed>> = RwLock::new(Vec::new());
/// The most verbose level any sink wants (0: none).
static MAX_LEVEL: AtomicU32 = AtomicU32::new(0);
static INSTALL: Once = Once::new();
static INSTALLED: AtomicU32 = AtomicU32::new(0);

/// Installs `sink` in `slot` for records up to `max_level` (1 error … 5 trace; larger values
/// mean trace), replacing the slot's previous sink; `None` or `max_level` 0 empties the slot.
///
/// Returns whether the SDK's subscriber is the process's global one (false when the host set
/// another global `tracing` subscriber first: then records reach that one instead).
pub fn set_sink(slot: SinkSlot, sink: Option<Sink>, max_level: u32) -> bool {
    let max_level = max_level.min(LEVEL_TRACE);
    {
        let mut sinks = SINKS
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sinks.retain(|s| s.slot != slot);
        if let Some(sink) = sink.filter(|_| max_level > 0) {
            sinks.push(Installed {
                slot,
                max_level,
                sink,
            });
        }
        let max = sinks.iter().map(|s| s.max_level).max().unwrap_or(0);
        MAX_LEVEL.store(max, Ordering::SeqCst);
    }
    INSTALL.call_once(|| {
        let dispatch = tracing::Dispatch::new(SinkSubscriber::default());
        if tracing::dispatcher::set_global_default(dispatch).is_ok() {
            INSTALLED.store(1, Ordering::SeqCst);
        }
    });
    // Levels are part of the cached interest of each call site.
    tracing::callsite::rebuild_interest_cache();
    INSTALLED.load(Ordering::SeqCst) == 1
}

fn level_number(level: &Level) -> u32 {
    match *level {
        Level::ERROR => LEVEL_ERROR,
        Level::WARN => LEVEL_WARN,
        Level::INFO => LEVEL_INFO,
        Level::DEBUG => LEVEL_DEBUG,
        _ => LEVEL_TRACE,
    }
}

fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        _ => "trace",
    }
}

thread_local! {
    /// The spans entered on this thread, innermost last.
    static STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// Set while this thread runs the sinks.
    static IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// Delivers a record to every sink that wants its level.
fn deliver(record: &LogRecord) {
    if IN_SINK.with(Cell::get) {
        return;
    }
    let level = record.level_number();
    let sinks: Vec<Sink> = match SINKS.read() {
        Ok(sinks) => sinks
            .iter()
            .filter(|s| level <= s.max_level)
            .map(|s| Arc::clone(&s.sink))
            .collect(),
        Err(_) => return,
    };
    IN_SINK.with(|f| f.set(true));
    for sink in sinks {
        // A panicking sink must not unwind into the SDK's code that logged.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(record)));
    }
    IN_SINK.with(|f| f.set(false));
}

/// Collects field values as JSON (numbers and booleans stay typed).
struct Fields<'a> {
    fields: &'a mut BTreeMap<String, serde_json::Value>,
    message: Option<&'a mut String>,
}

impl Fields<'_> {
    fn put(&mut self, field: &Field, value: serde_json::Value) {
        if field.name() == "message"
            && let Some(message) = self.message.as_deref_mut()
        {
            *message = match value {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            return;
        }
        self.fields.insert(field.name().to_owned(), value);
    }
}

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, serde_json::Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, serde_json::Value::String(value.to_owned()));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.into());
    }
}

struct SpanData {
    name: &'static str,
    target: String,
    level: Level,
    parent: Option<u64>,
    fields: BTreeMap<String, serde_json::Value>,
    opened: Instant,
    refs: usize,
}

#[derive(Default)]
struct SinkSubscriber {
    next_id: AtomicU64,
    spans: Mutex<HashMap<u64, SpanData>>,
}

impl SinkSubscriber {
    fn spans(&self) -> std::sync::MutexGuard<'_, HashMap<u64, SpanData>> {
        self.spans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The fields of span `id` and its ancestors, outermost first (inner spans win).
    fn span_fields(&self, id: Option<u64>, into: &mut BTreeMap<String, serde_json::Value>) {
        let spans = self.spans();
        let mut chain = Vec::new();
        let mut next = id;
        while let Some(id) = next {
            match spans.get(&id) {
                Some(span) => {
                    chain.push(span);
                    next = span.parent;
                }
                None => break,
            }
        }
        for span in chain.into_iter().rev() {
            into.extend(span.fields.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
}

/// Whether `target` is this crate's (`storefront` or `storefront::…`; not `storefront_sandbox`).
fn is_sdk_target(target: &str) -> bool {
    target == "storefront" || target.starts_with("storefront::")
}

fn wanted(metadata: &Metadata<'_>) -> bool {
    is_sdk_target(metadata.target())
        && level_number(metadata.level()) <= MAX_LEVEL.load(Ordering::Relaxed)
}

impl Subscriber for SinkSubscriber {
    fn register_callsite(&self, _metadata: &'static Metadata<'static>) -> Interest {
        // Levels change at run time (`set_sink`): ask `enabled` every time.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        wanted(metadata)
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        use tracing::level_filters::LevelFilter;
        Some(match MAX_LEVEL.load(Ordering::Relaxed) {
            0 => LevelFilter::OFF,
            1 => LevelFilter::ERROR,
            2 => LevelFilter::WARN,
            3 => LevelFilter::INFO,
            4 => LevelFilter::DEBUG,
            _ => LevelFilter::TRACE,
        })
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let parent = if attributes.is_root() {
            None
        } else if let Some(parent) = attributes.parent() {
            Some(parent.into_u64())
        } else {
            STACK.with(|s| s.borrow().last().copied())
        };
        let mut fields = BTreeMap::new();
        attributes.record(&mut Fields {
            fields: &mut fields,
            message: None,
        });
        let metadata = attributes.metadata();
        self.spans().insert(
            id,
            SpanData {
                name: metadata.name(),
                target: metadata.target().to_owned(),
                level: *metadata.level(),
                parent,
                fields,
                opened: Instant::now(),
                refs: 1,
            },
        );
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(data) = self.spans().get_mut(&span.into_u64()) {
            values.record(&mut Fields {
                fields: &mut data.fields,
                message: None,
            });
        }
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let parent = if event.is_root() {
            None
        } else if let Some(parent) = event.parent() {
            Some(parent.into_u64())
        } else {
            STACK.with(|s| s.borrow().last().copied())
        };
        let mut fields = BTreeMap::new();
        self.span_fields(parent, &mut fields);
        let mut message = String::new();
        event.record(&mut Fields {
            fields: &mut fields,
            message: Some(&mut message),
        });
        deliver(&LogRecord {
            level: level_name(metadata.level()),
            target: metadata.target().to_owned(),
            message,
            fields,
        });
    }

    fn enter(&self, span: &Id) {
        STACK.with(|s| s.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        let id = span.into_u64();
        STACK.with(|s| {
            let mut stack = s.borrow_mut();
            if let Some(at) = stack.iter().rposition(|&x| x == id) {
                stack.remove(at);
            }
        });
    }

    fn clone_span(&self, id: &Id) -> Id {
        if let Some(data) = self.spans().get_mut(&id.into_u64()) {
            data.refs += 1;
        }
        id.clone()
    }

    fn try_close(&self, id: Id) -> bool {
        let closed = {
            let mut spans = self.spans();
            match spans.get_mut(&id.into_u64()) {
                Some(data) if data.refs > 1 => {
                    data.refs -= 1;
                    None
                }
                Some(_) => spans.remove(&id.into_u64()),
                None => None,
            }
        };
        let Some(span) = closed else {
            return false;
        };
        let mut fields = BTreeMap::new();
        self.span_fields(span.parent, &mut fields);
        fields.extend(span.fields);
        fields
            .entry("duration_ms".to_owned())
            .or_insert_with(|| (span.opened.elapsed().as_millis() as u64).into());
        if level_number(&span.level) <= MAX_LEVEL.load(Ordering::Relaxed) {
            deliver(&LogRecord {
                level: level_name(&span.level),
                target: span.target,
                message: format!("{} closed", span.name),
                fields,
            });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events carry their enclosing spans' fields; a span close carries its fields and a
    /// duration; levels above a sink's maximum are not delivered; other crates' targets never.
    #[test]
    fn events_and_span_closes_become_records_with_span_fields() {
        let seen: Arc<Mutex<Vec<LogRecord>>> = Arc::default();
        let sink_seen = Arc::clone(&seen);
        let sink: Sink = Arc::new(move |r: &LogRecord| {
            if r.fields.get("marker") == Some(&serde_json::json!("log-sink-unit")) {
                sink_seen.lock().unwrap().push(r.clone());
            }
        });
        if !set_sink(SinkSlot::Test, Some(sink), LEVEL_DEBUG) {
            return; // another global subscriber owns this process
        }
        {
            let span = tracing::info_span!(
                "storefront.unit",
                marker = "log-sink-unit",
                method = "GET",
                status = tracing::field::Empty
            );
            let _entered = span.enter();
            span.record("status", 200u64);
            tracing::debug!(delay_ms = 7u64, "inside");
            tracing::trace!("too verbose");
            tracing::debug!(target: "hyper::proto", marker = "log-sink-unit", "not ours");
        }
        set_sink(SinkSlot::Test, None, 0);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0].message, "inside");
        assert_eq!(seen[0].level, "debug");
        assert_eq!(seen[0].fields["method"], "GET");
        assert_eq!(seen[0].fields["status"], 200);
        assert_eq!(seen[0].fields["delay_ms"], 7);
        assert_eq!(seen[1].message, "storefront.unit closed");
        assert_eq!(seen[1].level, "info");
        assert!(seen[1].fields["duration_ms"].is_u64());
        let line: serde_json::Value = serde_json::from_str(&seen[1].to_json_line()).unwrap();
        assert_eq!(line["fields"]["status"], 200);
        assert_eq!(line["target"], "storefront::log_sink::tests");
    }
}
