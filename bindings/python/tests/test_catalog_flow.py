"""Catalog flow through the Python wrapper against the standalone sandbox."""

from __future__ import annotations

import pytest
import storefront
from sandbox_harness import (
    CHANNEL_CARD_USD,
    CHANNEL_PLATFORM_COIN,
    ENABLED_PRODUCT_COUNT,
    MERCHANT_NO,
    PRODUCT_BEANS,
    PRODUCT_GIFT_CARD,
)


def test_profile_and_products_read_with_client_or_user_token(client, alice):
    """Contract (endpoint index): profile and products accept a user or a client token;
    products are paged with `total`, and iterating walks every page."""
    assert client.merchant_profile()["merchant_no"] == MERCHANT_NO
    assert alice.merchant_profile()["merchant_no"] == MERCHANT_NO
    page = client.products(limit=20)
    assert page["total"] == ENABLED_PRODUCT_COUNT and len(page["list"]) == 20
    numbers = [p["gd_no"] for p in alice.iter_products(limit=20)]
    assert len(numbers) == ENABLED_PRODUCT_COUNT == len(set(numbers))
    only = client.products(gd_no=PRODUCT_BEANS)["list"]
    assert [p["gd_no"] for p in only] == [PRODUCT_BEANS]
    assert isinstance(only[0]["actual_price"], int)  # eight-decimal fixed point, never float


def test_authenticate_reports_the_grant_without_the_token(client):
    """Contract (Authentication): the token response grants scopes with `expires_in`; the
    token itself never leaves the library."""
    granted = client.authenticate()
    assert "merchant_payments.create" in granted["scope"]
    assert isinstance(granted["expires_in"], int) and granted["expires_in"] > 0
    assert set(granted) == {"scope", "expires_in"}


def test_userinfo_needs_the_users_token(alice):
    """Contract: GET {userinfo_endpoint} with a user token returns a JSON object."""
    assert isinstance(alice.userinfo(), dict)


def test_platform_coin_order_paid_at_start_and_waited_for(sandbox, alice):
    """Contract (catalog orders): the platform coin pays during payment start; the redirect is
    absolute against the service origin; waiting stops at paid (1) and reads the order."""
    order_no = alice.create_order(PRODUCT_BEANS, 1, CHANNEL_PLATFORM_COIN)
    assert alice.order(order_no)["status"] == 0
    start = alice.start_payment(order_no, CHANNEL_PLATFORM_COIN)
    assert start["redirect"].startswith(sandbox.origin)
    assert isinstance(start["expire_time"], int)
    outcome = alice.wait_for_payment(order_no, interval_ms=50, timeout_ms=10_000)
    assert outcome["payment_status"] == 1
    assert outcome["order"]["order_no"] == order_no
    assert outcome["order"]["status"] in (1, 3)  # paid and processing, or completed
    assert alice.payment_status(order_no) == 1


def test_card_order_paid_later_is_seen_by_the_wait(sandbox, alice):
    """Contract: a payment start is not proof of payment (status stays 0 until the channel
    confirms); after the card trade completes, the wait sees 1."""
    order_no = alice.create_order(PRODUCT_BEANS, 1, CHANNEL_CARD_USD)
    start = alice.start_payment(order_no, CHANNEL_CARD_USD)
    assert alice.payment_status(order_no) == 0
    sandbox.control("POST", f"/catalog/trades/{start['trade_no']}/pay")
    assert alice.wait_for_payment(order_no, 50, 10_000)["payment_status"] == 1


def test_other_ipu_keys_come_from_the_configuration_not_labels(client, alice):
    """Contract (Product): `other_ipu` keys are the key part of `other_ipu_cnf`, never the
    label; required inputs are enforced before sending."""
    product = client.products(gd_no=PRODUCT_GIFT_CARD)["list"][0]
    extra = storefront.other_ipu(product, {"recipient_email": "bob@example.com"})
    assert extra == {"recipient_email": "bob@example.com"}
    with pytest.raises(storefront.ValidationError) as label:
        storefront.other_ipu(product, {"Recipient email": "bob@example.com"})
    assert label.value.field == "other_ipu.Recipient email"
    with pytest.raises(storefront.ValidationError):
        storefront.other_ipu(product, {})
    order_no = alice.create_order(PRODUCT_GIFT_CARD, 1, CHANNEL_PLATFORM_COIN, other_ipu=extra)
    assert alice.order(order_no)["gd_no"] == PRODUCT_GIFT_CARD


def test_wait_reports_still_pending_as_an_outcome(alice):
    """Contract: poll with an overall timeout; no final status within it is the outcome
    "still pending" (issue 12 item 3), not an exception."""
    order_no = alice.create_order(PRODUCT_BEANS, 1, CHANNEL_CARD_USD)
    outcome = alice.wait_for_payment(order_no, interval_ms=20, timeout_ms=200)
    assert outcome["outcome"] == "still_pending"
    assert outcome["last_status"] == 0
    assert outcome["last_poll_failed"] is False
    assert isinstance(outcome["waited_ms"], int) and outcome["waited_ms"] > 0
    assert "order" not in outcome
