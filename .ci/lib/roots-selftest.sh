#!/usr/bin/env bash
# Self-test of .ci/lib/roots.sh: ensures every root and checks, inside each, what the release's
# install tests rely on (architecture, glibc, Python + venv + pip, PHP + SQLite3, Java on arm64,
# gcc, a server on the host's loopback, the clean environment, --bind, --env, the exit status),
# then that a killed root_run leaves neither mounts nor processes. Prints the time of the slow
# steps ("time: ..."). Ends with "roots-selftest: N passed, M failed"; non-zero on any failure.
#
#   .ci/lib/roots-selftest.sh [NAME]...     (default: every root)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=roots.sh
source "$here/roots.sh"

# The host side of the test needs python3 (the HTTP server) and pgrep.
need=()
command -v python3 >/dev/null || need+=(python3)
command -v pgrep >/dev/null || need+=(procps)
((${#need[@]} == 0)) || _roots_apt_install "${need[@]}"

passed=0 failed=0
tmp="$(mktemp -d)"
http_pid=""
cleanup() {
  if [[ -n "$http_pid" ]]; then
    kill "$http_pid" 2>/dev/null || true
    wait "$http_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); echo "PASS $*"; }
ko() { failed=$((failed + 1)); echo "FAIL $*"; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# check NAME WHAT REGEX [OPTION]... -- CMD...: runs CMD in root NAME (root_run NAME --bind TMP
# [OPTION]... -- CMD...), prints its output, passes when it exits 0 and its output (stdout and
# stderr) matches the extended REGEX.
check() {
  local name="$1" what="$2" re="$3" out rc=0
  shift 3
  out="$(root_run "$name" --bind "$tmp" "$@" 2>&1)" || rc=$?
  # shellcheck disable=SC2001  # every line
  printf '  [%s] %s:\n%s\n' "$name" "$what" "$(sed 's/^/    | /' <<<"$out")"
  if ((rc == 0)) && grep -Eq -- "$re" <<<"$out"; then
    ok "$name: $what"
  else
    ko "$name: $what (exit $rc, wanted /$re/)"
  fi
}

# A page on the host's loopback, served by the host's Python.
mkdir -p "$tmp/www"
token="storefront-roots-$RANDOM$RANDOM"
echo "$token" >"$tmp/www/index.html"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 -m http.server --bind 127.0.0.1 --directory "$tmp/www" "$port" >"$tmp/http.log" 2>&1 &
http_pid=$!
for _ in $(seq 100); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/', timeout=1)" 2>/dev/null && break
  sleep 0.1
done

cat >"$tmp/hello.c" <<'EOF'
#include <stdio.h>
#include <gnu/libc-version.h>
int main(void) { printf("hello from C, glibc %s\n", gnu_get_libc_version()); return 0; }
EOF

names=("$@")
((${#names[@]})) || mapfile -t names < <(roots_names)

for name in "${names[@]}"; do
  echo "== $name"
  case "$name" in
    bullseye-amd64) arch=x86_64 glibc=2.31 py='Python 3\.9\.' php='PHP 7\.4\.' java=no ;;
    bookworm-arm64) arch=aarch64 glibc=2.36 py='Python 3\.11\.' php='PHP 8\.2\.' java=yes ;;
    *) arch='.' glibc='.' py='Python 3' php='PHP' java=no ;;
  esac
  t0="$(now)"
  if root="$(root_ensure "$name")"; then
    t1="$(now)"
    ok "$name: root_ensure ($root)"
    echo "time: $name root_ensure $(elapsed "$t0" "$t1") s"
    t0="$(now)"
    root_ensure "$name" >/dev/null
    echo "time: $name root_ensure again (cached) $(elapsed "$t0" "$(now)") s"
    echo "size: $name $(du -sh "$root" | cut -f1)"
  else
    ko "$name: root_ensure"
    continue
  fi

  check "$name" "uname -m" "^$arch\$" -- uname -m
  check "$name" "glibc" " $glibc\$" -- sh -c 'ldd --version | head -1'
  check "$name" "python3" "^$py" -- python3 --version
  t0="$(now)"
  check "$name" "venv + pip" "^pip [0-9]" -- sh -c 'python3 -m venv /tmp/v && /tmp/v/bin/pip --version'
  echo "time: $name python3 -m venv + pip --version $(elapsed "$t0" "$(now)") s"
  check "$name" "php" "^$php" -- php -v
  check "$name" "php sqlite3" "^sqlite3 [0-9]" -- php -r 'echo "sqlite3 ", SQLite3::version()["versionString"], "\n";'
  if [[ "$java" == yes ]]; then
    t0="$(now)"
    check "$name" "java" 'version "17\.' -- java -version
    echo "time: $name java -version $(elapsed "$t0" "$(now)") s"
  fi
  t0="$(now)"
  check "$name" "gcc hello" "^hello from C, glibc $glibc\$" -- sh -c "gcc -o /tmp/hello '$tmp/hello.c' && /tmp/hello"
  echo "time: $name gcc hello $(elapsed "$t0" "$(now)") s"
  check "$name" "http from the host's loopback" "^$token\$" -- python3 -c \
    "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/', timeout=30).read().decode().strip())"
  check "$name" "/tmp is a tmpfs" '^tmpfs$' -- stat -f -c %T /tmp
  STOREFRONT_ROOTS_LEAK=1 check "$name" "clean environment, --env" '^HOME=/root LANG=C.UTF-8 PATH=[^ ]+ STOREFRONT_X=a b$' \
    --env 'STOREFRONT_X=a b' -- sh -c 'env | grep -v "^PWD=" | sort | tr "\n" " " | sed "s/ \$//"'
  rc=0
  # shellcheck disable=SC2016  # expanded inside the root
  out="$(root_run "$name" --env STOREFRONT_X=a\ b --chdir /tmp -- sh -c 'echo "$STOREFRONT_X in $(pwd)"; exit 7')" || rc=$?
  if [[ "$rc" == 7 && "$out" == "a b in /tmp" ]]; then
    ok "$name: --env, --chdir, exit status"
  else
    ko "$name: --env, --chdir, exit status (exit $rc, output '$out')"
  fi
done

# A root_run killed with SIGKILL (its unshare) leaves no process and no mount behind.
name="${names[0]}"
marker="$((1000 + RANDOM % 8000))"
mkdir -p "$tmp/killed"
( root_run "$name" --bind "$tmp/killed" -- sh -c "sleep $marker & sleep $marker & echo started >'$tmp/killed/flag'; wait" ) 2>"$tmp/killed.err" &
runner=$!
for _ in $(seq 300); do [[ -e "$tmp/killed/flag" ]] && break; sleep 0.1; done
ushare="$(pgrep -P "$(pgrep -P "$runner" | head -1)" -x unshare || true)"
[[ -n "$ushare" ]] || ushare="$(pgrep -f "^unshare --mount .*$name" | head -1 || true)"
if [[ -e "$tmp/killed/flag" && -n "$ushare" ]]; then
  kill -KILL "$ushare"
  wait "$runner" 2>/dev/null || true
  sleep 1
  left="$(pgrep -f "^sleep $marker\$" || true)"
  mounts="$(findmnt -rn -o TARGET | grep -F "$(_roots_cache)" || true)"
  if [[ -z "$left" && -z "$mounts" ]]; then
    ok "$name: root_run killed with SIGKILL leaves no process, no mount"
  else
    ko "$name: root_run killed with SIGKILL left processes [$left] mounts [$mounts]"
  fi
else
  ko "$name: root_run to be killed did not start (flag, unshare pid '$ushare')"
  kill "$runner" 2>/dev/null || true
fi

# Nothing of any run is mounted in the host's namespace.
mounts="$(findmnt -rn -o TARGET | grep -F "$(_roots_cache)" || true)"
if [[ -z "$mounts" ]]; then
  ok "no mounts left under $(_roots_cache)"
else
  ko "mounts left under $(_roots_cache): $mounts"
fi

echo "roots-selftest: $passed passed, $failed failed"
((failed == 0))
