"""Webhook verification, the status-version guard, expectation checks and the test signer.

Three lines in a request handler::

    verifier = storefront.WebhookVerifier([secret])          # once, at start-up
    notification = verifier.verify(request.headers, request.body)  # raises storefront.WebhookError
    storefront.check_expectation(notification["data"], expected)   # before booking
"""

from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from ._call import buffer, call_handle, call_json, call_string, call_unit, encode, to_json
from ._handle import Handle
from .errors import (
    StorefrontError,
    WebhookBodyError,
    WebhookError,
    WebhookHeaderError,
)
from .inputs import I64, U64, check_int
from .models import StatusNotification

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


def header_value(headers: Headers, name: str) -> Optional[str]:
    """The single value of header ``name`` as text, or None when absent. Raises
    :class:`~storefront.WebhookHeaderError` naming the header when it is duplicated (two
    entries, or a list of two values), not text or UTF-8 bytes, holds a NUL character, or is
    longer than ``MAX_HEADER_BYTES``."""
    values = _values(headers, name)
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
            value = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _header_error(name, f"header {name} is not UTF-8") from None
    elif not isinstance(value, str):
        raise _header_error(name, f"header {name} must be text, not {type(value).__name__}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise _header_error(name, f"header {name} is not valid text") from None
    if size > MAX_HEADER_BYTES:
        raise _header_error(name, f"header {name} is longer than {MAX_HEADER_BYTES} bytes")
    if "\0" in value:
        raise _header_error(name, f"header {name} contains a NUL character")
    return value


def _body(body: Any) -> bytes:
    if isinstance(body, str):
        raise _body_error("pass the raw body as bytes, exactly as received (not str)")
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise _body_error(f"the body must be bytes, not {type(body).__name__}")
    raw = bytes(body)
    limit = _lib.lib().sf_max_input_bytes()
    if len(raw) > limit:
        raise _body_error(f"the body is longer than {limit} bytes", "webhook_body_too_large")
    return raw


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

    def verify(self, headers: Headers, body: bytes) -> StatusNotification:
        """Verifies a delivery and returns the notification (``id``, ``type``, ``api_version``,
        ``created_at``, ``data``). ``headers`` may be ``request.headers`` of any framework, a
        WSGI environ or Django ``request.META`` (``HTTP_X_SERVICE_SIGNATURE``), a dict or a list
        of pairs; names match in any case. Raises a :class:`~storefront.WebhookError`
        subclass for every bad input."""
        return self._call("sf_webhook_verify", headers, body)

    def verify_at(self, headers: Headers, body: bytes, now_unix: int) -> StatusNotification:
        """:meth:`verify` with an explicit current time (Unix seconds, a signed 64-bit value:
        anything outside raises :class:`~storefront.ValidationError`), for tests."""
        now = check_int("now_unix", now_unix, I64)
        return self._call("sf_webhook_verify_at", headers, body, now)


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
