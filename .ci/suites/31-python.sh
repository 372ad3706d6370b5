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
"$STOREFRONT_SANDBOX_BIN" --port 0 --ready-file "$work/ready.json" >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do [[ -s "$work/ready.json" ]] && break; sleep 0.1; done
[[ -s "$work/ready.json" ]] || { cat "$work/sandbox.log"; echo "sandbox did not start" >&2; exit 1; }
PYTHONPATH=bindings/python python3 examples/python/storefront_example.py "$work/ready.json"
