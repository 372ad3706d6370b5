"""Webhook verification, the status-version guard, expectation checks and the test signer.

Three lines in a request handler::

    verifier = storefront.WebhookVerifier([secret])          # once, at start-up
    notification = verifier.verify(request.headers, request.body)  # raises storefront.WebhookError
    storefront.check_expectation(notification["data"], expected)   # before booking
"""

from __future__ import annotations

import json
import re
from ctypes import byref, c_int64, c_size_t, c_void_p
from decimal import Decimal
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from ._call import buffer, call_handle, call_json, call_string, call_unit, encode, raise_for, to_json
from ._handle import Handle
from .errors import (
    StorefrontError,
    WebhookBodyError,
    WebhookError,
    WebhookHeaderError,
)
from .inputs import I64, U64, check_int
from .models import PaymentStatus, ResultDict, StatusNotification, typed_notification

EVENT_ID_HEADER = "X-Service-Event-ID"
TIMESTAMP_HEADER = "X-Service-Timestamp"
SIGNATURE_HEADER = "X-Service-Signature"

#: Longest header value accepted, in bytes (a signature header with a few ``sha256=`` values
#: is far shorter).
MAX_HEADER_BYTES = 8192

#: What ``verify`` accepts as headers: a mapping (``dict``, ``request.headers``, WSGI environ
#: or Django ``request.META``), a list of ``(name, value)`` pairs, or any object with
#: ``items()`` (Werkzeug ``EnvironHeaders``, Starlette ``Headers``, aiohttp ``CIMultiDict``) or
#: with ``get()`` only.
Headers = Union[Mapping[str, Any], Sequence[Tuple[Any, Any]], Any]


def _header_error(name: str, message: str, result_name: str = "webhook_malformed_header") -> WebhookHeaderError:
    return WebhookHeaderError(
        {"result": 300, "result_name": result_name, "message": message, "field": name}
    )


def _body_error(message: str, result_name: str = "webhook_invalid_body") -> WebhookBodyError:
    return WebhookBodyError(
        {"result": 306, "result_name": result_name, "message": message, "field": "body"}
    )


def _names(name: str) -> Tuple[str, str]:
    """The spellings a header is found under, lower-cased: ``x-service-signature`` (plain, any
    case) and ``http_x_service_signature`` (WSGI environ, Django ``request.META``)."""
    lowered = name.lower()
    return lowered, "http_" + lowered.replace("-", "_")


def _pairs(headers: Headers) -> Optional[Iterable[Tuple[Any, Any]]]:
    items = getattr(headers, "items", None)
    if callable(items):
        return items()
    if isinstance(headers, (list, tuple)):
        return headers
    return None


def _values(headers: Headers, name: str) -> List[Any]:
    """Every value given for header ``name`` (several when it is duplicated)."""
    wanted = _names(name)
    pairs = _pairs(headers)
    found: List[Any] = []
    if pairs is None:
        get = getattr(headers, "get", None)
        if not callable(get):
            raise _header_error(
                name,
                "headers must be a mapping, a list of (name, value) pairs or an object with"
                f" items() or get(), not {type(headers).__name__}",
                "webhook_bad_headers",
            )
        for spelling in (name, name.lower(), "HTTP_" + name.upper().replace("-", "_")):
            value = get(spelling)
            if value is not None:
                return [value]
        return []
    for pair in pairs:
        try:
            key, value = pair
        except (TypeError, ValueError):
            raise _header_error(name, "headers must be (name, value) pairs", "webhook_bad_headers") from None
        if isinstance(key, (bytes, bytearray)):
            key = bytes(key).decode("latin-1")
        if isinstance(key, str) and key.lower() in wanted and value is not None:
            found.append(value)
    return found


def _checked(name: str, values: List[Any]) -> Optional[bytes]:
    """The single value among ``values`` (what was found for header ``name``) as UTF-8 bytes,
    or None when absent; raises :class:`~storefront.WebhookHeaderError` as
    :func:`header_value` documents."""
    if len(values) == 1 and type(values[0]) is str:  # the common case, checked first
        try:
            raw = values[0].encode("utf-8")
        except UnicodeEncodeError:
            raise _header_error(name, f"header {name} is not valid text") from None
        if len(raw) <= MAX_HEADER_BYTES and b"\0" not in raw:
            return raw
    if isinstance(values[0] if len(values) == 1 else None, (list, tuple)):
        values = list(values[0])
    if not values:
        return None
    if len(values) > 1:
        raise _header_error(name, f"header {name} is given {len(values)} times", "webhook_duplicate_header")
    value = values[0]
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) > MAX_HEADER_BYTES:
            raise _header_error(name, f"header {name} is longer than {MAX_HEADER_BYTES} bytes")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _header_error(name, f"header {name} is not UTF-8") from None
    elif isinstance(value, str):
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError:
            raise _header_error(name, f"header {name} is not valid text") from None
    else:
        raise _header_error(name, f"header {name} must be text, not {type(value).__name__}")
    if len(raw) > MAX_HEADER_BYTES:
        raise _header_error(name, f"header {name} is longer than {MAX_HEADER_BYTES} bytes")
    if b"\0" in raw:
        raise _header_error(name, f"header {name} contains a NUL character")
    return raw


