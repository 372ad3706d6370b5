#!/usr/bin/env bash
# API parity (issue 12): lists every public core operation (read from src/ with syn) and fails
# when a binding (Kotlin, Swift, C, Python, PHP) lacks one, when bindings/api-parity.toml
# names a symbol that does not exist, or when docs/api-parity.md (the printed table) is stale.
# Fast: reads sources only (Python's with python3's ast), runs no binding.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3 >/dev/null
}
cargo test --test api_parity -- --nocapture
