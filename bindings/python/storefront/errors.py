"""Exceptions mirroring the SDK's error model.

Every failure of the C library becomes a :class:`StorefrontError` subclass chosen by its
``sf_result`` number. Branch on the class, ``http_status`` and ``error`` (the service's error
code), never on the message text (contract: "Branch on HTTP status and `error`"). ``retry_after_ms``
keeps the service's ``Retry-After``; ``field`` names the rejected parameter.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Type


class StorefrontError(Exception):
    """Base of every storefront failure."""

    #: The ``sf_result`` number of the failure.
    result: int
    #: Stable name of the result (``api``, ``timeout``, ``webhook_bad_signature``...).
    result_name: str
    #: Human-readable message without secrets; do not branch on it.
    message: str
    #: HTTP status of the service's answer, when there was one.
    http_status: Optional[int]
    #: The service's ``error`` code (``payment_conflict``, ``rate_limited``...), when given.
    error: Optional[str]
    #: The service's ``error_description``, when given.
    error_description: Optional[str]
    #: The rejected field or argument, when known.
    field: Optional[str]
    #: ``Retry-After`` in milliseconds, when the service asked to wait.
    retry_after_ms: Optional[int]
    #: For an unclear answer (:class:`ProviderResultPendingError`, :class:`OutcomeUnknownError`):
    #: what the app can do now, per the contract; otherwise ``None``.
    advice: Optional[str]
    #: For an unclear answer: the request's identifying data to look the payment or order up
    #: (``order_no``, ``external_reference``, ``payment_no``, ``idempotency_key``, ``gd_no``,
    #: ``quantity``; absent keys omitted); otherwise ``None``.
    lookup: Optional[Dict[str, Any]]
    #: The idempotency key sent, on a failure of a merchant-payment creation (None otherwise):
    #: after a timeout, a 202 or an unknown outcome, retry with it and the same parameters.
    idempotency_key: Optional[str] = None

    def __init__(self, detail: Dict[str, Any]):
        self.result = int(detail.get("result", 499))
        self.result_name = str(detail.get("result_name", "other"))
        self.message = str(detail.get("message", ""))
        self.http_status = detail.get("http_status")
        self.error = detail.get("error")
        self.error_description = detail.get("error_description")
        self.field = detail.get("field")
        self.retry_after_ms = detail.get("retry_after_ms")
        self.advice = detail.get("advice")
        self.lookup = detail.get("lookup")
        super().__init__(self.message)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(result={self.result_name}, http_status={self.http_status}, "
            f"error={self.error!r}, field={self.field!r})"
        )


class InvalidArgumentError(StorefrontError, ValueError):
    """An argument was refused before anything was sent (NULL, bad UTF-8, bad JSON, too large,
    wrong shape)."""


class NullArgumentError(InvalidArgumentError):
    """A required argument was missing (NULL)."""


class InvalidUtf8Error(InvalidArgumentError):
    """A string argument was not valid UTF-8."""


class InvalidJsonError(InvalidArgumentError):
    """A JSON argument was not valid JSON."""


class InputTooLargeError(InvalidArgumentError):
    """An argument exceeded the library's input limit."""


class PanicError(StorefrontError):
    """A bug inside the library was caught at its boundary; the client stays usable."""


class ConfigError(StorefrontError):
    """The client configuration was refused (URL, HTTPS-only rule, CA)."""


class ValidationError(InvalidArgumentError):
    """A request parameter broke a limit of the contract; nothing was sent. See ``field``."""


class ApiError(StorefrontError):
    """The service answered with an HTTP error; see ``http_status`` and ``error``."""


class ProviderResultPendingError(StorefrontError):
    """HTTP 202 ``provider_result_pending``: not success and not a failure to retry blindly;
    keep the original payment and check it by ``lookup["order_no"]`` (or
    ``lookup["external_reference"]`` for a merchant payment)."""


class OutcomeUnknownError(StorefrontError):
    """A catalog order creation or payment start may have been processed; it was not re-sent.
    Follow ``advice``: after an order creation do not order again (the contract has no order
    list; ``lookup`` holds the request: ``gd_no``, ``quantity``, ``payment_no``); after a payment
    start poll the payment status of ``lookup["order_no"]``."""


class WrongTokenSubjectError(StorefrontError):
    """The operation needs another kind of token (a user token for catalog orders, a
    client-credentials token for merchant collection); nothing was sent."""


