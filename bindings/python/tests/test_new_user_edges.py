"""Issue 12 (the Python bullet): the sharp edges a new user met. The idempotency key exists
before sending and survives a failed create; payment status answers `is_paid` /
`needs_verification`; decimal amounts convert to minor units and back through the core;
a product's `other_ipu` fields are listed; a create answer's missing `status_version` is None.
Over real HTTP against the standalone sandbox where the service is involved."""

from __future__ import annotations

import dataclasses
import json
import pickle
import uuid
from decimal import Decimal

import pytest

import storefront
from sandbox_harness import (
    CHANNEL_CARD_USD,
    CHANNEL_PLATFORM_COIN,
    PRODUCT_BEANS,
    PRODUCT_GIFT_CARD,
    Sandbox,
)
from storefront import AmountError, PaymentStatus, from_minor, to_minor

CREATE = "/openapi/v1/merchant-payments"


def one_attempt(sandbox: Sandbox) -> storefront.Client:
    """A client that does not retry by itself, so the first failure reaches the caller."""
    return storefront.Client(sandbox.config(retry={"max_attempts": 1}))


def payments_of(client: storefront.Client, reference: str) -> list:
    return client.list_merchant_payments(external_reference=reference)


# -- 1. the idempotency key before sending ----------------------------------------------------


def test_the_key_exists_before_sending_and_a_lost_answer_is_retried_to_one_payment(sandbox):
    """Contract: "On a timeout, retry with the original key and parameters; do not use a new
    key." The service stores the payment, then the connection drops before the answer: the
    app held the key before the call, the exception carries it too, and the retry with the same
    request answers the same payment (one payment at the service)."""
    reference = f"py-key-{uuid.uuid4()}"
    request = storefront.CreateMerchantPayment(
        external_reference=reference, amount_minor=1999, currency="USD"
    )
    stored_key = request.idempotency_key  # what the app persists before calling
    assert stored_key.startswith("sf-") and len(stored_key) == 35
    other = storefront.CreateMerchantPayment(external_reference=reference, amount_minor=1999, currency="USD")
    assert other.idempotency_key != stored_key

    sandbox.fault("POST", CREATE, after_handler=True, drop_connection=True)
    with one_attempt(sandbox) as client:
        with pytest.raises(storefront.TransportError) as lost:
            client.create_merchant_payment(request)
        assert lost.value.idempotency_key == stored_key
        stored = payments_of(client, reference)
        assert len(stored) == 1  # processed although the caller saw a failure

        # Restart-style retry: the request rebuilt from what was persisted.
        again = storefront.CreateMerchantPayment(
            external_reference=reference, amount_minor=1999, currency="USD", idempotency_key=stored_key
        )
        retried = client.create_merchant_payment(again)
        assert retried["idempotency_key"] == stored_key
        assert retried["order_no"] == stored[0]["order_no"]
        assert [p["order_no"] for p in payments_of(client, reference)] == [retried["order_no"]]


def test_a_timed_out_create_is_retried_with_the_key_from_the_exception(sandbox):
    """The literal case of the contract: the service processed the create but answered after
    the attempt timeout. The timeout exception names the key; the retry with it is the same
    payment."""
    reference = f"py-key-timeout-{uuid.uuid4()}"
    request = storefront.CreateMerchantPayment(external_reference=reference, amount_minor=4200, currency="USD")
    sandbox.fault("POST", CREATE, after_handler=True, latency_ms=3000)
    config = sandbox.config(retry={"max_attempts": 1}, attempt_timeout_ms=300)
    with storefront.Client(config) as client:
        with pytest.raises((storefront.RequestTimeoutError, storefront.DeadlineExceededError)) as timed_out:
            client.create_merchant_payment(request)
        assert timed_out.value.idempotency_key == request.idempotency_key
    with storefront.Client(sandbox.config()) as client:
        retried = client.create_merchant_payment(
            storefront.CreateMerchantPayment(
                external_reference=reference, amount_minor=4200, currency="USD",
                idempotency_key=timed_out.value.idempotency_key,
            )
        )
        assert [p["order_no"] for p in payments_of(client, reference)] == [retried["order_no"]]


