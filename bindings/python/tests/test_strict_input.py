"""Strict input: typed request and configuration objects, unknown keys of plain dicts refused
with ValidationError naming the key before anything reaches C, and integers range-checked
against the width the C side reads them with (never wrapped)."""

from __future__ import annotations

import dataclasses
import json
import uuid

import pytest
import storefront
from sandbox_harness import CHANNEL_PLATFORM_COIN, MERCHANT_NO, PRODUCT_BEANS

from test_webhook import BODY, NOW, SECRET, headers


def api_requests(sandbox) -> int:
    return len(sandbox.control("GET", "/requests"))


def test_misspelled_config_keys_are_named(sandbox):
    with pytest.raises(storefront.ValidationError) as top:
        storefront.Client(sandbox.config(atempt_timeout_ms=5000))
    assert top.value.field == "atempt_timeout_ms"
    with pytest.raises(storefront.ValidationError) as nested:
        storefront.Client(sandbox.config(retry={"max_attempt": 2}))
    assert nested.value.field == "retry.max_attempt"
    with pytest.raises(storefront.ValidationError) as persistent:
        storefront.Client.persistent(sandbox.config(client_secrett="x"))
    assert persistent.value.field == "client_secrett"


def test_misspelled_request_keys_are_named_and_nothing_is_sent(sandbox, client, alice):
    before = api_requests(sandbox)
    with pytest.raises(storefront.ValidationError) as created:
        client.create_merchant_payment(
            {
                "external_reference": "py-typo",
                "amount_minor": 100,
                "currency": "USD",
                "notifyUrl": "https://example.com/hook",
            }
        )
    assert created.value.field == "notifyUrl"
    with pytest.raises(storefront.ValidationError) as listed:
        client.list_merchant_payments({"external_refrence": "py-typo"})
    assert listed.value.field == "external_refrence"
    with pytest.raises(storefront.ValidationError) as paged:
        client.products(pag=2)
    assert paged.value.field == "pag"
    with pytest.raises(storefront.ValidationError) as ordered:
        alice.create_order(
            {"gd_no": PRODUCT_BEANS, "quantity": 1, "payment_no": CHANNEL_PLATFORM_COIN, "other_ipus": {}}
        )
    assert ordered.value.field == "other_ipus"
    with pytest.raises(storefront.ValidationError) as missing:
        client.create_merchant_payment({"external_reference": "py-typo", "currency": "USD"})
    assert missing.value.field == "amount_minor"
    assert api_requests(sandbox) == before


def test_typed_objects_refuse_unknown_fields_and_are_accepted_everywhere(sandbox):
    with pytest.raises(TypeError):
        storefront.CreateMerchantPayment(  # type: ignore[call-arg]
            external_reference="r", amount_minor=1, currency="USD", notifyUrl="https://x"
        )
    with pytest.raises(TypeError):
        storefront.RetryPolicy(max_attempt=2)  # type: ignore[call-arg]
    config = storefront.Config(
        **{k: v for k, v in sandbox.config().items()},
    )
    config = dataclasses.replace(config, retry=storefront.RetryPolicy(max_attempts=2), attempt_timeout_ms=10_000)
    assert "sbx_merchant_secret" not in repr(config)
    with storefront.Client(config) as typed:
        assert typed.merchant_profile()["merchant_no"] == MERCHANT_NO
        page = typed.products(storefront.ProductQuery(limit=5, gd_no=PRODUCT_BEANS))
        assert [p["gd_no"] for p in page["list"]] == [PRODUCT_BEANS]
        reference = f"py-typed-{uuid.uuid4()}"
        request = storefront.CreateMerchantPayment(
            external_reference=reference, amount_minor=1250, currency="USD"
        )
        created = typed.create_merchant_payment(request)
        assert created["amount_minor"] == 1250
        listed = typed.list_merchant_payments(storefront.ListMerchantPaymentsQuery(external_reference=reference))
        assert [p["order_no"] for p in listed] == [created["order_no"]]
        alice = typed.user(sandbox.user_token("alice"))
        order_no = alice.create_order(storefront.CreateOrder(PRODUCT_BEANS, 1, CHANNEL_PLATFORM_COIN))
        assert alice.order(order_no)["gd_no"] == PRODUCT_BEANS


