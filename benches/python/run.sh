#!/usr/bin/env bash
# Python webhook receivers compared in one run (benches/python/webhook_bench.py):
#   benches/python/run.sh [ROUNDS] [ITERATIONS]
# Installs the peers (PyPI stripe, standardwebhooks; pinned) into a venv under the cargo target
# dir, idempotently. The library is STOREFRONT_LIB when set, else the release library, built
# here the way .ci/release builds it (cargo skips it when up to date).
set -euo pipefail
cd "$(dirname "$0")/../.."
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target_dir/bench/python-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import stripe, standardwebhooks" 2>/dev/null \
  || "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
       stripe==16.1.0 standardwebhooks==1.1.0
if [ -z "${STOREFRONT_LIB:-}" ]; then
  cargo rustc --quiet --release --locked -p storefront --features uniffi,capi --crate-type cdylib
  export STOREFRONT_LIB="$target_dir/release/libstorefront.so"
fi
PYTHONPATH="$PWD/bindings/python" "$venv/bin/python" benches/python/webhook_bench.py "$@"
