"""WebhookVerifier.verify through sf_webhook_verify_body (the library checks signature and
envelope over the caller's bytes; Python decodes them once): the same result as the decoding
export, and the documented exception for every failure, including a signed ``data`` that is not
a valid payment snapshot."""

from __future__ import annotations

import json

import pytest
import storefront

from test_webhook import BODY, NOW, SECRET, headers


@pytest.fixture
def verifier():
    created = storefront.WebhookVerifier([SECRET])
    assert created._verify_body_at is not None, "the library lacks sf_webhook_verify_body_at"
    yield created
    created.close()


def envelope(**data_changes) -> bytes:
    """BODY with ``data`` fields replaced (a value of ``...`` removes the field)."""
    notification = json.loads(BODY)
    for name, value in data_changes.items():
        if value is ...:
            notification["data"].pop(name, None)
        else:
            notification["data"][name] = value
    return json.dumps(notification).encode()


def signed(verifier, body: bytes, **header_changes):
    return verifier.verify_at(headers(body=body, **header_changes), body, NOW)


def test_same_notification_as_the_decoding_export(verifier):
    """The one-pass result equals what sf_webhook_verify_at (decode + re-encode) returned."""
    decoded = verifier._call("sf_webhook_verify_at", headers(), BODY, NOW)
    assert verifier.verify_at(headers(), BODY, NOW) == decoded
    sparse = envelope(event_id=..., provider_trade_no=..., occurred_at=..., payment_no=...)
    one_pass = signed(verifier, sparse)
    assert one_pass == verifier._call("sf_webhook_verify_at", headers(body=sparse), sparse, NOW)
    assert one_pass["data"]["payment_no"] == "" and one_pass["data"]["event_id"] is None
    assert type(one_pass) is type(decoded) and type(one_pass["data"]) is type(decoded["data"])
    assert one_pass.data.currency == "USD"  # attribute access, as every result


@pytest.mark.parametrize(
    "change, result_name, error_class, field",
    [
        ({"X-Service-Event-ID": None}, "webhook_missing_header", storefront.WebhookHeaderError, "X-Service-Event-ID"),
        ({"X-Service-Timestamp": None}, "webhook_missing_header", storefront.WebhookHeaderError, "X-Service-Timestamp"),
        ({"X-Service-Signature": None}, "webhook_missing_header", storefront.WebhookHeaderError, "X-Service-Signature"),
        ({"X-Service-Timestamp": "17900000OO"}, "webhook_malformed_timestamp", storefront.WebhookTimestampError, None),
        ({"X-Service-Timestamp": str(NOW - 301)}, "webhook_timestamp_too_old", storefront.WebhookTimestampError, None),
        ({"X-Service-Timestamp": str(NOW + 301)}, "webhook_timestamp_in_future", storefront.WebhookTimestampError, None),
        ({"X-Service-Signature": "sha256=" + "A" * 64}, "webhook_malformed_signature", storefront.WebhookSignatureError, None),
        ({"X-Service-Signature": "sha256=" + "a" * 64}, "webhook_signature_mismatch", storefront.WebhookSignatureError, None),
        ({"X-Service-Event-ID": "EVT-2"}, "webhook_event_id_mismatch", storefront.WebhookEventIdError, None),
    ],
)
def test_every_header_failure_raises_its_exception(verifier, change, result_name, error_class, field):
    given = {**headers(), **change}
    given = {name: value for name, value in given.items() if value is not None}
    with pytest.raises(error_class) as raised:
        verifier.verify_at(given, BODY, NOW)
    assert raised.value.result_name == result_name
    if field is not None:
        assert raised.value.field == field


def test_tampered_and_reserialized_bodies_fail_the_signature(verifier):
    for body in (BODY.replace(b"1250", b"1251"), json.dumps(json.loads(BODY)).encode(), BODY[:-1], b""):
        with pytest.raises(storefront.WebhookSignatureError) as raised:
            verifier.verify_at(headers(), body, NOW)
        assert raised.value.result_name == "webhook_signature_mismatch"


