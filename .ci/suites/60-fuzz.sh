#!/usr/bin/env bash
# Fuzzing smoke run: every cargo-fuzz target of fuzz/ for a bounded time from its checked-in
# seeds (docs/fuzzing.md). Crash inputs are replayed in `cargo test` by tests/fuzz_regressions.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash .ci/fuzz-smoke --time "${FUZZ_SMOKE_SECS:-20}"
