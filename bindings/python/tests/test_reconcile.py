"""The reconciler through the Python wrapper (issue 12 item 2), against its own standalone
sandbox: a mix of paid, expired, review, refunded and chargeback payments, a lost notification,
duplicate references, an unknown status, a failing lookup and deliberately wrong local records.
Every report is checked against what the sandbox holds (its answers to the list by reference,
and the faults this test injected), record by record; the lost notification is re-queued and
delivered; a run stopped anywhere resumes from its cursor."""

from __future__ import annotations

import asyncio
import dataclasses
import http.server
import json
import threading
import time
import uuid
from typing import Any, Dict, Iterator, List, Optional

import pytest
import storefront
from sandbox_harness import CHANNEL_CARD_USD, USER_ALICE, Sandbox
from storefront.reconcile import (
    Ambiguous,
    BookedNotPaid,
    InAgreement,
    LookupFailed,
    Mismatch,
    MissingAtService,
    PaidNotBooked,
    UnderReview,
    UnknownStatus,
)

CHANNEL_CARD_TEST = "ch_card_test"
SECRET = "reconcile-notify-secret-py-0123456789abcdef"


class Receiver:
    """A notification receiver that answers 500 until ``accept`` is set, then stores each body."""

    def __init__(self) -> None:
        self.accept = threading.Event()
        self.bodies: List[Dict[str, Any]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if not owner.accept.is_set():
                    self.send_response(500)
                    self.end_headers()
                    return
                owner.bodies.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def own_sandbox() -> Iterator[Sandbox]:
    """A sandbox of this module alone: the test moves its clock by hours."""
    running = Sandbox()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def rclient(own_sandbox: Sandbox) -> Iterator[storefront.Client]:
    with storefront.Client(own_sandbox.config()) as created:
        yield created


class World:
    """Creates payments and drives the sandbox; reads the truth back from it."""

    def __init__(self, sandbox: Sandbox, client: storefront.Client) -> None:
        self.sandbox = sandbox
        self.client = client
        self.prefix = f"py-rec-{uuid.uuid4().hex[:8]}"

    def ref(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def create(self, name: str, amount: int, **extra: Any) -> str:
        created = self.client.create_merchant_payment(
            {"external_reference": self.ref(name), "amount_minor": amount, "currency": "USD", **extra}
        )
        return created["order_no"]

    def pay(self, order_no: str, body: Optional[Dict[str, Any]] = None) -> None:
        self.sandbox.control(
            "POST",
            f"/merchant-payments/{order_no}/checkout/pay",
            body or {"payment_no": CHANNEL_CARD_USD},
        )

    def force(self, order_no: str, status: str) -> None:
        self.sandbox.control("POST", f"/merchant-payments/{order_no}/force", {"status": status})

    def advance(self, seconds: int) -> None:
        self.sandbox.control("POST", "/clock/advance", {"seconds": seconds})

    def truth(self, reference: str) -> List[Dict[str, Any]]:
        """The sandbox's payments with this reference, newest first."""
        return list(self.client.list_merchant_payments(external_reference=reference, limit=100))

    def one(self, name: str) -> Dict[str, Any]:
        found = self.truth(self.ref(name))
        assert len(found) == 1, found
        return found[0]

    def deliveries(self, order_no: str) -> List[str]:
        return [r["delivery_status"] for r in self.client.notification_records(order_no, 100)]


def record(reference: str, amount: int, **fields: Any) -> storefront.LocalRecord:
    return storefront.LocalRecord(external_reference=reference, expected_amount=amount, currency="USD", **fields)


def booked(r: storefront.LocalRecord, truth: Dict[str, Any]) -> storefront.LocalRecord:
    return dataclasses.replace(r, booked_event_id=truth.get("event_id"), booked_status_version=truth["status_version"])


def test_report_matches_the_sandbox_record_by_record(own_sandbox, rclient):
    w = World(own_sandbox, rclient)
    receiver = Receiver()
    try:
        _run_mix(w, receiver)
    finally:
        receiver.close()
        own_sandbox.clear_faults()


def _run_mix(w: World, receiver: Receiver) -> None:
    # A paid payment whose notifications all failed (receiver down): automatic attempts are
    # exhausted on the sandbox clock, the delivery records end `failed`.
    lost = w.create("lost", 500, notify_url=receiver.url, notify_secret=SECRET)
    w.pay(lost)
    for _ in range(60):
        states = w.deliveries(lost)
        if len(states) == 2 and all(s == "failed" for s in states):
            break
        w.advance(3 * 3600)
        time.sleep(0.05)
    assert w.deliveries(lost) == ["failed", "failed"]
    receiver.accept.set()

    for name in ["agree", "agree-ref", "refunded", "chargeback", "amount"]:
        w.pay(w.create(name, 300))
    refunded, chargeback = w.one("refunded"), w.one("chargeback")
    agree, agree_ref = w.one("agree"), w.one("agree-ref")
    w.force(refunded["order_no"], "refunded")
    w.force(chargeback["order_no"], "chargeback")
    w.pay(w.create("currency", 200))
    test_channel = w.create("testmode", 200, payment_no=CHANNEL_CARD_TEST)
    w.pay(test_channel, {"payment_no": CHANNEL_CARD_TEST, "user": USER_ALICE})
    for name in ["expired", "expired-booked"]:
        w.create(name, 100, expires_in=60)
    w.force(w.create("review", 150), "review")
    w.create("pending", 100)
    for _ in range(2):
        w.create("dup", 100)
    unknown = w.create("unknown", 100)
    failing = w.create("failing", 100)
    w.advance(120)
    w.sandbox.control("POST", "/sweep")

    # An unknown future status (a fault answers the payment's query with one) and a lookup that
    # keeps failing.
    unknown_body = dict(rclient_get(w, unknown))
    unknown_body.update({"status": "settled_v2", "status_version": 7})
    w.sandbox.fault("GET", f"/openapi/v1/merchant-payments/{unknown}", status=200, body=unknown_body, times=1000)
    w.sandbox.fault("GET", f"/openapi/v1/merchant-payments/{failing}", status=500, times=1000)

    r = w.ref
    records = [
        booked(record(r("agree"), 300, order_no=agree["order_no"]), agree),
        booked(record(r("agree-ref"), 300), agree_ref),
        record(r("lost"), 500),
        record(r("expired"), 100),
        record(r("expired-booked"), 100, booked_event_id="pev_never_paid"),
        record(r("review"), 150),
        booked(record(r("refunded"), 300, order_no=refunded["order_no"]), refunded),
        booked(record(r("chargeback"), 300), chargeback),
        record(r("amount"), 310),
        storefront.LocalRecord(r("currency"), 200, "EUR"),
        record(r("testmode"), 200, order_no=test_channel, test_mode=False),
        record(r("missing"), 999),
        record(r("missing-order"), 999, order_no="999999999999999999999"),
        record(r("pending"), 100),
        record(r("dup"), 100),
        record(r("unknown"), 100, order_no=unknown),
        record(r("failing"), 100, order_no=failing),
    ]
    failed_before = len(w.deliveries(lost))

    reports = list(w.client.reconcile(records, storefront.ReconcileOptions(requeue_failed=True)))
    assert len(reports) == len(records)
    for i, (report, rec) in enumerate(zip(reports, records)):
        assert report.record == rec.external_reference
        assert report.index == i
        assert report.cursor == storefront.ReconcileCursor(i + 1, rec.external_reference)
        check(report, rec, w.truth(rec.external_reference), unknown_body)
        if not rec.external_reference.endswith("-lost"):
            assert report.requeued == 0, report
        assert report.requeue_error is None, report

    names = {rep.record[len(w.prefix) + 1:]: rep.finding.name for rep in reports}
    assert names == {
        "agree": "in_agreement",
        "agree-ref": "in_agreement",
        "lost": "paid_not_booked",
        "expired": "in_agreement",
        "expired-booked": "booked_not_paid",
        "review": "under_review",
        "refunded": "booked_not_paid",
        "chargeback": "booked_not_paid",
        "amount": "mismatch",
        "currency": "mismatch",
        "testmode": "mismatch",
        "missing": "missing_at_service",
        "missing-order": "missing_at_service",
        "pending": "in_agreement",
        "dup": "ambiguous",
        "unknown": "unknown_status",
        "failing": "lookup_failed",
    }
    assert w.one("expired")["status"] == "expired"
    assert w.one("expired-booked")["status"] == "expired"

    # Re-queue: both failed deliveries of the lost payment were re-queued, and the receiver now
    # gets the paid notification carrying the event to book.
    lost_report = next(rep for rep in reports if rep.record == r("lost"))
    assert lost_report.requeued == failed_before == 2
    lost_truth = w.one("lost")
    for _ in range(400):  # bounded wait for the asynchronous delivery; not a timing assertion
        if any(b["data"]["status"] == "paid" for b in list(receiver.bodies)):
            break
        time.sleep(0.025)
    paid = next(b for b in receiver.bodies if b["data"]["status"] == "paid")
    assert paid["data"]["order_no"] == lost_truth["order_no"]
    assert paid["data"]["event_id"] == lost_truth["event_id"]
    for _ in range(400):
        if all(s == "delivered" for s in w.deliveries(lost)):
            break
        time.sleep(0.025)
    assert w.deliveries(lost) == ["delivered", "delivered"]

    # Safe to run again: the same findings, nothing left to re-queue.
    again = list(w.client.reconcile(records, {"requeue_failed": True}))
    assert [a.finding for a in again] == [rep.finding for rep in reports]
    assert all(a.requeued == 0 for a in again)


def rclient_get(w: World, order_no: str) -> Dict[str, Any]:
    return w.client.merchant_payment(order_no)


def check(report, rec: storefront.LocalRecord, all_truth: List[Dict[str, Any]], unknown_body: Dict[str, Any]) -> None:
    """One report against the sandbox's payments for its record."""
    ctx = f"{rec.external_reference}: {report}"
    finding = report.finding
    if rec.order_no is not None:
        matching = [t for t in all_truth if t["order_no"] == rec.order_no]
        t = matching[0] if matching else None
    else:
        t = all_truth[0] if len(all_truth) == 1 else None
    if isinstance(finding, MissingAtService):
        assert t is None and all_truth == [], ctx
        assert report.order_no is None, ctx
        return
    if isinstance(finding, Ambiguous):
        assert rec.order_no is None and len(all_truth) > 1, ctx
        assert finding.order_nos == [x["order_no"] for x in all_truth], ctx
        return
    if isinstance(finding, LookupFailed):
        # The fault answers 500 on every attempt.
        assert (finding.error.kind, finding.error.http_status, finding.error.code) == ("api", 500, "server_error"), ctx
        return
    if isinstance(finding, UnknownStatus):
        # The fault's answer is the truth here.
        assert finding.status == "settled_v2", ctx
        assert not finding.status.is_paid and finding.status.needs_verification, ctx
        assert not finding.payment["status"].is_paid, ctx
        assert finding.payment["order_no"] == unknown_body["order_no"] == report.order_no, ctx
        assert report.service_status_version == 7, ctx
        return
    assert t is not None, ctx
    assert report.order_no == t["order_no"], ctx
    assert report.service_status_version == t["status_version"], ctx
    amount_ok = rec.expected_amount == t["amount_minor"]
    currency_ok = rec.currency == t["currency"]
    test_mode_ok = rec.test_mode is None or rec.test_mode == t["test_mode"]
    if isinstance(finding, Mismatch):
        if finding.field == "amount":
            assert not amount_ok, ctx
            assert (finding.expected, finding.actual) == (str(rec.expected_amount), str(t["amount_minor"])), ctx
        elif finding.field == "currency":
            assert amount_ok and not currency_ok, ctx
            assert (finding.expected, finding.actual) == (rec.currency, t["currency"]), ctx
        elif finding.field == "test_mode":
            assert amount_ok and currency_ok and not test_mode_ok, ctx
            assert finding.actual == str(t["test_mode"]).lower(), ctx
        else:
            pytest.fail(f"unexpected mismatch: {ctx}")
        return
    assert amount_ok and currency_ok and test_mode_ok, ctx
    is_booked = rec.booked_event_id is not None
    status = t["status"]
    if status == "paid" and is_booked:
        assert isinstance(finding, InAgreement) and rec.booked_event_id == t["event_id"], ctx
    elif status == "paid":
        assert isinstance(finding, PaidNotBooked), ctx
        assert finding.event_id == t["event_id"], ctx
        assert finding.status_version == t["status_version"], ctx
        assert finding.occurred_at == t["occurred_at"], ctx
        assert finding.payment["status"] == "paid", ctx
    elif is_booked:
        assert status in ("pending", "expired", "review", "refunded", "chargeback"), ctx
        assert isinstance(finding, BookedNotPaid) and finding.status == status, ctx
        assert finding.payment.get("event_id") == t.get("event_id"), ctx
    elif status == "review":
        assert isinstance(finding, UnderReview) and finding.payment["status"] == "review", ctx
    else:
        assert status in ("pending", "expired", "refunded", "chargeback"), ctx
        assert isinstance(finding, InAgreement), ctx


def test_a_run_resumes_from_its_cursor(own_sandbox, rclient):
    """A run stopped after k reports and resumed from the last report's cursor gives exactly the
    reports of one full run; a cursor that does not fit the records is refused before any
    request; unknown keys are refused naming them."""
    w = World(own_sandbox, rclient)
    paid = w.create("c-paid", 200)
    w.pay(paid)
    w.create("c-pending", 100)
    w.force(w.create("c-review", 100), "review")
    for _ in range(2):
        w.create("c-dup", 100)
    r = w.ref
    records = [
        record(r("c-paid"), 200),
        record(r("c-pending"), 100),
        record(r("c-missing"), 100),
        {"external_reference": r("c-review"), "expected_amount": 100, "currency": "USD"},
        record(r("c-dup"), 100),
        record(r("c-paid"), 200, order_no=paid),
    ]
    full = list(rclient.reconcile(records))
    assert [x.finding.name for x in full] == [
        "paid_not_booked",
        "in_agreement",
        "missing_at_service",
        "under_review",
        "ambiguous",
        "paid_not_booked",
    ]
    async def collect() -> list:
        return [report async for report in rclient.aio().reconcile(records)]

    assert asyncio.run(collect()) == full, "the asyncio iterator gives the same reports"
    for stop in range(len(records) + 1):
        first = []
        for report in rclient.reconcile(records):
            if len(first) == stop:
                break
            first.append(report)
        cursor = first[-1].cursor if first else None
        rest = list(rclient.reconcile(records, storefront.ReconcileOptions(cursor=cursor)))
        assert first + rest == full, f"stopped after {stop}"

    with pytest.raises(storefront.ValidationError) as wrong:
        next(rclient.reconcile(records, {"cursor": storefront.ReconcileCursor(2, r("c-review"))}))
    assert wrong.value.field == "cursor"
    with pytest.raises(storefront.ValidationError):
        next(rclient.reconcile(records, {"cursor": {"next_index": 99}}))
    with pytest.raises(storefront.ValidationError) as unknown:
        rclient.reconcile([{**records[3], "booked_eventid": "x"}])
    assert unknown.value.field == "records[0].booked_eventid"
    with pytest.raises(storefront.ValidationError) as option:
        rclient.reconcile(records, {"requeue": True})
    assert option.value.field == "options.requeue"
