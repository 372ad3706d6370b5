#!/usr/bin/env bash
# PHP wrapper (bindings/php): `composer validate --strict` of its composer.json, then PHPUnit
# (Debian's package) against the standalone sandbox, loading the shipped include/storefront.h,
# over the debug C library shared with the other binding suites.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v php >/dev/null || ! command -v phpunit >/dev/null || ! command -v composer >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq php-cli phpunit composer >/dev/null
fi
(cd bindings/php && COMPOSER_ALLOW_SUPERUSER=1 composer validate --strict --no-check-lock)
cargo build --quiet -p storefront --features capi,uniffi -p storefront-sandbox
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
export STOREFRONT_LIB="$target_dir/debug/libstorefront.so"
export STOREFRONT_SANDBOX_BIN="$target_dir/debug/storefront-sandbox"
(cd bindings/php && phpunit --do-not-cache-result)

# The example program against its own standalone sandbox.
work=$(mktemp -d)
sandbox_pid=
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
source .ci/sandbox.sh
start_sandbox "$STOREFRONT_SANDBOX_BIN" "$work"
php examples/php/storefront_example.php "$work/ready.json"
