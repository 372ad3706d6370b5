#!/usr/bin/env bash
# Bench smoke (BENCHMARKS.md, "Webhook receivers across languages"): the C, Python and PHP
# benchmarks each run with a tiny iteration count over the debug library the binding suites
# share, and must print their figures and ratios. Nothing about time is asserted (a shared
# machine's timings are not test material); the figures of a debug build mean nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet -p storefront --features capi,uniffi -p storefront-sandbox
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
export STOREFRONT_LIB="$target_dir/debug/libstorefront.so"
export STOREFRONT_SANDBOX_BIN="$target_dir/debug/storefront-sandbox"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
check() {
  # $1: what must appear in the output; the rest: the command.
  local expect=$1
  shift
  "$@" | tee "$log"
  grep -q "$expect" "$log" || { echo "bench smoke: '$*' printed no '$expect'" >&2; exit 1; }
}
check "verify_at / verify_body_at" env RUST_BASELINE=0 bash benches/c/run.sh 2 50
check "storefront / hand-written" bash benches/python/run.sh 2 20
check "preload / hand-written" bash benches/php/run.sh 1 2
