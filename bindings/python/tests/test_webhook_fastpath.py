"""The receiver's fast paths keep the slow paths' rules: headers found by their exact spelling
still refuse a duplicate given in another letter case, the body's status is a PaymentStatus,
and the handle guard without locks still makes close() wait for a call in flight and refuse
calls after it."""

from __future__ import annotations

import threading
import time

import pytest
import storefront
from storefront._handle import Handle
from storefront._call import call_handle, to_json
from storefront.models import PaymentStatus

from test_webhook import BODY, NOW, SECRET, headers
from test_webhook_inputs import only_webhook_error, verifier  # noqa: F401 (fixture)


def test_a_duplicate_in_another_case_is_refused_next_to_the_exact_spelling(verifier):  # noqa: F811
    good = headers()
    for other in ("X-SERVICE-SIGNATURE", "x-Service-signature", "http_x_service_signature", "Http_X_Service_Signature"):
        error = only_webhook_error(verifier, {**good, other: good["X-Service-Signature"]}, field="X-Service-Signature")
        assert error.result_name == "webhook_duplicate_header", other


def test_headers_in_any_case_alone_are_found(verifier):  # noqa: F811
    good = headers()
    for case in (str.upper, str.lower, str.title, lambda name: "HTTP_" + name.upper().replace("-", "_")):
        given = {case(name): value for name, value in good.items()}
        given["Content-Type"] = "application/json"  # another key of another length
        given["X-Service-Event-IX"] = "not this one"  # a near miss as long as one of the names
        assert verifier.verify_at(given, BODY, NOW)["id"] == "EVT-1", given


def test_the_status_is_a_payment_status(verifier):  # noqa: F811
    status = verifier.verify_at(headers(), BODY, NOW)["data"]["status"]
    assert type(status) is PaymentStatus
    assert status == "paid" and status.is_paid and not status.needs_verification


def test_close_waits_for_a_call_in_flight_and_refuses_later_calls():
    handle = Handle(call_handle("sf_webhook_verifier_new", to_json([SECRET])), "sf_webhook_verifier_free")
    pointer = handle.acquire()  # a call in flight
    closer = threading.Thread(target=handle.close)
    closer.start()
    while not handle._closing:  # close() has begun (no time limit: it cannot finish yet)
        time.sleep(0.001)
    with pytest.raises(ValueError):
        handle.acquire()  # refused once close() has begun
    # close() cannot have freed the handle: the call in flight has not released it.
    assert closer.is_alive() and pointer.value is not None and handle._inflight == [None]
    handle.release()
    closer.join()
    assert handle._pointer is None and handle._inflight == []
    handle.close()  # idempotent
