"""The reconciler: the shop's own booking records against the service's merchant payments.

``Client.reconcile(records, options=None)`` yields one :class:`ReconcileReport` per record, in
order, looking records up as the caller iterates (``sf_reconcile`` in batches of
:data:`BATCH` records). The rules are the core's (``src/reconcile.rs``): only ``paid`` is
payment and an unknown status is never paid; reference, amount, currency and ``test_mode`` are
checked before a payment is offered for booking; payments are booked once per ``event_id``;
lookups stay within the shared read budget and re-queues within the re-queue budget (the
client's rate limiter paces them). A run changes nothing at the service except the optional
re-queue of failed notification deliveries, so it is safe to repeat every few minutes.

Resumable: every report carries the :class:`ReconcileCursor` after its record; pass the last one
received as ``ReconcileOptions(cursor=...)`` to continue with the same records later.

Findings (``report.finding``), each a frozen dataclass with a ``name`` (the C ABI's tag):
:class:`InAgreement`, :class:`PaidNotBooked` (book ``event_id``), :class:`BookedNotPaid`,
:class:`Mismatch` (``field``: ``external_reference``, ``amount``, ``currency``, ``test_mode``,
``status_version`` or ``event_id``), :class:`UnderReview`, :class:`UnknownStatus`,
:class:`MissingAtService`, :class:`Ambiguous`, :class:`LookupFailed`, and from the inbox's
reconciliation :class:`NeedsAttention` (a payment that breaks the contract).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from dataclasses import field as _field
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Callable,
    ClassVar,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Union,
)

from . import _lib
from ._call import call_string, from_json, run_async, run_blocking, to_json
from .inputs import AMOUNT_MINOR_MAX, U32, U64, check_int, validation_error
from .models import MerchantPayment, PaymentStatus, typed_payment

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

#: Records looked up per ``sf_reconcile`` call (the reports of one batch are yielded one by one).
BATCH = 16


@dataclass(frozen=True)
class LocalRecord:
    """The shop's own record of one business order, as booked."""

    #: The business order reference sent as ``external_reference``.
    external_reference: str
    #: The amount the shop expects, in minor units of ``currency``.
    expected_amount: int
    #: The currency the shop expects (uppercase code).
    currency: str
    #: The service's payment number, when stored (the most precise lookup).
    order_no: Optional[str] = None
    #: The ``test_mode`` the shop expects (compared once a channel is chosen).
    test_mode: Optional[bool] = None
    #: The last ``status_version`` booked (a lower service version is a mismatch).
    booked_status_version: Optional[int] = None
    #: The payment ``event_id`` the payment was booked under; set means "booked as paid".
    booked_event_id: Optional[str] = None


@dataclass(frozen=True)
class ReconcileCursor:
    """Where a run stopped: the index of the next record and the reference of the last one."""

    next_index: int
    last_reference: Optional[str] = None


@dataclass(frozen=True)
class ReconcileWindow:
    """Bounds on ``expires_at`` (inclusive) kept by lookups by reference: RFC 3339 text or
    timezone-aware ``datetime``."""

    start: Union[None, str, datetime.datetime] = None
    end: Union[None, str, datetime.datetime] = None


@dataclass(frozen=True)
class ReconcileOptions:
    """Options of a run."""

    #: Re-queue ``failed`` notification deliveries of payments found paid but not booked.
    requeue_failed: bool = False
    #: Keep only payments whose ``expires_at`` is in this window (lookups by reference).
    window: Optional[ReconcileWindow] = None
    #: ``limit`` of the filtered list and of the delivery-record list, 1 to 100.
    limit: int = 100
    #: Resume after the record this cursor names (the ``cursor`` of the last report received).
    cursor: Optional[ReconcileCursor] = None


@dataclass(frozen=True)
class LookupFailure:
    """Why a lookup or a re-queue failed: branch on ``kind``, ``http_status``, ``code``."""

    #: ``api``, ``transport``, ``deadline_exceeded``, ``decode``, ...
    kind: str
    code: Optional[str]
    http_status: Optional[int]
    #: Display text (never holds secrets).
    message: str


class ReconcileFinding:
    """Base of the findings; ``name`` is the stable snake_case tag."""

    name: ClassVar[str] = ""


