#!/usr/bin/env bash
# PHP wrapper (bindings/php): PHPUnit (Debian's package) against the standalone sandbox,
# loading the shipped include/storefront.h, over the debug C library shared with the other
# binding suites.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v php >/dev/null || ! command -v phpunit >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq php-cli phpunit >/dev/null
fi
cargo build --quiet -p storefront --features capi,uniffi -p storefront-sandbox
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
export STOREFRONT_LIB="$target_dir/debug/libstorefront.so"
export STOREFRONT_SANDBOX_BIN="$target_dir/debug/storefront-sandbox"
(cd bindings/php && phpunit --do-not-cache-result)

# The example program against its own standalone sandbox.
work=$(mktemp -d)
"$STOREFRONT_SANDBOX_BIN" --port 0 --ready-file "$work/ready.json" >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do [[ -s "$work/ready.json" ]] && break; sleep 0.1; done
[[ -s "$work/ready.json" ]] || { cat "$work/sandbox.log"; echo "sandbox did not start" >&2; exit 1; }
php examples/php/storefront_example.php "$work/ready.json"
