"""Issue 12 item 3 through the Python wrapper: the configuration has no defaults of its own
(every optional field is None, so the core's defaults of the README table apply), the
connection timeout is settable and strictly checked."""

from __future__ import annotations

import dataclasses

import pytest
import storefront
from sandbox_harness import MERCHANT_NO


def test_config_has_no_python_defaults_of_its_own():
    """Every optional field left out is None: the core's default applies (README "Defaults")."""
    config = storefront.Config(base_url="https://a.example/api", token_endpoint="https://a.example/t", client_id="c")
    required = {"base_url", "token_endpoint", "client_id"}
    for f in dataclasses.fields(config):
        if f.name not in required:
            assert getattr(config, f.name) is None, f.name


def test_connect_timeout_is_settable_and_checked(sandbox):
    with storefront.Client(sandbox.config(connect_timeout_ms=2000)) as client:
        assert client.merchant_profile()["merchant_no"] == MERCHANT_NO
    typed = storefront.Config(**sandbox.config(), connect_timeout_ms=1500)
    with storefront.Client(typed) as client:
        assert client.merchant_profile()["merchant_no"] == MERCHANT_NO
    with pytest.raises(storefront.InvalidArgumentError) as refused:
        storefront.Client(sandbox.config(connect_timeout_ms=-1))
    assert refused.value.field == "connect_timeout_ms"
    with pytest.raises(storefront.ConfigError):
        storefront.Client(sandbox.config(connect_timeout_ms=0))