@dataclass(frozen=True)
class InAgreement(ReconcileFinding):
    """The record and the service agree; nothing to do."""

    name: ClassVar[str] = "in_agreement"


@dataclass(frozen=True)
class PaidNotBooked(ReconcileFinding):
    """Paid at the service, not booked here: book it once, under ``event_id``."""

    name: ClassVar[str] = "paid_not_booked"
    event_id: str
    status_version: Optional[int]
    #: Payment confirmation time (RFC 3339, the service's zone).
    occurred_at: Optional[str]
    payment: MerchantPayment = _field(repr=False)


@dataclass(frozen=True)
class BookedNotPaid(ReconcileFinding):
    """Booked here as paid, but not (any more) paid at the service."""

    name: ClassVar[str] = "booked_not_paid"
    #: ``refunded``, ``chargeback``, ``review``, ``expired`` or ``pending``.
    status: PaymentStatus
    payment: MerchantPayment = _field(repr=False)


@dataclass(frozen=True)
class Mismatch(ReconcileFinding):
    """A field differs from the record; do not book, investigate."""

    name: ClassVar[str] = "mismatch"
    #: ``external_reference``, ``amount``, ``currency``, ``test_mode``, ``status_version``,
    #: ``event_id``.
    field: str
    expected: str
    actual: str
    payment: MerchantPayment = _field(repr=False)


@dataclass(frozen=True)
class UnderReview(ReconcileFinding):
    """``review``, nothing booked: needs verification; never paid, never failed."""

    name: ClassVar[str] = "under_review"
    payment: MerchantPayment = _field(repr=False)


@dataclass(frozen=True)
class UnknownStatus(ReconcileFinding):
    """A status the contract does not list: needs verification, never paid."""

    name: ClassVar[str] = "unknown_status"
    #: As sent; ``status.is_paid`` is False and ``status.needs_verification`` True.
    status: PaymentStatus
    payment: MerchantPayment = _field(repr=False)


@dataclass(frozen=True)
class MissingAtService(ReconcileFinding):
    """The service has no payment for this record (or none within the window)."""

    name: ClassVar[str] = "missing_at_service"


@dataclass(frozen=True)
class Ambiguous(ReconcileFinding):
    """No order number here and several payments carry the reference (newest first)."""

    name: ClassVar[str] = "ambiguous"
    order_nos: List[str]


@dataclass(frozen=True)
class LookupFailed(ReconcileFinding):
    """The lookup failed; the record is unreconciled this run."""

    name: ClassVar[str] = "lookup_failed"
    error: LookupFailure


@dataclass(frozen=True)
class NeedsAttention(ReconcileFinding):
    """From the inbox's reconciliation (the core's ``Inbox::reconcile``) only: the payment
    breaks the contract (``reason`` ``missing_event_id``: ``paid`` without ``event_id``;
    ``event_id_reused``: an ``event_id`` of another payment; ``status_version_out_of_range``:
    a version above 2**63 - 1) or entering it failed (``inbox_<code>``). Never booked
    automatically; an operator decides."""

    name: ClassVar[str] = "needs_attention"
    reason: str
    payment: Any


@dataclass(frozen=True)
class ReconcileReport:
    """The result for one record."""

    #: The record's ``external_reference``.
    record: str
    #: Its position in the records given.
    index: int
    #: The payment number the finding is about, when one payment was found.
    order_no: Optional[str]
    finding: ReconcileFinding
    #: The service's ``status_version`` of that payment, when one was found.
    service_status_version: Optional[int]
    #: Failed deliveries re-queued for this payment (``requeue_failed`` only).
    requeued: int
    #: Why listing or re-queuing deliveries failed, if it did.
    requeue_error: Optional[LookupFailure]
    #: Pass it as ``ReconcileOptions(cursor=...)`` to resume after this record.
    cursor: ReconcileCursor


RecordLike = Union[LocalRecord, Mapping[str, Any]]
OptionsLike = Union[ReconcileOptions, Mapping[str, Any]]

_RECORD_FIELDS = tuple(LocalRecord.__dataclass_fields__)
_OPTION_FIELDS = tuple(ReconcileOptions.__dataclass_fields__)


