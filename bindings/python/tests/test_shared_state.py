"""The shared client state (``Config.shared_state``) from Python, under the process model of
gunicorn, uWSGI and Celery: worker processes forked from one parent, each building its own
``Client`` after the fork from one configuration, sharing nothing but the store's URL.

The contract counts limits per client ("60 merchant-payment creates per client per minute"),
across every process of the shop; ``Retry-After`` on a 429 applies to the client; the
client-credentials token is "kept only on the merchant server" with its "lifetime managed by
``expires_in``". The sandbox runs its per-client windows over 5 s (``--rate-limit-window 5``)
and the SDK is given the same window, so a minute's pacing shows in seconds. Every forked
worker runs under a hard timeout (a hung worker is killed and the test fails).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional
from urllib.parse import urlparse

import pytest

import storefront
from sandbox_harness import Sandbox

HERE = Path(__file__).resolve().parent
WINDOW_SECONDS = 5
#: A worker (or a group parent) still running after this long is killed and the test fails.
WORKER_TIMEOUT = float(os.environ.get("SF_TEST_CHILD_TIMEOUT", "45"))


# -- the workers ------------------------------------------------------------------------------


def _log_to(path: str) -> None:
    """Sends the library's events (down to TRACE) to ``path``, one line each with every field,
    so a test can search the worker's whole log."""
    logger = logging.getLogger(f"storefront.worker.{os.getpid()}")
    logger.propagate = False
    handler = logging.FileHandler(path)

    class Everything(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            fields = getattr(record, "storefront", {})
            return f"{record.levelname} {record.getMessage()} {json.dumps(fields, default=str)}"

    handler.setFormatter(Everything())
    logger.addHandler(handler)
    storefront.enable_logging(logger, level=5)


def _creates(config: Dict[str, Any], count: int, tag: str, log_path: Optional[str]) -> Dict[str, Any]:
    """One worker's life: the Client is built here, after the fork; ``count`` creates at once
    on threads. Returns how many succeeded and the failures."""
    if log_path:
        _log_to(log_path)
    with storefront.Client(config) as client:

        def create(number: int) -> Optional[str]:
            try:
                client.create_merchant_payment(
                    storefront.CreateMerchantPayment(
                        external_reference=f"{tag}-{os.getpid()}-{number}",
                        amount_minor=100,
                        currency="USD",
                    )
                )
                return None
            except Exception as error:  # reported to the parent
                return f"{type(error).__name__}: {error}"

        with ThreadPoolExecutor(max_workers=count) as pool:
            outcomes = list(pool.map(create, range(count)))
    if log_path:
        storefront.disable_logging()
    return {"ok": outcomes.count(None), "errors": [o for o in outcomes if o is not None]}


def fork(work: Callable[[], Any]) -> Dict[str, int]:
    """Forks a worker the way gunicorn does (``os.fork()``) running ``work``; its JSON-able
    answer (or error) comes back through a pipe. Returns ``{"pid", "fd"}`` for :func:`collect`."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns into the caller
        code = 1
        try:
            os.close(read_end)
            try:
                answer = {"ok": work()}
                code = 0
            except BaseException as error:
                answer = {"error": f"{type(error).__name__}: {error}"}
            data = json.dumps(answer).encode()
            while data:
                data = data[os.write(write_end, data):]
        finally:
            os._exit(code)
    os.close(write_end)
    return {"pid": pid, "fd": read_end}


def collect(worker: Dict[str, int], timeout: float = WORKER_TIMEOUT) -> Any:
    """The worker's answer; raises when it failed, crashed or hung (it is then killed)."""
    chunks = []
    deadline = time.monotonic() + timeout
    os.set_blocking(worker["fd"], False)
    try:
        while True:
            try:
                chunk = os.read(worker["fd"], 65536)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                break
            if chunk:
                chunks.append(chunk)
                continue
            if time.monotonic() > deadline:
                os.kill(worker["pid"], signal.SIGKILL)
                raise RuntimeError(f"worker {worker['pid']} hung for {timeout} s")
            time.sleep(0.02)
    finally:
        os.close(worker["fd"])
        os.waitpid(worker["pid"], 0)
    text = b"".join(chunks).decode()
    if not text:
        raise RuntimeError(f"worker {worker['pid']} died without an answer")
    answer = json.loads(text)
    if "error" in answer:
        raise RuntimeError(f"in worker {worker['pid']}: {answer['error']}")
    return answer["ok"]


def fork_workers(
    config: Dict[str, Any], workers: int, per_worker: int, tag: str, log_dir: Optional[str] = None
) -> List[Dict[str, Any]]:
    """``workers`` processes forked from this one, each building its Client after the fork
    from the same ``config`` and making ``per_worker`` creates at once; their reports."""
    started = []
    for index in range(workers):
        log_path = os.path.join(log_dir, f"worker-{tag}-{index}.log") if log_dir else None
        started.append(
            fork(lambda log_path=log_path: _creates(config, per_worker, tag, log_path))
        )
    reports = []
    failures = []
    for worker in started:
        try:
            reports.append(collect(worker))
        except RuntimeError as error:
            failures.append(str(error))
    if failures:
        raise RuntimeError("; ".join(failures))
    return reports


def group_main() -> None:
    """A separate parent process (``python -c``) that forks its own workers: reads
    ``{"config", "workers", "per_worker", "tag"}`` from its argument, prints the reports as
    JSON."""
    spec = json.loads(sys.argv[1])
    reports = fork_workers(spec["config"], spec["workers"], spec["per_worker"], spec["tag"])
    print(json.dumps(reports))


def run_groups(config: Dict[str, Any], groups: int, workers: int, per_worker: int, tag: str) -> List[Dict[str, Any]]:
    """``groups`` unrelated parent processes started at once, each forking ``workers``."""
    code = (
        "import sys; sys.path[:0] = [{tests!r}, {package!r}]; "
        "import test_shared_state; test_shared_state.group_main()"
    ).format(tests=str(HERE), package=str(HERE.parent))
    spec = json.dumps({"config": config, "workers": workers, "per_worker": per_worker, "tag": tag})
    parents = []
    for _ in range(groups):
        parent = subprocess.Popen(
            [sys.executable, "-c", code, spec],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        parents.append(parent)
    reports: List[Dict[str, Any]] = []
    for parent in parents:
        try:
            out, err = parent.communicate(timeout=WORKER_TIMEOUT + 10)
        except subprocess.TimeoutExpired:
            parent.kill()
            parent.communicate()
            pytest.fail("a group parent hung")
        assert parent.returncode == 0, f"group parent failed: {err.decode(errors='replace')}"
        reports.extend(json.loads(out.decode()))
    return reports


# -- the sandbox and its request log ------------------------------------------------------------


@pytest.fixture
def make_sandbox() -> Iterator[Callable[..., Sandbox]]:
    """Fresh sandboxes (each with its own per-client windows), stopped after the test."""
    started: List[Sandbox] = []

    def make(*args: str) -> Sandbox:
        sandbox = Sandbox(extra_args=["--rate-limit-window", str(WINDOW_SECONDS), *args])
        started.append(sandbox)
        return sandbox

    yield make
    for sandbox in started:
        sandbox.stop()


@pytest.fixture
def windowed(make_sandbox: Callable[..., Sandbox]) -> Sandbox:
    return make_sandbox()


def burst_config(sandbox: Sandbox, shared_state: Optional[str]) -> Dict[str, Any]:
    """The one configuration every worker builds its Client from (the contract's budgets over
    the sandbox's window)."""
    config = sandbox.config(
        rate_limits={"window_ms": WINDOW_SECONDS * 1000},
        overall_deadline_ms=60_000,
    )
    if shared_state is not None:
        config["shared_state"] = shared_state
    return config


def requests(sandbox: Sandbox) -> List[Dict[str, Any]]:
    return list(sandbox.control("GET", "/requests"))


def token_path(sandbox: Sandbox) -> str:
    return urlparse(sandbox.info["token_endpoint"]).path


def creates_path(sandbox: Sandbox) -> str:
    return urlparse(sandbox.info["base_url"]).path + "/openapi/v1/merchant-payments"


def token_requests(sandbox: Sandbox) -> List[Dict[str, Any]]:
    return [r for r in requests(sandbox) if r["method"] == "POST" and r["path"] == token_path(sandbox)]


def assert_one_client_budget(sandbox: Sandbox, reports: List[Dict[str, Any]], total: int) -> None:
    """Every worker's creates succeeded, the sandbox answered no 429, every create was one
    request answered 201, and all processes together asked for one token."""
    assert [e for r in reports for e in r["errors"]] == []
    assert sum(r["ok"] for r in reports) == total
    seen = requests(sandbox)
    assert [r for r in seen if r["status"] == 429] == [], "a 429: the budget was not shared"
    creates = [r for r in seen if r["method"] == "POST" and r["path"] == creates_path(sandbox)]
    assert [r["status"] for r in creates] == [201] * total
    tokens = [r for r in seen if r["method"] == "POST" and r["path"] == token_path(sandbox)]
    assert len(tokens) == 1, f"{len(tokens)} token requests: the token was not shared"


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Polls ``condition`` until it returns something true (bounded; not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def create_window(status: Any) -> Dict[str, Any]:
    [window] = [w for w in status["stored"]["windows"] if w["class"] == "create"]
    return dict(window)


# -- the tests ------------------------------------------------------------------------------


def test_sqlite_60_creates_per_client_per_minute_across_every_process(windowed, tmp_path):
    """60 creates per client per minute, across every process; token kept only on the
    merchant server (one token request for all workers, never in their logs, the file 0600)."""
    db = tmp_path / "state" / "storefront.db"
    db.parent.mkdir()
    config = burst_config(windowed, f"sqlite:///{db}")
    logs = tmp_path / "logs"
    logs.mkdir()
    reports = fork_workers(config, workers=4, per_worker=30, tag=f"sq-{uuid.uuid4().hex[:8]}", log_dir=str(logs))
    assert_one_client_budget(windowed, reports, 120)

    assert os.stat(db).st_mode & 0o777 == 0o600
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        [(token,)] = conn.execute("SELECT token FROM storefront_token").fetchall()
    assert len(token) >= 16
    worker_logs = sorted(logs.iterdir())
    assert len(worker_logs) == 4
    texts = [p.read_text(errors="replace") for p in worker_logs]
    assert all(text for text in texts), "the workers logged nothing: the check would prove nothing"
    assert not any(token in text for text in texts), "the token appeared in a worker's log"

    # What the store holds, read by another process's client (this one).
    with storefront.Client(config) as reader:
        status = reader.shared_state()
    assert status["backend"] == "sqlite" and status.available is True
    stored = status["stored"]
    assert stored is not None and stored["token_shared"] is True
    assert stored["token_lease_held"] is False
    assert stored["token_failures_in_a_row"] == 0
    assert 0 < (stored["token_expires_in_ms"] or 0) <= 3_600_000
    # The window is 5 s: the second 60 were admitted within the last window, the first 60 left it.
    assert 0 < create_window(status)["in_window"] <= 60
    assert create_window(status)["paused_for_ms"] is None


def test_redis_two_unrelated_parents_share_one_budget_and_one_token(windowed, redis_server):
    """60 creates per client per minute, across every process and host: two groups of 2
    workers forked from two separate parents, sharing nothing but the Redis URL."""
    config = burst_config(windowed, redis_server.url)
    reports = run_groups(config, groups=2, workers=2, per_worker=30, tag=f"rd-{uuid.uuid4().hex[:8]}")
    assert len(reports) == 4
    assert_one_client_budget(windowed, reports, 120)
    with storefront.Client(config) as reader:
        status = reader.shared_state()
    assert status["backend"] == "redis" and status["available"] is True
    assert status["stored"] is not None and status["stored"]["token_shared"] is True


def test_postgres_60_creates_per_client_per_minute_across_every_process(windowed, postgres_server):
    """60 creates per client per minute, across every process, through PostgreSQL (several
    hosts without Redis)."""
    config = burst_config(windowed, postgres_server.url)
    reports = fork_workers(config, workers=4, per_worker=30, tag=f"pg-{uuid.uuid4().hex[:8]}")
    assert_one_client_budget(windowed, reports, 120)
    with storefront.Client(config) as reader:
        status = reader.shared_state()
    assert status["backend"] == "postgres" and status["available"] is True
    assert status["stored"] is not None and status["stored"]["token_shared"] is True


def test_without_shared_state_the_same_workers_overrun_the_client_budget(windowed):
    """Control: 60 creates per client per minute is a per-client rule, so 4 workers each with
    its own in-process limiter and token cache earn 429s and ask for a token each; the shared
    store is what makes the difference in the tests above."""
    config = burst_config(windowed, None)
    reports = fork_workers(config, workers=4, per_worker=30, tag=f"ctl-{uuid.uuid4().hex[:8]}")
    assert len(reports) == 4
    seen = requests(windowed)
    too_many = [r for r in seen if r["status"] == 429]
    tokens = [r for r in seen if r["method"] == "POST" and r["path"] == token_path(windowed)]
    assert too_many or len(tokens) > 1
    assert len(tokens) == 4, "each process fetched its own token"
    assert len(too_many) > 0, "120 creates from 4 unshared limiters stayed within 60 per window"


def test_a_worker_killed_holding_the_token_lease_blocks_the_others_at_most_the_lease(make_sandbox, tmp_path):
    """Token kept only on the merchant server, fetched by one process at a time: a worker
    killed (SIGKILL) while it holds the token lease never stores a token, and the next worker
    takes the lease over once it ran out (``token_lease_ms``) instead of waiting for ever."""
    sandbox = make_sandbox()
    db = tmp_path / "storefront.db"
    config = sandbox.config(
        shared_state=f"sqlite:///{db}?token_lease_ms=2000", overall_deadline_ms=10_000
    )
    sandbox.control(
        "POST", "/faults",
        {"method": "POST", "path": token_path(sandbox), "latency_ms": 4000, "times": 1},
    )

    def authenticate() -> Any:
        with storefront.Client(config) as client:
            return dict(client.authenticate())

    holder = fork(authenticate)
    try:
        wait_for(lambda: token_requests(sandbox), 15, "worker A's token request")
    finally:
        os.kill(holder["pid"], signal.SIGKILL)
        os.close(holder["fd"])
        os.waitpid(holder["pid"], 0)
    with storefront.Client(config) as reader:
        status = reader.shared_state()
    # A died holding the lease: no token stored, the lease still counts (for up to 2 s).
    assert status["stored"] is not None and status["stored"]["token_shared"] is False
    assert status["stored"]["token_lease_held"] is True

    granted = collect(fork(authenticate))
    assert granted["expires_in"] > 0
    assert len(token_requests(sandbox)) == 2, "A's request (never answered to A) and B's own"
    with storefront.Client(config) as reader:
        stored = reader.shared_state()["stored"]
    assert stored is not None and stored["token_shared"] is True
    assert stored["token_lease_held"] is False


def test_retry_after_pauses_the_client_in_every_process(windowed, tmp_path):
    """Retry-After pauses the client, not one process: after one worker's 429 the pause is in
    the store and another worker's create waits it out instead of being sent."""
    config = burst_config(windowed, f"sqlite:///{tmp_path / 'storefront.db'}")
    windowed.control(
        "POST", "/faults",
        {"method": "POST", "path": creates_path(windowed), "status": 429,
         "headers": {"Retry-After": "2"}, "times": 1},
    )
    tag = f"ra-{uuid.uuid4().hex[:8]}"
    first = fork(lambda: _creates(config, 1, tag, None))
    with storefront.Client(config) as reader:
        pause = wait_for(
            lambda: create_window(reader.shared_state())["paused_for_ms"], 10, "the shared pause"
        )
    assert 0 < pause <= 2000

    def second() -> Dict[str, Any]:
        with storefront.Client(config) as client:
            left = create_window(client.shared_state())["paused_for_ms"] or 0
            started = time.monotonic()
            client.create_merchant_payment(
                storefront.CreateMerchantPayment(
                    external_reference=f"{tag}-second", amount_minor=100, currency="USD"
                )
            )
            return {"left": left, "waited_ms": (time.monotonic() - started) * 1000}

    waited = collect(fork(second))
    assert collect(first) == {"ok": 1, "errors": []}
    assert waited["left"] > 0, "the second worker did not see the first one's pause"
    assert waited["waited_ms"] >= waited["left"] - 150, "the second worker's create ignored the pause"
    seen = requests(windowed)
    assert [r["status"] for r in seen if r["status"] == 429] == [429], "only the injected 429"
    assert [r["status"] for r in seen if r["path"] == creates_path(windowed)].count(201) == 2


def test_token_lifetime_is_expires_in_and_shared_until_then(make_sandbox, tmp_path):
    """Token kept only on the merchant server, lifetime by expires_in: workers reuse the stored
    token while it is valid, and none uses it past its ``expires_in`` (a new one is fetched)."""
    sandbox = make_sandbox("--token-lifetime", "4")
    config = sandbox.config(shared_state=f"sqlite:///{tmp_path / 'storefront.db'}")

    def authenticate() -> Any:
        with storefront.Client(config) as client:
            return dict(client.authenticate())

    assert collect(fork(authenticate))["expires_in"] == 4
    granted_at = time.monotonic()
    with storefront.Client(config) as reader:
        stored = reader.shared_state()["stored"]
    assert stored is not None and stored["token_shared"] is True
    assert 0 < (stored["token_expires_in_ms"] or 0) <= 4000
    collect(fork(authenticate))
    assert len(token_requests(sandbox)) == 1, "a second worker reused the stored token"
    time.sleep(max(0.0, 4.3 - (time.monotonic() - granted_at)))
    collect(fork(authenticate))
    assert len(token_requests(sandbox)) == 2, "an expired token was not renewed"


def test_without_shared_state_the_budget_and_token_live_in_memory(client):
    """The default: no store; the budget and token live in this process."""
    status = client.shared_state()
    assert status == {"backend": "memory", "available": True, "stored": None}


def test_async_client_reads_the_shared_state(sandbox, tmp_path):
    """``AsyncClient.shared_state()`` reads the same store without blocking the loop."""
    import asyncio

    config = sandbox.config(shared_state=f"sqlite:///{tmp_path / 'storefront.db'}")

    async def read() -> Any:
        async with storefront.AsyncClient(config) as client:
            await client.authenticate()
            return await client.shared_state()

    status = asyncio.run(read())
    assert status["backend"] == "sqlite" and status["available"] is True
    assert status["stored"] is not None and status["stored"]["token_shared"] is True


def test_shared_state_is_a_url_string_and_hidden_from_repr():
    """A Redis or PostgreSQL URL may carry a password: never shown by ``repr``."""
    config = storefront.Config(
        base_url="https://a.example/api", token_endpoint="https://a.example/t", client_id="c",
        shared_state="redis://:hunter2@127.0.0.1:6379/0",
    )
    assert "hunter2" not in repr(config) and "shared_state" not in repr(config)
    with pytest.raises(TypeError):
        storefront.Client({**config.__dict__, "shared_state": Path("/tmp/x.db")})
    with pytest.raises(storefront.StorefrontError) as refused:
        storefront.Client({**config.__dict__, "shared_state": "mysql://127.0.0.1/shop"})
    assert "hunter2" not in str(refused.value)
