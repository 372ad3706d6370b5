"""Webhook verification through the Python wrapper (no sandbox needed: the test signer signs
exactly like the service)."""

from __future__ import annotations

import json

import pytest
import storefront

SECRET = "whsec_0123456789abcdef0123456789abcdef"
NOW = 1_790_000_000
BODY = json.dumps(
    {
        "id": "EVT-1",
        "type": "merchant_payment.status_changed",
        "api_version": 1,
        "created_at": "2026-09-21T12:00:00Z",
        "data": {
            "order_no": "MP1",
            "external_reference": "R1",
            "payment_no": "ch_card_usd",
            "amount_minor": 1250,
            "currency": "USD",
            "currency_decimals": 2,
            "status": "paid",
            "status_version": 2,
            "test_mode": False,
            "expires_at": "2026-09-21T12:30:00Z",
            "event_id": "PE-1",
            "provider_trade_no": "T1",
            "occurred_at": "2026-09-21T20:00:00+08:00",
        },
    },
    indent=2,  # the raw bytes are verified as sent, whatever their formatting
).encode()


def headers(body: bytes = BODY, timestamp: int = NOW, event_id: str = "EVT-1", secret: str = SECRET):
    return {
        "X-Service-Event-ID": event_id,
        "X-Service-Timestamp": str(timestamp),
        "X-Service-Signature": storefront.sign_webhook(secret, timestamp, body),
    }


@pytest.fixture
def verifier():
    created = storefront.WebhookVerifier([SECRET])
    yield created
    created.close()


def test_valid_notification_verifies_over_the_raw_body(verifier):
    """Contract: HMAC-SHA256 over the timestamp, a dot and the raw body; typed result."""
    notification = verifier.verify_at(headers(), BODY, NOW)
    assert notification["id"] == "EVT-1"
    assert notification["data"]["amount_minor"] == 1250
    assert notification["data"]["event_id"] == "PE-1"


def test_header_names_are_matched_case_insensitively(verifier):
    lowered = {k.lower(): v for k, v in headers().items()}
    assert verifier.verify_at(lowered, BODY, NOW)["id"] == "EVT-1"


def test_any_configured_secret_verifies_during_rotation():
    """Contract: the receiver keeps old secrets until old notifications finish."""
    rotating = storefront.WebhookVerifier(["whsec_new_secret_0000000000000000000", SECRET])
    assert rotating.verify_at(headers(), BODY, NOW)["id"] == "EVT-1"


def test_tolerance_is_five_minutes_in_both_directions(verifier):
    """Contract: reject timestamps that differ from now by more than 5 minutes."""
    assert verifier.verify_at(headers(), BODY, NOW + 300)
    assert verifier.verify_at(headers(), BODY, NOW - 300)
    with pytest.raises(storefront.WebhookTimestampError) as old:
        verifier.verify_at(headers(), BODY, NOW + 301)
    assert old.value.result_name == "webhook_timestamp_too_old"
    with pytest.raises(storefront.WebhookTimestampError) as future:
        verifier.verify_at(headers(), BODY, NOW - 301)
    assert future.value.result_name == "webhook_timestamp_in_future"


def test_each_malformed_input_gets_its_own_error(verifier):
    """Contract: compare in constant time, event id equals body id; distinct failures."""
    tampered = BODY.replace(b"1250", b"1251")
    with pytest.raises(storefront.WebhookSignatureError) as mismatch:
        verifier.verify_at(headers(), tampered, NOW)
    assert mismatch.value.result_name == "webhook_signature_mismatch"
    with pytest.raises(storefront.WebhookSignatureError) as wrong_secret:
        verifier.verify_at(headers(secret="whsec_someone_else_000000000000000000"), BODY, NOW)
    assert wrong_secret.value.result_name == "webhook_signature_mismatch"
    with pytest.raises(storefront.WebhookSignatureError) as malformed:
        verifier.verify_at({**headers(), "X-Service-Signature": "sha1=abc"}, BODY, NOW)
    assert malformed.value.result_name == "webhook_malformed_signature"
    missing = headers()
    del missing["X-Service-Timestamp"]
    with pytest.raises(storefront.WebhookHeaderError) as absent:
        verifier.verify_at(missing, BODY, NOW)
    assert absent.value.field == "X-Service-Timestamp"
    with pytest.raises(storefront.WebhookEventIdError):
        verifier.verify_at(headers(event_id="EVT-2"), BODY, NOW)
    with pytest.raises(storefront.WebhookTimestampError) as not_seconds:
        verifier.verify_at({**headers(), "X-Service-Timestamp": "soon"}, BODY, NOW)
    assert not_seconds.value.result_name == "webhook_malformed_timestamp"
    with pytest.raises(storefront.WebhookBodyError):
        verifier.verify_at(headers(body=b"[]"), b"[]", NOW)
    with pytest.raises(storefront.WebhookBodyError):
        verifier.verify_at(headers(), BODY.decode(), NOW)


def test_a_verifier_needs_a_secret():
    with pytest.raises(storefront.WebhookConfigError):
        storefront.WebhookVerifier([""])


def test_lower_status_version_never_overwrites_higher():
    """Contract: a lower version must not overwrite a higher one."""
    assert storefront.status_version_decision(None, 0) == "apply"
    assert storefront.status_version_decision(2, 3) == "apply"
    assert storefront.status_version_decision(3, 3) == "duplicate"
    assert storefront.status_version_decision(3, 2) == "stale"


def test_expectation_names_the_first_differing_field():
    """Contract: after verifying, check reference, amount, currency and test_mode."""
    data = json.loads(BODY)["data"]
    expected = {"external_reference": "R1", "amount_minor": 1250, "currency": "USD", "test_mode": False}
    storefront.check_expectation(data, expected)
    for field, value in [("external_reference", "R2"), ("currency", "EUR"), ("test_mode", True)]:
        with pytest.raises(storefront.ExpectationMismatchError) as error:
            storefront.check_expectation(data, {**expected, field: value})
        assert error.value.field == field


def test_one_verifier_serves_several_threads_and_closes_after_them():
    """ABI rule: handles are usable from several threads; closing waits for calls in flight."""
    import threading

    shared = storefront.WebhookVerifier([SECRET])
    seen, errors = [], []

    def work() -> None:
        try:
            for _ in range(50):
                seen.append(shared.verify_at(headers(), BODY, NOW)["id"])
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared.close()
    assert not errors and seen == ["EVT-1"] * 200
    with pytest.raises(ValueError):
        shared.verify_at(headers(), BODY, NOW)
