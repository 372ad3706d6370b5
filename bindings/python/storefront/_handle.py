"""Ownership of library handles shared between threads (and kept across a fork)."""

from __future__ import annotations

import os
import threading
import weakref
from ctypes import c_void_p
from typing import List, Optional

from . import _lib

# Every live handle, so that a forked child can reset their Python-side state.
_live: "weakref.WeakSet[Handle]" = weakref.WeakSet()


class Handle:
    """Owns a library handle: calls may run from several threads; ``close`` waits for them,
    then releases the handle with its ``_free`` function exactly once.

    A call in flight is one entry in ``_inflight``: ``acquire`` appends one, then reads the
    pointer; ``close`` clears the pointer, then waits until the list is empty. Appending to and
    popping from a list are single atomic operations under the interpreter lock, and the two
    sides do their two steps in opposite order, so a call that got the pointer is always seen
    by ``close`` (and waited for), and a call after ``close`` started sees no pointer. No lock is
    taken on the calling path; only a release during a ``close`` takes the condition to wake
    the closer."""

    def __init__(self, pointer: c_void_p, free: str):
        self._pointer: Optional[c_void_p] = pointer
        self._free = free
        self._inflight: List[None] = []
        self._closing = False
        self._idle = threading.Condition(threading.Lock())
        _live.add(self)

    def acquire(self) -> c_void_p:
        """The pointer, counted as in use until :meth:`release`; ValueError once closed."""
        self._inflight.append(None)
        pointer = self._pointer
        if pointer is None:
            self.release()
            raise ValueError("the handle is closed")
        return pointer

    def release(self) -> None:
        """Ends a use begun by :meth:`acquire` (wakes a waiting :meth:`close`)."""
        self._inflight.pop()
        if self._closing:
            with self._idle:
                self._idle.notify_all()

    def close(self) -> None:
        """Refuses new calls, waits for those in flight, then frees the handle (once)."""
        with self._idle:
            self._closing = True
            pointer, self._pointer = self._pointer, None
            while self._inflight:
                self._idle.wait()
        if pointer is not None:
            getattr(_lib.lib(), self._free)(pointer)

    def _after_fork_in_child(self) -> None:
        # Calls in flight in the parent's other threads do not exist in the child: their
        # entries and the lock a closer may have held at the fork are reset, or close() would
        # wait forever.
        self._inflight = []
        self._idle = threading.Condition(threading.Lock())


def _after_fork_in_child() -> None:
    for handle in list(_live):
        handle._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
