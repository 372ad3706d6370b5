# Sourced by the install tests (see run). Gives:
#   no_rust_toolchain         fails when cargo, rustc or rustup is on the path
#   start_sandbox BIN DIR     starts the sandbox BIN (use $STOREFRONT_SANDBOX_BIN); ready file DIR/ready.json, pid in $sandbox_pid
#   sandbox_origin DIR        prints the sandbox's origin from DIR/ready.json
# and kills the sandbox on exit.
set -euo pipefail
source "$STOREFRONT_CI/sandbox.sh"
sandbox_pid=
trap '[[ -n "$sandbox_pid" ]] && kill "$sandbox_pid" 2>/dev/null || true' EXIT

no_rust_toolchain() {
  local tool
  for tool in cargo rustc rustup; do
    if command -v "$tool" >/dev/null; then
      echo "install test: $tool is on the path ($(command -v "$tool")); the test must run without it" >&2
      exit 1
    fi
  done
}

sandbox_origin() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["origin"])' "$1/ready.json"
}
