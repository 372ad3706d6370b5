#!/usr/bin/env bash
# Whole-process bench smoke (BENCHMARKS.md, "Request path", "Waiters" and "Shared state"): each bench runs its
# smoke mode (a few hundred requests; 500 waiters over TLS) in a debug build and must complete
# and print its figures. Nothing about time or memory is asserted (a shared machine's figures
# are not test material; a debug build's mean nothing); the waiters bench does check that every
# waiter ends with the order's final status.
set -euo pipefail
cd "$(dirname "$0")/../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
check() {
  # $1: what must appear in the output; the rest: the command.
  local expect=$1
  shift
  "$@" | tee "$log"
  grep -q "$expect" "$log" || { echo "bench smoke: '$*' printed no '$expect'" >&2; exit 1; }
}
check "ratio of medians" cargo bench --profile dev --bench request_path -- --smoke
check "worst run" cargo bench --profile dev --bench waiters -- --smoke
# The shared-state bench starts Redis and PostgreSQL itself (installed by the project's script).
bash .ci/install-servers.sh
check "round trips per admitted call" cargo bench --profile dev --features server --bench shared_state -- --smoke
check "ratio inbox / hand-written" cargo bench --profile dev --features server --bench inbox -- --smoke
