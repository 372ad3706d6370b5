"""Error mapping: every failure becomes the exception class of its result, with the service's
status, code, description, field and Retry-After kept."""

from __future__ import annotations

import threading
import uuid
from ctypes import byref, c_void_p

import pytest
import storefront
from storefront import _lib
from storefront._call import call_json
from sandbox_harness import CHANNEL_CARD_USD, CHANNEL_PLATFORM_COIN, MERCHANT_NO, PRODUCT_BEANS, Sandbox


def test_unknown_payment_is_a_404_api_error(client):
    """Contract (Errors): branch on HTTP status and `error`."""
    with pytest.raises(storefront.ApiError) as error:
        client.merchant_payment("MP-DOES-NOT-EXIST")
    assert (error.value.http_status, error.value.error) == (404, "payment_not_found")


def test_client_side_validation_names_the_field_and_sends_nothing(client):
    """Contract (limits): description at most 500 bytes; checked before sending."""
    with pytest.raises(storefront.ValidationError) as error:
        client.create_merchant_payment(
            {
                "external_reference": "py-too-long",
                "amount_minor": 100,
                "currency": "USD",
                "description": "x" * 501,
            }
        )
    assert error.value.field == "description"
    assert error.value.http_status is None
    with pytest.raises(TypeError):
        client.create_merchant_payment(
            {"external_reference": "py-float", "amount_minor": 12.5, "currency": "USD"}
        )


def test_rate_limit_keeps_retry_after(sandbox):
    """Contract: 429 `rate_limited` carries Retry-After; a wait longer than the SDK's cap is
    handed to the caller with the value kept."""
    config = sandbox.config(retry={"max_attempts": 2, "max_retry_after_ms": 1000})
    with storefront.Client(config) as limited:
        sandbox.fault(
            "GET",
            "/openapi/v1/merchant",
            status=429,
            body={"error": "rate_limited"},
            headers={"Retry-After": "7"},
            times=5,
        )
        with pytest.raises(storefront.ApiError) as error:
            limited.merchant_profile()
        sandbox.clear_faults()
        assert (error.value.http_status, error.value.error) == (429, "rate_limited")
        assert error.value.retry_after_ms == 7000
        assert limited.merchant_profile()["merchant_no"] == MERCHANT_NO


def test_catalog_order_with_unclear_outcome_is_not_resent(sandbox, alice):
    """Contract: repeated order POSTs may create different orders; a 5xx after sending is an
    unknown outcome, reported and not re-sent."""

    def order_posts() -> int:
        return sum(
            1
            for r in sandbox.control("GET", "/requests")
            if r["method"] == "POST" and r["path"].endswith("/openapi/v1/orders")
        )

    before = order_posts()
    sandbox.fault("POST", "/openapi/v1/orders", status=500, body={"error": "server_error"}, times=3)
    with pytest.raises(storefront.OutcomeUnknownError) as error:
        alice.create_order(PRODUCT_BEANS, 1, CHANNEL_PLATFORM_COIN)
    assert error.value.http_status == 500
    assert order_posts() == before + 1
    # Issue 12 item 3: no order number exists; the request and followable advice are carried.
    assert error.value.lookup == {
        "gd_no": PRODUCT_BEANS,
        "quantity": 1,
        "payment_no": CHANNEL_PLATFORM_COIN,
    }
    assert error.value.advice


def test_provider_result_pending_on_payment_start_carries_the_order_number(sandbox, alice):
    """Issue 12 item 3: a 202 on payment start names the order to check the payment with."""
    order_no = alice.create_order(PRODUCT_BEANS, 1, CHANNEL_CARD_USD)
    sandbox.fault(
        "POST",
        f"/openapi/v1/orders/{order_no}/payment",
        status=202,
        body={"error": "provider_result_pending"},
    )
    with pytest.raises(storefront.ProviderResultPendingError) as error:
        alice.start_payment(order_no, CHANNEL_CARD_USD)
    assert error.value.lookup == {"order_no": order_no, "payment_no": CHANNEL_CARD_USD}
    assert error.value.advice
    assert alice.payment_status(error.value.lookup["order_no"]) == 0