def _record_wire(index: int, value: RecordLike) -> Dict[str, Any]:
    prefix = f"records[{index}]."
    if isinstance(value, Mapping):
        for key in value:
            if key not in _RECORD_FIELDS:
                raise validation_error(prefix + str(key), f"unknown key `{prefix}{key}`")
        missing = [k for k in ("external_reference", "expected_amount", "currency") if value.get(k) is None]
        if missing:
            raise validation_error(prefix + missing[0], f"`{prefix}{missing[0]}` is required")
        value = LocalRecord(**value)
    elif not isinstance(value, LocalRecord):
        raise TypeError(f"a record must be a LocalRecord or a dict, not {type(value).__name__}")
    wire: Dict[str, Any] = {
        "external_reference": value.external_reference,
        "expected_amount": check_int(prefix + "expected_amount", value.expected_amount, (1, AMOUNT_MINOR_MAX)),
        "currency": value.currency,
    }
    if value.order_no is not None:
        wire["order_no"] = value.order_no
    if value.test_mode is not None:
        wire["test_mode"] = bool(value.test_mode)
    if value.booked_status_version is not None:
        wire["booked_status_version"] = check_int(
            prefix + "booked_status_version", value.booked_status_version, U64
        )
    if value.booked_event_id is not None:
        wire["booked_event_id"] = value.booked_event_id
    return wire


def _time(name: str, value: Union[str, datetime.datetime]) -> str:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise validation_error(name, f"`{name}` must be timezone-aware")
        return value.isoformat()
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be RFC 3339 text or a datetime")
    return value


def _options_wire(options: Optional[OptionsLike]) -> Dict[str, Any]:
    if options is None:
        return {}
    if isinstance(options, Mapping):
        for key in options:
            if key not in _OPTION_FIELDS:
                raise validation_error(f"options.{key}", f"unknown key `options.{key}`")
        options = ReconcileOptions(**options)
    elif not isinstance(options, ReconcileOptions):
        raise TypeError(f"options must be ReconcileOptions or a dict, not {type(options).__name__}")
    wire: Dict[str, Any] = {
        "requeue_failed": bool(options.requeue_failed),
        "limit": check_int("options.limit", options.limit, U32),
    }
    window = options.window
    if isinstance(window, Mapping):
        window = ReconcileWindow(**window)
    if window is not None:
        bounds: Dict[str, str] = {}
        if window.start is not None:
            bounds["from"] = _time("options.window.start", window.start)
        if window.end is not None:
            bounds["to"] = _time("options.window.end", window.end)
        wire["window"] = bounds
    cursor = options.cursor
    if isinstance(cursor, Mapping):
        cursor = ReconcileCursor(**cursor)
    if cursor is not None:
        wire["cursor"] = _cursor_wire(cursor)
    return wire


def _cursor_wire(cursor: ReconcileCursor) -> Dict[str, Any]:
    wire: Dict[str, Any] = {"next_index": check_int("options.cursor.next_index", cursor.next_index, U64)}
    if cursor.last_reference is not None:
        wire["last_reference"] = cursor.last_reference
    return wire


def _error(value: Optional[Mapping[str, Any]]) -> Optional[LookupFailure]:
    if value is None:
        return None
    return LookupFailure(
        kind=value["kind"],
        code=value.get("code"),
        http_status=value.get("http_status"),
        message=value["message"],
    )


def _finding(value: Mapping[str, Any]) -> ReconcileFinding:
    name = value["finding"]
    if "payment" in value:
        # The payment's status as a PaymentStatus (is_paid / needs_verification), as every
        # merchant payment this package returns.
        value = {**value, "payment": typed_payment(value["payment"])}
    if name == "in_agreement":
        return InAgreement()
    if name == "paid_not_booked":
        return PaidNotBooked(
            event_id=value["event_id"],
            status_version=value.get("status_version"),
            occurred_at=value.get("occurred_at"),
            payment=value["payment"],
        )
    if name == "booked_not_paid":
        return BookedNotPaid(status=PaymentStatus(value["status"]), payment=value["payment"])
    if name == "mismatch":
        return Mismatch(
            field=value["field"],
            expected=value["expected"],
            actual=value["actual"],
            payment=value["payment"],
        )
    if name == "under_review":
        return UnderReview(payment=value["payment"])
    if name == "unknown_status":
        return UnknownStatus(status=PaymentStatus(value["status"]), payment=value["payment"])
    if name == "missing_at_service":
        return MissingAtService()
    if name == "ambiguous":
        return Ambiguous(order_nos=list(value["order_nos"]))
    if name == "lookup_failed":
        error = _error(value["error"])
        assert error is not None
        return LookupFailed(error=error)
    if name == "needs_attention":
        return NeedsAttention(reason=value["reason"], payment=value["payment"])
    raise ValueError(f"unknown finding {name!r} from the library")