def test_a_dict_request_gets_its_key_before_sending_and_the_5xx_carries_it(sandbox):
    """A plain dict without a key is given one before sending, so a 5xx after the service
    processed it still tells the app which key to retry with; the retry is the same payment."""
    reference = f"py-key-dict-{uuid.uuid4()}"
    body = {"external_reference": reference, "amount_minor": 500, "currency": "USD"}
    sandbox.fault("POST", CREATE, after_handler=True, status=500)
    with one_attempt(sandbox) as client:
        with pytest.raises(storefront.ApiError) as failed:
            client.create_merchant_payment(body)
        assert failed.value.http_status == 500
        key = failed.value.idempotency_key
        assert key and key.startswith("sf-")
        retried = client.create_merchant_payment({**body, "idempotency_key": key})
        assert [p["order_no"] for p in payments_of(client, reference)] == [retried["order_no"]]
        # A failure before anything was sent carries the key as well.
        with pytest.raises(storefront.ValidationError) as refused:
            client.create_merchant_payment({**body, "amount_minor": 0})
        assert refused.value.idempotency_key


def test_the_async_client_carries_the_key_too(sandbox):
    import asyncio

    reference = f"py-key-aio-{uuid.uuid4()}"
    request = storefront.CreateMerchantPayment(external_reference=reference, amount_minor=700, currency="USD")
    sandbox.fault("POST", CREATE, after_handler=True, status=503)

    async def run() -> None:
        async with storefront.AsyncClient(sandbox.config(retry={"max_attempts": 1})) as client:
            with pytest.raises(storefront.ApiError) as failed:
                await client.create_merchant_payment(request)
            assert failed.value.idempotency_key == request.idempotency_key
            retried = await client.create_merchant_payment(request)
            listed = await client.list_merchant_payments(external_reference=reference)
            assert [p["order_no"] for p in listed] == [retried["order_no"]]
            assert listed[0]["status"].needs_verification is False

    asyncio.run(run())


# -- 2. typed payment status ------------------------------------------------------------------


def test_payment_status_answers_the_contract_questions():
    """Contract: "Only `paid` confirms payment"; `review` and unknown future statuses "are
    treated as needing verification and never as paid"."""
    expected = {
        "pending": (False, False),
        "paid": (True, False),
        "review": (False, True),
        "expired": (False, False),
        "refunded": (False, False),
        "chargeback": (False, False),
        "settled_maybe": (False, True),
        "PAID": (False, True),
        "": (False, True),
    }
    for text, (paid, verify) in expected.items():
        status = PaymentStatus(text)
        assert (status.is_paid, status.needs_verification) == (paid, verify), text
        assert status == text and isinstance(status, str)
        assert json.dumps({"s": status}) == json.dumps({"s": text})
        assert pickle.loads(pickle.dumps(status)) == text
    assert PaymentStatus.PAID.is_paid and PaymentStatus.PAID == "paid"
    assert PaymentStatus.REVIEW.needs_verification
    assert not PaymentStatus("settled_maybe").is_known


def test_merchant_payments_carry_a_typed_status_over_http(sandbox):
    """Created, queried and listed payments have a `PaymentStatus`; paying makes it `is_paid`;
    an unclear channel session at expiry becomes `review`, which needs verification. The
    sandbox clock is moved, so this test has its own sandbox."""
    own = Sandbox()
    try:
        with storefront.Client(own.config()) as client:
            reference = f"py-status-{uuid.uuid4()}"
            created = client.create_merchant_payment(
                storefront.CreateMerchantPayment(external_reference=reference, amount_minor=1250, currency="USD")
            )
            assert isinstance(created["status"], PaymentStatus)
            assert created.status == "pending" and not created.status.is_paid
            assert not created.status.needs_verification
            own.control(
                "POST", f"/merchant-payments/{created['order_no']}/checkout/pay", {"payment_no": CHANNEL_CARD_USD}
            )
            paid = client.merchant_payment(created["order_no"])
            assert isinstance(paid["status"], PaymentStatus) and paid["status"].is_paid

            unclear = client.create_merchant_payment(
                storefront.CreateMerchantPayment(
                    external_reference=f"{reference}-review", amount_minor=900, currency="USD", expires_in=60
                )
            )
            own.control(
                "POST", f"/merchant-payments/{unclear['order_no']}/checkout/session", {"payment_no": CHANNEL_CARD_USD}
            )
            own.control("POST", "/clock/advance", {"seconds": 120})
            listed = client.list_merchant_payments(order_no=unclear["order_no"])
            assert listed[0]["status"] == "review"
            assert listed[0]["status"].needs_verification and not listed[0]["status"].is_paid
    finally:
        own.stop()