def header_value(headers: Headers, name: str) -> Optional[str]:
    """The single value of header ``name`` as text, or None when absent. Raises
    :class:`~storefront.WebhookHeaderError` naming the header when it is duplicated (two
    entries, or a list of two values), not text or UTF-8 bytes, holds a NUL character, or is
    longer than ``MAX_HEADER_BYTES``."""
    raw = _checked(name, _values(headers, name))
    return None if raw is None else raw.decode("utf-8")


#: The three headers a delivery carries, in the order of the C arguments.
_HEADERS = (EVENT_ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER)
#: Every lower-cased spelling of the three headers -> its index in ``_HEADERS``.
_SPELLINGS = {spelling: index for index, name in enumerate(_HEADERS) for spelling in _names(name)}
#: The spellings frameworks use, exactly (as sent, lower-case as HTTP/2 and ASGI give them, the
#: WSGI environ key) -> index: found without case-folding.
_EXACT = {
    spelling: index
    for index, name in enumerate(_HEADERS)
    for spelling in (name, name.lower(), "HTTP_" + name.upper().replace("-", "_"), *_names(name))
}
#: The lengths of every spelling: a key of another length is not one of the three headers.
_LENGTHS = frozenset(len(spelling) for spelling in _SPELLINGS)


def _three_headers(headers: Headers) -> Tuple[Optional[bytes], Optional[bytes], Optional[bytes]]:
    """The three header values as UTF-8 bytes (None when absent), found in one pass over the
    headers, with the checks and errors of :func:`header_value`."""
    pairs = _pairs(headers)
    if pairs is None:  # an object with get() only (or not headers at all: header_value says so)
        found = [_values(headers, name) for name in _HEADERS]
    else:
        found = [[], [], []]
        spellings = _SPELLINGS
        exact = _EXACT.get
        lengths = _LENGTHS
        try:
            for key, value in pairs:
                if type(key) is str:
                    # The names as frameworks spell them are found without case-folding; any
                    # other key is folded only when its length is one of the names' (folding
                    # never shortens a text), so duplicates in other cases are still found.
                    index = exact(key)
                    if index is None:
                        if len(key) not in lengths:
                            continue
                        index = spellings.get(key.lower())
                        if index is None:
                            continue
                else:
                    if not isinstance(key, (str, bytes, bytearray)):
                        continue
                    key = bytes(key).decode("latin-1") if isinstance(key, (bytes, bytearray)) else str(key)
                    index = spellings.get(key.lower())
                    if index is None:
                        continue
                if value is not None:
                    found[index].append(value)
        except (TypeError, ValueError):  # an item that is not a (name, value) pair
            raise _header_error(EVENT_ID_HEADER, "headers must be (name, value) pairs", "webhook_bad_headers") from None
    # The common case (each header once, short ASCII text without NUL) without a call; any
    # other value goes through _checked and its errors.
    values = found[0]
    value = values[0] if len(values) == 1 else None
    if type(value) is str and value.isascii() and len(value) <= MAX_HEADER_BYTES and "\0" not in value:
        event_id = value.encode("ascii")
    else:
        event_id = _checked(EVENT_ID_HEADER, values)
    values = found[1]
    value = values[0] if len(values) == 1 else None
    if type(value) is str and value.isascii() and len(value) <= MAX_HEADER_BYTES and "\0" not in value:
        timestamp = value.encode("ascii")
    else:
        timestamp = _checked(TIMESTAMP_HEADER, values)
    values = found[2]
    value = values[0] if len(values) == 1 else None
    if type(value) is str and value.isascii() and len(value) <= MAX_HEADER_BYTES and "\0" not in value:
        signature = value.encode("ascii")
    else:
        signature = _checked(SIGNATURE_HEADER, values)
    return event_id, timestamp, signature


_max_body: Optional[int] = None