def report_from_json(value: Mapping[str, Any]) -> ReconcileReport:
    """One JSON line of ``sf_reconcile`` as a :class:`ReconcileReport`."""
    cursor = value["cursor"]
    return ReconcileReport(
        record=value["record"],
        index=int(value["index"]),
        order_no=value.get("order_no"),
        finding=_finding(value["finding"]),
        service_status_version=value.get("service_status_version"),
        requeued=int(value["requeued"]),
        requeue_error=_error(value.get("requeue_error")),
        cursor=ReconcileCursor(int(cursor["next_index"]), cursor.get("last_reference")),
    )


def prepare(records: Sequence[RecordLike], options: Optional[OptionsLike]) -> tuple:
    """The records and options as the JSON ``sf_reconcile`` reads, checked (a
    :class:`~storefront.ValidationError` names a bad key)."""
    _lib.require("sf_reconcile", "the reconciler")
    return [_record_wire(i, r) for i, r in enumerate(records)], _options_wire(options)


def batch_work(client: "Client", records: List[Dict[str, Any]], options: Dict[str, Any]) -> Callable[[], str]:
    """One ``sf_reconcile`` call (the next :data:`BATCH` records after ``options["cursor"]``) as
    a function for a worker thread; it returns the JSON lines."""
    handle = client._handle
    request = to_json({"records": records, "options": options})

    def work() -> str:
        pointer = handle.acquire()
        try:
            return call_string("sf_reconcile", pointer, request, BATCH)
        finally:
            handle.release()

    return work


def parse_batch(lines: str) -> List[ReconcileReport]:
    """The reports of one batch's JSON lines."""
    return [report_from_json(from_json(line)) for line in lines.splitlines() if line]


def after(options: Dict[str, Any], reports: List[ReconcileReport], total: int) -> Optional[Dict[str, Any]]:
    """The options of the next batch, or None when the run is over."""
    if not reports or reports[-1].cursor.next_index >= total:
        return None
    return {**options, "cursor": _cursor_wire(reports[-1].cursor)}


def reconcile(
    client: "Client", records: Sequence[RecordLike], options: Optional[OptionsLike] = None
) -> Iterator[ReconcileReport]:
    """``Client.reconcile``: checks the arguments now, then returns the iterator that looks
    records up as it is consumed."""
    wire_records, wire_options = prepare(records, options)
    return _iterate(client, wire_records, wire_options)


def _iterate(
    client: "Client", records: List[Dict[str, Any]], options: Optional[Dict[str, Any]]
) -> Iterator[ReconcileReport]:
    while options is not None:
        reports = parse_batch(run_blocking(batch_work(client, records, options)))
        yield from reports
        options = after(options, reports, len(records))


async def areconcile(
    client: "Client", records: Sequence[RecordLike], options: Optional[OptionsLike] = None
) -> AsyncIterator[ReconcileReport]:
    """``AsyncClient.reconcile``: the same reports as an async iterator; each batch runs on a
    worker thread (cancelling the task cancels the batch in the library). The arguments are
    checked when iteration starts."""
    wire_records, current = prepare(records, options)
    while current is not None:
        reports = parse_batch(await run_async(batch_work(client, wire_records, current)))
        for report in reports:
            yield report
        current = after(current, reports, len(wire_records))


__all__: Sequence[str] = (
    "Ambiguous",
    "BookedNotPaid",
    "InAgreement",
    "LocalRecord",
    "LookupFailure",
    "LookupFailed",
    "MissingAtService",
    "Mismatch",
    "NeedsAttention",
    "PaidNotBooked",
    "ReconcileCursor",
    "ReconcileFinding",
    "ReconcileOptions",
    "ReconcileReport",
    "ReconcileWindow",
    "UnderReview",
    "UnknownStatus",
)
