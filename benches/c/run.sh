#!/usr/bin/env bash
# Webhook verification through the C ABI (benches/c/webhook_bench.c) beside the Rust API's own
# figures, in one session: C, Rust, C, Rust.
#   benches/c/run.sh [ROUNDS] [ITERATIONS]
# The library is STOREFRONT_LIB when set, else the release library built here the way
# .ci/release builds it. The Rust figures are divan's medians of `cargo bench --bench webhook`
# (verify_700b: WebhookVerifier::verify, decoding data; verify_raw_700b: verify_raw, envelope
# only), the same 700-byte body; RUST_BASELINE=0 skips them (the smoke suite).
set -euo pipefail
cd "$(dirname "$0")/../.."
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
if [ -z "${STOREFRONT_LIB:-}" ]; then
  cargo rustc --quiet --release --locked -p storefront --features uniffi,capi --crate-type cdylib
  export STOREFRONT_LIB="$target_dir/release/libstorefront.so"
fi
lib="$(cd "$(dirname "$STOREFRONT_LIB")" && pwd)/$(basename "$STOREFRONT_LIB")"
out="$target_dir/bench/c"
mkdir -p "$out"
# The program loads the library by its SONAME (libstorefront.so.<major>): a link of that name
# beside the program points at the library measured, and the rpath points there.
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
ln -sf "$lib" "$out/${soname:-$(basename "$lib")}"
cc -O2 -std=c11 -Wall -Wextra -Werror -Iinclude benches/c/webhook_bench.c "$lib" \
  -Wl,-rpath,"$out" -o "$out/webhook_bench"
runs=1
[ "${RUST_BASELINE:-1}" = 0 ] || runs=2
for _ in $(seq 1 "$runs"); do
  "$out/webhook_bench" "$@"
  if [ "${RUST_BASELINE:-1}" != 0 ]; then
    echo "Rust API (cargo bench --bench webhook, divan medians):"
    cargo bench --quiet --bench webhook -- verify_700b verify_raw_700b 2>/dev/null \
      | { grep -E "verify_700b|verify_raw_700b" || echo "(no verify_700b / verify_raw_700b bench found)"; } | sed 's/^/  /'
  fi
done
