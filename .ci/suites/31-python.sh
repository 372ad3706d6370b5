#!/usr/bin/env bash
# Python wrapper (bindings/python): pytest against the standalone sandbox, over the debug
# C library shared with the other binding suites; then the example; then `pip wheel` from source.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3 python3-pip; }
if ! python3 -c "import pytest" 2>/dev/null; then
  python3 -m pip install --quiet pytest 2>/dev/null \
    || { apt-get update -qq && apt-get install -y -qq python3-pytest; }
fi
# Redis and PostgreSQL for tests/test_shared_state.py (started by tests/servers.py on loopback).
bash .ci/install-servers.sh
# One debug build serves the C, Python and PHP suites (cargo skips it when up to date).
cargo build --quiet -p storefront --features capi,uniffi -p storefront-sandbox
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
export STOREFRONT_LIB="$target_dir/debug/libstorefront.so"
export STOREFRONT_SANDBOX_BIN="$target_dir/debug/storefront-sandbox"
(cd bindings/python && python3 -m pytest -q -p no:cacheprovider tests)

# The example program against its own standalone sandbox.
work=$(mktemp -d)
sandbox_pid=
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
source .ci/sandbox.sh
start_sandbox "$STOREFRONT_SANDBOX_BIN" "$work"
PYTHONPATH=bindings/python python3 examples/python/storefront_example.py "$work/ready.json"

# The from-source path: `pip wheel ./bindings/python` runs the cargo release build itself (in this
# workspace's target dir, so a no-op after .ci/release or an earlier run) and gives a platform
# wheel, py3-none-linux_<arch>, carrying that library. (The release wheel, manylinux-tagged by
# auditwheel, is installed and used by .ci/install-tests/python.sh.)
version=$(bash .ci/version)
echo "pip wheel ./bindings/python (cargo rustc --release --crate-type cdylib)"
python3 -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$work/wheel" \
  ./bindings/python
python3 - "$work/wheel" "storefront-$version-py3-none-linux_$(uname -m).whl" \
  "$target_dir/release/libstorefront.so" <<'PY'
import hashlib, os, sys, zipfile
folder, expected, built = sys.argv[1:]
found = sorted(os.listdir(folder))
if found != [expected]:
    sys.exit(f"pip wheel ./bindings/python: expected {expected}, got {found}")
with zipfile.ZipFile(os.path.join(folder, expected)) as wheel:
    if "Root-Is-Purelib: false" not in wheel.read(f"storefront-{expected.split('-')[1]}.dist-info/WHEEL").decode():
        sys.exit("pip wheel ./bindings/python: the wheel is marked pure")
    bundled = wheel.read("storefront/libstorefront.so")
with open(built, "rb") as f:
    if hashlib.sha256(bundled).digest() != hashlib.sha256(f.read()).digest():
        sys.exit(f"pip wheel ./bindings/python: storefront/libstorefront.so differs from {built}")
print(f"pip wheel ./bindings/python: {expected}, {os.path.getsize(os.path.join(folder, expected))} bytes, carries {built}")
PY