def test_provider_result_pending_is_its_own_outcome(sandbox, client):
    """Contract: HTTP 202 `provider_result_pending` is not success."""
    sandbox.fault(
        "POST",
        "/openapi/v1/merchant-payments",
        status=202,
        body={"error": "provider_result_pending"},
    )
    with pytest.raises(storefront.ProviderResultPendingError) as error:
        client.create_merchant_payment(
            {"external_reference": f"py-202-{uuid.uuid4()}", "amount_minor": 100, "currency": "USD"}
        )
    assert error.value.http_status == 202
    assert error.value.lookup["external_reference"].startswith("py-202-")
    assert error.value.lookup["idempotency_key"]


def test_plain_http_to_a_remote_host_is_refused(sandbox):
    """Contract: HTTPS only; plain HTTP only for loopback, explicitly enabled."""
    with pytest.raises(storefront.ConfigError):
        storefront.Client(sandbox.config(base_url="http://api.example.com/api"))
    with pytest.raises(storefront.ConfigError):
        storefront.Client(sandbox.config(allow_insecure_loopback=False))


def test_boundary_errors_have_their_own_classes_and_the_client_survives(client):
    """ABI rule: NULL, invalid UTF-8, invalid JSON and oversized input each give their own
    result; the client works afterwards."""
    handle = client._handle.acquire()
    try:
        cases = [
            ((None,), storefront.NullArgumentError),
            ((b"\xff\xfe",), storefront.InvalidUtf8Error),
            ((b'{"external_reference": ',), storefront.InvalidJsonError),
            ((b"[1, 2]",), storefront.InvalidArgumentError),
            ((b" " * (_lib.lib().sf_max_input_bytes() + 1),), storefront.InputTooLargeError),
        ]
        for args, expected in cases:
            with pytest.raises(expected) as error:
                call_json("sf_merchant_payment_create", handle, *args)
            assert type(error.value) is expected
            assert error.value.field == "request_json"
        # A NULL client handle is refused too.
        out, err = c_void_p(), c_void_p()
        assert _lib.lib().sf_channels_list(None, byref(out), byref(err)) == 1
        assert out.value is None
        _lib.lib().sf_error_free(err)
    finally:
        client._handle.release()
    assert client.merchant_profile()["merchant_no"] == MERCHANT_NO


def test_nul_characters_are_refused_before_reaching_c(client):
    """C would see only the text before a NUL: such an argument is refused, not truncated."""
    with pytest.raises(ValueError):
        client.merchant_payment("MP-1\0MP-2")


def test_one_client_serves_several_threads(client):
    """ABI rule: calls on one handle are safe from several threads at once."""
    results, errors = [], []

    def work() -> None:
        try:
            for _ in range(5):
                results.append(client.merchant_profile()["merchant_no"])
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == [MERCHANT_NO] * 20


def test_closed_client_refuses_calls(sandbox):
    closed = storefront.Client(sandbox.config())
    closed.close()
    closed.close()
    with pytest.raises(ValueError):
        closed.merchant_profile()


def test_an_expired_user_token_is_a_401_for_the_host_to_renew():
    """Contract (Authentication): 401 `invalid_token` means obtain a valid token. A user token
    given as a value is not renewed by the SDK: the host gets the 401 and asks its user again.
    The sandbox's clock runs the expiry; its own sandbox keeps other tests' clocks untouched."""
    own = Sandbox()
    try:
        with storefront.Client(own.config()) as client:
            minted = own.control(
                "POST", "/users/alice/tokens", {"client_id": "sbx_merchant_client", "expires_in": 60}
            )
            alice = client.user(minted["access_token"])
            order_no = alice.create_order(PRODUCT_BEANS, 1, CHANNEL_PLATFORM_COIN)
            own.control("POST", "/clock/advance", {"seconds": 120})
            with pytest.raises(storefront.ApiError) as error:
                alice.order(order_no)
            assert (error.value.http_status, error.value.error) == (401, "invalid_token")
            renewed = client.user(own.user_token())
            assert renewed.order(order_no)["order_no"] == order_no
    finally:
        own.stop()
