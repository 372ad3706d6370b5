"""Calling convention of the C library: out-parameters, error objects, JSON in and out."""

from __future__ import annotations

import ctypes
import json
from ctypes import byref, c_void_p
from decimal import Decimal
from typing import Any, Optional

from . import _lib
from .errors import StorefrontError, from_error_json


def encode(text: Optional[str]) -> Optional[bytes]:
    """A ``str`` argument as UTF-8 bytes for a ``const char *`` (None stays NULL). A NUL
    character is refused: C would silently see only the text before it."""
    if text is None:
        return None
    if "\0" in text:
        raise ValueError("string arguments must not contain NUL characters")
    return text.encode("utf-8")


def to_json(value: Any) -> bytes:
    """A JSON argument. Floats are refused: amounts are integers end to end."""

    def no_floats(obj: Any) -> None:
        if isinstance(obj, float):
            raise TypeError("floating-point values are not accepted; use integer minor units")
        if isinstance(obj, dict):
            for item in obj.values():
                no_floats(item)
        elif isinstance(obj, (list, tuple)):
            for item in obj:
                no_floats(item)

    no_floats(value)
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def from_json(text: str) -> Any:
    """Decodes a result; a number with a fraction would become ``Decimal``, never ``float``."""
    return json.loads(text, parse_float=Decimal)


def raise_for(result: int, error: c_void_p) -> None:
    """Raises the exception for a failed call, freeing its error object."""
    lib = _lib.lib()
    if error.value:
        try:
            text = lib.sf_error_json(error).decode("utf-8")
        finally:
            lib.sf_error_free(error)
        raise from_error_json(text)
    raise StorefrontError({"result": result, "message": f"storefront call failed ({result})"})


def call_string(name: str, *args: Any) -> str:
    """Calls ``name(args..., char **out, sf_error **error_out)`` and returns the string."""
    return _lib.take_string(call_handle(name, *args))


def call_json(name: str, *args: Any) -> Any:
    """Like :func:`call_string` and decodes the JSON result."""
    return from_json(call_string(name, *args))


def call_handle(name: str, *args: Any) -> c_void_p:
    """Calls ``name(args..., T **out, sf_error **error_out)`` and returns ``out``."""
    out = c_void_p()
    error = c_void_p()
    result = getattr(_lib.lib(), name)(*args, byref(out), byref(error))
    if result != 0:
        raise_for(result, error)
    return out


def call_unit(name: str, *args: Any) -> None:
    """Calls ``name(args..., sf_error **error_out)`` that has no output."""
    error = c_void_p()
    result = getattr(_lib.lib(), name)(*args, byref(error))
    if result != 0:
        raise_for(result, error)


def buffer(data: bytes) -> "ctypes.Array[ctypes.c_char]":
    """A byte buffer passed as pointer and length (raw webhook bodies)."""
    return (ctypes.c_char * len(data)).from_buffer_copy(data)
