#!/usr/bin/env bash
# Rust: formatting, lints (every feature), and every crate's tests against the in-process sandbox.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The store tests start Redis and PostgreSQL themselves (loopback, free port, temp dir): the
# binaries must be installed, from Debian's packages.
bash .ci/install-servers.sh
cargo fmt --all -- --check
cargo clippy --workspace --exclude uniffi-bindgen --all-targets --all-features -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude uniffi-bindgen --no-deps --all-features
cargo test --workspace --exclude uniffi-bindgen --all-features
