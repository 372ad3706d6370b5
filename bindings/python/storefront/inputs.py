"""Typed configuration and request objects, and the checks applied to plain dicts.

Every object here is a frozen dataclass whose fields are the core's JSON field names, so a typo
is a type error for mypy (``CreateMerchantPayment(notifyUrl=...)`` does not type-check) and a
``TypeError`` at run time. Plain dicts stay accepted everywhere these objects are, for
compatibility; their keys are checked against the same fields before anything reaches the C
library, and an unknown key raises :class:`~storefront.ValidationError` whose ``field`` names it
(``retry.max_attempt`` for a nested key). The C library refuses unknown keys too.

Integers are range-checked against the width the C side reads them with (``u32`` for counts,
pages, limits and quantities, ``u64`` for milliseconds, positive up to 2**53-1 for
``amount_minor``): an out-of-range value raises :class:`~storefront.ValidationError` instead of
wrapping around or failing deep inside the library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Type, Union

from .errors import ValidationError

U16_MAX = 2**16 - 1
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
#: The contract's largest ``amount_minor`` (2**53 - 1, exact in every JSON reader).
AMOUNT_MINOR_MAX = 2**53 - 1

U32 = (0, U32_MAX)
U64 = (0, U64_MAX)
I64 = (I64_MIN, I64_MAX)


def validation_error(field_name: str, message: str) -> ValidationError:
    """A :class:`ValidationError` raised by the wrapper itself (nothing was sent)."""
    return ValidationError(
        {"result": 400, "result_name": "validation", "message": message, "field": field_name}
    )


def check_int(field_name: str, value: Any, bounds: Tuple[int, int]) -> int:
    """``value`` as an ``int`` within ``bounds`` (inclusive), for a C integer parameter or a
    fixed-width JSON number. ``bool`` and ``float`` are refused (``TypeError``); a value out of
    range raises :class:`ValidationError` naming ``field_name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"`{field_name}` must be an int, not {type(value).__name__}")
    low, high = bounds
    if not low <= value <= high:
        raise validation_error(
            field_name, f"`{field_name}` must be between {low} and {high}, got {value}"
        )
    return int(value)


# -- the objects ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """When and how often safe requests are retried (``Config.retry``)."""

    #: Total attempts for a safe request, including the first (1 = no retries).
    max_attempts: Optional[int] = None
    base_delay_ms: Optional[int] = None
    max_delay_ms: Optional[int] = None
    #: Largest ``Retry-After`` the SDK waits for; a longer one is handed to the caller.
    max_retry_after_ms: Optional[int] = None


@dataclass(frozen=True)
class RateLimits:
    """The client-side rate limiter (``Config.rate_limits``): the contract's per-client budgets
    (60 creates, 300 reads shared, 30 re-queues per minute), waited for instead of earning a
    429. Budgets are per client; processes sharing one client id share the service's budget."""

    #: False turns pacing off (the service's 429s are still honoured).
    enabled: Optional[bool] = None
    create_per_window: Optional[int] = None
    read_per_window: Optional[int] = None
    requeue_per_window: Optional[int] = None
    #: The window (default 60000, the contract's minute).
    window_ms: Optional[int] = None
    #: Extra wait beyond the window against clock and latency differences (default 500).
    margin_ms: Optional[int] = None


