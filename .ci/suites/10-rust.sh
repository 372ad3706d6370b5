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
cargo test --workspace --exclude uniffi-bindgen --all-features
