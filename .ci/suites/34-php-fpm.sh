#!/usr/bin/env bash
# PHP under real php-fpm (issue 15, "Done when"): 4 static workers, each building
# Client::persistent with shared_state = one SQLite file, receive 120 merchant-payment creates
# at the same time over FastCGI (cgi-fcgi). The sandbox counts its per-client windows over 5 s
# (--rate-limit-window 5) and the clients pace with rate_limits.window_ms = 5000, so the 120
# creates need two windows and more: the shared budget must hold them back across processes.
# Asserted from the sandbox's request log: no 429 at all, exactly one token request, 120 creates
# answered 201; every FastCGI answer reports success; at least 4 distinct worker pids served.
# Then a control run without shared_state: every worker that serves fetches its own token.
# Everything started here is stopped by pid on exit, failure included.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! compgen -G '/usr/sbin/php-fpm*' >/dev/null || ! command -v cgi-fcgi >/dev/null \
  || ! command -v php >/dev/null; then
  bash .ci/install-servers.sh
fi
cargo build --quiet -p storefront --features capi,uniffi -p storefront-sandbox
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
export STOREFRONT_LIB="$target_dir/debug/libstorefront.so"
export STOREFRONT_HEADER="$PWD/include/storefront.h"

source .ci/lib/servers.sh
tmp="$(mktemp -d)"
sandbox_pid=
cleanup() {
  stop_all_servers
  if [[ -n "$sandbox_pid" ]]; then
    kill "$sandbox_pid" 2>/dev/null || true
    wait "$sandbox_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The sandbox, with 5 s rate-limit windows.
"$target_dir/debug/storefront-sandbox" --port 0 --ready-file "$tmp/ready.json" \
  --rate-limit-window 5 >"$tmp/sandbox.log" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 600); do
  [[ -s "$tmp/ready.json" ]] && break
  kill -0 "$sandbox_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ ! -s "$tmp/ready.json" ]]; then
  cat "$tmp/sandbox.log" >&2
  echo "34-php-fpm: the sandbox did not start" >&2
  exit 1
fi

# The workers inherit this environment (clear_env = no).
mkdir -p "$tmp/state"
export SF_FPM_READY="$tmp/ready.json"
export SF_FPM_SHARED_STATE="sqlite://$tmp/state/storefront.db"
start_php_fpm "$tmp/fpm" 4

script="$PWD/bindings/php/tests/fpm/create.php"
driver=bindings/php/tests/fpm/drive.py
run_id="fpm-$(date +%s)-$$"

show_logs() {
  for log in "$tmp/fpm/php-error.log" "$tmp/fpm/php-fpm.log" "$tmp/sandbox.log"; do
    [[ -f "$log" ]] && { echo "---- $log" >&2; tail -n 30 "$log" >&2; }
  done
  return 0
}

python3 "$driver" "$FPM_PORT" "$script" 120 shared "$run_id" >"$tmp/shared.jsonl"

# check.py MODE ANSWERS SINCE_ID: checks the answers and the sandbox log; prints a summary.
cat >"$tmp/check.py" <<'PY'
import json, os, sys, urllib.request
from urllib.parse import urlparse

mode, answers_path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
ready = json.load(open(os.environ["SF_FPM_READY"]))
answers = [json.loads(line) for line in open(answers_path)]
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)

bad = [a for a in answers if not (a["answer"] or {}).get("ok")]
check(len(answers) == count, f"{len(answers)} FastCGI answers, expected {count}")
check(not bad, f"{len(bad)} FastCGI answers without success, first: {bad[:1]}")
pids = sorted({a["answer"]["pid"] for a in answers if a["answer"]})
orders = {a["answer"].get("order_no") for a in answers if (a["answer"] or {}).get("ok")}
check(len(orders) == count, f"{len(orders)} distinct order numbers, expected {count}")

log = json.load(urllib.request.urlopen(ready["control_url"] + "/requests", timeout=30))
token_path = urlparse(ready["token_endpoint"]).path
create_path = urlparse(ready["base_url"]).path.rstrip("/") + "/openapi/v1/merchant-payments"
prefix = answers[0]["ref"].rsplit("-", 1)[0] + "-" if answers else "?"
ours = [r for r in log if r["method"] == "POST" and r["path"] == create_path
        and prefix in json.dumps(r.get("body"))]
tokens = [r for r in log if r["method"] == "POST" and r["path"] == token_path]
too_many = [r for r in log if r.get("status") == 429]
created = [r for r in ours if r.get("status") == 201]
summary = {"mode": mode, "answers": len(answers), "worker_pids": pids, "creates_sent": len(ours),
           "creates_201": len(created), "429s": len(too_many), "token_requests_total": len(tokens)}
if mode == "shared":
    check(len(pids) >= 4, f"only {len(pids)} distinct php-fpm worker pids: {pids}")
    check(len(too_many) == 0, f"{len(too_many)} answers of 429")
    check(len(tokens) == 1, f"{len(tokens)} token requests, expected exactly 1")
    check(len(ours) == count and len(created) == count,
          f"{len(ours)} creates sent, {len(created)} answered 201; expected {count} and {count}")
else:
    # Control: without shared_state each worker that served keeps its own token, fetched once.
    own_tokens = len(tokens) - 1
    summary["token_requests_control"] = own_tokens
    check(own_tokens == len(pids) and own_tokens >= 2,
          f"control: {own_tokens} token requests for {len(pids)} workers; expected one per worker, at least 2")
    check(len(created) == count, f"control: {len(created)} creates answered 201, expected {count}")
print(json.dumps(summary))
if failures:
    for f in failures:
        print("34-php-fpm: " + f, file=sys.stderr)
    sys.exit(1)
PY

if ! python3 "$tmp/check.py" shared "$tmp/shared.jsonl" 120; then
  show_logs
  exit 1
fi
mode=$(stat -c %a "$tmp/state/storefront.db")
if [[ "$mode" != 600 ]]; then
  echo "34-php-fpm: the SQLite store is mode $mode, expected 600" >&2
  exit 1
fi

# Control run without shared_state (after the sandbox's 5 s window has passed): 40 creates
# fit one window, so only the token count differs: one per worker that served.
sleep 6
python3 "$driver" "$FPM_PORT" "$script" 40 own "$run_id-own" >"$tmp/own.jsonl"
if ! python3 "$tmp/check.py" own "$tmp/own.jsonl" 40; then
  show_logs
  exit 1
fi
echo "34-php-fpm: passed"