@dataclass(frozen=True)
class Config:
    """A client's configuration (the core ``Config`` fields; durations in milliseconds).
    ``repr`` never shows ``client_secret``."""

    #: Full API base address with its path prefix (``https://host/api``).
    base_url: str
    token_endpoint: str
    client_id: str
    client_secret: Optional[str] = field(default=None, repr=False)
    userinfo_endpoint: Optional[str] = None
    scopes: Optional[Sequence[str]] = None
    attempt_timeout_ms: Optional[int] = None
    overall_deadline_ms: Optional[int] = None
    retry: Optional[Union[RetryPolicy, Mapping[str, Any]]] = None
    user_agent: Optional[str] = None
    #: PEM certificates: when set, only these roots are trusted.
    root_ca_pem: Optional[str] = field(default=None, repr=False)
    #: Plain HTTP to loopback hosts (sandbox only).
    allow_insecure_loopback: Optional[bool] = None
    max_response_bytes: Optional[int] = None
    token_refresh_margin_ms: Optional[int] = None
    #: The client-side rate limiter (on by default with the contract's budgets).
    rate_limits: Optional[Union[RateLimits, Mapping[str, Any]]] = None
    #: Most requests of this client on the wire at once (default 64, 1 to 65536).
    max_in_flight: Optional[int] = None
    #: Time to establish one connection (TCP and TLS); the core's default (3000) when None.
    connect_timeout_ms: Optional[int] = None
    #: Where every process using this client id shares the rate budget, the pause after a 429
    #: and the client-credentials token: ``sqlite:////var/lib/shop/storefront.db`` (one host),
    #: ``redis://host:6379/0`` or ``postgres://user@host/db`` (several hosts); SDK query
    #: parameters ``namespace``, ``timeout_ms``, ``token_lease_ms``. None: in-process only.
    #: Hidden from ``repr`` (a Redis or PostgreSQL URL may carry a password).
    shared_state: Optional[str] = field(default=None, repr=False)

    @classmethod
    def from_env(cls) -> "Config":
        """The configuration from the ``STOREFRONT_*`` environment variables, read by the core's
        ``Config::from_env`` (``sf_config_from_env``; the same rule in every language), so the
        same code runs against production and against ``storefront-sandbox``, which prints the
        lines to set:

        ================================== ======== =========================================
        Variable                           Required Sets
        ================================== ======== =========================================
        ``STOREFRONT_BASE_URL``            yes      ``base_url`` (with its path prefix)
        ``STOREFRONT_TOKEN_ENDPOINT``      yes      ``token_endpoint``
        ``STOREFRONT_CLIENT_ID``           yes      ``client_id``
        ``STOREFRONT_CLIENT_SECRET``       yes      ``client_secret``
        ``STOREFRONT_USERINFO_ENDPOINT``   no       ``userinfo_endpoint``
        ``STOREFRONT_SCOPES``              no       ``scopes`` (space-separated)
        ``STOREFRONT_ALLOW_INSECURE_LOOPBACK`` no   ``allow_insecure_loopback`` (``1``/``true``)
        ``STOREFRONT_ROOT_CA_PEM_FILE``    no       ``root_ca_pem``, read from this PEM file
        ``STOREFRONT_SHARED_STATE``        no       ``shared_state``
        ================================== ======== =========================================

        The process environment is read (``os.environ`` changes are seen). A missing required
        variable or a bad value raises :class:`~storefront.ConfigError` naming the variable,
        never showing a secret. Other fields stay ``None`` (the defaults); change them with
        ``dataclasses.replace``.
        """
        from ._call import call_json

        return cls(**call_json("sf_config_from_env"))


def _new_idempotency_key() -> str:
    from .helpers import generate_idempotency_key

    return generate_idempotency_key()


@dataclass(frozen=True)
class CreateMerchantPayment:
    """Body of a merchant payment creation. ``repr`` never shows ``notify_secret``.

    The idempotency key is made when the object is (or given): read ``request.idempotency_key``
    and persist it *before* sending, so that after a timeout, a 202 or an unknown outcome the
    same request (same key, same parameters) can be sent again and the service answers with the
    same payment. Keep the object (or rebuild it with the stored key) to retry."""

    external_reference: str
    #: Minor units, positive, at most 2**53 - 1.
    amount_minor: int
    #: Uppercase currency code.
    currency: str
    #: Generated at construction (by the core) unless given; persist it before sending.
    idempotency_key: str = field(default_factory=_new_idempotency_key)
    payment_no: Optional[str] = None
    description: Optional[str] = None
    #: Seconds until expiry, 60 to 7200.
    expires_in: Optional[int] = None
    notify_enabled: Optional[bool] = None
    notify_url: Optional[str] = None
    notify_secret: Optional[str] = field(default=None, repr=False)
    return_url: Optional[str] = None
    #: When set, the created payment's ``currency_decimals`` must equal it (not sent).
    expected_currency_decimals: Optional[int] = None


@dataclass(frozen=True)
class ListMerchantPaymentsQuery:
    """Filters of the merchant payment list."""

    external_reference: Optional[str] = None
    order_no: Optional[str] = None
    #: 1 to 100 (service default 20).
    limit: Optional[int] = None


@dataclass(frozen=True)
class ProductQuery:
    """Query of one product page."""

    #: From 1.
    page: Optional[int] = None
    #: 1 to 100 (service default 20).
    limit: Optional[int] = None
    gd_no: Optional[str] = None
    search_value: Optional[str] = None