def _body(body: Any) -> bytes:
    global _max_body
    if type(body) is bytes:  # the common case: no copy
        raw = body
    elif isinstance(body, str):
        raise _body_error("pass the raw body as bytes, exactly as received (not str)")
    elif isinstance(body, (bytes, bytearray, memoryview)):
        raw = bytes(body)
    else:
        raise _body_error(f"the body must be bytes, not {type(body).__name__}")
    if _max_body is None:
        _max_body = _lib.lib().sf_max_input_bytes()
    if len(raw) > _max_body:
        raise _body_error(f"the body is longer than {_max_body} bytes", "webhook_body_too_large")
    return raw


# -- the verified body, decoded once -----------------------------------------------------------

#: One decoder for every notification: a number with a fraction becomes ``Decimal`` (never
#: ``float``); the notification and its ``data`` then become ``ResultDict`` (as every result of
#: the wrapper; they are the only objects of the snapshot).
_DECODER = json.JSONDecoder(parse_float=Decimal)
_scan = _DECODER.scan_once
#: RFC 3339 date-time (the service's times): shape and field ranges.
#: ASCII digits only (``\d`` would also take other scripts' digits, which the library refuses)
#: and no capturing groups (half the matching time).
_RFC3339 = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:"
    r"(?:[0-5][0-9]|60)(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\Z",
    re.ASCII,
)
#: ``data`` fields and what each must be (the snapshot of ``StatusNotification.data``).
_TEXT = ("order_no", "external_reference", "currency", "status")
_OPTIONAL_TEXT = ("event_id", "provider_trade_no")
#: Integer fields: (name, smallest, largest): minor units are positive and at most 2^53 - 1,
#: the precision is 0 to 18 (MAX_SCALE), the version an unsigned 64-bit number.
_INTEGERS = (
    ("amount_minor", 1, 9007199254740991),
    ("currency_decimals", 0, 18),
    ("status_version", 0, 18446744073709551615),
)


def _data_problem(data: Any) -> Optional[str]:
    """What is wrong with a verified notification's ``data`` (None when it is a valid
    snapshot): the checks the library's typed decoding makes (``sf_webhook_verify``), done on
    the host's own parse."""
    if type(data) is not dict:
        return "data: not an object"
    for name in _TEXT:
        if type(data.get(name)) is not str:
            return f"data.{name}: missing or not a string"
    for name, low, high in _INTEGERS:
        value = data.get(name)
        if type(value) is not int or not low <= value <= high:
            return f"data.{name}: missing, not an integer, or outside {low}..{high}"
    if type(data.get("test_mode")) is not bool:
        return "data.test_mode: missing or not a boolean"
    expires = data.get("expires_at")
    if type(expires) is not str or _RFC3339.match(expires) is None:
        return "data.expires_at: missing or not an RFC 3339 time"
    payment_no = data.get("payment_no", "")
    if type(payment_no) is not str:
        return "data.payment_no: not a string"
    for name in _OPTIONAL_TEXT:
        value = data.get(name)
        if value is not None and type(value) is not str:
            return f"data.{name}: not a string"
    occurred = data.get("occurred_at")
    if occurred is not None and (type(occurred) is not str or _RFC3339.match(occurred) is None):
        return "data.occurred_at: not an RFC 3339 time"
    return None


_match_time = _RFC3339.match
#: The contract's statuses as the shared (immutable) PaymentStatus constants; another status is
#: made when met.
_STATUSES = {str(status): status for status in (
    PaymentStatus.PENDING, PaymentStatus.PAID, PaymentStatus.REVIEW,
    PaymentStatus.EXPIRED, PaymentStatus.REFUNDED, PaymentStatus.CHARGEBACK,
)}
_OPTIONAL_FIELDS = (("payment_no", ""), ("event_id", None), ("provider_trade_no", None), ("occurred_at", None))


def _data_valid(data: Any) -> bool:
    """The checks of :func:`_data_problem` in one expression, for the common case of a valid
    snapshot (``_data_problem`` then names what is wrong when this is false)."""
    if type(data) is not dict:
        return False
    get = data.get
    amount, decimals, version = get("amount_minor"), get("currency_decimals"), get("status_version")
    expires, occurred, payment_no = get("expires_at"), get("occurred_at"), get("payment_no", "")
    event_id, trade_no = get("event_id"), get("provider_trade_no")
    return (
        type(get("order_no")) is str
        and type(get("external_reference")) is str
        and type(get("currency")) is str
        and type(get("status")) is str
        and type(amount) is int
        and 1 <= amount <= 9007199254740991
        and type(decimals) is int
        and 0 <= decimals <= 18
        and type(version) is int
        and 0 <= version <= 18446744073709551615
        and type(get("test_mode")) is bool
        and type(expires) is str
        and _match_time(expires) is not None
        and type(payment_no) is str
        and (event_id is None or type(event_id) is str)
        and (trade_no is None or type(trade_no) is str)
        and (occurred is None or (type(occurred) is str and _match_time(occurred) is not None))
    )