def test_integers_are_range_checked_never_wrapped(client, alice):
    with pytest.raises(storefront.ValidationError) as stored:
        storefront.status_version_decision(2**63, 1)
    assert stored.value.field == "stored"
    with pytest.raises(storefront.ValidationError):
        storefront.status_version_decision(1, 2**64)
    with pytest.raises(ValueError):
        storefront.status_version_decision(1, -1)
    verifier = storefront.WebhookVerifier([SECRET])
    with pytest.raises(storefront.ValidationError) as now:
        verifier.verify_at(headers(), BODY, 2**64 + NOW)
    assert now.value.field == "now_unix"
    with pytest.raises(storefront.ValidationError):
        storefront.sign_webhook(SECRET, 2**63, BODY)
    with pytest.raises(storefront.ValidationError) as interval:
        alice.wait_for_payment("O-1", -1, 1000)
    assert interval.value.field == "interval_ms"
    with pytest.raises(storefront.ValidationError) as timeout:
        alice.wait_for_payment("O-1", 100, 2**64)
    assert timeout.value.field == "timeout_ms"
    with pytest.raises(storefront.ValidationError):
        client.notification_records("MP-1", 2**32)
    with pytest.raises(storefront.ValidationError) as limit:
        client.products(limit=2**32)
    assert limit.value.field == "limit"
    with pytest.raises(storefront.ValidationError) as amount:
        client.create_merchant_payment(
            {"external_reference": "py-wide", "amount_minor": 2**64 + 100, "currency": "USD"}
        )
    assert amount.value.field == "amount_minor"
    with pytest.raises(storefront.ValidationError) as quantity:
        alice.create_order(PRODUCT_BEANS, 2**32 + 1, CHANNEL_PLATFORM_COIN)
    assert quantity.value.field == "quantity"
    with pytest.raises(storefront.ValidationError) as attempts:
        storefront.Client({"base_url": "https://a.example/api", "token_endpoint": "https://a.example/t",
                           "client_id": "c", "retry": {"max_attempts": 2**32}})
    assert attempts.value.field == "retry.max_attempts"
    with pytest.raises(TypeError):
        alice.create_order(PRODUCT_BEANS, True, CHANNEL_PLATFORM_COIN)



def test_mypy_catches_a_misspelled_field(tmp_path, monkeypatch):
    """The typed objects make a typo a type error (skipped where mypy is not installed)."""
    api = pytest.importorskip("mypy.api")
    from pathlib import Path

    checked = tmp_path / "typo.py"
    checked.write_text(
        "import storefront\n"
        "storefront.CreateMerchantPayment(external_reference='r', amount_minor=1, currency='USD',"
        " notifyUrl='https://x')\n"
        "storefront.Config(base_url='a', token_endpoint='b', client_id='c', atempt_timeout_ms=1)\n"
        "storefront.RetryPolicy(max_attempt=1)\n"
    )
    monkeypatch.setenv("MYPYPATH", str(Path(storefront.__file__).resolve().parents[1]))
    out, _, status = api.run([str(checked), "--no-incremental", "--cache-dir=/dev/null"])
    assert status == 1, out
    for typo in ("notifyUrl", "atempt_timeout_ms", "max_attempt"):
        assert f'Unexpected keyword argument "{typo}"' in out, out


def test_the_library_refuses_unknown_keys_too(sandbox, client):
    """Bypassing the wrapper's own check, the C library names the same key (so the two agree
    on the field path)."""
    from storefront._call import call_handle, call_json, to_json

    with pytest.raises(storefront.ValidationError) as nested:
        call_handle("sf_client_new", to_json(sandbox.config(retry={"max_attempt": 2})))
    assert nested.value.field == "retry.max_attempt"
    handle = client._handle.acquire()
    try:
        with pytest.raises(storefront.ValidationError) as created:
            call_json(
                "sf_merchant_payment_create",
                handle,
                to_json({"external_reference": "r", "amount_minor": 1, "currency": "USD", "notifyUrl": "x"}),
            )
        assert created.value.field == "notifyUrl"
        with pytest.raises(storefront.ValidationError) as wide:
            call_json("sf_products_list", handle, None, to_json({"limit": 2**32}))
        assert wide.value.field == "limit"
    finally:
        client._handle.release()


def test_every_typed_field_is_known_to_the_library(sandbox, client):
    """The dataclasses cannot drift from the library: each of their fields, sent on its own to
    the C library, is never refused as an unknown key."""
    from storefront import inputs
    from storefront._call import call_handle, call_json, to_json

    def sample(kind, name):
        if name in ("scopes",):
            return ["openid"]
        if name == "retry":
            return {}
        if name == "other_ipu":
            return {}
        hint = str(kind.__dataclass_fields__[name].type)
        for word, value in (("bool", False), ("int", 1), ("str", "x")):
            if word in hint:
                return value
        raise AssertionError(hint)

    def unknown(error, key):
        return isinstance(error, storefront.ValidationError) and error.field == key

    base = {"base_url": sandbox.info["base_url"], "token_endpoint": sandbox.info["token_endpoint"], "client_id": "c"}
    checks = [
        (inputs.Config, lambda d: call_handle("sf_client_new", to_json({**base, **d}))),
        (inputs.RetryPolicy, lambda d: call_handle("sf_client_new", to_json({**base, "retry": d}))),
    ]
    handle = client._handle.acquire()
    try:
        checks += [
            (inputs.CreateMerchantPayment, lambda d: call_json("sf_merchant_payment_create", handle, to_json(d))),
            (inputs.ListMerchantPaymentsQuery, lambda d: call_json("sf_merchant_payments_list", handle, to_json(d))),
            (inputs.ProductQuery, lambda d: call_json("sf_products_list", handle, None, to_json(d))),
            (inputs.CreateOrder, lambda d: call_json("sf_order_create", handle, b"no-such-user-token", to_json(d))),
        ]
        for kind, send in checks:
            for name in kind.__dataclass_fields__:
                key = ("retry." + name) if kind is inputs.RetryPolicy else name
                try:
                    send({name: sample(kind, name)})
                except storefront.StorefrontError as error:
                    assert not unknown(error, key), f"{kind.__name__}.{name}: {error}"
    finally:
        client._handle.release()
