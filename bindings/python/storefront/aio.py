"""asyncio versions of every client and user-session call.

Each call runs the blocking C call on its own worker thread under a cancel token; the event
loop is never blocked. Cancelling the awaiting task (``task.cancel()``, a timeout of
``asyncio.wait_for``, a client that disconnected from a FastAPI/aiohttp handler) cancels the
token: the Rust work stops, the worker thread returns promptly, and ``asyncio.CancelledError``
propagates once it has. Usable from FastAPI, Starlette, aiohttp or any asyncio code::

    client = storefront.aio.AsyncClient(config)                 # once, at start-up
    payment = await client.create_merchant_payment({...})
    outcome = await client.user(token).wait_for_payment(order_no, 2000, 120000)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Mapping, Optional, Union

from . import _lib
from ._call import encode, run_async, to_json
from .client import (
    Client,
    merchant_payment_wire,
    next_page,
    order_request,
    payments_query,
    product_query,
    product_query_dict,
    wait_args,
)
from .errors import StorefrontError
from .inputs import (
    U32,
    ConfigLike,
    CreateMerchantPaymentLike,
    CreateOrderLike,
    ListMerchantPaymentsQueryLike,
    ProductQueryLike,
    check_int,
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

    from .reconcile import OptionsLike, ReconcileReport, RecordLike

from .inbox import AsyncInbox  # noqa: E402 - the inbox's asyncio face lives with the inbox

__all__ = ["AsyncClient", "AsyncInbox", "AsyncUserSession"]


class AsyncClient:
    """The asyncio face of a :class:`storefront.Client`: ``AsyncClient(config)``
    (``persistent=True`` as for ``Client``) or ``AsyncClient(client)`` / ``client.aio()`` to
    share an existing client's pool and token cache. Every method is a coroutine."""

    def __init__(self, config: Union[Client, ConfigLike], *, persistent: bool = False):
        if isinstance(config, Client):
            self.client = config
        else:
            self.client = Client(config, persistent=persistent)

    @classmethod
    def persistent(cls, config: ConfigLike) -> "AsyncClient":
        return cls(config, persistent=True)

    async def _call(self, name: str, *args: Any) -> Any:
        return await run_async(self.client._work(name, *args))

    def close(self) -> None:
        """Releases the client (waits for calls in flight: prefer :meth:`aclose` in a loop)."""
        self.client.close()

    async def aclose(self) -> None:
        """Releases the client after calls in flight finish, without blocking the loop."""
        await asyncio.get_running_loop().run_in_executor(None, self.client.close)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def user(self, token: str) -> "AsyncUserSession":
        """A session for calls on behalf of the user whose authorized access token this is."""
        return AsyncUserSession(self, token)

    async def authenticate(self) -> GrantedToken:
        return await self._call("sf_client_authenticate")

    async def shared_state(self) -> SharedStateStatus:
        """:meth:`storefront.Client.shared_state` without blocking the loop (one store round
        trip): where the rate budgets and token live and what the shared store holds."""
        _lib.require("sf_client_shared_state", "AsyncClient.shared_state()")
        status: SharedStateStatus = await self._call("sf_client_shared_state")
        return status

    async def merchant_profile(self) -> MerchantProfile:
        return await self._call("sf_merchant_profile_get", None)

    async def products(self, query: Optional[ProductQueryLike] = None, **fields: Any) -> ProductPage:
        return await self._call("sf_products_list", None, product_query(query, fields))

    async def iter_products(
        self, query: Optional[ProductQueryLike] = None, **fields: Any
    ) -> AsyncIterator[Product]:
        async for product in _aiter_pages(
            lambda q: self._call("sf_products_list", None, q), product_query_dict(query, fields)
        ):
            yield product

    async def reconcile(
        self, records: "Sequence[RecordLike]", options: "Optional[OptionsLike]" = None
    ) -> "AsyncIterator[ReconcileReport]":
        """:meth:`storefront.Client.reconcile` as an async iterator (``async for report in
        client.reconcile(records)``); cancelling the task cancels the batch in flight."""
        from .reconcile import areconcile

        async for report in areconcile(self.client, records, options):
            yield report

    async def channels(self) -> List[PaymentChannel]:
        return (await self._call("sf_channels_list"))["items"]

    async def create_merchant_payment(self, request: CreateMerchantPaymentLike) -> CreatedMerchantPayment:
        body, key = merchant_payment_wire(request)
        try:
            created = await self._call("sf_merchant_payment_create", body)
        except StorefrontError as error:
            error.idempotency_key = key  # retry with it after a timeout, 202 or unknown outcome
            raise
        return typed_payment(created)

    async def merchant_payment(self, order_no: str) -> MerchantPayment:
        return typed_payment(await self._call("sf_merchant_payment_get", encode(order_no)))

    async def list_merchant_payments(
        self,
        external_reference: Union[None, str, ListMerchantPaymentsQueryLike] = None,
        order_no: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[MerchantPayment]:
        query = payments_query(external_reference, order_no, limit)
        return [typed_payment(p) for p in (await self._call("sf_merchant_payments_list", query))["items"]]

    async def notification_records(self, order_no: str, limit: int = 0) -> List[DeliveryRecord]:
        limit = check_int("limit", limit, U32)
        return (await self._call("sf_notification_records_list", encode(order_no), limit))["items"]

    async def requeue_notification(self, order_no: str, event_id: str) -> bool:
        answer = await self._call("sf_notification_requeue", encode(order_no), encode(event_id))
        return bool(answer["accepted"])


class AsyncUserSession:
    """The asyncio face of :class:`storefront.UserSession`."""

    def __init__(self, client: AsyncClient, token: str):
        self._client = client
        self._token = encode(token)

    async def _call(self, name: str, *args: Any) -> Any:
        return await self._client._call(name, self._token, *args)

    async def userinfo(self) -> Dict[str, Any]:
        return await self._call("sf_userinfo_get")

    async def merchant_profile(self) -> MerchantProfile:
        return await self._call("sf_merchant_profile_get")

    async def products(self, query: Optional[ProductQueryLike] = None, **fields: Any) -> ProductPage:
        return await self._call("sf_products_list", product_query(query, fields))

    async def iter_products(
        self, query: Optional[ProductQueryLike] = None, **fields: Any
    ) -> AsyncIterator[Product]:
        async for product in _aiter_pages(
            lambda q: self._call("sf_products_list", q), product_query_dict(query, fields)
        ):
            yield product

    async def create_order(
        self,
        gd_no: Union[str, CreateOrderLike],
        quantity: Optional[int] = None,
        payment_no: Optional[str] = None,
        other_ipu: Optional[Mapping[str, str]] = None,
    ) -> str:
        request = order_request(gd_no, quantity, payment_no, other_ipu)
        return (await self._call("sf_order_create", request))["order_no"]

    async def order(self, order_no: str) -> CatalogOrder:
        return await self._call("sf_order_get", encode(order_no))

    async def start_payment(self, order_no: str, payment_no: str) -> PaymentStart:
        return await self._call("sf_payment_start", encode(order_no), encode(payment_no))

    async def payment_status(self, order_no: str) -> int:
        return int((await self._call("sf_payment_status", encode(order_no)))["status"])

    async def wait_for_payment(self, order_no: str, interval_ms: int, timeout_ms: int) -> PaymentWaitOutcome:
        """Polls until paid or cancelled; cancelling the task stops the wait at once."""
        return await self._call("sf_payment_wait", *wait_args(order_no, interval_ms, timeout_ms))


async def _aiter_pages(fetch: Any, query: Dict[str, Any]) -> AsyncIterator[Any]:
    query = {**query, "page": int(query.get("page") or 1)}
    while True:
        result = await fetch(to_json(query))
        for item in result["list"]:
            yield item
        following = next_page(query, result)
        if following is None:
            return
        query = following
