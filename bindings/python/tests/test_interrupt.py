"""Interrupting blocking calls: Ctrl-C (SIGINT) during a call on the main thread raises
KeyboardInterrupt at once; the library stops the call (its cancel token) and the worker thread
has finished before the exception reaches the caller."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import storefront
from storefront._call import calls_in_flight
from sandbox_harness import CHANNEL_CARD_USD, PRODUCT_BEANS


def workers_alive():
    """Worker threads still inside a C call (a finished call leaves its thread idle in the
    pool)."""
    return [None] * calls_in_flight()


@pytest.fixture
def sigint_after():
    """Sends SIGINT to this process after a delay, from another thread (as Ctrl-C would)."""
    assert threading.current_thread() is threading.main_thread()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    timers = []

    def schedule(seconds: float) -> None:
        timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
        timers.append(timer)
        timer.start()

    yield schedule
    for timer in timers:
        timer.cancel()
        timer.join()


def test_ctrl_c_stops_wait_for_payment_at_once(alice, sigint_after):
    order_no = alice.create_order(PRODUCT_BEANS, 1, CHANNEL_CARD_USD)  # never paid
    sigint_after(0.3)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        alice.wait_for_payment(order_no, interval_ms=200, timeout_ms=30_000)
    elapsed = time.monotonic() - started
    assert 0.25 < elapsed < 1.0, elapsed
    assert workers_alive() == []
    # The client is unharmed and the order still unpaid.
    assert alice.payment_status(order_no) == 0


def test_ctrl_c_stops_a_slow_request(sandbox, client, sigint_after):
    """A request the service is slow to answer (10 s) is abandoned as well."""
    client.authenticate()
    sandbox.fault("GET", "/openapi/v1/merchant", latency_ms=10_000)
    sigint_after(0.3)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        client.merchant_profile()
    assert time.monotonic() - started < 1.0
    assert workers_alive() == []


def test_a_cancelled_call_from_another_thread_raises_call_cancelled(alice):
    """Off the main thread the call runs in place under a cancel scope; cancelling that scope's
    token (what an interrupt does) gives CallCancelledError."""
    from storefront import _call

    order_no = alice.create_order(PRODUCT_BEANS, 1, CHANNEL_CARD_USD)
    tokens = []
    real = _call.CancelToken

    class Recorded(real):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            tokens.append(self)

    outcome = []

    def waiter() -> None:
        try:
            alice.wait_for_payment(order_no, 200, 30_000)
        except BaseException as error:
            outcome.append(error)

    _call.CancelToken = Recorded
    try:
        thread = threading.Thread(target=waiter)
        thread.start()
        deadline = time.monotonic() + 10
        while not tokens and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        _call.CancelToken = real
    time.sleep(0.2)
    started = time.monotonic()
    tokens[0].cancel()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - started < 1.0
    assert isinstance(outcome[0], storefront.CallCancelledError), outcome
