"""pytest fixtures for tests against the storefront sandbox (registered through the
``pytest11`` entry point when ``storefront-sandbox`` is installed)::

    def test_checkout(storefront_sandbox_config):
        with storefront.Client(storefront_sandbox_config) as client:
            ...
"""

from __future__ import annotations

from typing import Any, Dict, Iterator

import pytest

from storefront_sandbox import Sandbox


@pytest.fixture(scope="session")
def storefront_sandbox() -> Iterator[Sandbox]:
    """One sandbox for the test session, stopped at its end."""
    with Sandbox.start() as sandbox:
        yield sandbox


@pytest.fixture
def storefront_sandbox_config(storefront_sandbox: Sandbox) -> Dict[str, Any]:
    """The seeded merchant client's configuration for ``storefront.Client``."""
    return storefront_sandbox.config()