def _notification(raw: bytes) -> StatusNotification:
    """Decodes a body the library verified (signature, timestamp and envelope) with Python's
    own JSON, once, and checks its ``data``; absent optional fields are filled in as the
    library's typed decoding did (``payment_no`` "", the others None)."""
    try:
        text = raw.decode("utf-8")
        try:
            # The body as the service sends it (an object from the first byte to the last):
            # the scanner alone, without decode()'s two whitespace matches.
            notification, end = _scan(text, 0)
        except StopIteration:  # leading whitespace (or not JSON): decode() says which
            end = -1
        if end != len(text):
            notification = _DECODER.decode(text)
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _body_error(f"invalid notification body: {error}") from None
    if type(notification) is not dict:  # the library checked the envelope: not reached
        raise _body_error("invalid notification body: not an object")
    data = notification.get("data")
    if not _data_valid(data):
        raise _body_error(f"invalid notification body: {_data_problem(data)}")
    data = ResultDict(data)
    for name, default in _OPTIONAL_FIELDS:
        if name not in data:
            data[name] = default
    status = data["status"]
    data["status"] = _STATUSES.get(status) or PaymentStatus(status)  # is_paid / needs_verification
    notification = ResultDict(notification)
    notification["data"] = data
    return notification  # type: ignore[return-value]


def _unconverted(name: str) -> Any:
    """Export ``name`` (None when the library predates it) as a function without ``argtypes``:
    ctypes passes each argument as it is, skipping the per-argument conversion of a prototype
    (a third of the crossing). Callers pass only values already of the C parameter's type:
    ``c_void_p``, ``bytes`` or None for ``const char *`` and ``const uint8_t *`` (never ``str``,
    which would go as ``wchar_t *``), ``c_size_t``, ``c_int64``, ``byref``."""
    if not _lib.has(name):
        return None
    library = _lib.lib()
    function = library._FuncPtr((name, library))
    function.restype = getattr(library, name).restype
    return function


