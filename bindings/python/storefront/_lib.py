"""Loads the storefront C library and declares the signatures of include/storefront.h.

By default the library is the one the wheel installs inside this package, beside this file
(``libstorefront.so``; ``libstorefront.dylib`` / ``storefront.dll`` on macOS / Windows). The
``STOREFRONT_LIB`` environment variable, when set and not empty, overrides it with the path of
another build (a checkout's ``target/debug/libstorefront.so`` for the tests, say); it is then the
only path tried. Returned ``char *`` that the caller must free are typed ``c_void_p``, never
``c_char_p``: ctypes would convert a ``c_char_p`` to ``bytes`` and lose the pointer to free.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import (
    POINTER,
    c_bool,
    c_char_p,
    c_int64,
    c_size_t,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Optional

c_result = c_uint32
#: ``typedef void (*sf_log_callback)(void *user_data, const char *json_line)``
LOG_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_char_p)
_p = POINTER(c_void_p)  # out-parameter for a handle, a string or an error

# name -> (argument types, return type); kept in the header's order. A test compares this table
# with include/storefront.h so that the two cannot drift.
SIGNATURES = {
    "sf_error_result": ([c_void_p], c_result),
    "sf_error_http_status": ([c_void_p], c_uint16),
    "sf_error_retry_after_ms": ([c_void_p], c_int64),
    "sf_error_message": ([c_void_p], c_char_p),
    "sf_error_code": ([c_void_p], c_char_p),
    "sf_error_description": ([c_void_p], c_char_p),
    "sf_error_field": ([c_void_p], c_char_p),
    "sf_error_json": ([c_void_p], c_char_p),
    "sf_error_free": ([c_void_p], None),
    "sf_string_free": ([c_void_p], None),
    "sf_max_input_bytes": ([], c_size_t),
    "sf_version": ([], c_char_p),
    "sf_cancel_token_new": ([], c_void_p),
    "sf_cancel_token_cancel": ([c_void_p], None),
    "sf_cancel_token_is_cancelled": ([c_void_p], c_bool),
    "sf_cancel_token_free": ([c_void_p], None),
    "sf_cancel_scope_enter": ([c_void_p], None),
    "sf_cancel_scope_exit": ([], None),
    "sf_client_new": ([c_char_p, _p, _p], c_result),
    "sf_config_from_env": ([_p, _p], c_result),
    "sf_client_persistent": ([c_char_p, _p, _p], c_result),
    "sf_client_free": ([c_void_p], None),
    "sf_client_shared_state": ([c_void_p, _p, _p], c_result),
    "sf_client_authenticate": ([c_void_p, _p, _p], c_result),
    "sf_merchant_profile_get": ([c_void_p, c_char_p, _p, _p], c_result),
    "sf_products_list": ([c_void_p, c_char_p, c_char_p, _p, _p], c_result),
    "sf_userinfo_get": ([c_void_p, c_char_p, _p, _p], c_result),
    "sf_order_create": ([c_void_p, c_char_p, c_char_p, _p, _p], c_result),
    "sf_order_get": ([c_void_p, c_char_p, c_char_p, _p, _p], c_result),
    "sf_payment_start": ([c_void_p, c_char_p, c_char_p, c_char_p, _p, _p], c_result),
    "sf_payment_status": ([c_void_p, c_char_p, c_char_p, _p, _p], c_result),
    "sf_payment_wait": ([c_void_p, c_char_p, c_char_p, c_uint64, c_uint64, _p, _p], c_result),
    "sf_other_ipu_build": ([c_char_p, c_char_p, _p, _p], c_result),
    "sf_other_ipu_fields": ([c_char_p, _p, _p], c_result),
    "sf_money_to_minor": ([c_char_p, c_uint32, c_void_p, _p], c_result),
    "sf_money_from_minor": ([c_uint64, c_uint32, _p, _p], c_result),
    "sf_fixed_point8_parse": ([c_char_p, c_void_p, _p], c_result),
    "sf_fixed_point8_format": ([c_int64, c_uint32, _p, _p], c_result),
    "sf_idempotency_key_generate": ([_p, _p], c_result),
    "sf_channels_list": ([c_void_p, _p, _p], c_result),
    "sf_merchant_payment_create": ([c_void_p, c_char_p, _p, _p], c_result),
    "sf_merchant_payment_get": ([c_void_p, c_char_p, _p, _p], c_result),
    "sf_merchant_payments_list": ([c_void_p, c_char_p, _p, _p], c_result),
    "sf_notification_records_list": ([c_void_p, c_char_p, c_uint32, _p, _p], c_result),
    "sf_notification_requeue": ([c_void_p, c_char_p, c_char_p, _p, _p], c_result),
    "sf_reconcile": ([c_void_p, c_char_p, c_uint32, _p, _p], c_result),
    "sf_inbox_open": ([c_char_p, c_char_p, c_char_p, _p, _p], c_result),
    "sf_inbox_free": ([c_void_p], None),
    "sf_inbox_receive": (
        [c_void_p, c_char_p, c_char_p, c_char_p, c_void_p, c_size_t, c_void_p, _p, _p],
        c_result,
    ),
    "sf_inbox_receive_at": (
        [c_void_p, c_int64, c_char_p, c_char_p, c_char_p, c_void_p, c_size_t, c_void_p, _p, _p],
        c_result,
    ),
    "sf_inbox_claim": ([c_void_p, c_uint32, c_uint64, _p, _p], c_result),
    "sf_inbox_complete": ([c_void_p, c_char_p, c_char_p, _p], c_result),
    "sf_inbox_release": ([c_void_p, c_char_p, c_char_p, _p], c_result),
    "sf_inbox_status": ([c_void_p, _p, _p], c_result),
    "sf_inbox_purge": ([c_void_p, c_uint64, c_void_p, _p], c_result),
    "sf_inbox_replay": ([c_void_p, c_char_p, c_void_p, _p], c_result),
    "sf_inbox_completion_sql": ([c_void_p, _p, _p], c_result),
    "sf_inbox_enter_reconciled": ([c_void_p, c_char_p, _p, _p], c_result),
    "sf_inbox_watermarks": ([c_void_p, _p, _p], c_result),
    "sf_webhook_verifier_new": ([c_char_p, _p, _p], c_result),
    "sf_webhook_verifier_free": ([c_void_p], None),
    "sf_webhook_verify": (
        [c_void_p, c_char_p, c_char_p, c_char_p, c_void_p, c_size_t, _p, _p],
        c_result,
    ),
    "sf_webhook_verify_at": (
        [c_void_p, c_char_p, c_char_p, c_char_p, c_void_p, c_size_t, c_int64, _p, _p],
        c_result,
    ),
    "sf_webhook_verify_body": (
        [c_void_p, c_char_p, c_char_p, c_char_p, c_void_p, c_size_t, _p],
        c_result,
    ),
    "sf_webhook_verify_body_at": (
        [c_void_p, c_char_p, c_char_p, c_char_p, c_void_p, c_size_t, c_int64, _p],
        c_result,
    ),
    "sf_webhook_sign": ([c_char_p, c_int64, c_void_p, c_size_t, _p, _p], c_result),
    "sf_payment_expectation_check": ([c_char_p, c_char_p, _p], c_result),
    "sf_status_version_decision": ([c_int64, c_uint64], c_uint32),
    "sf_log_set_callback": ([LOG_CALLBACK, c_void_p, c_uint32], None),
    "sf_log_buffer_enable": ([c_uint32, c_size_t], None),
    "sf_log_drain": ([], c_void_p),
}

# Functions a library older than this wrapper may lack: the wrapper then does without them
# (see ``has``) instead of failing to load.
OPTIONAL = frozenset(
    {
        "sf_cancel_token_new",
        "sf_cancel_token_cancel",
        "sf_cancel_token_is_cancelled",
        "sf_cancel_token_free",
        "sf_cancel_scope_enter",
        "sf_cancel_scope_exit",
        "sf_client_persistent",
        "sf_client_shared_state",
        "sf_webhook_verify_body",
        "sf_webhook_verify_body_at",
        "sf_log_set_callback",
        "sf_log_buffer_enable",
        "sf_log_drain",
        "sf_reconcile",
        "sf_inbox_open",
        "sf_inbox_free",
        "sf_inbox_receive",
        "sf_inbox_receive_at",
        "sf_inbox_claim",
        "sf_inbox_complete",
        "sf_inbox_release",
        "sf_inbox_status",
        "sf_inbox_purge",
        "sf_inbox_replay",
        "sf_inbox_completion_sql",
        "sf_inbox_enter_reconciled",
        "sf_inbox_watermarks",
    }
)

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_available: frozenset = frozenset()


def _after_fork_in_child() -> None:
    # Another thread of the parent may have held the loading lock at the fork; in the child it
    # would stay held for ever.
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _candidates() -> list:
    """The paths to try, in order: STOREFRONT_LIB alone when set, else the bundled library."""
    env = os.environ.get("STOREFRONT_LIB")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    if sys.platform == "darwin":
        names = ["libstorefront.dylib"]
    elif sys.platform == "win32":
        names = ["storefront.dll"]
    else:
        names = ["libstorefront.so"]
    return [here / name for name in names]


def lib() -> ctypes.CDLL:
    """The loaded library with every signature declared (loaded once, thread-safe)."""
    global _lib, _available
    with _lock:
        if _lib is None:
            tried = _candidates()
            for path in tried:
                if path.is_file():
                    loaded = ctypes.CDLL(str(path))
                    break
            else:
                raise OSError(
                    "storefront C library not found; tried: "
                    + ", ".join(str(p) for p in tried)
                    + (
                        " (from STOREFRONT_LIB)"
                        if os.environ.get("STOREFRONT_LIB")
                        else " (install a storefront wheel, which bundles it, or set"
                        " STOREFRONT_LIB to the library's path)"
                    )
                )
            available = set()
            for name, (argtypes, restype) in SIGNATURES.items():
                if name in OPTIONAL and not hasattr(loaded, name):
                    continue
                function = getattr(loaded, name)
                function.argtypes = argtypes
                function.restype = restype
                available.add(name)
            _available = frozenset(available)
            _lib = loaded
        return _lib


def has(name: str) -> bool:
    """Whether the loaded library exports ``name`` (declared in ``SIGNATURES``)."""
    if _lib is None:
        lib()
    return name in _available


def require(name: str, feature: str) -> None:
    """Raises a clear error when the loaded library (older than this package) lacks ``name``."""
    if not has(name):
        raise RuntimeError(
            f"{feature} needs a storefront library with {name}(); the loaded one "
            f"({lib().sf_version().decode()}) does not export it"
        )


def take_string(pointer: c_void_p) -> str:
    """Copies a library-owned string out as ``str`` and frees it with ``sf_string_free``."""
    if not pointer.value:
        raise RuntimeError("library returned success without a result string")
    try:
        return ctypes.string_at(pointer.value).decode("utf-8")
    finally:
        lib().sf_string_free(pointer)
