"""The client-side rate limiter from Python (contract, "Limits": 60 merchant-payment creates per
client per minute). A burst from many threads waits for room instead of earning 429s.

The sandbox keeps the contract's budgets over a 3 s window (``--rate-limit-window 3``) and the
client is given the same window, so the pacing a one-minute window imposes shows in seconds."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pytest

import storefront
from sandbox_harness import Sandbox

WINDOW_SECONDS = 3


@pytest.fixture
def short_window_sandbox():
    sandbox = Sandbox(extra_args=["--rate-limit-window", str(WINDOW_SECONDS)])
    try:
        yield sandbox
    finally:
        sandbox.stop()


def create_statuses(sandbox) -> list:
    path = urlparse(sandbox.info["base_url"]).path + "/openapi/v1/merchant-payments"
    return [r["status"] for r in sandbox.control("GET", f"/requests?method=POST&path={path}")]


def burst(client, count: int, tag: str) -> list:
    def create(number: int):
        try:
            client.create_merchant_payment(
                storefront.CreateMerchantPayment(
                    external_reference=f"{tag}-{number}", amount_minor=100, currency="USD"
                )
            )
            return None
        except storefront.StorefrontError as error:
            return error

    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(create, range(count)))


def test_a_burst_of_creates_gets_no_429_within_the_budget(short_window_sandbox):
    limits = storefront.RateLimits(window_ms=WINDOW_SECONDS * 1000, margin_ms=300)
    config = short_window_sandbox.config(rate_limits=limits, overall_deadline_ms=60_000)
    with storefront.Client(config) as client:
        started = time.monotonic()
        errors = burst(client, 80, f"py-burst-{uuid.uuid4().hex[:8]}")
        elapsed = time.monotonic() - started
    assert [e for e in errors if e is not None] == []
    statuses = create_statuses(short_window_sandbox)
    assert len(statuses) == 80, "one request per create"
    assert statuses.count(429) == 0
    # 80 = 60 + 20: the last 20 can only leave a full window after the first ones.
    assert elapsed >= WINDOW_SECONDS


def test_without_the_limiter_the_same_burst_earns_429s(short_window_sandbox):
    config = short_window_sandbox.config(
        rate_limits={"enabled": False}, retry={"max_attempts": 1}
    )
    with storefront.Client(config) as client:
        errors = burst(client, 80, f"py-unpaced-{uuid.uuid4().hex[:8]}")
    assert len([e for e in errors if e is not None]) == 20
    assert create_statuses(short_window_sandbox).count(429) == 20


def test_rate_limit_fields_are_typed_and_checked():
    with pytest.raises(storefront.ValidationError) as refused:
        storefront.Client(
            {"base_url": "https://a.example/api", "token_endpoint": "https://a.example/t",
             "client_id": "c", "rate_limits": {"window": 5}}
        )
    assert refused.value.field == "rate_limits.window"