def test_verified_notifications_carry_a_typed_status(monkeypatch):
    """Contract (Events): a notification's `data.status` answers the same questions, on the
    body-only path and on the library's decoding path alike."""
    from storefront import _lib

    secret = "whsec_0123456789abcdef0123456789abcdef"
    now = 1_790_000_000
    for status, paid, verify in [("paid", True, False), ("review", False, True), ("later_status", False, True)]:
        data = {
            "order_no": "MP1", "external_reference": "R1", "payment_no": "ch_card_usd", "amount_minor": 1250,
            "currency": "USD", "currency_decimals": 2, "status": status, "status_version": 2,
            "test_mode": False, "expires_at": "2026-09-21T12:30:00Z",
        }
        body = json.dumps(
            {"id": "EVT-1", "type": "merchant_payment.status_changed", "api_version": 1,
             "created_at": "2026-09-21T12:00:00Z", "data": data}
        ).encode()
        signed = {
            "X-Service-Event-ID": "EVT-1",
            "X-Service-Timestamp": str(now),
            "X-Service-Signature": storefront.sign_webhook(secret, now, body),
        }
        for body_only in (True, False):
            with monkeypatch.context() as patched:
                if not body_only:  # as with a library without the body-only exports
                    real = _lib.has
                    patched.setattr(_lib, "has", lambda name: not name.startswith("sf_webhook_verify_body") and real(name))
                verifier = storefront.WebhookVerifier([secret])
            got = verifier.verify_at(signed, body, now)["data"]["status"]
            verifier.close()
            assert isinstance(got, PaymentStatus) and got == status, (status, body_only)
            assert (got.is_paid, got.needs_verification) == (paid, verify), (status, body_only)


# -- 3. money helpers through the core --------------------------------------------------------


def test_decimal_text_converts_to_minor_units_and_back_exactly():
    """Contract: amount_minor = amount x 10^currency_decimals, "never floating-point
    rounding". The cases of the core's `money` tests, through the same code."""
    assert to_minor("19.99", 2) == 1999
    assert to_minor("12.5", 2) == 1250
    assert to_minor("12.500", 2) == 1250
    assert to_minor("1200", 0) == 1200
    assert to_minor("0.00000001", 8) == 1
    assert to_minor("0.1", 2) + 20 == to_minor("0.30", 2)
    assert to_minor("9007199254740991", 0) == 2**53 - 1
    assert to_minor(Decimal("19.99"), 2) == 1999
    assert to_minor(Decimal("1E+1"), 2) == 1000  # plain notation is what reaches the core
    assert from_minor(1999, 2) == "19.99"
    assert from_minor(1250, 0) == "1250"
    assert from_minor(5, 3) == "0.005"
    assert from_minor(1250, 18) == "0.000000000000001250"
    for minor, decimals in [(1, 2), (1999, 2), (2**53 - 1, 2), (7, 8), (123456, 0)]:
        assert to_minor(from_minor(minor, decimals), decimals) == minor


@pytest.mark.parametrize(
    "text, decimals, reason",
    [
        ("12.505", 2, "too_many_decimals"),
        ("19.999", 2, "too_many_decimals"),
        ("0", 2, "not_positive"),
        ("-1", 2, "not_positive"),
        ("9007199254740992", 0, "out_of_range"),
        ("999999999999999999999999", 2, "out_of_range"),
        ("1", 19, "unsupported_scale"),
        ("", 2, "syntax"),
        (".", 2, "syntax"),
        ("1.", 2, "syntax"),
        (".5", 2, "syntax"),
        ("1e3", 2, "syntax"),
        ("1,5", 2, "syntax"),
        ("NaN", 2, "syntax"),
        (" 1", 2, "syntax"),
        ("1 ", 2, "syntax"),
        ("--1", 2, "syntax"),
    ],
)
def test_refused_amounts_raise_a_typed_error_with_a_reason(text, decimals, reason):
    with pytest.raises(AmountError) as refused:
        to_minor(text, decimals)
    assert refused.value.reason == reason
    assert refused.value.field == "amount"
    assert isinstance(refused.value, storefront.ValidationError)


