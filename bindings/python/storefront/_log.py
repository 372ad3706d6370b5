"""The library's log events delivered to a Python ``logging.Logger``.

``sf_log_set_callback`` hands every event, as one JSON line, to a C callback from whichever
thread produced it (the library's runtime threads, or the thread of the call). ctypes callbacks
take the GIL themselves, so the callback below may call ``logger.log`` directly; the ctypes
callback object is kept in a module global for the life of the process (the library keeps only
its address) and the callback is unset at interpreter exit, before Python can no longer run it.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
from typing import Any, Dict, Mapping, Optional

from . import _lib

LOG_CALLBACK = _lib.LOG_CALLBACK

#: Library level numbers (1 error ... 5 trace) and names -> ``logging`` levels.
TRACE = 5
_FROM_LIBRARY: Dict[Any, int] = {
    1: logging.ERROR,
    2: logging.WARNING,
    3: logging.INFO,
    4: logging.DEBUG,
    5: TRACE,
    "error": logging.ERROR,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": TRACE,
}

# Attributes a LogRecord already has: an event field of that name is renamed ``sf_<name>``
# (``logging`` refuses ``extra`` keys that would overwrite them).
_RESERVED = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__
) | {"message", "asctime"}

_state_lock = threading.Lock()
_callback: Optional[Any] = None  # the live ctypes callback object: must outlive the library's use
_logger: Optional[logging.Logger] = None
_atexit_registered = False


def max_level(level: int) -> int:
    """The library's ``max_level`` (1 error ... 5 trace) for a ``logging`` level."""
    if level <= TRACE:
        return 5
    if level <= logging.DEBUG:
        return 4
    if level <= logging.INFO:
        return 3
    if level <= logging.WARNING:
        return 2
    return 1


def _level_of(event: Mapping[str, Any]) -> int:
    level = event.get("level")
    if isinstance(level, str):
        level = level.lower()
    return _FROM_LIBRARY.get(level, logging.INFO)  # type: ignore[arg-type]


def _fields_of(event: Mapping[str, Any]) -> Dict[str, Any]:
    """The event's fields flattened into one dict (nested ``fields`` / ``span`` / ``spans``
    objects merged, innermost last)."""
    flat: Dict[str, Any] = {}
    for key in ("spans",):
        spans = event.get(key)
        if isinstance(spans, list):
            for span in spans:
                if isinstance(span, Mapping):
                    flat.update(span)
    for key in ("span", "fields"):
        nested = event.get(key)
        if isinstance(nested, Mapping):
            flat.update(nested)
    for key, value in event.items():
        if key not in ("spans", "span", "fields"):
            flat[key] = value
    return flat


def _emit(line: bytes) -> None:
    logger = _logger
    if logger is None:
        return
    try:
        event = json.loads(line.decode("utf-8", "replace"))
        if not isinstance(event, dict):
            raise ValueError("not an object")
    except ValueError:
        logger.log(logging.INFO, "%s", line.decode("utf-8", "replace"))
        return
    level = _level_of(event)
    if not logger.isEnabledFor(level):
        return
    fields = _fields_of(event)
    message = fields.pop("message", None) or fields.pop("msg", None) or ""
    extra = {("sf_" + k if k in _RESERVED else k): v for k, v in fields.items()}
    extra["storefront"] = fields
    logger.log(level, "%s", message, extra=extra)


def _on_event(_user_data: Any, line: Optional[bytes]) -> None:
    # Runs on library threads: never let an exception escape into C.
    try:
        if line:
            _emit(line)
    except Exception:  # pragma: no cover - a failing handler must not break the library
        pass


def enable_logging(logger: Optional[logging.Logger] = None, level: int = logging.DEBUG) -> logging.Logger:
    """Sends the library's log events to ``logger`` (default ``logging.getLogger("storefront")``)
    at ``level`` and above (``logging.DEBUG`` shows each HTTP attempt: method, path template,
    attempt, status, duration; ``storefront._log.TRACE`` (5) shows more). Each event becomes a
    ``LogRecord`` whose message is the event's message and whose attributes are its fields (all
    of them also under ``record.storefront``). Events carry no secret: no client secret, token,
    checkout token or request body. Process-wide; calling again replaces the logger and level.
    Returns the logger."""
    global _callback, _logger, _atexit_registered
    if logger is None:
        logger = logging.getLogger("storefront")
    if logger.level == logging.NOTSET or logger.level > level:
        logger.setLevel(level)
    library = _lib.lib()
    _lib.require("sf_log_set_callback", "enable_logging")
    with _state_lock:
        _logger = logger
        if _callback is None:
            _callback = LOG_CALLBACK(_on_event)
        library.sf_log_set_callback(_callback, None, max_level(level))
        if not _atexit_registered:
            atexit.register(disable_logging)
            _atexit_registered = True
    return logger


def disable_logging() -> None:
    """Stops delivering events (the library drops them). The callback object stays alive: a
    library thread may be finishing a call to it."""
    global _logger
    with _state_lock:
        if _logger is None:
            return
        _lib.lib().sf_log_set_callback(LOG_CALLBACK(), None, 0)  # NULL: removed
        _logger = None


def _after_fork_in_child() -> None:
    global _state_lock
    _state_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
