#!/usr/bin/env bash
# Installs, from Debian's packages, the servers that tests start for themselves (see
# .ci/lib/servers.sh): Redis, PostgreSQL, php-fpm with cgi-fcgi, and SQLite (CLI and PHP's PDO
# driver). Idempotent: nothing is fetched when everything is there. Runs as root on Debian.
#
# The tests start each server on loopback, on a free port, in a temp dir, and stop it by its
# process id; a service that a package starts on install (PostgreSQL's cluster on 5432,
# redis-server on 6379, php-fpm's pool) is not wanted. Service starts are refused during the
# install (policy-rc.d), and any such process that still appears is stopped by its pid.
set -euo pipefail

packages=(redis-server postgresql php-fpm libfcgi-bin sqlite3 php-sqlite3 php-cli libsqlite3-dev pkg-config)

missing=()
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null \
  && compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null || missing+=(postgresql)
command -v psql >/dev/null || missing+=(psql)
compgen -G '/usr/sbin/php-fpm*' >/dev/null || missing+=(php-fpm)
command -v cgi-fcgi >/dev/null || missing+=(cgi-fcgi)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
# The server library links the system's libsqlite3 (one SQLite per process, shared with the
# app's own driver): building it needs the development files and pkg-config.
pkg-config --exists sqlite3 2>/dev/null || missing+=(libsqlite3-dev)
if ! command -v php >/dev/null; then
  missing+=(php)
elif ! php -m 2>/dev/null | grep -qi '^pdo_sqlite$'; then
  missing+=(pdo_sqlite)
fi
# free_port in .ci/lib/servers.sh asks the kernel through python3.
if ! command -v python3 >/dev/null; then
  missing+=(python3)
  packages+=(python3)
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-servers: redis, postgresql, php-fpm, cgi-fcgi, sqlite3, libsqlite3-dev and pdo_sqlite are installed"
  exit 0
fi
echo "install-servers: missing ${missing[*]}; installing ${packages[*]}"

# Server processes of the kind a package could start, as "pid args" lines.
server_processes() {
  ps -eo pid=,args= | awk '$2 ~ /(^|\/)(redis-server|postgres|postmaster)$/ || $2 ~ /^php-fpm/ || $0 ~ /php-fpm: master/ {print}' || true
}
before="$(server_processes | awk '{print $1}')"

# Refuse service starts while the packages are configured (Debian's invoke-rc.d asks
# /usr/sbin/policy-rc.d; 101 = action forbidden). An existing policy is left as it is.
policy=/usr/sbin/policy-rc.d
own_policy=
if [[ ! -e "$policy" ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  own_policy=1
fi
remove_policy() { if [[ -n "$own_policy" ]]; then rm -f "$policy"; fi; }
trap remove_policy EXIT

apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
remove_policy
trap - EXIT

# A process still alive that is not a zombie.
alive() {
  local stat
  stat="$(ps -o stat= -p "$1" 2>/dev/null || true)"
  [[ -n "$stat" && "$stat" != Z* ]]
}

# Whatever the packages started on their own configuration (/etc/redis or port 6379, the cluster
# under /etc/postgresql or /var/lib/postgresql, /etc/php) since the install began: only those
# processes, never a server that tests or other work started in a temp dir.
package_started() {
  local pid args
  while read -r pid args; do
    [[ -z "$pid" ]] && continue
    grep -qx "$pid" <<<"$before" && continue
    case "$args" in
      *redis-server*:6379* | *redis-server*/etc/redis/*) echo "$pid" ;;
      *postgres*/var/lib/postgresql/* | *postgres*/etc/postgresql/*) echo "$pid" ;;
      *php-fpm:\ master*/etc/php/*) echo "$pid" ;;
    esac
  done < <(server_processes)
}

mapfile -t stray < <(package_started)
for pid in "${stray[@]}"; do
  args="$(ps -o args= -p "$pid" 2>/dev/null || true)"
  echo "install-servers: stopping '$args' (pid $pid), started by its package"
  # postgres: SIGINT is its fast shutdown; redis and php-fpm end on SIGTERM.
  case "$args" in
    *postgres*) kill -INT "$pid" 2>/dev/null || true ;;
    *) kill -TERM "$pid" 2>/dev/null || true ;;
  esac
done
for pid in "${stray[@]}"; do
  for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
done

# Nothing the packages started may be left (nothing on 5432 or 6379 from the install).
mapfile -t left < <(package_started | while read -r pid; do alive "$pid" && echo "$pid"; done)
if [[ ${#left[@]} -gt 0 ]]; then
  echo "install-servers: server processes left running after the install:" >&2
  ps -o pid=,args= -p "$(IFS=,; echo "${left[*]}")" >&2 || true
  exit 1
fi

php -m | grep -qi '^pdo_sqlite$' || { echo "install-servers: PHP has no pdo_sqlite after the install" >&2; exit 1; }
echo "install-servers: installed ${packages[*]}"
