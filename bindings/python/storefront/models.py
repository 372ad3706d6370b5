"""Typed shapes of the JSON objects the wrapper returns (the service's own field names).

Amounts are ``int``: ``amount_minor`` in minor units (scale ``currency_decimals``), catalog
amounts in eight-decimal fixed point. Times are the service's strings (RFC 3339 for merchant
payments and notifications, ``YYYY-MM-DD HH:mm:ss`` without zone for catalog orders).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Mapping, Optional, Union

if sys.version_info >= (3, 8):
    from typing import TypedDict
else:  # pragma: no cover
    TypedDict = dict


#: Result fields whose value is never shown by ``repr``/``str`` (a checkout address carries a
#: per-order checkout token: logging a result must not leak it).
REDACTED_FIELDS = frozenset({"checkout_url"})


class ResultDict(Dict[str, Any]):
    """What every call returns for a JSON object: a plain ``dict`` (keys, ``json.dumps``,
    equality with dicts) whose fields are also readable as attributes
    (``created.checkout_url``; a field named like a dict method, such as ``items``, only as a
    key) and whose ``repr``/``str`` show ``checkout_url=<redacted>`` instead of the address.
    The value itself stays readable: redirect the buyer to ``created["checkout_url"]``."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        def shown(key: Any) -> str:
            return "<redacted>" if key in REDACTED_FIELDS else repr(self[key])

        if all(isinstance(key, str) and key.isidentifier() for key in self):
            return "Result(" + ", ".join(f"{key}={shown(key)}" for key in self) + ")"
        return "Result({" + ", ".join(f"{key!r}: {shown(key)}" for key in self) + "})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (ResultDict, (dict(self),))


class PaymentStatus(str):
    """A merchant-payment status: the service's text (``status == "paid"`` and ``json.dumps``
    keep working, an unknown future status is kept verbatim) with the contract's questions
    answered. "Only ``paid`` confirms payment"; ``review`` and unknown future statuses "are
    treated as needing verification and never as paid" (the core's ``MerchantPaymentStatus``).
    The known statuses are the class constants (``PaymentStatus.PAID``...)."""

    __slots__ = ()

    PENDING: "PaymentStatus"
    PAID: "PaymentStatus"
    REVIEW: "PaymentStatus"
    EXPIRED: "PaymentStatus"
    REFUNDED: "PaymentStatus"
    CHARGEBACK: "PaymentStatus"
    #: Every status the contract lists.
    KNOWN: frozenset

    @property
    def is_paid(self) -> bool:
        """True only for ``paid``: ``review``, ``expired`` and unknown statuses are never
        payment."""
        return str.__eq__(self, "paid")

    @property
    def needs_verification(self) -> bool:
        """True for ``review`` and for a status the contract does not list: verify before any
        business decision."""
        return str.__eq__(self, "review") or not self.is_known

    @property
    def is_known(self) -> bool:
        """Whether the contract lists this status."""
        return str(self) in PaymentStatus.KNOWN

    def __repr__(self) -> str:
        return f"PaymentStatus({str.__repr__(self)})"


PaymentStatus.PENDING = PaymentStatus("pending")
PaymentStatus.PAID = PaymentStatus("paid")
PaymentStatus.REVIEW = PaymentStatus("review")
PaymentStatus.EXPIRED = PaymentStatus("expired")
PaymentStatus.REFUNDED = PaymentStatus("refunded")
PaymentStatus.CHARGEBACK = PaymentStatus("chargeback")
PaymentStatus.KNOWN = frozenset({"pending", "paid", "review", "expired", "refunded", "chargeback"})


def typed_payment(payment: Any) -> Any:
    """``payment`` (a merchant payment, a created payment or a notification's ``data``, as
    decoded) with its ``status`` as a :class:`PaymentStatus`. Returned as given otherwise."""
    if isinstance(payment, dict) and isinstance(payment.get("status"), str):
        payment["status"] = PaymentStatus(payment["status"])
    return payment


def typed_notification(notification: Any) -> Any:
    """A verified status notification with ``data.status`` as a :class:`PaymentStatus`."""
    if isinstance(notification, Mapping):
        typed_payment(notification.get("data"))
    return notification


class MerchantProfile(TypedDict):
    merchant_no: str
    name: str
    logo_url: str
    short_description: str
    description: str
    business_scope: str
    website_url: str
    contact: str


class _ProductRequired(TypedDict):
    gd_no: str
    gd_name: str
    gd_description: str
    actual_price: int
    retail_price: int
    currency: str
    currency_decimals: int
    in_stock: int
    buy_limit_num: int
    payment_policy: str


class Product(_ProductRequired, total=False):
    payment_methods: List[str]
    other_ipu_cnf: List[str]
    wholesale_price_cnf: List[str]
    buy_prompt: str


class ProductPage(TypedDict):
    list: List[Product]
    total: int
    page: int
    limit: int


