"""The webhook inbox through the Python wrapper, on real SQLite files: answers to deliveries
(stored, duplicate, stale, rejected), a WSGI receiver taking the sandbox's real deliveries, the
worker completing inside its own sqlite3 transaction, a lost lease."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import io
import json
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
import storefront
from sandbox_harness import CHANNEL_CARD_USD

SECRET = "whsec_inbox_suite_0123456789abcdef012345"
NOTIFY_SECRET = "whsec_inbox_sandbox_0123456789abcdef0123"


def notification(
    event_id: str,
    order_no: str,
    status: str = "paid",
    version: int = 2,
    payment_event: Optional[str] = "PE-1",
) -> bytes:
    data: Dict[str, Any] = {
        "order_no": order_no,
        "external_reference": f"ref-{order_no}",
        "payment_no": CHANNEL_CARD_USD,
        "amount_minor": 1250,
        "currency": "USD",
        "currency_decimals": 2,
        "status": status,
        "status_version": version,
        "test_mode": False,
        "expires_at": "2026-11-22T12:30:00Z",
    }
    if status == "paid" and payment_event:
        data["event_id"] = payment_event
    body = {
        "id": event_id,
        "type": "merchant_payment.status_changed",
        "api_version": 1,
        "created_at": "2026-11-22T12:00:00Z",
        "data": data,
    }
    return json.dumps(body, separators=(",", ":")).encode()


def signed(event_id: str, body: bytes, now: Optional[int] = None, secret: str = SECRET) -> Dict[str, str]:
    now = int(time.time()) if now is None else now
    return {
        "X-Service-Event-ID": event_id,
        "X-Service-Timestamp": str(now),
        "X-Service-Signature": storefront.sign_webhook(secret, now, body),
    }


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "inbox.db"


@pytest.fixture
def inbox(db: Path) -> Iterator[storefront.Inbox]:
    with storefront.Inbox(f"sqlite://{db}", [SECRET]) as opened:
        yield opened


def test_stored_duplicate_stale_and_rejected_answers(inbox):
    body = notification("EVT-1", "MP-1")
    assert inbox.receive(signed("EVT-1", body), body)[0] == 200
    receipt = inbox.receive_receipt(signed("EVT-1", body), body)
    assert (receipt.status, receipt.outcome, receipt.id) == (200, "duplicate", "EVT-1")
    assert json.loads(receipt.body)["outcome"] == "duplicate"
    # A lower version of the same payment under another id: acknowledged and stored; the claim
    # keeps it as stale, never hands it out.
    older = notification("EVT-0", "MP-1", status="pending", version=1)
    assert inbox.receive_receipt(signed("EVT-0", older), older).outcome == "stored"
    # Refused by verification: a 400 answer, not an exception.
    status, answer = inbox.receive(signed("EVT-2", body, secret="whsec_someone_else_0123456789abcdef"), body)
    assert status == 400
    assert json.loads(answer)["reason"] == "signature_mismatch"
    old = inbox.receive_receipt(signed("EVT-1", body, now=int(time.time()) - 3600), body)
    assert (old.status, old.outcome, old.reason) == (400, "rejected", "timestamp_too_old")
    missing = inbox.receive_receipt({}, body)
    assert (missing.status, missing.reason) == (400, "missing_header")
    [handed] = inbox.claim()
    assert handed.id == "EVT-1"
    status = inbox.status()
    assert (status.pending, status.claimed, status.stale) == (0, 1, 1)
    assert status.rejected == {"signature_mismatch": 1, "timestamp_too_old": 1, "missing_header": 1}


def test_a_wsgi_environ_and_any_header_case_are_read(inbox):
    body = notification("EVT-W", "MP-W")
    headers = signed("EVT-W", body)
    environ = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    assert inbox.receive(environ, body)[0] == 200
    lower = {k.lower(): v for k, v in headers.items()}
    assert inbox.receive_receipt(lower, body).outcome == "duplicate"
    # A duplicated header is refused before reaching the inbox.
    pairs = list(headers.items()) + [("x-service-signature", headers["X-Service-Signature"])]
    assert inbox.receive_receipt(pairs, body).status == 400


def test_the_clock_option_checks_timestamps_on_another_clock(db):
    body = notification("EVT-C", "MP-C")
    an_hour_ahead = int(time.time()) + 3600
    with storefront.Inbox(f"sqlite://{db}", SECRET, clock=lambda: an_hour_ahead) as ahead:
        assert ahead.receive(signed("EVT-C", body), body)[0] == 400
        assert ahead.receive(signed("EVT-C", body, now=an_hour_ahead), body)[0] == 200
    with storefront.Inbox(f"sqlite://{db}", SECRET, tolerance_s=7200) as lenient:
        # Another payment: its own payment event (one event_id on two payments is a contract
        # violation, answered 422).
        other = notification("EVT-D", "MP-D", payment_event="PE-D")
        assert lenient.receive(signed("EVT-D", other, now=an_hour_ahead), other)[0] == 200


def book(conn: sqlite3.Connection, inbox: storefront.Inbox, event: storefront.InboxEvent) -> None:
    """The app's booking and the inbox's completion in one transaction."""
    with conn:
        if event.book:
            conn.execute(
                "INSERT INTO app_bookings (event_id, order_no, inbox_id) VALUES (?, ?, ?)",
                (event.event_id, event.order_no, event.id),
            )
        inbox.complete_in(conn, event)


def app_db(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=10)
    conn.execute("CREATE TABLE IF NOT EXISTS app_bookings (event_id TEXT PRIMARY KEY, order_no TEXT, inbox_id TEXT)")
    conn.commit()
    return conn


def test_worker_claims_books_once_and_completes_in_its_own_transaction(inbox, db):
    conn = app_db(db)
    body = notification("EVT-P", "MP-P")
    assert inbox.receive(signed("EVT-P", body), body)[0] == 200
    # The same payment event under another notification id: booked once all the same.
    again = notification("EVT-P2", "MP-P", version=3)
    assert inbox.receive(signed("EVT-P2", again), again)[0] == 200
    handed: List[storefront.InboxEvent] = []
    while True:
        events = inbox.claim(10, 30000)
        if not events:
            break
        for event in events:
            assert isinstance(event, storefront.InboxEvent)
            assert event.status == storefront.PaymentStatus.PAID
            book(conn, inbox, event)
            handed.append(event)
    assert [e.book for e in handed].count(True) == 1
    assert conn.execute("SELECT COUNT(*) FROM app_bookings").fetchone()[0] == 1
    status = inbox.status()
    assert status.booked == 1 and status.pending == 0 and status.claimed == 0
    [mark] = inbox.watermarks()
    assert (mark.order_no, mark.booked_event_id) == ("MP-P", "PE-1")
    assert mark.local_record().booked_event_id == "PE-1"
    # A replay hands the event out again, never for a second booking.
    assert inbox.replay(event_id="EVT-P") == 1
    [replayed] = inbox.claim()
    assert replayed.replayed and not replayed.book
    inbox.complete(replayed)
    with pytest.raises(storefront.InboxNotFoundError):
        inbox.replay(event_id="EVT-none")
    assert inbox.replay(from_ms=0, to_ms=int(time.time() * 1000) + 1000) >= 1
    assert inbox.purge(0) >= 0
    assert "storefront_inbox_events" in inbox.completion_sql()
    conn.close()


def test_a_lease_that_ran_out_is_claimed_again_and_the_first_completion_is_lost(inbox, db):
    conn = app_db(db)
    body = notification("EVT-L", "MP-L")
    assert inbox.receive(signed("EVT-L", body), body)[0] == 200
    [first] = inbox.claim(1, lease_ms=50)
    assert inbox.claim(1) == []  # still leased
    time.sleep(0.2)
    [second] = inbox.claim(1, lease_ms=30000)
    assert second.id == first.id and second.claim != first.claim and second.attempts == 1
    assert second.book
    with pytest.raises(storefront.LeaseLost):
        with conn:
            conn.execute(
                "INSERT INTO app_bookings (event_id, order_no, inbox_id) VALUES (?, ?, ?)",
                (first.event_id, first.order_no, first.id),
            )
            inbox.complete_in(conn, first)
    # Rolled back: the first worker's booking did not commit.
    assert conn.execute("SELECT COUNT(*) FROM app_bookings").fetchone()[0] == 0
    with pytest.raises(storefront.LeaseLostError):
        inbox.complete(first)
    # The second worker books and completes in its own sqlite3 transaction, in this same
    # process: the library and Python's sqlite3 share the system's one SQLite, so their locks
    # and commits see each other (a second, bundled SQLite in one process would not).
    book(conn, inbox, second)
    assert conn.execute("SELECT COUNT(*) FROM app_bookings").fetchone()[0] == 1
    assert inbox.status().booked == 1
    conn.close()


def test_async_inbox(db):
    body = notification("EVT-A", "MP-A")

    async def main() -> None:
        async with storefront.aio.AsyncInbox(f"sqlite://{db}", [SECRET]) as inbox:
            assert (await inbox.receive(signed("EVT-A", body), body))[0] == 200
            [event] = await inbox.claim()
            await inbox.complete(event)
            assert (await inbox.status()).completed == 1
            assert len(await inbox.watermarks()) == 1

    asyncio.run(main())


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def wsgi_app(inbox: storefront.Inbox):
    """A complete WSGI receiver: the raw body and the environ's headers to the inbox."""

    def app(environ, start_response):
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        status, answer = inbox.receive(environ, body)
        start_response(f"{status} ", [("Content-Type", "application/json")])
        return [answer]

    return app