class TransportError(StorefrontError):
    """The service could not be reached or the exchange broke."""


class RequestTimeoutError(TransportError):
    """An attempt timed out."""


class DeadlineExceededError(TransportError):
    """The overall deadline across retries ran out."""


class TlsError(TransportError):
    """TLS setup or certificate verification failed."""


class DecodeError(StorefrontError):
    """The service's answer did not have the contract's shape."""


class ResponseMismatchError(StorefrontError):
    """The service's answer contradicts the request (amount, currency or precision)."""


class WebhookError(StorefrontError):
    """A webhook notification failed verification: answer non-2xx and do not book it."""


class WebhookHeaderError(WebhookError):
    """A required header is absent (``field`` names it)."""


class WebhookSignatureError(WebhookError):
    """The signature is malformed or matches no secret."""


class WebhookTimestampError(WebhookError):
    """The timestamp is malformed or outside the 5-minute tolerance (either direction)."""


class WebhookEventIdError(WebhookError):
    """``X-Service-Event-ID`` differs from the body's ``id``."""


class WebhookBodyError(WebhookError):
    """The signed body is not a supported status notification."""


class WebhookConfigError(WebhookError, ValueError):
    """The verifier was given no usable secret."""


class TokenProviderError(StorefrontError):
    """The host's user-token provider failed."""


class CallCancelledError(StorefrontError):
    """``SF_RESULT_CANCELLED``: the call's cancel token was cancelled and its request aborted.
    An interrupted call (``KeyboardInterrupt``, a cancelled asyncio task) raises that exception
    instead. Reads and merchant-payment creation (same idempotency key) are safe to repeat; a
    catalog order creation or payment start cancelled after it started may have been processed:
    read the order before trying again."""


class ExpectationMismatchError(StorefrontError):
    """A payment or notification does not match the merchant's expectation (reference, amount,
    currency, precision or ``test_mode``): do not book it."""


class InboxError(StorefrontError):
    """A failure of the webhook inbox's own operations (not of a delivery:
    :meth:`storefront.Inbox.receive` answers those with a status and a receipt)."""


class InboxStoreError(InboxError):
    """``SF_RESULT_INBOX_STORE``: the inbox's database failed (unreachable, locked past the
    timeout, a constraint); nothing was changed, try again."""


class LeaseLostError(InboxError):
    """``SF_RESULT_INBOX_LEASE_LOST``: the event's lease ran out and another worker claimed it.
    Do not book it here: roll back what the handler did (``complete_in`` raises it before
    anything commits, so the caller's ``with conn:`` rolls the booking back)."""


#: Short name of :class:`LeaseLostError`.
LeaseLost = LeaseLostError


class InboxNotFoundError(InboxError, LookupError):
    """``SF_RESULT_INBOX_NOT_FOUND``: no inbox event has this id."""


# sf_result number -> exception class; numbers are the ABI's (include/storefront.h).
RESULT_CLASSES: Dict[int, Type[StorefrontError]] = {
    1: NullArgumentError,
    2: InvalidUtf8Error,
    3: InvalidJsonError,
    4: InputTooLargeError,
    5: InvalidArgumentError,
    6: PanicError,
    100: ApiError,
    101: ProviderResultPendingError,
    102: OutcomeUnknownError,
    200: TransportError,
    201: RequestTimeoutError,
    202: TlsError,
    203: TransportError,
    204: TransportError,
    205: DeadlineExceededError,
    206: DecodeError,
    300: WebhookHeaderError,
    301: WebhookTimestampError,
    302: WebhookTimestampError,
    303: WebhookTimestampError,
    304: WebhookSignatureError,
    305: WebhookSignatureError,
    306: WebhookBodyError,
    307: WebhookEventIdError,
    308: WebhookBodyError,
    309: WebhookBodyError,
    310: WebhookConfigError,
    400: ValidationError,
    401: WrongTokenSubjectError,
    402: ResponseMismatchError,
    403: ConfigError,
    405: ExpectationMismatchError,
    406: TokenProviderError,
    407: CallCancelledError,
    500: InboxStoreError,
    501: LeaseLostError,
    502: InboxNotFoundError,
}


def from_error_json(text: str) -> StorefrontError:
    """Builds the exception for an ``sf_error_json`` document."""
    detail = json.loads(text)
    cls = RESULT_CLASSES.get(int(detail.get("result", 499)), StorefrontError)
    return cls(detail)