@dataclass(frozen=True)
class CreateOrder:
    """Body of a catalog order creation."""

    gd_no: str
    quantity: int
    #: A real platform channel identifier (``ch_platform_coin``...).
    payment_no: str
    #: Keyed by the keys of the product's ``other_ipu_cnf`` (see :func:`storefront.other_ipu`).
    other_ipu: Optional[Mapping[str, str]] = None


# -- conversion to the JSON the C library reads -------------------------------------------------

# Integer fields and the width the C side reads them with.
_INTS: Dict[Type[Any], Dict[str, Tuple[int, int]]] = {
    RetryPolicy: {
        "max_attempts": U32,
        "base_delay_ms": U64,
        "max_delay_ms": U64,
        "max_retry_after_ms": U64,
    },
    Config: {
        "connect_timeout_ms": U64,
        "attempt_timeout_ms": U64,
        "overall_deadline_ms": U64,
        "max_response_bytes": U64,
        "token_refresh_margin_ms": U64,
        "max_in_flight": U64,
    },
    RateLimits: {
        "create_per_window": U32,
        "read_per_window": U32,
        "requeue_per_window": U32,
        "window_ms": U64,
        "margin_ms": U64,
    },
    CreateMerchantPayment: {
        "amount_minor": (0, U64_MAX),
        "expires_in": U32,
        "expected_currency_decimals": U32,
    },
    ListMerchantPaymentsQuery: {"limit": U32},
    ProductQuery: {"page": U32, "limit": U32},
    CreateOrder: {"quantity": U32},
}

# Text fields checked for their type here (a ``pathlib.Path`` given as ``shared_state`` would
# otherwise fail inside ``json.dumps``); their content is checked by the C library.
_STRS: Dict[Type[Any], Tuple[str, ...]] = {Config: ("shared_state",)}

# Nested objects: field -> the dataclass describing it.
_NESTED: Dict[Type[Any], Dict[str, Type[Any]]] = {
    Config: {"retry": RetryPolicy, "rate_limits": RateLimits}
}


def _fields(kind: Type[Any]) -> Dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(kind)}


def to_wire(kind: Type[Any], value: Any, prefix: str = "") -> Dict[str, Any]:
    """``value`` (an instance of ``kind`` or a mapping with its field names) as the JSON object
    the C library reads: unknown keys and missing required fields raise
    :class:`ValidationError` naming the key (``prefix`` + key), integers are range-checked,
    ``None`` fields are left out."""
    fields = _fields(kind)
    if isinstance(value, kind):
        items = {name: getattr(value, name) for name in fields}
    elif isinstance(value, Mapping):
        items = dict(value)
        for key in items:
            if not isinstance(key, str):
                raise validation_error(prefix + repr(key), f"unknown key {key!r}")
            if key not in fields:
                raise validation_error(
                    prefix + key,
                    f"unknown key `{prefix}{key}` (expected one of: {', '.join(fields)})",
                )
        for name, spec in fields.items():
            required = (
                spec.default is dataclasses.MISSING
                and spec.default_factory is dataclasses.MISSING  # type: ignore[misc]
            )
            if required and items.get(name) is None:
                raise validation_error(prefix + name, f"`{prefix}{name}` is required")
    else:
        raise TypeError(f"expected a {kind.__name__} or a dict, not {type(value).__name__}")

    wire: Dict[str, Any] = {}
    ints = _INTS.get(kind, {})
    nested = _NESTED.get(kind, {})
    strs = _STRS.get(kind, ())
    for name, item in items.items():
        if item is None:
            continue
        if name in strs and not isinstance(item, str):
            raise TypeError(
                f"`{prefix}{name}` must be a str (a URL), not {type(item).__name__}"
            )
        if name in ints:
            item = check_int(prefix + name, item, ints[name])
        elif name in nested:
            item = to_wire(nested[name], item, prefix + name + ".")
        elif isinstance(item, Mapping):
            item = dict(item)
        elif isinstance(item, tuple):
            item = list(item)
        wire[name] = item
    return wire


ConfigLike = Union[Config, Mapping[str, Any]]
CreateMerchantPaymentLike = Union[CreateMerchantPayment, Mapping[str, Any]]
ListMerchantPaymentsQueryLike = Union[ListMerchantPaymentsQuery, Mapping[str, Any]]
ProductQueryLike = Union[ProductQuery, Mapping[str, Any]]
CreateOrderLike = Union[CreateOrder, Mapping[str, Any]]
