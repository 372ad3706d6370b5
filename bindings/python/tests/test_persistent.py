"""Persistent clients: one underlying client per process per configuration, so the clients a
worker makes request after request share one token (one token request)."""

from __future__ import annotations

import uuid
from urllib.parse import urlparse

import storefront
from sandbox_harness import MERCHANT_NO


def token_requests(sandbox) -> int:
    path = urlparse(sandbox.info["token_endpoint"]).path
    return len(sandbox.control("GET", f"/requests?method=POST&path={path}"))


def test_five_persistent_clients_make_one_token_request(sandbox):
    config = sandbox.config(user_agent=f"py-persistent-{uuid.uuid4().hex[:12]}")
    before = token_requests(sandbox)
    for number in range(5):  # as five requests of one worker would
        make = storefront.Client.persistent if number % 2 else (lambda c: storefront.Client(c, persistent=True))
        with make(config) as client:
            assert client.is_persistent
            assert client.merchant_profile()["merchant_no"] == MERCHANT_NO
    assert token_requests(sandbox) - before == 1


def test_plain_clients_each_ask_for_a_token(sandbox):
    """The contrast: five plain clients make five token requests."""
    config = sandbox.config(user_agent=f"py-plain-{uuid.uuid4().hex[:12]}")
    before = token_requests(sandbox)
    for _ in range(5):
        with storefront.Client(config) as client:
            client.merchant_profile()
    assert token_requests(sandbox) - before == 5


def test_another_configuration_gets_its_own_persistent_client(sandbox):
    first = sandbox.config(user_agent=f"py-a-{uuid.uuid4().hex[:12]}")
    second = sandbox.config(user_agent=f"py-b-{uuid.uuid4().hex[:12]}")
    before = token_requests(sandbox)
    for config in (first, second, first, second):
        with storefront.Client.persistent(config) as client:
            client.authenticate()
    assert token_requests(sandbox) - before == 2
