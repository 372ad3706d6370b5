# Sourced by the binding suites. `start_sandbox BIN DIR [ARGS...]` starts the standalone sandbox
# (with ARGS added to its options) in the background (pid in $sandbox_pid, log in DIR/sandbox.log) and returns once it has written
# DIR/ready.json; a sandbox that exits or is not ready within 60 s fails the suite with its log.
start_sandbox() {
  "$1" --port 0 --ready-file "$2/ready.json" "${@:3}" >"$2/sandbox.log" 2>&1 &
  sandbox_pid=$!
  for _ in $(seq 1 600); do
    [[ -s "$2/ready.json" ]] && return 0
    kill -0 "$sandbox_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$2/sandbox.log" >&2
  echo "sandbox did not start" >&2
  exit 1
}
