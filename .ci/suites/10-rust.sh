#!/usr/bin/env bash
# Rust: formatting, lints (every feature), and every crate's tests against the in-process sandbox.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The store tests start Redis and PostgreSQL themselves (loopback, free port, temp dir): the
# binaries must be installed, from Debian's packages.
bash .ci/install-servers.sh
# The mobile library (uniffi alone, for Android and iOS) links no shared-state backend; the
# server library (capi) links all three (issue 15: the mobile library does not grow).
backends='^(rusqlite|libsqlite3-sys|redis|tokio-postgres) '
if cargo tree -q -p storefront --features uniffi -e normal --prefix none | grep -Eq "$backends"; then
  echo "the mobile library (--features uniffi) links a shared-state backend" >&2
  exit 1
fi
[[ $(cargo tree -q -p storefront --features capi -e normal --prefix none | grep -E "$backends" | sort -u | wc -l) == 4 ]] \
  || { echo "the server library (--features capi) must link SQLite, Redis and PostgreSQL" >&2; exit 1; }
cargo fmt --all -- --check
cargo clippy --workspace --exclude uniffi-bindgen --all-targets --all-features -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude uniffi-bindgen --no-deps --all-features
# The inbox chaos test also runs the Python and PHP wrappers' receivers over the C library
# (chaos_python_sqlite, chaos_php_sqlite, SQLite): build it, then run them on their own and
# prove they ran (skipped, they would pass too): each prints a line once its checks held.
cargo build --quiet -p storefront --features capi,uniffi
export STOREFRONT_CHAOS_WRAPPERS=1
cargo test --workspace --exclude uniffi-bindgen --all-features -- \
  --skip chaos_python_sqlite --skip chaos_php_sqlite
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --exclude uniffi-bindgen --all-features --test inbox_chaos -- \
  --nocapture chaos_python_sqlite chaos_php_sqlite 2>&1 | tee "$log"
for run in sqlite/python sqlite/php; do
  grep -q "^inbox chaos \[$run\]: passed" "$log" \
    || { echo "the inbox chaos test of the $run receivers did not run" >&2; exit 1; }
done