def test_formatting_refusals_and_floats():
    for minor, decimals, reason in [
        (0, 2, "not_positive"),
        (-5, 2, "not_positive"),
        (2**53, 2, "out_of_range"),
        (2**64, 2, "out_of_range"),
        (1250, 19, "unsupported_scale"),
        (1250, 2**32 - 1, "unsupported_scale"),
    ]:
        with pytest.raises(AmountError) as refused:
            from_minor(minor, decimals)
        assert refused.value.reason == reason, (minor, decimals)
        assert refused.value.field == "amount_minor"
    with pytest.raises(TypeError):
        to_minor(19.99, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        from_minor(19.99, 2)  # type: ignore[arg-type]
    with pytest.raises(AmountError) as nan:
        to_minor(Decimal("NaN"), 2)
    assert nan.value.reason == "syntax"


def test_a_converted_amount_creates_the_payment_it_says(client):
    reference = f"py-money-{uuid.uuid4()}"
    created = client.create_merchant_payment(
        {"external_reference": reference, "amount_minor": to_minor("19.99", 2), "currency": "USD"}
    )
    assert created["amount_minor"] == 1999
    assert from_minor(created["amount_minor"], created["currency_decimals"]) == "19.99"


# -- 4. other_ipu fields ----------------------------------------------------------------------


def test_a_products_other_ipu_fields_are_listed_and_build_the_order(client, alice):
    """Contract (Product): `other_ipu_cnf` entries are key=label=flag; the order uses the key
    part, flag 1 is required."""
    product = client.products(gd_no=PRODUCT_GIFT_CARD)["list"][0]
    fields = storefront.other_ipu_fields(product)
    assert fields == [
        storefront.OtherIpuField("recipient_email", "Recipient email", True),
        storefront.OtherIpuField("gift_message", "Gift message", False),
    ]
    form = storefront.OtherIpuForm(product)
    assert [f.key for f in form.required] == ["recipient_email"]
    extra = form.build({"recipient_email": "bob@example.com", "gift_message": "  "})
    assert extra == {"recipient_email": "bob@example.com"}
    with pytest.raises(storefront.ValidationError) as missing:
        form.build({"gift_message": "hi"})
    assert missing.value.field == "other_ipu.recipient_email"
    with pytest.raises(storefront.ValidationError) as label:
        form.build({"Recipient email": "bob@example.com"})
    assert label.value.field == "other_ipu.Recipient email"
    order_no = alice.create_order(PRODUCT_GIFT_CARD, 1, CHANNEL_PLATFORM_COIN, other_ipu=extra)
    assert alice.order(order_no)["gd_no"] == PRODUCT_GIFT_CARD

    plain = client.products(gd_no=PRODUCT_BEANS)["list"][0]
    assert storefront.other_ipu_fields(plain) == []
    with pytest.raises(storefront.ValidationError) as malformed:
        storefront.other_ipu_fields({**product, "other_ipu_cnf": ["nokey"]})
    assert malformed.value.field == "other_ipu_cnf"


# -- 5. status_version absent on a create answer ----------------------------------------------


def test_a_create_answer_has_no_status_version_and_a_query_has_one(sandbox, client):
    """Contract: `status_version` is "returned by query and in notifications", and 0 is a real
    version (a historical never-changed record): a create answer's absent version is None."""
    reference = f"py-version-{uuid.uuid4()}"
    created = client.create_merchant_payment(
        {"external_reference": reference, "amount_minor": 300, "currency": "USD"}
    )
    assert "status_version" in created and created["status_version"] is None
    queried = client.merchant_payment(created["order_no"])
    assert isinstance(queried["status_version"], int)
    sandbox.control(
        "POST", f"/merchant-payments/{created['order_no']}/checkout/pay", {"payment_no": CHANNEL_CARD_USD}
    )
    paid = client.merchant_payment(created["order_no"])
    assert paid["status_version"] > queried["status_version"]
    # A payment as created still passes the expectation check (the absent version is fine).
    storefront.check_expectation(
        created, {"external_reference": reference, "amount_minor": 300, "currency": "USD", "test_mode": False}
    )


def test_requests_stay_frozen_and_replaceable():
    request = storefront.CreateMerchantPayment(external_reference="r", amount_minor=1, currency="USD")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.idempotency_key = "x"  # type: ignore[misc]
    moved = dataclasses.replace(request, amount_minor=2)
    assert moved.idempotency_key == request.idempotency_key
    assert storefront.generate_idempotency_key() != storefront.generate_idempotency_key()
