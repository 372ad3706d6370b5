"""Fixtures: the C library (STOREFRONT_LIB, defaulting to the workspace's debug build) and one
standalone sandbox for the session."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from sandbox_harness import REPO, Sandbox  # noqa: E402

os.environ.setdefault("STOREFRONT_LIB", str(REPO / "target" / "debug" / "libstorefront.so"))

import storefront  # noqa: E402


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    running = Sandbox()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[storefront.Client]:
    with storefront.Client(sandbox.config()) as created:
        yield created
    sandbox.clear_faults()


@pytest.fixture
def alice(sandbox: Sandbox, client: storefront.Client) -> storefront.UserSession:
    return client.user(sandbox.user_token("alice"))


@pytest.fixture
def redis_server() -> Iterator["servers.RedisServer"]:
    """A redis-server on 127.0.0.1 and a free port, in a temp dir; stopped by pid afterwards
    (also when the test fails)."""
    import servers

    try:
        running = servers.RedisServer()
    except servers.ServerMissing as missing:
        pytest.fail(str(missing))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def postgres_server() -> Iterator["servers.PostgresServer"]:
    """A PostgreSQL cluster on 127.0.0.1 and a free port, in a temp dir (trust authentication,
    user postgres); stopped with pg_ctl stop -m fast afterwards (also when the test fails)."""
    import servers

    try:
        running = servers.PostgresServer()
    except servers.ServerMissing as missing:
        pytest.fail(str(missing))
    try:
        yield running
    finally:
        running.stop()
