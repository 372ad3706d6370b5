"""storefront.aio: every call as a coroutine, run on a worker thread so that the event loop
stays responsive; cancelling the task cancels the call in the library."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time

import pytest
import storefront
from storefront._call import calls_in_flight
from storefront.aio import AsyncClient, AsyncUserSession
from sandbox_harness import CHANNEL_CARD_USD, MERCHANT_NO, PRODUCT_BEANS


def workers_alive():
    """Worker threads still inside a C call (a finished call leaves its thread idle in the
    pool)."""
    return [None] * calls_in_flight()


def test_every_call_has_an_async_version():
    for sync, aio in ((storefront.Client, AsyncClient), (storefront.UserSession, AsyncUserSession)):
        public = {n for n, f in vars(sync).items() if callable(f) and not n.startswith("_")}
        public -= {"close", "user", "aio", "persistent"}
        for name in public:
            method = getattr(aio, name, None)
            assert method is not None, f"{aio.__name__}.{name}"
            assert inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method), name


def test_concurrent_calls_while_the_loop_keeps_ticking(sandbox):
    """Five calls, each answered after 400 ms, run side by side; a ticker task keeps ticking."""

    async def main() -> None:
        async with AsyncClient(sandbox.config()) as client:
            await client.authenticate()
            sandbox.fault("GET", "/openapi/v1/merchant", latency_ms=400, times=5)
            ticks = 0
            stop = asyncio.Event()

            async def ticker() -> None:
                nonlocal ticks
                while not stop.is_set():
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticking = asyncio.create_task(ticker())
            started = time.monotonic()
            profiles = await asyncio.gather(*(client.merchant_profile() for _ in range(5)))
            elapsed = time.monotonic() - started
            stop.set()
            await ticking
            assert [p["merchant_no"] for p in profiles] == [MERCHANT_NO] * 5
            assert 0.35 < elapsed < 1.5, elapsed  # side by side, not 5 x 400 ms
            assert ticks >= 15, ticks  # the loop was never blocked for long
            products = [p async for p in client.iter_products(limit=10)]
            assert len(products) == 25
            alice = client.user(sandbox.user_token("alice"))
            order_no = await alice.create_order(PRODUCT_BEANS, 1, CHANNEL_CARD_USD)
            assert (await alice.order(order_no))["gd_no"] == PRODUCT_BEANS
            with pytest.raises(storefront.ApiError):
                await client.merchant_payment("MP-DOES-NOT-EXIST")

    asyncio.run(main())
    sandbox.clear_faults()


def test_cancelling_a_wait_for_payment_task_stops_it_at_once(sandbox):
    async def main() -> None:
        async with AsyncClient(sandbox.config()) as client:
            alice = client.user(sandbox.user_token("alice"))
            order_no = await alice.create_order(PRODUCT_BEANS, 1, CHANNEL_CARD_USD)  # never paid
            task = asyncio.create_task(alice.wait_for_payment(order_no, 200, 30_000))
            await asyncio.sleep(0.3)
            assert not task.done()
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - started < 1.0
            assert workers_alive() == []
            # asyncio.wait_for's timeout cancels the same way.
            started = time.monotonic()
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(alice.wait_for_payment(order_no, 200, 30_000), 0.3)
            assert time.monotonic() - started < 1.0
            assert workers_alive() == []
            assert await alice.payment_status(order_no) == 0

    asyncio.run(main())


def test_async_client_shares_a_sync_clients_pool(client):
    async def main() -> str:
        return (await client.aio().merchant_profile())["merchant_no"]

    assert asyncio.run(main()) == MERCHANT_NO
