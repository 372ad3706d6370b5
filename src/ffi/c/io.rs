//! Arguments in and results out: checked C strings, byte buffers, JSON, and the out-parameters
//! that are written only on success.

use std::ffi::{CString, c_char};
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use zeroize::Zeroize;

use super::boundary;
use super::error::Failure;
use super::result::sf_result;
use super::strict::{self, Problem};

/// Largest string or byte argument accepted, in bytes (1 MiB). Longer input gives
/// `SF_RESULT_INPUT_TOO_LARGE` without being read past this bound.
pub(crate) const MAX_INPUT_BYTES: usize = 1 << 20;

/// Reads a NUL-terminated UTF-8 argument, looking at no more than [`MAX_INPUT_BYTES`] + 1 bytes.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string, or to at least
/// `MAX_INPUT_BYTES + 1` readable bytes.
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    let mut len = 0usize;
    // SAFETY: reads stop at the first NUL, which the caller guarantees before the bound.
    while unsafe { *ptr.add(len) } != 0 {
        len += 1;
        if len > MAX_INPUT_BYTES {
            return Err(too_large(name));
        }
    }
    // SAFETY: `len` bytes before the NUL were just read.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::new(
            sf_result::InvalidUtf8,
            format!("argument `{name}` is not valid UTF-8 ({e})"),
        )
        .with_field(name)
    })
}

/// Like [`str_arg`] but NULL means absent.
///
/// # Safety
/// As for [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    name: &str,
) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded.
        unsafe { str_arg(ptr, name) }.map(Some)
    }
}

/// Reads a pointer-and-length byte argument. NULL is accepted only with length 0.
///
/// # Safety
/// `ptr` must be NULL or valid for reading `len` bytes.
pub(crate) unsafe fn bytes_arg<'a>(
    ptr: *const u8,
    len: usize,
    name: &str,
) -> Result<&'a [u8], Failure> {
    if len > MAX_INPUT_BYTES {
        return Err(too_large(name));
    }
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(Failure::null(name))
        };
    }
    // SAFETY: the caller guarantees `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Reads a JSON request or configuration object into `T`, refusing unknown keys (see
/// [`parse_json`]).
///
/// # Safety
/// As for [`str_arg`].
pub(crate) unsafe fn json_arg<T: DeserializeOwned>(
    ptr: *const c_char,
    name: &str,
) -> Result<T, Failure> {
    // SAFETY: forwarded.
    let text = unsafe { str_arg(ptr, name) }?;
    parse_json(text, name)
}

/// Reads JSON that is one of the service's own answers handed back (a listed product, a queried
/// payment, a notification's `data`): unknown keys are ignored, as the contract asks of clients
/// reading responses. Otherwise as [`json_arg`].
///
/// # Safety
/// As for [`str_arg`].
pub(crate) unsafe fn response_json_arg<T: DeserializeOwned>(
    ptr: *const c_char,
    name: &str,
) -> Result<T, Failure> {
    // SAFETY: forwarded.
    let text = unsafe { str_arg(ptr, name) }?;
    // The core decodes these types from the service's answers with `serde_json::from_str`:
    // reusing that path shares its code in the library instead of instantiating every response
    // type's decoder a second time (for the path-tracking decoder of request objects).
    serde_json::from_str(text).map_err(|e| {
        let result = if e.is_syntax() || e.is_eof() {
            sf_result::InvalidJson
        } else {
            sf_result::InvalidArgument
        };
        Failure::new(result, format!("argument `{name}`: {e}")).with_field(name)
    })
}