class _CatalogOrderRequired(TypedDict):
    order_no: str
    gd_no: str
    title: str
    quantity: int
    #: 0 awaiting payment, 1 paid and being processed, 2 cancelled, 3 completed.
    status: int
    status_label: str
    currency: str
    currency_decimals: int
    total_amount: int
    discount_amount: int
    handling_amount: int
    pay_amount: int
    payment_currency: str
    payment_currency_decimals: int
    payment_subtotal: int
    payment_handling_amount: int
    payment_pay_amount: int
    payment_no: str
    payment_name: str
    trade_no: str
    paid_time: Optional[str]
    created_at: Optional[str]
    updated_at: Optional[str]


class CatalogOrder(_CatalogOrderRequired, total=False):
    payment_methods: List[str]


class PaymentStart(TypedDict):
    trade_no: str
    #: Absolute: a relative address was resolved against the service origin.
    redirect: str
    #: Unix seconds.
    expire_time: int


class PaymentWaitFinal(TypedDict):
    #: ``"final"``.
    outcome: str
    #: 1 paid or 2 cancelled (the payment numbering, not the order's).
    payment_status: int
    order: CatalogOrder


class PaymentWaitStillPending(TypedDict):
    #: ``"still_pending"``: no final status within the timeout; an outcome, not an error.
    outcome: str
    #: The last status answered (0 awaiting payment when none was seen).
    last_status: int
    #: How long the wait polled.
    waited_ms: int
    #: Whether the last poll failed with an error that may heal (transport, 408, 429, 5xx, 202).
    last_poll_failed: bool


#: What ``wait_for_payment`` saw: branch on ``outcome["outcome"]`` (``"final"`` or
#: ``"still_pending"``).
PaymentWaitOutcome = Union[PaymentWaitFinal, PaymentWaitStillPending]


class PaymentChannel(TypedDict):
    payment_no: str
    name: str
    provider: str
    owner: str
    currency: str
    login_required: bool
    test_mode: bool


class _MerchantPaymentRequired(TypedDict):
    order_no: str
    external_reference: str
    payment_no: str
    amount_minor: int
    currency: str
    currency_decimals: int
    #: pending, paid, review, expired, refunded, chargeback, or a future status (never paid):
    #: ``status.is_paid``, ``status.needs_verification``.
    status: PaymentStatus
    #: None on a create answer, which does not carry it (0 is a real version: a historical
    #: never-changed record).
    status_version: Optional[int]
    test_mode: bool
    expires_at: str


class MerchantPayment(_MerchantPaymentRequired, total=False):
    #: Carries a per-order checkout token: never log it.
    checkout_url: str
    return_url: str
    event_id: str
    provider_trade_no: str
    occurred_at: Optional[str]
    settlement_coin: str


class CreatedMerchantPayment(MerchantPayment):
    #: Persist it: a retry after a timeout must reuse it with identical parameters.
    idempotency_key: str


class _NotificationDataRequired(TypedDict):
    order_no: str
    external_reference: str
    payment_no: str
    amount_minor: int
    currency: str
    currency_decimals: int
    status: PaymentStatus
    status_version: int
    test_mode: bool
    expires_at: str


class NotificationData(_NotificationDataRequired, total=False):
    event_id: Optional[str]
    provider_trade_no: Optional[str]
    occurred_at: Optional[str]


StatusNotification = TypedDict(
    "StatusNotification",
    {"id": str, "type": str, "api_version": int, "created_at": str, "data": NotificationData},
)


class DeliveryRecord(TypedDict, total=False):
    event_id: str
    status_version: int
    event: Dict[str, object]
    delivery_status: str
    attempts: int
    next_attempt_at: Optional[str]
    last_http_status: Optional[int]
    last_error: Optional[str]
    delivery_attempts: List[Dict[str, object]]


class GrantedToken(TypedDict):
    scope: List[str]
    expires_in: int


#: One limit class's sliding window in the shared store: ``class`` (``"create"``, ``"read"`` or
#: ``"requeue"``; a Python keyword, so read it as ``window["class"]``), ``in_window`` (calls of
#: the whole client admitted within the last window) and ``paused_for_ms`` (what is left of the
#: pause a 429 set for the whole client, or None).
StoredWindow = TypedDict(
    "StoredWindow", {"class": str, "in_window": int, "paused_for_ms": Optional[int]}
)


class StoredState(TypedDict):
    """What the shared store holds for this client (never the token itself)."""

    windows: List[StoredWindow]
    #: Whether a token is stored and not due for renewal.
    token_shared: bool
    #: Milliseconds until the stored token expires, when one is stored.
    token_expires_in_ms: Optional[int]
    #: Whether a process holds the right to fetch the token now.
    token_lease_held: bool
    #: Failures of the token endpoint in a row, as shared.
    token_failures_in_a_row: int


class SharedStateStatus(TypedDict):
    """Where the client's rate budgets and token live (``Client.shared_state()``)."""

    #: ``"memory"`` (no ``shared_state`` configured), ``"sqlite"``, ``"redis"`` or
    #: ``"postgres"``.
    backend: str
    #: Whether the store answered (False during an outage: calls then go on with the process's
    #: own limiter and token cache).
    available: bool
    #: What the store holds, when it answered (None for ``memory`` and during an outage).
    stored: Optional[StoredState]
