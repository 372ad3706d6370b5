"""The webhook inbox: store each notification before answering 2xx, hand each payment's state
changes to one worker at a time and in order, book each paid payment event once.

A WSGI receiver and a worker::

    inbox = storefront.Inbox("sqlite:///var/lib/shop/inbox.db", [secret])   # per process

    def app(environ, start_response):                     # any path, POST
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        status, answer = inbox.receive(environ, body)
        start_response(f"{status} ", [("Content-Type", "application/json")])
        return [answer]

    for event in inbox.claim(10):                          # the worker, in a loop
        with conn:                                         # your sqlite3 transaction
            if event.book:
                conn.execute("INSERT INTO bookings ...", ...)
            inbox.complete_in(conn, event)                 # commits with your booking

The rules live in the Rust core (``storefront::inbox``); this module converts.
"""

from __future__ import annotations

import ctypes
import json
from ctypes import byref, c_uint16, c_uint64, c_void_p
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from ._call import buffer, call_json, call_string, encode, from_json, raise_for, run_blocking, to_json
from ._handle import Handle
from .errors import LeaseLostError, WebhookError
from .inputs import I64, U32, U64, check_int
from .models import PaymentStatus
from .reconcile import LocalRecord
from .webhook import Headers, _three_headers

__all__ = [
    "AsyncInbox",
    "Inbox",
    "InboxEvent",
    "InboxStatus",
    "Receipt",
    "Watermark",
]


@dataclass(frozen=True)
class Receipt:
    """What :meth:`Inbox.receive_receipt` did, with the HTTP answer to give the service."""

    #: The HTTP status to answer: 200 stored (or already stored), 400 refused by verification,
    #: 413 a body above the inbox's 1 MiB limit (reason ``body_too_large``, counted, never
    #: read), 422 a verified notification that breaks the contract (reason
    #: ``contract_violation``), 503 the store could not commit (the service delivers again).
    status: int
    #: ``"stored"``, ``"duplicate"``, ``"rejected"``, ``"contract_violation"`` or
    #: ``"store_failed"``.
    outcome: str
    #: The notification ``id``, once verified.
    id: Optional[str]
    #: The reason of a refusal (a webhook result name such as ``signature_mismatch``) or of a
    #: store failure.
    reason: Optional[str]
    #: The answer body (small JSON; the service ignores it).
    body: bytes

    @property
    def acknowledged(self) -> bool:
        """Whether the answer is a 2xx (the notification is committed)."""
        return 200 <= self.status < 300


@dataclass(frozen=True)
class InboxEvent:
    """A state change handed out by :meth:`Inbox.claim`. Complete it (:meth:`Inbox.complete`
    or :meth:`Inbox.complete_in`) before its lease runs out."""

    #: The notification ``id`` (``reconciled:{order_no}:{status_version}`` for a reconciliation).
    id: str
    #: This claim's token: completing needs it.
    claim: str
    order_no: str
    external_reference: str
    #: The payment's status at this event (only ``paid`` confirms payment).
    status: PaymentStatus
    status_version: int
    #: The payment event number (present once paid).
    event_id: Optional[str]
    amount_minor: int
    currency: str
    test_mode: bool
    #: True exactly once per payment event: book the payment now; completing records it.
    book: bool
    #: ``"notification"`` or ``"reconciliation"``.
    source: str
    #: Handed out again by :meth:`Inbox.replay`.
    replayed: bool
    #: How many times it was claimed before (a worker died or released it).
    attempts: int
    #: The notification body exactly as received (the queried payment for a reconciliation).
    body: str = _field(repr=False)

    def notification(self) -> Any:
        """The body decoded (numbers with a fraction as ``Decimal``)."""
        return from_json(self.body)


@dataclass(frozen=True)
class InboxStatus:
    """Counts of the inbox (for dashboards and operators)."""

    pending: int
    claimed: int
    completed: int
    stale: int
    duplicate: int
    #: Deliveries refused by verification or for their size (``body_too_large``), per reason.
    rejected: Dict[str, int]
    #: Age in milliseconds of the oldest pending (or lease-expired) event.
    oldest_pending_ms: Optional[int]
    #: Payment events booked so far.
    booked: int
    #: Verified deliveries refused with 422 ``contract_violation``, per rule:
    #: ``missing_event_id`` (``paid`` without ``event_id``), ``event_id_reused`` (an
    #: ``event_id`` of another payment), ``status_version_out_of_range`` (above 2**63 - 1).
    contract_violations: Dict[str, int] = _field(default_factory=dict)


