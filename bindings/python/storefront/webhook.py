"""Webhook verification, the status-version guard, expectation checks and the test signer.

Three lines in a request handler::

    verifier = storefront.WebhookVerifier([secret])          # once, at start-up
    notification = verifier.verify(request.headers, request.body)  # raises storefront.WebhookError
    storefront.check_expectation(notification["data"], expected)   # before booking
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from . import _lib
from ._call import buffer, call_handle, call_json, call_string, call_unit, encode, to_json
from ._handle import Handle
from .models import StatusNotification

EVENT_ID_HEADER = "X-Service-Event-ID"
TIMESTAMP_HEADER = "X-Service-Timestamp"
SIGNATURE_HEADER = "X-Service-Signature"


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    """Case-insensitive header lookup (frameworks differ in how they case header names)."""
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, item in headers.items():
        if key.lower() == lowered:
            return item
    return None


class WebhookVerifier:
    """Verifies signed status notifications against one or more secrets (several during a
    rotation: old payments keep their old secret). Checks the ``sha256=`` HMAC over
    ``timestamp.raw_body`` in constant time, the 5-minute tolerance in both directions, and that
    ``X-Service-Event-ID`` equals the body's ``id``. Pass the raw body bytes as received: never
    re-serialized JSON. Safe to share between threads."""

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

    def _call(self, name: str, headers: Mapping[str, str], body: bytes, *extra: Any) -> Any:
        if isinstance(body, str):
            raise TypeError("pass the raw body as bytes, exactly as received")
        pointer = self._handle.acquire()
        try:
            return call_json(name, pointer, *self._args(headers, body), *extra)
        finally:
            self._handle.release()

    @staticmethod
    def _args(headers: Mapping[str, str], body: bytes) -> tuple:
        return (
            encode(_header(headers, EVENT_ID_HEADER)),
            encode(_header(headers, TIMESTAMP_HEADER)),
            encode(_header(headers, SIGNATURE_HEADER)),
            buffer(bytes(body)),
            len(body),
        )

    def verify(self, headers: Mapping[str, str], body: bytes) -> StatusNotification:
        """Verifies a delivery and returns the notification (``id``, ``type``, ``api_version``,
        ``created_at``, ``data``). Raises a :class:`~storefront.WebhookError` subclass."""
        return self._call("sf_webhook_verify", headers, body)

    def verify_at(self, headers: Mapping[str, str], body: bytes, now_unix: int) -> StatusNotification:
        """:meth:`verify` with an explicit current time (Unix seconds), for tests."""
        return self._call("sf_webhook_verify_at", headers, body, int(now_unix))


def sign_webhook(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Service-Signature`` value for ``body`` at ``timestamp``: a test signer for the
    host app's own tests."""
    return call_string("sf_webhook_sign", encode(secret), int(timestamp), buffer(body), len(body))


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
    if incoming < 0 or (stored is not None and stored < 0):
        raise ValueError("status versions are non-negative")
    number = _lib.lib().sf_status_version_decision(-1 if stored is None else stored, incoming)
    return VERSION_DECISIONS[number]