/// Parses a JSON request or configuration object into `T`:
/// - text that is not JSON at all is `SF_RESULT_INVALID_JSON` (`field` = the argument);
/// - an unknown key, at any depth, is `SF_RESULT_VALIDATION` with `field` = its path
///   (`retry.max_attempt`) and a message naming it;
/// - a number the field cannot hold (negative for an unsigned field, too large, fractional) is
///   `SF_RESULT_VALIDATION` with `field` = its path;
/// - any other wrong shape is `SF_RESULT_INVALID_ARGUMENT`, `field` = the path of the refused
///   value (the argument name when the problem is the top-level object itself, such as a
///   missing field).
pub(crate) fn parse_json<T: DeserializeOwned>(text: &str, name: &str) -> Result<T, Failure> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Failure::new(sf_result::InvalidJson, format!("argument `{name}`: {e}")).with_field(name)
    })?;
    strict::decode(&value).map_err(|e| match e.problem {
        Problem::UnknownKey(path) => Failure::new(
            sf_result::Validation,
            format!("argument `{name}`: unknown key `{path}` (misspelt or not supported)"),
        )
        .with_field(&path),
        Problem::Value { path, number: true } => Failure::new(
            sf_result::Validation,
            format!("argument `{name}`: `{path}` is out of range: {}", e.message),
        )
        .with_field(&path),
        Problem::Value {
            path,
            number: false,
        }
        | Problem::Object(path) => {
            let field = if path.is_empty() { name } else { &path };
            Failure::new(
                sf_result::InvalidArgument,
                format!("argument `{name}`: {}", e.message),
            )
            .with_field(field)
        }
    })
}

fn too_large(name: &str) -> Failure {
    Failure::new(
        sf_result::InputTooLarge,
        format!("argument `{name}` is longer than {MAX_INPUT_BYTES} bytes"),
    )
    .with_field(name)
}

/// An out-parameter checked for NULL before any work is done, written once on success.
pub(crate) struct Out<'a, T> {
    ptr: *mut T,
    _borrow: PhantomData<&'a mut T>,
}

impl<T> Out<'_, T> {
    /// Checks that the out-parameter `name` is not NULL.
    pub(crate) fn new(ptr: *mut T, name: &str) -> Result<Self, Failure> {
        if ptr.is_null() {
            Err(Failure::null(name))
        } else {
            Ok(Self {
                ptr,
                _borrow: PhantomData,
            })
        }
    }

    /// Writes the value, without reading or dropping what the caller left there.
    pub(crate) fn write(self, value: T) {
        // SAFETY: checked non-NULL in `new`; exports document the pointer as writable.
        unsafe { self.ptr.write(value) }
    }
}

/// An out-parameter receiving a library-allocated string that the caller frees with
/// `sf_string_free`.
pub(crate) type OutString<'a> = Out<'a, *mut c_char>;

impl OutString<'_> {
    /// Hands `text` to the caller as a new NUL-terminated string.
    pub(crate) fn write_string(self, text: String) -> Result<(), Failure> {
        let c = CString::new(text).map_err(|_| {
            Failure::new(
                sf_result::Other,
                "result contains a NUL byte and cannot cross the C ABI",
            )
        })?;
        self.write(c.into_raw());
        Ok(())
    }

    /// Serialises `value` as JSON and hands it to the caller.
    pub(crate) fn write_json<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Failure> {
        let text = serde_json::to_string(value)
            .map_err(|e| Failure::new(sf_result::Other, format!("cannot encode result: {e}")))?;
        self.write_string(text)
    }
}

/// Releases a string that the library wrote to an out-parameter (every `char **..._out` of this
/// API). Accepts NULL. Never pass strings borrowed from an `sf_error` or `sf_version`.
///
/// # Safety
/// `string` must be NULL or a string returned through an out-parameter of this library and not
/// freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_string_free(string: *mut c_char) {
    boundary::value((), || {
        if !string.is_null() {
            // SAFETY: created by CString::into_raw in `write_string`; freed once by the caller.
            let mut bytes = unsafe { CString::from_raw(string) }.into_bytes_with_nul();
            // Results may carry checkout tokens: wipe them before the memory is reused.
            bytes.zeroize();
        }
    })
}

/// Largest string or byte argument the library accepts, in bytes; longer ones give
/// `SF_RESULT_INPUT_TOO_LARGE`.
#[unsafe(no_mangle)]
pub extern "C" fn sf_max_input_bytes() -> usize {
    boundary::value(MAX_INPUT_BYTES, || MAX_INPUT_BYTES)
}

/// Version of the library (the crate version), as a static NUL-terminated string. Not to be
/// freed.
#[unsafe(no_mangle)]
pub extern "C" fn sf_version() -> *const c_char {
    boundary::value(std::ptr::null(), || {
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
    })
}
