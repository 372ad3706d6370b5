#!/usr/bin/env bash
# Self-test of .ci/lib/servers.sh: starts Redis, PostgreSQL and php-fpm (2 workers) in a temp
# dir, checks that each answers on its port, stops them all, and checks with ps that no process
# of theirs is left. Needs the servers installed (.ci/install-servers.sh) and root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=servers.sh
source "$here/servers.sh"

tmp="$(mktemp -d)"
trap 'stop_all_servers; rm -rf "$tmp"' EXIT

fail() {
  echo "servers-selftest: $*" >&2
  exit 1
}

# PID and every process below it, one per line.
tree_of() {
  local pid="$1" child
  echo "$pid"
  for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do
    tree_of "$child"
  done
}

start_redis "$tmp/redis"
[[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping)" == PONG ]] || fail "redis did not answer PONG"
[[ "$REDIS_URL" == "redis://127.0.0.1:$REDIS_PORT/0" ]] || fail "REDIS_URL is $REDIS_URL"
echo "redis      pid $REDIS_PID  $REDIS_URL: PONG"

start_postgres "$tmp/postgres"
answer="$(psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc 'select 1')"
[[ "$answer" == 1 ]] || fail "postgres answered '$answer' to select 1"
answer="$(psql "$PG_URL" -tAc 'select 40 + 2')"
[[ "$answer" == 42 ]] || fail "postgres through PG_URL answered '$answer'"
echo "postgres   pid $PG_PID  $PG_URL: select 1 = 1"

# clear_env = no: the workers see the environment php-fpm was started with.
export SERVERS_SELFTEST_ENV=kept
start_php_fpm "$tmp/fpm" 2 "memory_limit=77M"
cat >"$tmp/fpm/hello.php" <<'PHP'
<?php
header('Content-Type: text/plain');
echo "hello from php-fpm\n";
echo "memory_limit=", ini_get('memory_limit'), "\n";
echo "ffi.enable=", extension_loaded('ffi') ? ini_get('ffi.enable') : 'no-ffi', "\n";
echo "pdo_sqlite=", extension_loaded('pdo_sqlite') ? 'yes' : 'no', "\n";
echo "env=", getenv('SERVERS_SELFTEST_ENV'), "\n";
PHP
page="$(SCRIPT_FILENAME="$tmp/fpm/hello.php" REQUEST_METHOD=GET \
  cgi-fcgi -bind -connect "127.0.0.1:$FPM_PORT")"
grep -q 'hello from php-fpm' <<<"$page" || fail "php-fpm answered: $page"
grep -q 'memory_limit=77M' <<<"$page" || fail "the extra ini was not applied: $page"
grep -Eq 'ffi.enable=(1|true|On|on|no-ffi)$' <<<"$page" || fail "ffi.enable is not on: $page"
grep -q 'pdo_sqlite=yes' <<<"$page" || fail "php-fpm has no pdo_sqlite: $page"
grep -q 'env=kept' <<<"$page" || fail "the environment was cleared: $page"
workers="$(ps -o pid= --ppid "$FPM_PID" | wc -l)"
[[ "$workers" -eq 2 ]] || fail "php-fpm runs $workers workers, not 2"
echo "php-fpm    pid $FPM_PID  127.0.0.1:$FPM_PORT: $(head -n 1 <<<"$(sed -n '/^hello/,$p' <<<"$page")"), $workers workers"

# Every process the servers run, to check after stopping.
mapfile -t pids < <(tree_of "$REDIS_PID"; tree_of "$PG_PID"; tree_of "$FPM_PID")
ports=("$REDIS_PORT" "$PG_PORT" "$FPM_PORT")
echo "processes: ${pids[*]}"

stop_all_servers
[[ -z "$REDIS_PID$PG_PID$FPM_PID" ]] || fail "a pid variable is still set after stop_all_servers"
left=()
for pid in "${pids[@]}"; do
  stat="$(ps -o stat= -p "$pid" || true)"
  if [[ -n "$stat" && "$stat" != Z* ]]; then left+=("$pid"); fi
done
if [[ ${#left[@]} -gt 0 ]]; then
  ps -o pid=,args= -p "$(IFS=,; echo "${left[*]}")" >&2 || true
  fail "processes left after stop_all_servers: ${left[*]}"
fi
if ps -eo args= | grep -F -- "$tmp" | grep -v grep >/dev/null; then
  ps -eo pid=,args= | grep -F -- "$tmp" | grep -v grep >&2
  fail "a process still names $tmp"
fi
for port in "${ports[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then fail "port $port still accepts"; fi
done
# Stopping twice is harmless (the trap calls it again).
stop_all_servers
echo "servers-selftest: ok (redis, postgres, php-fpm started, answered and stopped; none left)"