@dataclass(frozen=True)
class Watermark:
    """A payment as the inbox holds it: the highest ``status_version`` received, its status,
    and the payment event booked for it."""

    order_no: str
    external_reference: str
    status_version: int
    status: PaymentStatus
    amount_minor: int
    currency: str
    booked_event_id: Optional[str]

    def local_record(self) -> LocalRecord:
        """The shop's record of this payment, for :meth:`storefront.Client.reconcile`."""
        return LocalRecord(
            external_reference=self.external_reference,
            expected_amount=self.amount_minor,
            currency=self.currency,
            order_no=self.order_no,
            booked_status_version=self.status_version,
            booked_event_id=self.booked_event_id,
        )


def _event(item: Mapping[str, Any]) -> InboxEvent:
    return InboxEvent(
        id=item["id"],
        claim=item["claim"],
        order_no=item["order_no"],
        external_reference=item["external_reference"],
        status=PaymentStatus(item["status"]),
        status_version=int(item["status_version"]),
        event_id=item.get("event_id"),
        amount_minor=int(item["amount_minor"]),
        currency=item["currency"],
        test_mode=bool(item["test_mode"]),
        book=bool(item["book"]),
        source=item["source"],
        replayed=bool(item["replayed"]),
        attempts=int(item["attempts"]),
        body=item["body"],
    )


def _watermark(item: Mapping[str, Any]) -> Watermark:
    return Watermark(
        order_no=item["order_no"],
        external_reference=item["external_reference"],
        status_version=int(item["status_version"]),
        status=PaymentStatus(item["status"]),
        amount_minor=int(item["amount_minor"]),
        currency=item["currency"],
        booked_event_id=item.get("booked_event_id"),
    )


def _status(item: Mapping[str, Any]) -> InboxStatus:
    return InboxStatus(
        pending=int(item["pending"]),
        claimed=int(item["claimed"]),
        completed=int(item["completed"]),
        stale=int(item["stale"]),
        duplicate=int(item["duplicate"]),
        rejected={str(k): int(v) for k, v in item["rejected"].items()},
        oldest_pending_ms=item.get("oldest_pending_ms"),
        booked=int(item["booked"]),
        contract_violations={str(k): int(v) for k, v in item.get("contract_violations", {}).items()},
    )


def _replay_wire(event_id: Optional[str], from_ms: Optional[int], to_ms: Optional[int]) -> bytes:
    if event_id is not None:
        if from_ms is not None or to_ms is not None:
            raise ValueError("replay one event_id or a from_ms..to_ms range, not both")
        return to_json({"event": event_id})
    if from_ms is not None and to_ms is not None:
        return to_json(
            {
                "received": {
                    "from_ms": check_int("from_ms", from_ms, I64),
                    "to_ms": check_int("to_ms", to_ms, I64),
                }
            }
        )
    raise ValueError("replay needs event_id, or both from_ms and to_ms")


def _payment_wire(payment: Mapping[str, Any]) -> bytes:
    return to_json({k: (str(v) if isinstance(v, PaymentStatus) else v) for k, v in payment.items()})


def _refused(reason: str) -> Receipt:
    """A delivery refused before it reached the library (headers unreadable)."""
    answer = json.dumps({"id": None, "outcome": "rejected", "reason": reason}, separators=(",", ":"))
    return Receipt(status=400, outcome="rejected", id=None, reason=reason, body=answer.encode())

#: Either an ``InboxEvent`` or anything with ``id`` and ``claim`` (a mapping or an object).
EventLike = Union[InboxEvent, Mapping[str, Any]]


def _id_claim(event: EventLike) -> Tuple[bytes, bytes]:
    if isinstance(event, Mapping):
        return encode(event["id"]), encode(event["claim"])  # type: ignore[return-value]
    return encode(event.id), encode(event.claim)  # type: ignore[return-value]


