"""storefront Python example: verifies a webhook and walks the catalog flow (and a merchant
payment) against the standalone sandbox.

    target/debug/storefront-sandbox --port 0 --ready-file /tmp/sbx.json &
    STOREFRONT_LIB=target/debug/libstorefront.so PYTHONPATH=bindings/python \
        python3 examples/python/storefront_example.py /tmp/sbx.json
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
import uuid

import storefront


def sandbox_control(ready: dict, path: str, body: dict) -> dict:
    """Sandbox-only control call (mints a user token, plays the buyer); not part of the SDK."""
    request = urllib.request.Request(
        ready["control_url"] + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
    return json.loads(text) if text else {}


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"check failed: {what}")


def webhook_demo() -> None:
    secret = "whsec_example_0123456789abcdef0123456789"
    body = json.dumps(
        {
            "id": "EVT-42",
            "type": "merchant_payment.status_changed",
            "api_version": 1,
            "created_at": "2026-11-22T12:00:00Z",
            "data": {
                "order_no": "MP42", "external_reference": "order-42", "payment_no": "ch_card_usd",
                "amount_minor": 1250, "currency": "USD", "currency_decimals": 2, "status": "paid",
                "status_version": 2, "test_mode": False, "expires_at": "2026-11-22T12:30:00Z",
                "event_id": "PE42", "provider_trade_no": "T42", "occurred_at": "2026-11-22T12:01:00Z",
            },
        }
    ).encode()
    now = int(time.time())
    # What the service would send (the test signer signs exactly like it).
    headers = {
        "X-Service-Event-ID": "EVT-42",
        "X-Service-Timestamp": str(now),
        "X-Service-Signature": storefront.sign_webhook(secret, now, body),
    }

    # The three lines of a webhook endpoint:
    verifier = storefront.WebhookVerifier([secret])
    notification = verifier.verify(headers, body)
    storefront.check_expectation(
        notification["data"],
        {"external_reference": "order-42", "amount_minor": 1250, "currency": "USD", "test_mode": False},
    )
    print("webhook verified:", notification["id"], notification["data"]["status"])
    check(storefront.status_version_decision(1, notification["data"]["status_version"]) == "apply", "version guard")

    try:
        verifier.verify(headers, body.replace(b"1250", b"9999"))
        check(False, "a tampered body must be rejected")
    except storefront.WebhookSignatureError as error:
        print("tampered webhook rejected:", error.result_name)


def catalog_demo(ready: dict, client: storefront.Client) -> None:
    print("merchant:", client.merchant_profile()["name"])
    print("products:", [p["gd_no"] for p in client.products(limit=5)["list"]])
    token = sandbox_control(ready, "/users/alice/tokens", {"client_id": "sbx_merchant_client"})
    alice = client.user(token["access_token"])
    order_no = alice.create_order("G1001", 1, "ch_platform_coin")
    start = alice.start_payment(order_no, "ch_platform_coin")
    print("order", order_no, "payment started at", start["redirect"])
    outcome = alice.wait_for_payment(order_no, interval_ms=200, timeout_ms=30_000)
    check(outcome["outcome"] == "final" and outcome["payment_status"] == 1, "the order is paid")
    print("order paid; order status", outcome["order"]["status"])


def merchant_demo(ready: dict, client: storefront.Client) -> None:
    created = client.create_merchant_payment(
        {"external_reference": f"example-{uuid.uuid4()}", "amount_minor": 1250, "currency": "USD"}
    )
    print("merchant payment", created["order_no"], "idempotency key", created["idempotency_key"])
    sandbox_control(
        ready, f"/merchant-payments/{created['order_no']}/checkout/pay", {"payment_no": "ch_card_usd"}
    )
    payment = client.merchant_payment(created["order_no"])
    check(payment["status"] == "paid", "the merchant payment is paid")
    print("merchant payment paid, event", payment["event_id"])
    try:
        client.merchant_payment("MP-DOES-NOT-EXIST")
        check(False, "an unknown payment must be refused")
    except storefront.ApiError as error:
        print("unknown payment:", error.http_status, error.error)


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} SANDBOX_READY_FILE", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as file:
        ready = json.load(file)
    print("storefront", storefront.library_version(), "against", ready["origin"])
    webhook_demo()
    with storefront.Client(
        {
            "base_url": ready["base_url"],
            "token_endpoint": ready["token_endpoint"],
            "userinfo_endpoint": ready["userinfo_endpoint"],
            "client_id": "sbx_merchant_client",
            "client_secret": "sbx_merchant_secret_9f2c41d7a8e64b0c",
            "allow_insecure_loopback": True,
        }
    ) as client:
        catalog_demo(ready, client)
        merchant_demo(ready, client)
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
