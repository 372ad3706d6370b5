"""The client (client-credentials calls) and the user session (user-token calls)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from . import _lib
from ._call import call_handle, call_json, encode, run_blocking, to_json
from ._handle import Handle
from .errors import StorefrontError
from .helpers import generate_idempotency_key
from .inputs import (
    U32,
    U64,
    Config,
    ConfigLike,
    CreateMerchantPayment,
    CreateMerchantPaymentLike,
    CreateOrder,
    CreateOrderLike,
    ListMerchantPaymentsQuery,
    ListMerchantPaymentsQueryLike,
    ProductQuery,
    ProductQueryLike,
    check_int,
    to_wire,
)
from .models import (
    CatalogOrder,
    CreatedMerchantPayment,
    DeliveryRecord,
    GrantedToken,
    MerchantPayment,
    MerchantProfile,
    PaymentChannel,
    PaymentStart,
    PaymentWaitOutcome,
    Product,
    ProductPage,
    SharedStateStatus,
    typed_payment,
)

if TYPE_CHECKING:  # pragma: no cover
    from typing import Sequence

    from .aio import AsyncClient
    from .reconcile import OptionsLike, ReconcileReport, RecordLike


class Client:
    """A storefront client: one connection pool, one client-credentials token cache and one
    runtime inside the C library. Safe to share between threads and usable in a forked child
    (the library rebuilds its runtime there). Close it (or use ``with``).

    ``config`` is a :class:`storefront.Config` or a dict with its fields: ``base_url`` (with its
    path prefix), ``token_endpoint``, ``userinfo_endpoint``, ``client_id``, ``client_secret``,
    and optionally ``scopes``, ``attempt_timeout_ms``, ``overall_deadline_ms``, ``retry``,
    ``user_agent``, ``root_ca_pem``, ``allow_insecure_loopback`` (plain HTTP to loopback hosts,
    sandbox only), ``max_response_bytes``, ``token_refresh_margin_ms``, ``rate_limits``,
    ``max_in_flight``, ``connect_timeout_ms``, ``shared_state`` (a SQLite, Redis or PostgreSQL
    URL through which every process using this client id shares the rate budget, the pause
    after a 429 and the token; build the client after a fork, in each worker). An unknown key
    raises :class:`~storefront.ValidationError` naming it.

    ``persistent=True`` (or :meth:`Client.persistent`) shares one underlying client per process
    per configuration (``sf_client_persistent``): every ``Client`` made with the same
    configuration uses the same connection pool and token cache, so a web worker that builds a
    client per request still asks for one token. Closing a persistent client releases only this
    reference.

    Every call blocks the calling thread; on the main thread ``Ctrl-C`` interrupts it at once
    (the library stops the call and ``KeyboardInterrupt`` propagates). See
    :class:`storefront.aio.AsyncClient` for asyncio.
    """

    def __init__(self, config: ConfigLike, *, persistent: bool = False):
        wire = to_json(to_wire(Config, config))
        create = "sf_client_persistent" if persistent else "sf_client_new"
        if persistent:
            _lib.require(create, "a persistent client")
        self.is_persistent = persistent
        self._handle = Handle(call_handle(create, wire), "sf_client_free")

    @classmethod
    def from_env(cls, *, persistent: bool = False) -> "Client":
        """``Client(Config.from_env())``: the client configured by the ``STOREFRONT_*``
        environment variables (see :meth:`storefront.Config.from_env`)."""
        return cls(Config.from_env(), persistent=persistent)

    @classmethod
    def persistent(cls, config: ConfigLike) -> "Client":
        """``Client(config, persistent=True)``: the process's shared client for ``config``."""
        return cls(config, persistent=True)

    def close(self) -> None:
        """Releases the client after in-flight calls finish. Idempotent."""
        self._handle.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()

    def _work(self, name: str, *args: Any) -> Callable[[], Any]:
        """The C call ``name(client, args...)`` as a function for a worker thread."""
        handle = self._handle

        def work() -> Any:
            pointer = handle.acquire()
            try:
                return call_json(name, pointer, *args)
            finally:
                handle.release()

        return work

    def _call(self, name: str, *args: Any) -> Any:
        return run_blocking(self._work(name, *args))

    def user(self, token: str) -> "UserSession":
        """A session for calls on behalf of the user whose authorized access token this is."""
        return UserSession(self, token)

    def aio(self) -> "AsyncClient":
        """An :class:`storefront.aio.AsyncClient` over this client (same pool and token cache)."""
        from .aio import AsyncClient

        return AsyncClient(self)

    # -- client-credentials calls -------------------------------------------------------------

    def authenticate(self) -> GrantedToken:
        """Obtains (or reuses) the client-credentials token; returns what was granted (scope,
        expiry), never the token itself. Surfaces credential problems early."""
        return self._call("sf_client_authenticate")

    def shared_state(self) -> SharedStateStatus:
        """Where this client's rate budgets and token live and what the shared store
        (``Config.shared_state``) holds now: ``backend`` (``"memory"`` without a store,
        ``"sqlite"``, ``"redis"``, ``"postgres"``), ``available`` (False while the store does
        not answer: calls then go on with this process's own limiter and token cache) and
        ``stored`` (None without an answer): ``windows`` (per class ``"create"``, ``"read"``,
        ``"requeue"``: calls of the whole client in the current window, pause left after a
        429), ``token_shared``, ``token_expires_in_ms``, ``token_lease_held``,
        ``token_failures_in_a_row``. Never the token. One store round trip."""
        _lib.require("sf_client_shared_state", "Client.shared_state()")
        status: SharedStateStatus = self._call("sf_client_shared_state")
        return status

    def merchant_profile(self) -> MerchantProfile:
        """``GET /openapi/v1/merchant`` with the client token."""
        return self._call("sf_merchant_profile_get", None)

    def products(self, query: Optional[ProductQueryLike] = None, **fields: Any) -> ProductPage:
        """One page of ``GET /openapi/v1/products``: a :class:`storefront.ProductQuery` or its
        fields as keywords (``page``, ``limit``, ``gd_no``, ``search_value``). Returns
        ``{"list", "total", "page", "limit"}``."""
        return self._call("sf_products_list", None, product_query(query, fields))

    def iter_products(self, query: Optional[ProductQueryLike] = None, **fields: Any) -> Iterator[Product]:
        """Every product over all pages."""
        start = product_query_dict(query, fields)
        return iter_pages(lambda q: self._call("sf_products_list", None, q), start)

    def channels(self) -> List[PaymentChannel]:
        """The merchant-collection channel directory (``items``)."""
        return self._call("sf_channels_list")["items"]

    def create_merchant_payment(self, request: CreateMerchantPaymentLike) -> CreatedMerchantPayment:
        """Creates a merchant payment. ``request`` is a :class:`storefront.CreateMerchantPayment`
        or a dict of its fields (``external_reference``, ``amount_minor``, ``currency``,
        optional ``idempotency_key``...). A ``CreateMerchantPayment`` has its key from
        construction (persist ``request.idempotency_key`` before calling); a dict without one
        gets one here. Every exception raised carries the key sent as ``idempotency_key``, so a
        timeout, a 202 (:class:`~storefront.ProviderResultPendingError`) or an unknown outcome
        can be retried with the same key and parameters. The result has the created payment,
        the ``idempotency_key`` and ``status`` as a :class:`~storefront.PaymentStatus`
        (``status_version`` is None: a create answer does not carry it). Limits are checked
        before sending; the returned amount, currency and precision are checked against the
        request. Its ``repr`` hides ``checkout_url``."""
        body, key = merchant_payment_wire(request)
        try:
            created = self._call("sf_merchant_payment_create", body)
        except StorefrontError as error:
            error.idempotency_key = key
            raise
        return typed_payment(created)

    def merchant_payment(self, order_no: str) -> MerchantPayment:
        """``GET /openapi/v1/merchant-payments/{order_no}`` (``status`` is a
        :class:`~storefront.PaymentStatus`)."""
        return typed_payment(self._call("sf_merchant_payment_get", encode(order_no)))

    def list_merchant_payments(
        self,
        external_reference: Union[None, str, ListMerchantPaymentsQueryLike] = None,
        order_no: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[MerchantPayment]:
        """Merchant payments by reference and/or number, newest first (keywords, or one
        :class:`storefront.ListMerchantPaymentsQuery`)."""
        query = payments_query(external_reference, order_no, limit)
        return [typed_payment(p) for p in self._call("sf_merchant_payments_list", query)["items"]]

    def notification_records(self, order_no: str, limit: int = 0) -> List[DeliveryRecord]:
        """Notification delivery records of a payment (``limit`` 0 = the service default)."""
        limit = check_int("limit", limit, U32)
        return self._call("sf_notification_records_list", encode(order_no), limit)["items"]

    def requeue_notification(self, order_no: str, event_id: str) -> bool:
        """Re-queues a notification whose automatic retries are exhausted."""
        return bool(
            self._call("sf_notification_requeue", encode(order_no), encode(event_id))["accepted"]
        )

    def reconcile(
        self, records: "Sequence[RecordLike]", options: "Optional[OptionsLike]" = None
    ) -> "Iterator[ReconcileReport]":
        """The reconciler: one :class:`storefront.reconcile.ReconcileReport` per record of the
        shop's own bookings (:class:`storefront.LocalRecord` or dicts of its fields), in order,
        looked up as the iterator is consumed; ``options`` is a
        :class:`storefront.ReconcileOptions` (``requeue_failed``, ``window``, ``limit``,
        ``cursor`` to resume after the last report received). Arguments are checked now; see
        :mod:`storefront.reconcile`."""
        from .reconcile import reconcile

        return reconcile(self, records, options)


class UserSession:
    """Calls on behalf of one user (catalog orders and payments, userinfo)."""

    def __init__(self, client: Client, token: str):
        self._client = client
        self._token = encode(token)

    def _call(self, name: str, *args: Any) -> Any:
        return self._client._call(name, self._token, *args)

    def userinfo(self) -> Dict[str, Any]:
        """``GET {userinfo_endpoint}``: the user's claims as a JSON object."""
        return self._call("sf_userinfo_get")

    def merchant_profile(self) -> MerchantProfile:
        """``GET /openapi/v1/merchant`` with the user's token."""
        return self._call("sf_merchant_profile_get")

    def products(self, query: Optional[ProductQueryLike] = None, **fields: Any) -> ProductPage:
        """One page of products with the user's token."""
        return self._call("sf_products_list", product_query(query, fields))

    def iter_products(self, query: Optional[ProductQueryLike] = None, **fields: Any) -> Iterator[Product]:
        """Every product over all pages, with the user's token."""
        start = product_query_dict(query, fields)
        return iter_pages(lambda q: self._call("sf_products_list", q), start)

    def create_order(
        self,
        gd_no: Union[str, CreateOrderLike],
        quantity: Optional[int] = None,
        payment_no: Optional[str] = None,
        other_ipu: Optional[Mapping[str, str]] = None,
    ) -> str:
        """Creates a catalog order and returns its ``order_no``: ``create_order(gd_no,
        quantity, payment_no, other_ipu=None)`` or ``create_order(CreateOrder(...))``. Never
        re-sent by the SDK: on :class:`~storefront.OutcomeUnknownError` follow its ``advice``
        (do not order again automatically; ``lookup`` holds the request)."""
        request = order_request(gd_no, quantity, payment_no, other_ipu)
        return self._call("sf_order_create", request)["order_no"]

    def order(self, order_no: str) -> CatalogOrder:
        """The catalog order (``status`` 0-3 is the order numbering, not the payment's)."""
        return self._call("sf_order_get", encode(order_no))

    def start_payment(self, order_no: str, payment_no: str) -> PaymentStart:
        """Starts payment: ``{"trade_no", "redirect" (absolute), "expire_time"}``. Not proof of
        payment; never re-sent by the SDK."""
        return self._call("sf_payment_start", encode(order_no), encode(payment_no))

    def payment_status(self, order_no: str) -> int:
        """Payment status: 0 awaiting payment, 1 paid, 2 cancelled."""
        return int(self._call("sf_payment_status", encode(order_no))["status"])

    def wait_for_payment(self, order_no: str, interval_ms: int, timeout_ms: int) -> PaymentWaitOutcome:
        """Polls until paid (1) or cancelled (2), honouring ``Retry-After``, then reads the
        order: ``{"outcome": "final", "payment_status", "order"}``; after ``timeout_ms`` without a final
        status returns ``{"outcome": "still_pending", "last_status", "waited_ms",
        "last_poll_failed"}`` (an outcome, not an exception).
        ``Ctrl-C`` on the main thread stops the wait at once."""
        return self._call("sf_payment_wait", *wait_args(order_no, interval_ms, timeout_ms))


# -- argument preparation shared with storefront.aio ------------------------------------------


def product_query_dict(query: Optional[ProductQueryLike], fields: Mapping[str, Any]) -> Dict[str, Any]:
    if query is not None and fields:
        raise TypeError("pass a ProductQuery or keyword fields, not both")
    return to_wire(ProductQuery, fields if query is None else query)


def product_query(query: Optional[ProductQueryLike], fields: Mapping[str, Any]) -> Optional[bytes]:
    present = product_query_dict(query, fields)
    return to_json(present) if present else None


def merchant_payment_wire(request: CreateMerchantPaymentLike) -> Tuple[bytes, str]:
    """The create body and the idempotency key it carries (generated here for a dict without
    one, so that the caller's exception can carry it)."""
    wire = to_wire(CreateMerchantPayment, request)
    if not wire.get("idempotency_key"):
        wire["idempotency_key"] = generate_idempotency_key()
    return to_json(wire), str(wire["idempotency_key"])


def merchant_payment_request(request: CreateMerchantPaymentLike) -> bytes:
    return merchant_payment_wire(request)[0]


def payments_query(
    external_reference: Union[None, str, ListMerchantPaymentsQueryLike],
    order_no: Optional[str],
    limit: Optional[int],
) -> Optional[bytes]:
    if isinstance(external_reference, (ListMerchantPaymentsQuery, Mapping)):
        if order_no is not None or limit is not None:
            raise TypeError("pass a ListMerchantPaymentsQuery or keyword filters, not both")
        present = to_wire(ListMerchantPaymentsQuery, external_reference)
    else:
        present = to_wire(
            ListMerchantPaymentsQuery,
            {"external_reference": external_reference, "order_no": order_no, "limit": limit},
        )
    return to_json(present) if present else None


def order_request(
    gd_no: Union[str, CreateOrderLike],
    quantity: Optional[int],
    payment_no: Optional[str],
    other_ipu: Optional[Mapping[str, str]],
) -> bytes:
    if isinstance(gd_no, (CreateOrder, Mapping)):
        if quantity is not None or payment_no is not None or other_ipu is not None:
            raise TypeError("pass a CreateOrder or its fields as arguments, not both")
        return to_json(to_wire(CreateOrder, gd_no))
    fields = {"gd_no": gd_no, "quantity": quantity, "payment_no": payment_no, "other_ipu": other_ipu}
    return to_json(to_wire(CreateOrder, fields))


def wait_args(order_no: str, interval_ms: int, timeout_ms: int) -> tuple:
    return (
        encode(order_no),
        check_int("interval_ms", interval_ms, U64),
        check_int("timeout_ms", timeout_ms, U64),
    )


def next_page(query: Dict[str, Any], result: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The query of the page after ``result``, or None after the last page."""
    if not result["list"] or int(result["page"]) * int(result["limit"]) >= int(result["total"]):
        return None
    return {**query, "page": int(result["page"]) + 1}


def iter_pages(fetch: Callable[[bytes], Any], query: Dict[str, Any]) -> Iterator[Any]:
    query = {**query, "page": int(query.get("page") or 1)}
    while True:
        result = fetch(to_json(query))
        yield from result["list"]
        following = next_page(query, result)
        if following is None:
            return
        query = following