class Inbox:
    """The webhook inbox at ``url`` (``sqlite:///var/lib/shop/inbox.db`` for one host,
    ``postgres://…`` for many), verifying deliveries with ``secrets`` (several during a
    rotation) and a timestamp tolerance of ``tolerance_s`` seconds both ways (the contract's
    300 by default). ``clock``, when given, is a callable returning the current Unix time in
    seconds, used instead of the system clock to check timestamps (a sandbox's clock in tests).

    Open one per process, after a fork (like a :class:`storefront.Client`); every method may be
    called from several threads. Tables are created on first use; the SQLite file is created
    mode 0600. Every call blocks the calling thread and stays interruptible (``Ctrl-C``); see
    :class:`storefront.aio.AsyncInbox` for asyncio.
    """

    def __init__(
        self,
        url: str,
        secrets: Union[str, Sequence[str]],
        tolerance_s: Optional[int] = None,
        *,
        clock: Optional[Callable[[], int]] = None,
    ):
        _lib.require("sf_inbox_open", "storefront.Inbox")
        if isinstance(secrets, str):
            secrets = [secrets]
        options = None
        if tolerance_s is not None:
            options = to_json({"tolerance_s": check_int("tolerance_s", tolerance_s, U64)})
        out = c_void_p()
        error = c_void_p()
        result = _lib.lib().sf_inbox_open(
            encode(url), to_json(list(secrets)), options, byref(out), byref(error)
        )
        if result != 0:
            raise_for(result, error)
        self._handle = Handle(out, "sf_inbox_free")
        self._clock = clock

    def close(self) -> None:
        """Releases the inbox after in-flight calls finish. Idempotent. Committed events stay."""
        self._handle.close()

    def __enter__(self) -> "Inbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()

    # -- calls ---------------------------------------------------------------------------------

    def _work(self, function: Callable[[Any], Any]) -> Callable[[], Any]:
        """``function(pointer)`` as a function for a worker thread, holding the handle."""
        handle = self._handle

        def work() -> Any:
            pointer = handle.acquire()
            try:
                return function(pointer)
            finally:
                handle.release()

        return work

    def _json(self, name: str, *args: Any) -> Callable[[], Any]:
        return self._work(lambda pointer: call_json(name, pointer, *args))

    def _count(self, name: str, *args: Any) -> Callable[[], int]:
        def count(pointer: Any) -> int:
            value = c_uint64(0)
            error = c_void_p()
            result = getattr(_lib.lib(), name)(pointer, *args, ctypes.addressof(value), byref(error))
            if result != 0:
                raise_for(result, error)
            return int(value.value)

        return self._work(count)

    def _unit(self, name: str, event: EventLike) -> Callable[[], None]:
        event_id, claim = _id_claim(event)

        def unit(pointer: Any) -> None:
            error = c_void_p()
            result = getattr(_lib.lib(), name)(pointer, event_id, claim, byref(error))
            if result != 0:
                raise_for(result, error)

        return self._work(unit)

    def _receive_work(self, headers: Headers, body: Any) -> Callable[[], Receipt]:
        try:
            event_id, timestamp, signature = _three_headers(headers)
        except WebhookError as refused:
            reason = refused.result_name.replace("webhook_", "", 1)
            return lambda: _refused(reason)
        if not isinstance(body, (bytes, bytearray, memoryview)):
            raise TypeError(f"pass the raw body as bytes, exactly as received, not {type(body).__name__}")
        # Any size: the library's inbox answers a body above its limit (413 body_too_large,
        # counted), the same answer in every language.
        raw = bytes(body)
        now = None if self._clock is None else check_int("now", int(self._clock()), I64)

        def receive(pointer: Any) -> Receipt:
            lib = _lib.lib()
            status = c_uint16(0)
            out = c_void_p()
            error = c_void_p()
            data = buffer(raw)
            if now is None:
                result = lib.sf_inbox_receive(
                    pointer, event_id, timestamp, signature, data, len(raw),
                    ctypes.addressof(status), byref(out), byref(error),
                )
            else:
                result = lib.sf_inbox_receive_at(
                    pointer, now, event_id, timestamp, signature, data, len(raw),
                    ctypes.addressof(status), byref(out), byref(error),
                )
            if result != 0:
                raise_for(result, error)
            receipt = json.loads(_lib.take_string(out))
            return Receipt(
                status=int(status.value),
                outcome=receipt["outcome"],
                id=receipt.get("id"),
                reason=receipt.get("reason"),
                body=receipt["body"].encode("utf-8"),
            )

        return self._work(receive)

    # -- receiving -----------------------------------------------------------------------------

    def receive_receipt(self, headers: Headers, body: Any) -> Receipt:
        """Receives one delivery: ``headers`` is any mapping of the request's headers (names
        in any case), a WSGI environ (``HTTP_X_SERVICE_*``) or a list of pairs; ``body`` the raw
        body bytes exactly as received. Verifies, stores in one transaction, and says what to
        answer. Never acknowledges (2xx) what was not committed. A body above the inbox's 1 MiB
        limit is answered 413 ``body_too_large`` (counted in :meth:`status`, never stored); a
        verified notification that breaks the contract 422 ``contract_violation``. A
        duplicated or unreadable ``X-Service-*`` header is answered 400 without reaching the
        inbox."""
        return run_blocking(self._receive_work(headers, body))

    def receive(self, headers: Headers, body: Any) -> Tuple[int, bytes]:
        """:meth:`receive_receipt` as the ``(status, body)`` to answer the service with."""
        receipt = self.receive_receipt(headers, body)
        return receipt.status, receipt.body

    # -- working -------------------------------------------------------------------------------

    def claim(self, n: int = 10, lease_ms: int = 30000) -> List[InboxEvent]:
        """Claims up to ``n`` events for ``lease_ms``: the oldest waiting ones, at most one
        per payment, none of a payment whose previous event is still out. An empty list means
        nothing waits. An event whose lease ran out is claimed again (with a new claim)."""
        n = check_int("n", n, U32)
        lease_ms = check_int("lease_ms", lease_ms, U64)
        items = run_blocking(self._json("sf_inbox_claim", n, lease_ms))
        return [_event(item) for item in items]

    def complete(self, event: EventLike) -> None:
        """Marks ``event`` handled (and, for a ``book`` event, its payment event booked).
        Raises :class:`~storefront.LeaseLostError` when its lease ran out and another worker
        claimed it."""
        run_blocking(self._unit("sf_inbox_complete", event))

    def release(self, event: EventLike) -> None:
        """Gives ``event`` back (the handler failed): it waits for a worker again at once."""
        run_blocking(self._unit("sf_inbox_release", event))

    def completion_sql(self) -> str:
        """The statements that complete an event inside your own transaction on the same
        database: bind ``:id`` and ``:claim`` (SQLite) or ``$1`` and ``$2`` (PostgreSQL), run
        them in order, roll back unless the first changed exactly one row."""
        return run_blocking(self._work(lambda pointer: call_string("sf_inbox_completion_sql", pointer)))

    def complete_in(self, conn: Any, event: EventLike) -> None:
        """Completes ``event`` inside the current transaction of ``conn``, a
        :class:`sqlite3.Connection` on the inbox's own SQLite file, so that your booking and
        the completion commit together (or not at all)::

            with conn:                       # commits on success, rolls back on an exception
                conn.execute("INSERT INTO bookings ...")
                inbox.complete_in(conn, event)

        Raises :class:`~storefront.LeaseLostError` (nothing committed: ``with conn:`` rolls
        your booking back) when the first statement changed no row: the lease ran out and
        another worker claimed the event. Never commits itself. With ``isolation_level=None``
        (autocommit) open the transaction yourself (``BEGIN``)."""
        if isinstance(event, Mapping):
            event_id, claim = str(event["id"]), str(event["claim"])
        else:
            event_id, claim = event.id, event.claim
        statements = [s.strip().rstrip(";") for s in self.completion_sql().split(";\n")]
        statements = [s for s in statements if s]
        params = {"id": event_id, "claim": claim}
        changed = conn.execute(statements[0], params).rowcount
        if changed != 1:
            raise LeaseLostError(
                {
                    "result": 501,
                    "result_name": "inbox_lease_lost",
                    "message": f"the lease of inbox event {event_id} ran out and another worker holds it",
                }
            )
        for statement in statements[1:]:
            conn.execute(statement, params)

    # -- operating -----------------------------------------------------------------------------

    def status(self) -> InboxStatus:
        """Counts per state, rejections per reason, the oldest waiting event's age."""
        return _status(run_blocking(self._json("sf_inbox_status")))

    def purge(self, retention_ms: int = 30 * 24 * 3600 * 1000) -> int:
        """Deletes finished rows (completed, stale, duplicate) older than ``retention_ms``
        (30 days by default); watermarks and bookings are kept. Returns the rows deleted."""
        retention_ms = check_int("retention_ms", retention_ms, U64)
        return run_blocking(self._count("sf_inbox_purge", retention_ms))

    def replay(
        self,
        event_id: Optional[str] = None,
        from_ms: Optional[int] = None,
        to_ms: Optional[int] = None,
    ) -> int:
        """Hands finished events to the handler again (``replayed`` set; ``book`` false for a
        booking already made): the event ``event_id``, or the events received between the Unix
        milliseconds ``from_ms`` (inclusive) and ``to_ms`` (exclusive). Returns how many.
        :class:`~storefront.InboxNotFoundError` for an unknown id."""
        return run_blocking(self._count("sf_inbox_replay", _replay_wire(event_id, from_ms, to_ms)))

    def watermarks(self) -> List[Watermark]:
        """Every payment the inbox knows, with its watermark and booking
        (:meth:`Watermark.local_record` gives the records for the reconciler)."""
        return [_watermark(item) for item in run_blocking(self._json("sf_inbox_watermarks"))]

    def enter_reconciled(self, payment: Mapping[str, Any]) -> str:
        """Enters a payment the reconciler found (a queried payment, as
        :meth:`storefront.Client.merchant_payment` returns it) into the same flow: the one
        handler books it once. Returns ``"stored"`` or ``"duplicate"`` (a version the payment has moved past is kept as stale when a worker claims),
        or ``"contract_violation"`` when the payment breaks the contract (``paid`` without
        ``event_id``, an ``event_id`` of another payment, a version above 2**63 - 1): not
        entered; report it as needing attention."""
        wire = _payment_wire(payment)
        return run_blocking(
            self._work(lambda pointer: call_string("sf_inbox_enter_reconciled", pointer, wire))
        )


