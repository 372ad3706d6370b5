#!/usr/bin/env bash
# PHP per-request webhook receivers and clients compared in one run (benches/php/bench.php):
#   benches/php/run.sh [ROUNDS] [REQUESTS_PER_ROUND]
# Needs php-cli with FFI and opcache (installed from Debian's packages when missing, as the PHP
# suite does). The library is STOREFRONT_LIB when set, else the release library built here the
# way .ci/release builds it; the sandbox is STOREFRONT_SANDBOX_BIN, else the debug build.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v php >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq php-cli >/dev/null
fi
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
if [ -z "${STOREFRONT_LIB:-}" ]; then
  cargo rustc --quiet --release --locked -p storefront --features uniffi,capi --crate-type cdylib
  export STOREFRONT_LIB="$target_dir/release/libstorefront.so"
fi
if [ -z "${STOREFRONT_SANDBOX_BIN:-}" ]; then
  cargo build --quiet -p storefront-sandbox
  export STOREFRONT_SANDBOX_BIN="$target_dir/debug/storefront-sandbox"
fi
php benches/php/bench.php "$@"
