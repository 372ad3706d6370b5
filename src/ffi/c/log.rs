//! Log records for C hosts: a callback (`sf_log_set_callback`) for hosts that accept calls from
//! any thread, and a bounded buffer drained by the host (`sf_log_buffer_enable`,
//! `sf_log_drain`) for hosts that cannot (PHP). Records are the core's
//! [`LogRecord`](crate::log_sink::LogRecord) as one JSON line each.

use std::collections::VecDeque;
use std::ffi::{CString, c_char, c_void};
use std::sync::{Arc, Mutex};

use crate::log_sink::{self, LogRecord, SinkSlot};

use super::boundary;

/// Receives one log record as a JSON line
/// `{"level":"debug","target":"storefront::transport","message":"request finished","fields":{...}}`
/// (no trailing newline). `json_line` is borrowed: valid only during the call; copy it to keep
/// it. Called from any thread of the library (runtime workers included), possibly several at
/// once; it must not block for long and must not unwind. Records logged by library calls made
/// from inside the callback are dropped.
#[allow(non_camel_case_types)]
pub type sf_log_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, json_line: *const c_char)>;

/// The callback and its user data, called from any thread (the host promised it may be).
struct Callback {
    function: unsafe extern "C" fn(*mut c_void, *const c_char),
    user_data: *mut c_void,
}

impl Callback {
    fn call(&self, line: &CString) {
        // SAFETY: the host's callback, valid until replaced (caller contract of
        // `sf_log_set_callback`); `line` outlives the call.
        unsafe { (self.function)(self.user_data, line.as_ptr()) };
    }
}

// SAFETY: `sf_log_set_callback` documents that the callback and `user_data` are used from any
// thread; the library never dereferences `user_data` itself.
unsafe impl Send for Callback {}
// SAFETY: as above.
unsafe impl Sync for Callback {}

/// Sends the library's log records (SDK events and request span closes: method, path template,
/// status, attempt, duration_ms, retry delay_ms; never a secret, token, checkout URL or query)
/// to `callback` for levels up to `max_level`: 1 error, 2 warn, 3 info, 4 debug (one record per
/// HTTP attempt), 5 trace. Replaces the previous callback; a NULL `callback` or `max_level` 0
/// removes it. `user_data` is passed back unchanged. The callback runs on the library's threads
/// (see `sf_log_callback`). After removing or replacing it, a call already running on another
/// thread may still finish; keep `user_data` valid until the library's calls have returned.
/// Process-wide; thread-safe. (When the process already has a Rust `tracing` subscriber, records
/// go there instead.)
///
/// # Safety
/// `callback` must be NULL or a function safe to call from any thread with `user_data` until it
/// is replaced or removed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_log_set_callback(
    callback: sf_log_callback,
    user_data: *mut c_void,
    max_level: u32,
) {
    boundary::value((), || {
        let sink = callback.map(|function| {
            let callback = Callback {
                function,
                user_data,
            };
            Arc::new(move |record: &LogRecord| {
                if let Ok(line) = CString::new(record.to_json_line()) {
                    callback.call(&line);
                }
            }) as log_sink::Sink
        });
        log_sink::set_sink(SinkSlot::CCallback, sink, max_level);
    })
}

/// The buffer behind `sf_log_buffer_enable`: the newest `capacity` lines.
struct Buffer {
    lines: VecDeque<String>,
    capacity: usize,
}

impl Buffer {
    /// Appends a line, dropping the oldest when full.
    fn push(&mut self, line: String) {
        while self.lines.len() >= self.capacity.max(1) {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }
}

#[cfg(test)]
#[test]
fn the_buffer_keeps_the_newest_lines() {
    let mut buffer = Buffer {
        lines: VecDeque::new(),
        capacity: 2,
    };
    for line in ["a", "b", "c"] {
        buffer.push(line.to_owned());
    }
    assert_eq!(buffer.lines, ["b", "c"]);
}

static BUFFER: Mutex<Option<Buffer>> = Mutex::new(None);

/// Keeps the library's log records (as for `sf_log_set_callback`, levels up to `max_level`) in
/// a process-wide ring buffer of `capacity` lines, the oldest dropped first, for hosts that
/// cannot be called from other threads; read them with `sf_log_drain`. Calling it again
/// changes the level and capacity (keeping the newest lines); `max_level` 0 or `capacity` 0
/// disables the buffer and discards its lines. Independent of the callback. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn sf_log_buffer_enable(max_level: u32, capacity: usize) {
    boundary::value((), || {
        let enabled = max_level > 0 && capacity > 0;
        {
            let mut buffer = BUFFER
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if enabled {
                let buffer = buffer.get_or_insert_with(|| Buffer {
                    lines: VecDeque::new(),
                    capacity,
                });
                buffer.capacity = capacity;
                while buffer.lines.len() > capacity {
                    buffer.lines.pop_front();
                }
            } else {
                *buffer = None;
            }
        }
        let sink = enabled.then(|| {
            Arc::new(|record: &LogRecord| {
                let line = record.to_json_line();
                let mut buffer = BUFFER
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if let Some(buffer) = buffer.as_mut() {
                    buffer.push(line);
                }
            }) as log_sink::Sink
        });
        log_sink::set_sink(SinkSlot::CBuffer, sink, max_level);
    })
}

/// Takes the lines buffered since the last drain (see `sf_log_buffer_enable`), oldest first,
/// separated by `\n` (no trailing newline), or NULL when there are none (or the buffer is
/// disabled). The returned string is owned by the caller and freed with `sf_string_free`.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn sf_log_drain() -> *mut c_char {
    boundary::value(std::ptr::null_mut(), || {
        let lines: Vec<String> = {
            let mut buffer = BUFFER
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match buffer.as_mut() {
                Some(buffer) => buffer.lines.drain(..).collect(),
                None => Vec::new(),
            }
        };
        if lines.is_empty() {
            return std::ptr::null_mut();
        }
        CString::new(lines.join("\n")).map_or(std::ptr::null_mut(), CString::into_raw)
    })
}
