"""The storefront sandbox, shipped as a program: a stateful simulator of the payment and catalog
service over real HTTP, for an app's local development and tests.

``pip install storefront-sandbox`` puts the ``storefront-sandbox`` command on PATH (the prebuilt
binary, as tools such as ruff ship theirs). From Python::

    from storefront_sandbox import Sandbox

    with Sandbox.start() as sandbox:              # plain HTTP on 127.0.0.1, a free port
        config = sandbox.config()                 # the seeded merchant client, for storefront.Client
        sandbox.trigger("pay", order_no, "--channel", "ch_card_usd")

The pytest plugin (``storefront_sandbox.pytest_plugin``, registered on install) gives the
fixtures ``storefront_sandbox`` (one sandbox per test session) and ``storefront_sandbox_config``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, List, Optional, Sequence, Type

__all__ = ["Sandbox", "SandboxError", "binary_path"]

_BINARY = "storefront-sandbox"


class SandboxError(RuntimeError):
    """The sandbox could not be found, did not start, or refused a control request."""


def binary_path() -> str:
    """Path of the ``storefront-sandbox`` program: ``$STOREFRONT_SANDBOX_BIN`` when set, else the
    one this package installed (the environment's scripts directory), else the first on PATH."""
    chosen = os.environ.get("STOREFRONT_SANDBOX_BIN")
    if chosen:
        return chosen
    for scheme_path in (sysconfig.get_path("scripts"), sysconfig.get_path("scripts", f"{os.name}_user")):
        if scheme_path:
            candidate = Path(scheme_path) / _BINARY
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    found = shutil.which(_BINARY)
    if found:
        return found
    raise SandboxError(
        "storefront-sandbox is not installed: `pip install storefront-sandbox`, or set "
        "STOREFRONT_SANDBOX_BIN to the binary from the release tarball"
    )


class Sandbox:
    """A running ``storefront-sandbox`` process, started on a free loopback port; stopped by
    :meth:`stop` or at the end of a ``with`` block."""

    def __init__(self, process: "subprocess.Popen[bytes]", folder: "tempfile.TemporaryDirectory[str]", ready: Dict[str, Any]) -> None:
        self._process = process
        self._folder = folder
        #: The ready file's content: origin, base_url, token_endpoint, userinfo_endpoint,
        #: control_url, ca_pem_path, clients, users, merchant_no, other_merchant_no.
        self.ready: Dict[str, Any] = ready

    @classmethod
    def start(
        cls,
        *,
        port: int = 0,
        tls: bool = False,
        notify_to: Optional[str] = None,
        notify_secret: Optional[str] = None,
        extra_args: Sequence[str] = (),
        binary: Optional[str] = None,
        timeout: float = 60.0,
    ) -> "Sandbox":
        """Starts the sandbox and returns once it listens (its ready file exists).

        ``notify_to`` sends every payment's notifications to that address (``--notify-to``),
        signed with ``notify_secret`` (passed through the environment, never the command line)."""
        program = binary or binary_path()
        folder = tempfile.TemporaryDirectory(prefix="storefront-sandbox-")
        ready_path = Path(folder.name) / "ready.json"
        args: List[str] = [program, "--port", str(port), "--ready-file", str(ready_path)]
        if tls:
            args.append("--tls")
        if notify_to is not None:
            args += ["--notify-to", notify_to]
        args += list(extra_args)
        env = dict(os.environ)
        env.pop("STOREFRONT_NOTIFY_SECRET", None)
        if notify_secret is not None:
            env["STOREFRONT_NOTIFY_SECRET"] = notify_secret
        log = open(Path(folder.name) / "sandbox.log", "wb")
        try:
            process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready_path.is_file():
                try:
                    return cls(process, folder, json.loads(ready_path.read_text()))
                except json.JSONDecodeError:
                    pass  # written atomically; a partial read cannot happen, but be safe
            if process.poll() is not None:
                break
            time.sleep(0.05)
        process.kill()
        process.wait()
        output = (Path(folder.name) / "sandbox.log").read_text(errors="replace")
        folder.cleanup()
        raise SandboxError(f"storefront-sandbox did not start:\n{output}")

    def stop(self) -> None:
        """Stops the process (SIGTERM, then SIGKILL after 10 s) and removes its folder."""
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._folder.cleanup()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (``https://`` with ``tls``)."""
        return str(self.ready["origin"])

    @property
    def base_url(self) -> str:
        """The contract's ``{base_url}``."""
        return str(self.ready["base_url"])

    @property
    def token_endpoint(self) -> str:
        """The contract's ``{token_endpoint}``."""
        return str(self.ready["token_endpoint"])

    @property
    def control_url(self) -> str:
        """Base address of the sandbox's control endpoints (and its dashboard)."""
        return str(self.ready["control_url"])

    @property
    def ready_file(self) -> str:
        """Path of the ready file (for ``storefront-sandbox trigger --ready-file``)."""
        return str(Path(self._folder.name) / "ready.json")

    def config(self, **overrides: Any) -> Dict[str, Any]:
        """The seeded merchant client's configuration for ``storefront.Client``: endpoints,
        credentials, and the permission for plain HTTP on loopback (or the sandbox's CA)."""
        config: Dict[str, Any] = {
            "base_url": self.base_url,
            "token_endpoint": self.token_endpoint,
            "userinfo_endpoint": self.ready["userinfo_endpoint"],
            # The ready file lists the seeded merchant client (all scopes) first.
            "client_id": self.ready["clients"][0]["client_id"],
            "client_secret": self.ready["clients"][0]["client_secret"],
        }
        if self.ready.get("ca_pem_path"):
            config["root_ca_pem"] = Path(self.ready["ca_pem_path"]).read_text()
        else:
            config["allow_insecure_loopback"] = True
        config.update(overrides)
        return config

    def control(self, method: str, path: str, body: Optional[Any] = None) -> Any:
        """One control request (``/_sandbox`` + path); returns the JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.control_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"} if data is not None else {},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                text = answer.read()
        except urllib.error.HTTPError as refused:
            raise SandboxError(f"{method} {path}: HTTP {refused.code} {refused.read()!r}") from None
        return json.loads(text) if text else None

    def trigger(self, action: str, *args: str) -> Any:
        """``storefront-sandbox trigger ACTION ARGS...`` against this sandbox (pay, refund,
        chargeback, expire, advance, redeliver, ...); returns its JSON answer."""
        done = subprocess.run(
            [binary_path(), "trigger", "--ready-file", self.ready_file, action, *args],
            capture_output=True,
        )
        if done.returncode != 0:
            raise SandboxError(done.stderr.decode(errors="replace").strip())
        return json.loads(done.stdout)

    def advance_clock(self, seconds: int) -> None:
        """Moves the sandbox clock forward; due expiries and notification retries run."""
        self.control("POST", "/clock/advance", {"seconds": seconds})

    def user_token(self, user: Optional[str] = None, client_id: Optional[str] = None) -> str:
        """A user-authorized token for a seeded buyer (default: the first) through a client
        (default: the merchant client); the authorization-code flow is not part of the
        contract, so the sandbox mints it."""
        user = user or str(self.ready["users"][0])
        client_id = client_id or str(self.ready["clients"][0]["client_id"])
        answer = self.control("POST", f"/users/{user}/tokens", {"client_id": client_id})
        return str(answer["access_token"])
