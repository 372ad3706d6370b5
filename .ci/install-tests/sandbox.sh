#!/usr/bin/env bash
# Install test of the sandbox tarball (see run): unpack $STOREFRONT_DIST/sandbox's tarball with no
# Rust and no checkout, start the prebuilt binary, and drive a merchant payment through it over
# HTTP (token, create, query), then `storefront-sandbox trigger` pays it.
# (The sandbox wheel is installed and used by python.sh.)
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
no_rust_toolchain

shopt -s nullglob
tarballs=("$STOREFRONT_DIST"/sandbox/storefront-sandbox-*-linux.tar.gz)
((${#tarballs[@]} == 1)) || { echo "install-sandbox: expected one tarball, found ${#tarballs[@]}" >&2; exit 1; }
tar -xzf "${tarballs[0]}"
folder=$(basename "${tarballs[0]}" .tar.gz)
binary="$PWD/$folder/storefront-sandbox"
[[ -x "$binary" ]] || { echo "install-sandbox: no executable storefront-sandbox in the tarball" >&2; exit 1; }
echo "binary: $(stat -c %s "$binary") bytes"

start_sandbox "$binary" "$PWD"
python3 - "$PWD/ready.json" "$binary" <<'PY'
import json, subprocess, sys, urllib.parse, urllib.request
ready_path, binary = sys.argv[1:]
ready = json.load(open(ready_path))
merchant = ready["clients"][0]
form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": merchant["client_id"],
                               "client_secret": merchant["client_secret"]}).encode()
token = json.load(urllib.request.urlopen(ready["token_endpoint"], data=form, timeout=10))["access_token"]
def api(method, path, body=None):
    request = urllib.request.Request(ready["base_url"] + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=10))
created = api("POST", "/openapi/v1/merchant-payments", {"external_reference": "install-sandbox-1",
              "idempotency_key": "install-sandbox-1", "amount_minor": 1250, "currency": "USD"})
order_no = created["order_no"]
assert api("GET", f"/openapi/v1/merchant-payments/{order_no}")["status"] == "pending"
paid = subprocess.run([binary, "trigger", "--ready-file", ready_path, "pay", order_no, "--channel", "ch_card_usd"],
                      check=True, capture_output=True)
assert json.loads(paid.stdout)["status"] == "paid", paid.stdout
assert api("GET", f"/openapi/v1/merchant-payments/{order_no}")["status"] == "paid"
print(f"ok: created {order_no}, queried pending, paid by trigger, queried paid")
PY
echo "install-sandbox: passed"
