#!/usr/bin/env bash
# Soak smoke (docs/soak.md): a short bounded soak of concurrent clients against the in-process
# sandbox with random faults, ending in an exact reconciliation (no duplicate payment or order,
# nothing lost, every paid event booked once, wallets debited once). Debug build; the run takes
# about half a minute and stops by itself (its own watchdog); the outer timeout also covers the
# build. A failure prints the seed that reproduces the run's decisions.
set -euo pipefail
cd "$(dirname "$0")/../.."
timeout 900 cargo run --example soak -- --seconds 20 --clients 4