def test_the_wsgi_callable_answers_directly(inbox):
    body = notification("EVT-D1", "MP-D1")
    environ = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in signed("EVT-D1", body).items()}
    environ.update({"REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)})
    answered = []
    chunks = wsgi_app(inbox)(environ, lambda status, headers: answered.append(status))
    assert answered == ["200 "] and json.loads(b"".join(chunks))["outcome"] == "stored"


def test_sandbox_deliveries_through_a_wsgi_receiver_are_booked_once(sandbox, client, db):
    with storefront.Inbox(f"sqlite://{db}", [NOTIFY_SECRET]) as inbox:
        server = make_server("127.0.0.1", 0, wsgi_app(inbox), handler_class=Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            reference = f"py-inbox-{uuid.uuid4()}"
            created = client.create_merchant_payment(
                {
                    "external_reference": reference,
                    "amount_minor": 1250,
                    "currency": "USD",
                    "description": "Python inbox suite",
                    "notify_url": f"http://127.0.0.1:{server.server_address[1]}/hooks/storefront",
                    "notify_secret": NOTIFY_SECRET,
                }
            )
            order_no = created["order_no"]
            sandbox.control(
                "POST", f"/merchant-payments/{order_no}/checkout/pay", {"payment_no": CHANNEL_CARD_USD}
            )
            conn = app_db(db)
            conn.execute("CREATE TABLE app_states (order_no TEXT PRIMARY KEY, status TEXT, status_version INTEGER)")
            conn.commit()
            booked: List[storefront.InboxEvent] = []
            deadline = time.monotonic() + 60  # bounded wait for the asynchronous deliveries
            while not booked and time.monotonic() < deadline:
                for event in inbox.claim(10):
                    assert event.order_no == order_no
                    with conn:
                        conn.execute(
                            "INSERT INTO app_states VALUES (?, ?, ?) ON CONFLICT (order_no) DO UPDATE"
                            " SET status = excluded.status, status_version = excluded.status_version",
                            (event.order_no, str(event.status), event.status_version),
                        )
                        if event.book:
                            conn.execute(
                                "INSERT INTO app_bookings VALUES (?, ?, ?)",
                                (event.event_id, event.order_no, event.id),
                            )
                            booked.append(event)
                        inbox.complete_in(conn, event)
                time.sleep(0.05)
            assert len(booked) == 1 and booked[0].status == "paid"
            assert conn.execute("SELECT status FROM app_states").fetchone()[0] == "paid"
            # The reconciler finds the same payment paid: no second booking.
            queried = client.merchant_payment(order_no)
            assert inbox.enter_reconciled(queried) in ("stored", "duplicate")
            assert all(not e.book for e in inbox.claim(10))
            # The service delivers the same notification again: acknowledged, stored once.
            records = client.notification_records(order_no)
            assert client.requeue_notification(order_no, records[0]["event_id"]) is True
            assert conn.execute("SELECT COUNT(*) FROM app_bookings").fetchone()[0] == 1
            assert inbox.status().booked == 1
            conn.close()
        finally:
            server.shutdown()
            server.server_close()


# The one body limit of every binding is the core inbox's (1 MiB), answered by the library: 413
# body_too_large, counted, nothing stored; the same status and reason in Rust, C, PHP and here.
INBOX_MAX_BODY = 1 << 20


def signed_locally(event_id: str, body: bytes) -> Dict[str, str]:
    """Headers signed here (the library's signer takes at most its input limit)."""
    now = int(time.time())
    mac = hmac.new(SECRET.encode(), f"{now}.".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Service-Event-ID": event_id, "X-Service-Timestamp": str(now), "X-Service-Signature": f"sha256={mac}"}


def padded(event_id: str, order_no: str, size: int) -> bytes:
    body = notification(event_id, order_no, status="pending", version=1)
    return body + b" " * (size - len(body))


def test_a_body_above_the_core_limit_is_answered_413_and_counted(inbox):
    exact = padded("EVT-BIG-1", "MP-BIG", INBOX_MAX_BODY)
    assert len(exact) == INBOX_MAX_BODY
    assert inbox.receive_receipt(signed("EVT-BIG-1", exact), exact).outcome == "stored"
    over = padded("EVT-BIG-2", "MP-BIG", INBOX_MAX_BODY + 1)
    receipt = inbox.receive_receipt(signed_locally("EVT-BIG-2", over), over)
    assert (receipt.status, receipt.outcome, receipt.reason) == (413, "rejected", "body_too_large")
    assert json.loads(receipt.body)["reason"] == "body_too_large"
    # 64 MiB, unsigned: refused for its size, never read.
    huge = b"[" * (64 << 20)
    status, answer = inbox.receive({}, huge)
    assert (status, json.loads(answer)["reason"]) == (413, "body_too_large")
    counts = inbox.status()
    assert counts.rejected == {"body_too_large": 2}
    assert counts.pending == 1
    [handed] = inbox.claim()
    assert (handed.id, len(handed.body)) == ("EVT-BIG-1", INBOX_MAX_BODY)


def test_a_body_above_the_core_limit_async(db):
    async def run() -> storefront.Receipt:
        async with storefront.aio.AsyncInbox(f"sqlite://{db}", [SECRET]) as inbox:
            over = padded("EVT-BIG-3", "MP-BIG", INBOX_MAX_BODY + 1)
            return await inbox.receive_receipt(signed_locally("EVT-BIG-3", over), over)

    receipt = asyncio.run(run())
    assert (receipt.status, receipt.reason) == (413, "body_too_large")


def test_a_notification_breaking_the_contract_is_refused_422_and_counted(inbox):
    body = notification("EVT-CV", "MP-CV", payment_event=None)
    receipt = inbox.receive_receipt(signed("EVT-CV", body), body)
    assert (receipt.status, receipt.outcome, receipt.reason) == (422, "contract_violation", "contract_violation")
    first = notification("EVT-A", "MP-A", payment_event="PE-SHARED")
    assert inbox.receive(signed("EVT-A", first), first)[0] == 200
    second = notification("EVT-B", "MP-B", payment_event="PE-SHARED")
    assert inbox.receive(signed("EVT-B", second), second)[0] == 422
    counts = inbox.status()
    assert counts.contract_violations == {"missing_event_id": 1, "event_id_reused": 1}
    assert counts.pending == 1
    payment = json.loads(second)["data"]
    assert inbox.enter_reconciled(payment) == "contract_violation"
