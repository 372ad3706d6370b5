"""HTTPS through the C ABI: only the given roots are trusted when a CA is configured."""

from __future__ import annotations

from typing import Iterator

import pytest
import storefront
from sandbox_harness import MERCHANT_NO, Sandbox


@pytest.fixture(scope="module")
def tls_sandbox() -> Iterator[Sandbox]:
    running = Sandbox(tls=True)
    try:
        yield running
    finally:
        running.stop()


def test_https_with_the_sandbox_ca_works(tls_sandbox):
    """Config: an extra root CA (PEM) is trusted for the service's certificate; HTTPS needs no
    loopback exception."""
    config = tls_sandbox.config(root_ca_pem=tls_sandbox.ca_pem, allow_insecure_loopback=False)
    assert config["base_url"].startswith("https://")
    with storefront.Client(config) as client:
        assert client.merchant_profile()["merchant_no"] == MERCHANT_NO


def test_an_untrusted_certificate_is_a_tls_error(tls_sandbox):
    """Transport errors are typed: a certificate no trusted root vouches for is a TLS failure,
    not a retryable connection error."""
    other_ca = Sandbox(tls=True)
    try:
        config = tls_sandbox.config(root_ca_pem=other_ca.ca_pem, allow_insecure_loopback=False)
    finally:
        other_ca.stop()
    with storefront.Client(config) as client:
        with pytest.raises(storefront.TlsError) as error:
            client.merchant_profile()
    assert error.value.result_name == "tls"
