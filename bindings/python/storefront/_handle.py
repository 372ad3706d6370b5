"""Ownership of library handles shared between threads (and kept across a fork)."""

from __future__ import annotations

import os
import threading
import weakref
from ctypes import c_void_p
from typing import Optional

from . import _lib

# Every live handle, so that a forked child can reset their Python-side locks.
_live: "weakref.WeakSet[Handle]" = weakref.WeakSet()


class Handle:
    """Owns a library handle: calls may run from several threads; ``close`` waits for them,
    then releases the handle with its ``_free`` function exactly once."""

    def __init__(self, pointer: c_void_p, free: str):
        self._pointer: Optional[c_void_p] = pointer
        self._free = free
        self._busy = 0
        self._idle = threading.Condition()
        _live.add(self)

    def acquire(self) -> c_void_p:
        with self._idle:
            if self._pointer is None:
                raise ValueError("the handle is closed")
            self._busy += 1
            return self._pointer

    def release(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()

    def close(self) -> None:
        with self._idle:
            while self._busy:
                self._idle.wait()
            pointer, self._pointer = self._pointer, None
        if pointer is not None:
            getattr(_lib.lib(), self._free)(pointer)

    def _after_fork_in_child(self) -> None:
        # Calls in flight in the parent's other threads do not exist in the child: their count
        # and the lock they may have held at the fork are reset, or close() would wait forever.
        self._busy = 0
        self._idle = threading.Condition()


def _after_fork_in_child() -> None:
    for handle in list(_live):
        handle._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
