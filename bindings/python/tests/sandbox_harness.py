"""Starts the standalone sandbox binary and drives its control endpoints (test support)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

REPO = Path(__file__).resolve().parents[3]

# Seeded values of the sandbox (sandbox/src/seed.rs).
MERCHANT_NO = "M10001"
MERCHANT_CLIENT_ID = "sbx_merchant_client"
MERCHANT_CLIENT_SECRET = "sbx_merchant_secret_9f2c41d7a8e64b0c"
ALL_SCOPES = [
    "openid",
    "merchant.profile.read",
    "products.read",
    "orders.create",
    "orders.read",
    "payments.create",
    "payments.read",
    "merchant_payments.read",
    "merchant_payments.create",
]
USER_ALICE = "alice"
CHANNEL_PLATFORM_COIN = "ch_platform_coin"
CHANNEL_CARD_USD = "ch_card_usd"
PRODUCT_BEANS = "G1001"
PRODUCT_GIFT_CARD = "G1002"
ENABLED_PRODUCT_COUNT = 25


class Sandbox:
    """A running ``storefront-sandbox --port 0 --ready-file PATH``."""

    def __init__(self, tls: bool = False, extra_args: Sequence[str] = ()) -> None:
        binary = os.environ.get(
            "STOREFRONT_SANDBOX_BIN", str(REPO / "target" / "debug" / "storefront-sandbox")
        )
        self._dir = tempfile.TemporaryDirectory(prefix="sf-py-")
        ready = Path(self._dir.name) / "ready.json"
        self._log = open(Path(self._dir.name) / "sandbox.log", "wb")
        self._process = subprocess.Popen(
            [binary, "--port", "0", "--ready-file", str(ready)]
            + (["--tls"] if tls else [])
            + list(extra_args),
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        # Startup wait, bounded; not a timing assertion.
        for _ in range(600):
            if ready.is_file() and ready.stat().st_size > 0:
                try:
                    self.info: Dict[str, Any] = json.loads(ready.read_text())
                    break
                except json.JSONDecodeError:
                    pass
            if self._process.poll() is not None:
                raise RuntimeError(f"sandbox exited with {self._process.returncode}")
            time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError("sandbox did not become ready")

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._log.close()
        self._dir.cleanup()

    @property
    def origin(self) -> str:
        return self.info["origin"]

    def config(self, **overrides: Any) -> Dict[str, Any]:
        """The merchant client's configuration for this sandbox."""
        config = {
            "base_url": self.info["base_url"],
            "token_endpoint": self.info["token_endpoint"],
            "userinfo_endpoint": self.info["userinfo_endpoint"],
            "client_id": MERCHANT_CLIENT_ID,
            "client_secret": MERCHANT_CLIENT_SECRET,
            "scopes": ALL_SCOPES,
            "allow_insecure_loopback": True,
        }
        config.update(overrides)
        return config

    @property
    def ca_pem(self) -> Optional[str]:
        """The PEM of the CA the sandbox generated with ``--tls``."""
        path = self.info.get("ca_pem_path")
        return Path(path).read_text() if path else None

    def control(self, method: str, path: str, body: Optional[Any] = None) -> Any:
        """Calls a control endpoint under ``/_sandbox`` and returns its JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.info["control_url"] + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"} if data is not None else {},
        )
        context = None
        if self.info["control_url"].startswith("https:"):
            import ssl

            context = ssl.create_default_context(cadata=self.ca_pem)
        with urllib.request.urlopen(request, timeout=30, context=context) as response:
            text = response.read()
        return json.loads(text) if text else None

    def user_token(self, user: str = USER_ALICE) -> str:
        minted = self.control(
            "POST", f"/users/{user}/tokens", {"client_id": MERCHANT_CLIENT_ID}
        )
        return minted["access_token"]

    def fault(self, method: str, path: str, **spec: Any) -> None:
        """Injects a fault on ``method`` + the business ``path`` (under the API prefix)."""
        api_path = self.info["base_url"][len(self.origin):] + path
        self.control("POST", "/faults", {"method": method, "path": api_path, **spec})

    def clear_faults(self) -> None:
        self.control("DELETE", "/faults")
