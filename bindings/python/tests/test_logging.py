"""The library's log events in the host's logger: request events (path template, status,
attempt) arrive as LogRecords with their fields; no record holds a secret, a token or a
checkout token."""

from __future__ import annotations

import logging
import threading
import uuid

import pytest
import storefront
from sandbox_harness import MERCHANT_CLIENT_SECRET, MERCHANT_NO


class ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records = []
        self.threads = set()
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s %(storefront)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.threads.add(threading.get_ident())

    def texts(self):
        return [self.format(r) + " " + repr(vars(r)) for r in self.records]


@pytest.fixture
def captured():
    logger = logging.getLogger(f"storefront-test-{uuid.uuid4().hex[:8]}")
    logger.propagate = False
    handler = ListHandler()
    logger.addHandler(handler)
    storefront.enable_logging(logger=logger, level=logging.DEBUG)
    yield handler
    storefront.disable_logging()


def request_events(handler):
    return [r for r in handler.records if getattr(r, "path", None) and getattr(r, "attempt", None)]


def test_request_events_reach_the_hosts_logger_without_secrets(sandbox, captured):
    with storefront.Client(sandbox.config()) as client:
        assert client.merchant_profile()["merchant_no"] == MERCHANT_NO
        created = client.create_merchant_payment(
            {"external_reference": f"py-log-{uuid.uuid4()}", "amount_minor": 1250, "currency": "USD",
             "notify_url": "https://merchant.example/hooks", "notify_secret": "whsec_logging_test_0123456789abcdef01"}
        )
        user_token = sandbox.user_token("alice")
        alice = client.user(user_token)
        alice.merchant_profile()
        with pytest.raises(storefront.ApiError):
            client.merchant_payment("MP-DOES-NOT-EXIST")
    events = request_events(captured)
    paths = {r.path for r in events}
    assert "/openapi/v1/merchant" in paths
    assert "/openapi/v1/merchant-payments" in paths
    assert any("{" in p for p in paths), paths  # a template, not the order number
    assert all(not p.endswith("MP-DOES-NOT-EXIST") for p in paths)
    statuses = {str(r.status) for r in events if hasattr(r, "status")}
    assert {"200", "201", "404"} <= statuses, statuses
    assert all(int(r.attempt) >= 1 for r in events)
    assert all(r.levelno <= logging.INFO for r in events)
    checkout_token = created["checkout_url"].rsplit("/", 1)[-1]
    for text in captured.texts():
        for secret in (MERCHANT_CLIENT_SECRET, user_token, checkout_token, "whsec_logging_test"):
            assert secret not in text


def test_the_client_access_token_never_reaches_the_log(sandbox, captured):
    """The token endpoint is made to grant a token of known text once; that token is used for
    a request (refused) and never shows in a record."""
    known = "tok_py_logging_" + uuid.uuid4().hex
    sandbox.control(
        "POST",
        "/faults",
        {
            "method": "POST",
            "path": sandbox.info["token_endpoint"][len(sandbox.origin):],
            "status": 200,
            "body": {"access_token": known, "token_type": "Bearer", "expires_in": 3600,
                     "scope": "merchant.profile.read"},
        },
    )
    try:
        with storefront.Client(sandbox.config()) as client:
            # The service refuses the made-up token (401); the SDK gets a real one and retries.
            assert client.merchant_profile()["merchant_no"] == MERCHANT_NO
    finally:
        sandbox.clear_faults()
    assert "401" in {str(getattr(r, "status", "")) for r in request_events(captured)}
    for text in captured.texts():
        assert known not in text and MERCHANT_CLIENT_SECRET not in text


def test_level_filters_and_disable_stops(sandbox):
    logger = logging.getLogger(f"storefront-test-{uuid.uuid4().hex[:8]}")
    logger.propagate = False
    handler = ListHandler()
    logger.addHandler(handler)
    storefront.enable_logging(logger=logger, level=logging.WARNING)
    try:
        with storefront.Client(sandbox.config()) as client:
            client.merchant_profile()
        assert all(r.levelno >= logging.WARNING for r in handler.records)
        storefront.enable_logging(logger=logger, level=logging.DEBUG)
        storefront.disable_logging()
        with storefront.Client(sandbox.config()) as client:
            client.merchant_profile()
        assert request_events(handler) == []
    finally:
        storefront.disable_logging()
