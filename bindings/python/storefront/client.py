"""The client (client-credentials calls) and the user session (user-token calls)."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional

from ._call import call_handle, call_json, encode, to_json
from ._handle import Handle
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
)


class Client:
    """A storefront client: one connection pool, one client-credentials token cache and one
    runtime inside the C library. Safe to share between threads. Close it (or use ``with``).

    ``config`` has the core's configuration fields: ``base_url`` (with its path prefix),
    ``token_endpoint``, ``userinfo_endpoint``, ``client_id``, ``client_secret``, and optionally
    ``scopes``, ``attempt_timeout_ms``, ``overall_deadline_ms``, ``retry``, ``user_agent``,
    ``root_ca_pem``, ``allow_insecure_loopback`` (plain HTTP to loopback hosts, sandbox only).
    """

    def __init__(self, config: Mapping[str, Any]):
        self._handle = Handle(call_handle("sf_client_new", to_json(dict(config))), "sf_client_free")

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

    def _call(self, name: str, *args: Any) -> Any:
        pointer = self._handle.acquire()
        try:
            return call_json(name, pointer, *args)
        finally:
            self._handle.release()

    def user(self, token: str) -> "UserSession":
        """A session for calls on behalf of the user whose authorized access token this is."""
        return UserSession(self, token)

    # -- client-credentials calls -------------------------------------------------------------

    def authenticate(self) -> GrantedToken:
        """Obtains (or reuses) the client-credentials token; returns what was granted (scope,
        expiry), never the token itself. Surfaces credential problems early."""
        return self._call("sf_client_authenticate")

    def merchant_profile(self) -> MerchantProfile:
        """``GET /openapi/v1/merchant`` with the client token."""
        return self._call("sf_merchant_profile_get", None)

    def products(self, **query: Any) -> ProductPage:
        """One page of ``GET /openapi/v1/products`` (``page``, ``limit``, ``gd_no``,
        ``search_value``): ``{"list", "total", "page", "limit"}``."""
        return self._call("sf_products_list", None, _query(query))

    def iter_products(self, **query: Any) -> Iterator[Product]:
        """Every product over all pages."""
        return _iter_products(lambda q: self._call("sf_products_list", None, _query(q)), query)

    def channels(self) -> List[PaymentChannel]:
        """The merchant-collection channel directory (``items``)."""
        return self._call("sf_channels_list")["items"]

    def create_merchant_payment(self, request: Mapping[str, Any]) -> CreatedMerchantPayment:
        """Creates a merchant payment. ``request`` has the contract's fields (``external_reference``,
        ``amount_minor``, ``currency``, optional ``idempotency_key``...). The result has the
        created payment and the ``idempotency_key`` used: persist it to retry with the same key.
        Limits are checked before sending; the returned amount, currency and precision are
        checked against the request."""
        return self._call("sf_merchant_payment_create", to_json(dict(request)))

    def merchant_payment(self, order_no: str) -> MerchantPayment:
        """``GET /openapi/v1/merchant-payments/{order_no}``."""
        return self._call("sf_merchant_payment_get", encode(order_no))

    def list_merchant_payments(
        self,
        external_reference: Optional[str] = None,
        order_no: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[MerchantPayment]:
        """Merchant payments by reference and/or number, newest first."""
        query = _query(
            {"external_reference": external_reference, "order_no": order_no, "limit": limit}
        )
        return self._call("sf_merchant_payments_list", query)["items"]

    def notification_records(self, order_no: str, limit: int = 0) -> List[DeliveryRecord]:
        """Notification delivery records of a payment (``limit`` 0 = the service default)."""
        return self._call("sf_notification_records_list", encode(order_no), limit)["items"]

    def requeue_notification(self, order_no: str, event_id: str) -> bool:
        """Re-queues a notification whose automatic retries are exhausted."""
        return bool(
            self._call("sf_notification_requeue", encode(order_no), encode(event_id))["accepted"]
        )


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

    def products(self, **query: Any) -> ProductPage:
        """One page of products with the user's token."""
        return self._call("sf_products_list", _query(query))

    def iter_products(self, **query: Any) -> Iterator[Product]:
        """Every product over all pages, with the user's token."""
        return _iter_products(lambda q: self._call("sf_products_list", _query(q)), query)

    def create_order(
        self,
        gd_no: str,
        quantity: int,
        payment_no: str,
        other_ipu: Optional[Mapping[str, str]] = None,
    ) -> str:
        """Creates a catalog order and returns its ``order_no``. Never re-sent by the SDK: on
        :class:`~storefront.OutcomeUnknownError` check the user's orders before ordering again."""
        request: Dict[str, Any] = {"gd_no": gd_no, "quantity": quantity, "payment_no": payment_no}
        if other_ipu is not None:
            request["other_ipu"] = dict(other_ipu)
        return self._call("sf_order_create", to_json(request))["order_no"]

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
        order: ``{"payment_status", "order"}``. Raises :class:`~storefront.WaitTimeoutError`."""
        return self._call("sf_payment_wait", encode(order_no), interval_ms, timeout_ms)


def _query(query: Mapping[str, Any]) -> Optional[bytes]:
    present = {k: v for k, v in query.items() if v is not None}
    return to_json(present) if present else None


def _iter_products(fetch: Any, query: Mapping[str, Any]) -> Iterator[Dict[str, Any]]:
    query = dict(query)
    page = int(query.pop("page", 1) or 1)
    while True:
        result = fetch({**query, "page": page})
        items = result["list"]
        yield from items
        if not items or int(result["page"]) * int(result["limit"]) >= int(result["total"]):
            return
        page = int(result["page"]) + 1