class AsyncInbox:
    """The asyncio face of an :class:`Inbox`: ``AsyncInbox(url, secrets, ...)`` (the
    arguments of :class:`Inbox`) or ``AsyncInbox(inbox)``. Every method of :class:`Inbox` is a
    coroutine here, run on a worker thread (the event loop is never blocked; cancelling the
    task cancels the call). :meth:`complete_in` stays synchronous (it runs on your own
    connection), and so do :meth:`close` and the context manager's exit through
    :meth:`aclose`."""

    def __init__(self, url: Union[Inbox, str], secrets: Union[str, Sequence[str], None] = None,
                 tolerance_s: Optional[int] = None, *, clock: Optional[Callable[[], int]] = None):
        if isinstance(url, Inbox):
            self.inbox = url
        else:
            if secrets is None:
                raise TypeError("AsyncInbox(url, secrets) needs the secrets")
            self.inbox = Inbox(url, secrets, tolerance_s, clock=clock)

    def close(self) -> None:
        self.inbox.close()

    async def aclose(self) -> None:
        import asyncio

        await asyncio.get_running_loop().run_in_executor(None, self.inbox.close)

    async def __aenter__(self) -> "AsyncInbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def receive_receipt(self, headers: Headers, body: Any) -> Receipt:
        return await _run_async(self.inbox._receive_work(headers, body))

    async def receive(self, headers: Headers, body: Any) -> Tuple[int, bytes]:
        receipt = await self.receive_receipt(headers, body)
        return receipt.status, receipt.body

    async def claim(self, n: int = 10, lease_ms: int = 30000) -> List[InboxEvent]:
        n = check_int("n", n, U32)
        lease_ms = check_int("lease_ms", lease_ms, U64)
        items = await _run_async(self.inbox._json("sf_inbox_claim", n, lease_ms))
        return [_event(item) for item in items]

    async def complete(self, event: EventLike) -> None:
        await _run_async(self.inbox._unit("sf_inbox_complete", event))

    async def release(self, event: EventLike) -> None:
        await _run_async(self.inbox._unit("sf_inbox_release", event))

    async def completion_sql(self) -> str:
        return await _run_async(
            self.inbox._work(lambda pointer: call_string("sf_inbox_completion_sql", pointer))
        )

    def complete_in(self, conn: Any, event: EventLike) -> None:
        """:meth:`Inbox.complete_in` (synchronous: it runs on your own connection)."""
        self.inbox.complete_in(conn, event)

    async def status(self) -> InboxStatus:
        return _status(await _run_async(self.inbox._json("sf_inbox_status")))

    async def purge(self, retention_ms: int = 30 * 24 * 3600 * 1000) -> int:
        retention_ms = check_int("retention_ms", retention_ms, U64)
        return await _run_async(self.inbox._count("sf_inbox_purge", retention_ms))

    async def replay(self, event_id: Optional[str] = None, from_ms: Optional[int] = None,
                     to_ms: Optional[int] = None) -> int:
        wire = _replay_wire(event_id, from_ms, to_ms)
        return await _run_async(self.inbox._count("sf_inbox_replay", wire))

    async def watermarks(self) -> List[Watermark]:
        return [_watermark(item) for item in await _run_async(self.inbox._json("sf_inbox_watermarks"))]

    async def enter_reconciled(self, payment: Mapping[str, Any]) -> str:
        wire = _payment_wire(payment)
        return await _run_async(
            self.inbox._work(lambda pointer: call_string("sf_inbox_enter_reconciled", pointer, wire))
        )


async def _run_async(work: Callable[[], Any]) -> Any:
    from ._call import run_async

    return await run_async(work)