@pytest.mark.parametrize(
    "body, result_name",
    [
        (b"not json", "webhook_invalid_body"),
        (b"[]", "webhook_invalid_body"),
        (b'{"id":"EVT-1"}', "webhook_invalid_body"),
        (BODY.replace(b"2026-09-21T12:00:00Z", b"yesterday"), "webhook_invalid_body"),
        (BODY.replace(b"status_changed", b"created"), "webhook_unsupported_event_type"),
        (BODY.replace(b'"api_version": 1', b'"api_version": 2'), "webhook_unsupported_api_version"),
    ],
)
def test_signed_bodies_that_are_not_notifications_raise_body_errors(verifier, body, result_name):
    with pytest.raises(storefront.WebhookBodyError) as raised:
        signed(verifier, body)
    assert raised.value.result_name == result_name


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"currency_decimals": 4294967295}, "currency_decimals"),
        ({"currency_decimals": 19}, "currency_decimals"),
        ({"currency_decimals": -1}, "currency_decimals"),
        ({"amount_minor": "1250"}, "amount_minor"),
        ({"amount_minor": 0}, "amount_minor"),
        ({"amount_minor": 9007199254740992}, "amount_minor"),
        ({"amount_minor": True}, "amount_minor"),
        ({"amount_minor": ...}, "amount_minor"),
        ({"status_version": -1}, "status_version"),
        ({"status_version": 18446744073709551616}, "status_version"),
        ({"test_mode": "false"}, "test_mode"),
        ({"order_no": ...}, "order_no"),
        ({"external_reference": 7}, "external_reference"),
        ({"currency": None}, "currency"),
        ({"status": ["paid"]}, "status"),
        ({"expires_at": "tomorrow"}, "expires_at"),
        ({"expires_at": "2026-13-21T12:30:00Z"}, "expires_at"),
        ({"payment_no": None}, "payment_no"),
        ({"event_id": 12}, "event_id"),
        ({"provider_trade_no": {"a": 1}}, "provider_trade_no"),
        ({"occurred_at": "2026-09-21 20:00"}, "occurred_at"),
    ],
)
def test_signed_data_that_is_not_a_snapshot_raises_a_body_error(verifier, changes, field):
    """What the library's typed decoding refused (sf_webhook_verify) is refused here too, with
    WebhookBodyError naming the field."""
    body = envelope(**changes)
    with pytest.raises(storefront.WebhookBodyError) as raised:
        signed(verifier, body)
    assert raised.value.result_name == "webhook_invalid_body"
    assert f"data.{field}" in raised.value.message
    with pytest.raises(storefront.WebhookBodyError):  # the decoding export agrees
        verifier._call("sf_webhook_verify_at", headers(body=body), body, NOW)


def test_data_that_is_not_an_object_raises_a_body_error(verifier):
    for data in ([], "x", None, 1):
        notification = json.loads(BODY)
        notification["data"] = data
        body = json.dumps(notification).encode()
        with pytest.raises(storefront.WebhookBodyError):
            signed(verifier, body)


def test_fractions_stay_exact(verifier):
    """A number with a fraction in an unknown field decodes as Decimal, never float."""
    notification = json.loads(BODY)
    notification["data"]["rate"] = 0.1
    body = json.dumps(notification).encode()
    rate = signed(verifier, body)["data"]["rate"]
    assert type(rate).__name__ == "Decimal" and str(rate) == "0.1"


def test_oversized_body_is_a_body_error(verifier):
    limit = storefront._lib.lib().sf_max_input_bytes()
    with pytest.raises(storefront.WebhookBodyError) as raised:
        verifier.verify_at(headers(), b"x" * (limit + 1), NOW)
    assert raised.value.result_name == "webhook_body_too_large"
