"""Issue 18 item 3: the variables the sandbox prints (its ready file's ``env``) configure a
client through ``Config.from_env`` / ``Client.from_env`` (the core's ``Config::from_env``), which
creates and reads a merchant payment over real HTTP."""

from __future__ import annotations

import uuid

import pytest

import storefront
from sandbox_harness import MERCHANT_CLIENT_ID, MERCHANT_CLIENT_SECRET, Sandbox

NAMES = [
    "STOREFRONT_BASE_URL",
    "STOREFRONT_TOKEN_ENDPOINT",
    "STOREFRONT_USERINFO_ENDPOINT",
    "STOREFRONT_CLIENT_ID",
    "STOREFRONT_CLIENT_SECRET",
    "STOREFRONT_SCOPES",
    "STOREFRONT_ALLOW_INSECURE_LOOPBACK",
    "STOREFRONT_ROOT_CA_PEM_FILE",
    "STOREFRONT_SHARED_STATE",
]


@pytest.fixture
def sandbox_env(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> dict:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    env = sandbox.info["env"]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_the_sandbox_variables_configure_a_working_client(sandbox_env: dict) -> None:
    config = storefront.Config.from_env()
    assert config.client_id == MERCHANT_CLIENT_ID
    assert config.allow_insecure_loopback is True
    assert config.base_url == sandbox_env["STOREFRONT_BASE_URL"]
    assert MERCHANT_CLIENT_SECRET not in repr(config)
    with storefront.Client.from_env() as client:
        reference = f"py-from-env-{uuid.uuid4()}"
        created = client.create_merchant_payment(
            {"external_reference": reference, "amount_minor": 1250, "currency": "USD"}
        )
        read = client.merchant_payment(created["order_no"])
        assert read["external_reference"] == reference
        assert read["amount_minor"] == 1250


def test_a_missing_or_bad_variable_is_a_config_error_naming_it(
    sandbox_env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STOREFRONT_ALLOW_INSECURE_LOOPBACK")
    with pytest.raises(storefront.ConfigError) as plain_http:
        storefront.Config.from_env()
    assert "STOREFRONT_ALLOW_INSECURE_LOOPBACK=1" in str(plain_http.value)
    assert MERCHANT_CLIENT_SECRET not in str(plain_http.value)
    monkeypatch.delenv("STOREFRONT_CLIENT_SECRET")
    with pytest.raises(storefront.ConfigError, match="STOREFRONT_CLIENT_SECRET"):
        storefront.Client.from_env()
