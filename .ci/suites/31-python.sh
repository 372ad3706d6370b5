#!/usr/bin/env bash
# Python wrapper (bindings/python): pytest against the standalone sandbox, over the debug
# C library shared with the other binding suites.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3 python3-pip; }
if ! python3 -c "import pytest" 2>/dev/null; then
  python3 -m pip install --quiet pytest 2>/dev/null \
    || { apt-get update -qq && apt-get install -y -qq python3-pytest; }
fi
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
