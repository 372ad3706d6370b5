"""Webhook receiver cost in Python: storefront's WebhookVerifier.verify against three peers,
each verifying an equivalent 700-byte notification in its own signing scheme, in one run.

- storefront: ``WebhookVerifier.verify(headers, body)`` (``sf_webhook_verify_body`` checks the
  headers, the timestamp, the HMAC-SHA256 and the envelope over the caller's bytes; Python's
  ``json`` decodes the body once and ``data`` is checked);
- stripe: ``stripe.Webhook.construct_event(payload, sig_header, secret)`` (PyPI ``stripe``);
- standardwebhooks: ``Webhook(secret).verify(body, headers)`` (PyPI ``standardwebhooks``);
- hand-written: ``hmac.new`` + ``hmac.compare_digest`` + ``json.loads`` + the event-id and
  tolerance checks, the least a correct receiver does.

Rounds are interleaved (every peer runs once per round, in a rotating order, so all share the
machine's load); each round times ITERATIONS calls of a peer on the thread's CPU clock
(``time.thread_time_ns``: time spent descheduled on a loaded machine is not counted); the figure
is the median over rounds of the per-call time. Also timed, to explain storefront's figure: its parts alone (the
header lookup, the handle guard, the C call through ctypes, the decode and ``data`` check).

Run through ``benches/python/run.sh [ROUNDS] [ITERATIONS]`` (it installs the peers in a venv and
builds the release library); ``STOREFRONT_LIB`` names the library.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import statistics
import sys
import time
from ctypes import byref, c_size_t, c_void_p

import standardwebhooks
import storefront
import stripe
from storefront import webhook as sf_webhook

SECRET = "bench-notify-secret-0123456789abcdef0123"
EVENT_ID = "evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e"


def body_700() -> bytes:
    """The notification of benches/webhook.rs, padded to exactly 700 bytes."""
    head = (
        '{"id":"' + EVENT_ID + '","type":"merchant_payment.status_changed","api_version":1,'
        '"created_at":"2026-09-21T10:00:05Z","data":{"order_no":"202609211000000000042",'
        '"external_reference":"shop-order-1001","payment_no":"ch_card_usd","amount_minor":1250,'
        '"currency":"USD","currency_decimals":2,"status":"paid","status_version":2,'
        '"test_mode":false,"expires_at":"2026-09-21T10:30:00Z",'
        '"event_id":"pe_b093a5293d502f614e47126f","provider_trade_no":"PT-'
    )
    tail = '","occurred_at":"2026-09-21T10:01:00+00:00"}}'
    text = head + "7" * (700 - len(head) - len(tail)) + tail
    assert len(text) == 700
    return text.encode()


def peers(now: int):
    """name -> zero-argument callable verifying one delivery (all of one 700-byte body)."""
    body = body_700()
    ts = str(now)

    verifier = storefront.WebhookVerifier([SECRET])
    sf_headers = {
        "X-Service-Event-ID": EVENT_ID,
        "X-Service-Timestamp": ts,
        "X-Service-Signature": storefront.sign_webhook(SECRET, now, body),
    }

    # Stripe's scheme: header "t=<ts>,v1=<hex HMAC-SHA256 of 't.payload'>"; construct_event
    # needs an event object ("object": "event").
    stripe_data = json.loads(body)["data"]

    def stripe_event(trade_no: str) -> str:
        stripe_data["provider_trade_no"] = trade_no
        return json.dumps(
            {"id": EVENT_ID, "object": "event", "type": "merchant_payment.status_changed", "api_version": "1",
             "created": now, "data": {"object": stripe_data}},
            separators=(",", ":"),
        )

    # The same snapshot, its padding cut so that the event is 700 bytes too.
    stripe_payload = stripe_event("PT-" + "7" * (700 - len(stripe_event("PT-"))))
    stripe_secret = "whsec_" + SECRET
    stripe_sig = hmac.new(stripe_secret.encode(), f"{ts}.{stripe_payload}".encode(), hashlib.sha256).hexdigest()
    stripe_header = f"t={ts},v1={stripe_sig}"
    assert len(stripe_payload.encode()) == 700

    # Standard Webhooks: base64 secret, "v1,<base64 HMAC of 'id.ts.body'>".
    sw_secret = "whsec_" + base64.b64encode(SECRET.encode()).decode()
    sw = standardwebhooks.Webhook(sw_secret)
    sw_sig = base64.b64encode(
        hmac.new(SECRET.encode(), f"{EVENT_ID}.{ts}.".encode() + body, hashlib.sha256).digest()
    ).decode()
    sw_headers = {"webhook-id": EVENT_ID, "webhook-timestamp": ts, "webhook-signature": "v1," + sw_sig}

    key = SECRET.encode()

    def hand_written() -> dict:
        timestamp = sf_headers["X-Service-Timestamp"]
        if abs(time.time() - int(timestamp)) > 300:
            raise ValueError("timestamp")
        expected = "sha256=" + hmac.new(key, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, sf_headers["X-Service-Signature"]):
            raise ValueError("signature")
        notification = json.loads(body)
        if notification["id"] != sf_headers["X-Service-Event-ID"]:
            raise ValueError("event id")
        return notification

    # storefront's parts, for the explanation of its figure.
    verify_body = verifier._verify_body  # the export as the wrapper calls it (no argtypes)
    handle = verifier._handle._pointer
    encoded = tuple(value.encode() for value in sf_headers.values())

    def c_call_only() -> int:
        error = c_void_p()
        result = verify_body(handle, *encoded, body, c_size_t(len(body)), byref(error))
        if result:
            raise RuntimeError(result)
        return result

    runs = {
        "storefront verify": lambda: verifier.verify(sf_headers, body),
        "stripe construct_event": lambda: stripe.Webhook.construct_event(stripe_payload, stripe_header, stripe_secret),
        "standardwebhooks verify": lambda: sw.verify(body, sw_headers),
        "hand-written hmac+json": hand_written,
        "  part: header lookup": lambda: sf_webhook._three_headers(sf_headers),
        "  part: handle guard": lambda: (verifier._handle.acquire(), verifier._handle.release()),
        "  part: C call (ctypes)": c_call_only,
        "  part: decode + data check": lambda: sf_webhook._notification(body),
    }
    # Each verifies and yields the same event (checked once, before timing).
    assert runs["storefront verify"]()["data"]["amount_minor"] == 1250
    assert runs["stripe construct_event"]()["data"]["object"]["amount_minor"] == 1250
    assert runs["standardwebhooks verify"]()["data"]["amount_minor"] == 1250
    assert runs["hand-written hmac+json"]()["data"]["amount_minor"] == 1250
    return runs


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    runs = peers(int(time.time()))
    names = list(runs)
    samples = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            run = runs[name]
            start = time.thread_time_ns()
            for _ in range(iterations):
                run()
            samples[name].append((time.thread_time_ns() - start) / iterations / 1000)
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"python {sys.version.split()[0]}, stripe {stripe.VERSION}, standardwebhooks "
          f"{getattr(standardwebhooks, '__version__', '1.1.0')}, library {storefront._lib.lib()._name}")
    print(f"{rounds} interleaved rounds x {iterations} calls; median of the per-round means, thread CPU time (µs per call)")
    for name in names:
        print(f"  {name:28s} {median[name]:9.2f} µs")
    sf = median["storefront verify"]
    print("ratios:")
    print(f"  stripe / storefront            {median['stripe construct_event'] / sf:6.2f}x  (target >= 10)")
    print(f"  standardwebhooks / storefront  {median['standardwebhooks verify'] / sf:6.2f}x")
    print(f"  storefront / hand-written      {sf / median['hand-written hmac+json']:6.2f}x  (target <= 1.2)")


if __name__ == "__main__":
    main()
