"""Calling convention of the C library: out-parameters, error objects, JSON in and out, and the
interruptible way every blocking call runs (a worker thread under a cancel scope)."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import queue
import threading
from ctypes import byref, c_void_p
from decimal import Decimal
from typing import Any, Callable, List, Optional, Tuple, TypeVar

from . import _lib
from .errors import StorefrontError, from_error_json
from .models import ResultDict

T = TypeVar("T")


def encode(text: Optional[str]) -> Optional[bytes]:
    """A ``str`` argument as UTF-8 bytes for a ``const char *`` (None stays NULL). A NUL
    character is refused: C would silently see only the text before it."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError(f"expected a str, not {type(text).__name__}")
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


def _object(pairs: List[Tuple[str, Any]]) -> ResultDict:
    return ResultDict(pairs)


def from_json(text: str) -> Any:
    """Decodes a result: objects become :class:`~storefront.models.ResultDict` (a ``dict``
    whose ``repr`` hides checkout addresses); a number with a fraction would become
    ``Decimal``, never ``float``."""
    return json.loads(text, parse_float=Decimal, object_pairs_hook=_object)


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


# -- cancellation -------------------------------------------------------------------------------


class CancelToken:
    """Owns an ``sf_cancel_token``. ``cancel`` may be called from any thread; a blocking call
    running under the token's scope then returns ``SF_RESULT_CANCELLED`` promptly. Freed when
    the last reference goes (the worker thread holds one while it runs)."""

    __slots__ = ("_pointer", "__weakref__")

    def __init__(self) -> None:
        pointer = _lib.lib().sf_cancel_token_new()
        if not pointer:
            raise MemoryError("sf_cancel_token_new failed")
        self._pointer: Optional[int] = pointer

    @property
    def pointer(self) -> Optional[int]:
        return self._pointer

    def cancel(self) -> None:
        if self._pointer:
            _lib.lib().sf_cancel_token_cancel(self._pointer)

    @property
    def cancelled(self) -> bool:
        return bool(self._pointer) and bool(_lib.lib().sf_cancel_token_is_cancelled(self._pointer))

    def __del__(self) -> None:
        pointer, self._pointer = self._pointer, None
        if pointer:
            try:
                _lib.lib().sf_cancel_token_free(pointer)
            except Exception:  # pragma: no cover - interpreter shutdown
                pass


def in_scope(token: CancelToken, work: Callable[[], T]) -> T:
    """Runs ``work`` in the current thread with ``token`` bound to it (``sf_cancel_scope_enter``),
    so the blocking C calls it makes stop when the token is cancelled."""
    lib = _lib.lib()
    lib.sf_cancel_scope_enter(token.pointer)
    try:
        return work()
    finally:
        lib.sf_cancel_scope_exit()


#: Name of the threads that run blocking C calls.
WORKER_THREAD_NAME = "storefront-call"
#: How long the waiting thread sleeps between checks for an interrupt, in seconds.
WAIT_SLICE = 0.05
#: An idle worker thread ends after this many seconds without a call.
IDLE_SECONDS = 30.0


class _Pool:
    """The wrapper's worker threads: one per call in flight, kept for ``IDLE_SECONDS`` after a
    call so that the next call does not pay for a new thread (and the library's per-thread
    set-up). Replaced by an empty pool in a forked child (its threads did not survive the fork)."""

    def __init__(self) -> None:
        self._jobs: "queue.SimpleQueue[Callable[[], None]]" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # waiting threads not yet promised a queued job
        self.busy = 0  # calls running

    def finished(self) -> None:
        """Called by a job once its C call has returned."""
        with self._lock:
            self.busy -= 1

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            self.busy += 1
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        if spawn:
            threading.Thread(target=self._serve, args=(job,), name=WORKER_THREAD_NAME, daemon=True).start()
        else:
            self._jobs.put(job)

    def _serve(self, job: Optional[Callable[[], None]]) -> None:
        while True:
            if job is not None:
                try:
                    job()
                finally:
                    job = None
                    with self._lock:
                        self._idle += 1
            try:
                job = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # no queued job is waiting for this thread
                        self._idle -= 1
                        return


_pool = _Pool()


def _after_fork_in_child() -> None:
    global _pool
    _pool = _Pool()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def calls_in_flight() -> int:
    """How many blocking calls the worker threads are running (0 once every call returned)."""
    return _pool.busy


class Worker:
    """One blocking C call on a worker thread, under a cancel scope. ``done`` is set once the
    C call has returned."""

    def __init__(self, work: Callable[[], Any], on_done: Optional[Callable[[], None]] = None):
        self.token = CancelToken() if _lib.has("sf_cancel_scope_enter") else None
        self.done = threading.Event()
        self._work: Optional[Callable[[], Any]] = work
        self._on_done = on_done
        self._value: Any = None
        self._error: Optional[BaseException] = None
        self._pool = _pool
        self._pool.submit(self._run)

    def _run(self) -> None:
        try:
            work = self._work
            assert work is not None
            if self.token is None:
                self._value = work()
            else:
                self._value = in_scope(self.token, work)
        except BaseException as error:  # handed to the waiting thread
            self._error = error
        finally:
            self._work = None
            self._pool.finished()
            self.done.set()
            if self._on_done is not None:
                try:
                    self._on_done()
                except Exception:  # the event loop went away: nobody is waiting
                    pass

    def cancel(self) -> None:
        if self.token is not None:
            self.token.cancel()

    def join(self) -> None:
        """Waits until the C call has returned."""
        self.done.wait()

    def outcome(self) -> Any:
        """The call's value, or its exception raised (after :meth:`join`)."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._value


def run_blocking(work: Callable[[], T]) -> T:
    """Runs a blocking C call so that the caller stays interruptible.

    On the main thread (the only one Python delivers ``KeyboardInterrupt`` and other signal
    handlers' exceptions to) the call runs on a worker thread under a cancel scope while this
    thread waits in short slices; on any ``BaseException`` while waiting the token is cancelled,
    the worker awaited (the C call returns promptly), and the exception re-raised. On other
    threads the call runs in place under a cancel scope (no signal can interrupt them)."""
    if not _lib.has("sf_cancel_scope_enter"):  # a library without cancellation
        return work()
    if threading.current_thread() is not threading.main_thread():
        return in_scope(CancelToken(), work)
    worker = Worker(work)
    try:
        while not worker.done.wait(WAIT_SLICE):
            pass
    except BaseException:
        worker.cancel()
        worker.join()
        raise
    worker.join()
    return worker.outcome()


async def run_async(work: Callable[[], T]) -> T:
    """Runs a blocking C call on a worker thread without blocking the event loop. Cancelling
    the awaiting task cancels the call's token, waits (without blocking the loop) for the
    worker to return, which it does promptly, and re-raises ``asyncio.CancelledError``."""
    loop = asyncio.get_running_loop()
    finished = loop.create_future()

    def resolve() -> None:
        if not finished.done():
            finished.set_result(None)

    def notify() -> None:  # on the worker thread
        loop.call_soon_threadsafe(resolve)

    worker = Worker(work, on_done=notify)
    try:
        await asyncio.shield(finished)
    except BaseException:
        worker.cancel()
        if not worker.done.is_set():
            await asyncio.shield(finished)
        worker.join()
        raise
    worker.join()
    return worker.outcome()