class WebhookVerifier:
    """Verifies signed status notifications against one or more secrets (several during a
    rotation: old payments keep their old secret). Checks the ``sha256=`` HMAC over
    ``timestamp.raw_body`` in constant time, the 5-minute tolerance in both directions, and that
    ``X-Service-Event-ID`` equals the body's ``id``. Pass the raw body bytes as received: never
    re-serialized JSON. Safe to share between threads.

    Every problem with the input raises a :class:`~storefront.WebhookError` subclass (never
    ``ValueError``, ``TypeError`` or ``UnicodeError``): answer non-2xx and book nothing."""

    def __init__(self, secrets: Union[str, Sequence[str]]):
        if isinstance(secrets, str):
            secrets = [secrets]
        self._handle = Handle(
            call_handle("sf_webhook_verifier_new", to_json(list(secrets))),
            "sf_webhook_verifier_free",
        )
        # The body-only exports (one JSON pass: the library checks, Python decodes); a library
        # older than this package lacks them and verifies with its own decoding instead.
        self._max_body = _lib.lib().sf_max_input_bytes()
        self._verify_body = _unconverted("sf_webhook_verify_body")
        self._verify_body_at = _unconverted("sf_webhook_verify_body_at")

    def close(self) -> None:
        """Releases the verifier after in-flight verifications finish (idempotent)."""
        self._handle.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()

    def _call(self, name: str, headers: Headers, body: Any, *extra: Any) -> Any:
        args = self._args(headers, body)
        pointer = self._handle.acquire()
        try:
            return call_json(name, pointer, *args, *extra)
        except WebhookError:
            raise
        except StorefrontError as error:  # an input the library refused: still a webhook failure
            raise WebhookError(
                {
                    "result": error.result,
                    "result_name": error.result_name,
                    "message": error.message,
                    "field": error.field,
                }
            ) from None
        finally:
            self._handle.release()

    @staticmethod
    def _args(headers: Headers, body: Any) -> tuple:
        raw = _body(body)
        return (
            encode(header_value(headers, EVENT_ID_HEADER)),
            encode(header_value(headers, TIMESTAMP_HEADER)),
            encode(header_value(headers, SIGNATURE_HEADER)),
            buffer(raw),
            len(raw),
        )

    def _verified(self, headers: Headers, body: Any, now: Optional[int]) -> StatusNotification:
        """One verification through ``sf_webhook_verify_body[_at]``: the library checks the
        headers, the signature over the caller's own body bytes (passed in place, not copied)
        and the envelope, and hands nothing back; the body is then decoded here, once."""
        # The common case (bytes within the limit) without a call; anything else through _body.
        raw = body if type(body) is bytes and len(body) <= self._max_body else _body(body)
        event_id, timestamp, signature = _three_headers(headers)
        error = c_void_p()
        # The arguments are of the C types already (see _unconverted): the handle's c_void_p,
        # bytes or None for the strings and the body, c_size_t, c_int64 and the error pointer.
        handle = self._handle
        pointer = handle.acquire()
        try:
            if now is None:
                result = self._verify_body(pointer, event_id, timestamp, signature, raw, c_size_t(len(raw)), byref(error))
            else:
                result = self._verify_body_at(
                    pointer, event_id, timestamp, signature, raw, c_size_t(len(raw)), c_int64(now), byref(error)
                )
        finally:
            handle.release()
        if result != 0:
            try:
                raise_for(result, error)
            except WebhookError:
                raise
            except StorefrontError as failure:  # an input the library refused: a webhook failure
                raise WebhookError(
                    {
                        "result": failure.result,
                        "result_name": failure.result_name,
                        "message": failure.message,
                        "field": failure.field,
                    }
                ) from None
        return _notification(raw)

    def verify(self, headers: Headers, body: bytes) -> StatusNotification:
        """Verifies a delivery and returns the notification (``id``, ``type``, ``api_version``,
        ``created_at``, ``data``). ``headers`` may be ``request.headers`` of any framework, a
        WSGI environ or Django ``request.META`` (``HTTP_X_SERVICE_SIGNATURE``), a dict or a list
        of pairs; names match in any case. Raises a :class:`~storefront.WebhookError`
        subclass for every bad input.

        The library checks the signature and the envelope (contract, Events) without decoding
        or re-encoding the body; the verified bytes are then decoded once with ``json`` and
        ``data`` checked as the library's typed decoding would (a signed ``data`` that is not a
        valid snapshot raises :class:`~storefront.WebhookBodyError`)."""
        if self._verify_body is None:
            return typed_notification(self._call("sf_webhook_verify", headers, body))
        return self._verified(headers, body, None)

    def verify_at(self, headers: Headers, body: bytes, now_unix: int) -> StatusNotification:
        """:meth:`verify` with an explicit current time (Unix seconds, a signed 64-bit value:
        anything outside raises :class:`~storefront.ValidationError`), for tests."""
        now = check_int("now_unix", now_unix, I64)
        if self._verify_body_at is None:
            return typed_notification(self._call("sf_webhook_verify_at", headers, body, now))
        return self._verified(headers, body, now)


def sign_webhook(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Service-Signature`` value for ``body`` at ``timestamp``: a test signer for the
    host app's own tests."""
    timestamp = check_int("timestamp", timestamp, I64)
    body = bytes(body)
    return call_string("sf_webhook_sign", encode(secret), timestamp, buffer(body), len(body))


def check_expectation(payment: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """Checks a payment (a notification's ``data`` or a queried payment) against what the
    merchant expects: ``external_reference``, ``amount_minor``, ``currency`` and ``test_mode``.
    Raises
    :class:`~storefront.ExpectationMismatchError` naming the first differing field."""
    call_unit("sf_payment_expectation_check", to_json(dict(payment)), to_json(dict(expected)))


#: Results of :func:`status_version_decision`, by ``sf_version_decision`` number.
VERSION_DECISIONS = {0: "apply", 1: "duplicate", 2: "stale"}


def status_version_decision(stored: Optional[int], incoming: int) -> str:
    """What to do with a notification of ``incoming`` status version when ``stored`` is stored
    (None when nothing is): ``"apply"``, ``"duplicate"`` (a repeat: acknowledge, change nothing)
    or ``"stale"`` (lower: must not overwrite the newer state)."""
    incoming = check_int("incoming", incoming, U64)
    if stored is not None:
        stored = check_int("stored", stored, (0, I64[1]))
    number = _lib.lib().sf_status_version_decision(-1 if stored is None else stored, incoming)
    return VERSION_DECISIONS[number]
