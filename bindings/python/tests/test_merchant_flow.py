"""Merchant collection through the Python wrapper: create, pay at the checkout, receive and
verify the signed notification on a local receiver, reconcile by query."""

from __future__ import annotations

import http.server
import queue
import threading
import uuid
from typing import Iterator, Tuple

import pytest
import storefront
from sandbox_harness import CHANNEL_CARD_USD, CHANNEL_PLATFORM_COIN

NOTIFY_SECRET = "whsec_python_suite_0123456789abcdef0123"


class Receiver:
    """A local notification receiver: stores each delivery (headers, raw body) and answers 204."""

    def __init__(self) -> None:
        self.deliveries: "queue.Queue[Tuple[dict, bytes]]" = queue.Queue()
        deliveries = self.deliveries

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                deliveries.put((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/storefront"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def next(self) -> Tuple[dict, bytes]:
        # Bounded wait for the sandbox's asynchronous delivery; not a timing assertion.
        return self.deliveries.get(timeout=60)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def test_channel_directory_lists_real_channel_identifiers(client):
    """Contract: the directory lists channels by their real `payment_no`."""
    numbers = {c["payment_no"] for c in client.channels()}
    assert {CHANNEL_PLATFORM_COIN, CHANNEL_CARD_USD} <= numbers


def test_merchant_payment_paid_notified_verified_and_reconciled(sandbox, client, receiver):
    """Contract (merchant collection and Events): create returns a checkout address and the
    idempotency key; the signed `paid` notification verifies over the raw body and matches the
    expectation; a lower status version never overwrites a higher; the query agrees."""
    reference = f"py-order-{uuid.uuid4()}"
    created = client.create_merchant_payment(
        {
            "external_reference": reference,
            "amount_minor": 1250,
            "currency": "USD",
            "description": "Python suite",
            "notify_url": receiver.url,
            "notify_secret": NOTIFY_SECRET,
        }
    )
    assert created["status"] == "pending"
    assert created["checkout_url"].startswith("http")
    assert created["idempotency_key"]
    order_no = created["order_no"]
    sandbox.control(
        "POST", f"/merchant-payments/{order_no}/checkout/pay", {"payment_no": CHANNEL_CARD_USD}
    )

    verifier = storefront.WebhookVerifier(["an-old-rotated-secret-0123456789abcdef", NOTIFY_SECRET])
    expected = {
        "external_reference": reference,
        "amount_minor": 1250,
        "currency": "USD",
        "test_mode": False,
    }
    seen = {}
    stored_version = None
    while "paid" not in seen:
        headers, body = receiver.next()
        notification = verifier.verify(headers, body)
        data = notification["data"]
        assert notification["id"] == {k.lower(): v for k, v in headers.items()}["x-service-event-id"]
        assert data["order_no"] == order_no
        storefront.check_expectation(data, expected)
        decision = storefront.status_version_decision(stored_version, data["status_version"])
        if decision == "apply":
            stored_version = data["status_version"]
        seen[data["status"]] = notification
    paid = seen["paid"]["data"]
    assert paid["event_id"]
    assert storefront.status_version_decision(paid["status_version"], 0) == "stale"

    queried = client.merchant_payment(order_no)
    assert queried["status"] == "paid"
    assert queried["event_id"] == paid["event_id"]
    storefront.check_expectation(queried, expected)
    with pytest.raises(storefront.ExpectationMismatchError) as wrong:
        storefront.check_expectation(queried, {**expected, "amount_minor": 1251})
    assert wrong.value.field == "amount_minor"

    listed = client.list_merchant_payments(external_reference=reference)
    assert [p["order_no"] for p in listed] == [order_no]
    records = client.notification_records(order_no)
    assert records and all("delivery_status" in r for r in records)
    assert client.requeue_notification(order_no, records[0]["event_id"]) is True


def test_same_idempotency_key_gives_the_same_payment_and_changes_conflict(client):
    """Contract: a repeat with identical parameters returns the same payment; the same key with
    a changed amount gives 409 `payment_conflict`."""
    request = {
        "external_reference": f"py-idem-{uuid.uuid4()}",
        "amount_minor": 990,
        "currency": "USD",
    }
    first = client.create_merchant_payment(request)
    again = client.create_merchant_payment({**request, "idempotency_key": first["idempotency_key"]})
    assert again["order_no"] == first["order_no"]
    with pytest.raises(storefront.ApiError) as conflict:
        client.create_merchant_payment(
            {**request, "amount_minor": 991, "idempotency_key": first["idempotency_key"]}
        )
    assert (conflict.value.http_status, conflict.value.error) == (409, "payment_conflict")
