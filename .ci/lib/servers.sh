# Sourced by CI scripts whose tests need a server. Every server is one from Debian's packages
# (installed by .ci/install-servers.sh), started on 127.0.0.1, on a free port, with its files in
# a directory the caller gives (usually under `mktemp -d`), and stopped by its process id:
#
#   free_port                        prints a free TCP port on 127.0.0.1 (asks the kernel)
#   start_redis DIR                  sets REDIS_PID, REDIS_PORT, REDIS_URL (redis://127.0.0.1:PORT/0)
#   stop_redis
#   start_postgres DIR               sets PG_PID, PG_PORT, PG_URL (postgres://postgres@127.0.0.1:PORT/postgres);
#                                    trust authentication, socket in DIR, data in DIR/data, log DIR/log
#   stop_postgres
#   start_php_fpm DIR CHILDREN [INI] sets FPM_PID, FPM_PORT: one pool on 127.0.0.1:PORT, pm = static with
#                                    CHILDREN workers, clear_env = no, ffi.enable = true, running as
#                                    root; INI (optional, php.ini lines) is read after the system's
#                                    conf.d (e.g. "extension=/path/to/ext.so"); logs in DIR
#   stop_php_fpm
#   stop_all_servers                 stops whatever was started; always succeeds
#
# A start function returns non-zero (with the server's log on stderr) when the server does not
# answer within 60 s. Use with a trap so that nothing outlives the script:
#
#   source .ci/lib/servers.sh
#   tmp="$(mktemp -d)"
#   trap 'stop_all_servers; rm -rf "$tmp"' EXIT
#   start_redis "$tmp/redis"
#
# PostgreSQL refuses to run as root: DIR is given to the postgres user, and a parent directory
# it cannot enter (a 0700 `mktemp -d` directory under the temp dir) is made enterable (o+x, not
# listable).

REDIS_PID="" REDIS_PORT="" REDIS_URL=""
PG_PID="" PG_PORT="" PG_URL="" PG_DIR="" PG_BINDIR=""
FPM_PID="" FPM_PORT=""

# How long a start waits for its server to answer, in tenths of a second.
_SERVERS_WAIT_TENTHS=600

free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# Whether PID is a running process (a zombie waiting to be reaped counts as gone).
_servers_alive() {
  local stat
  stat="$(ps -o stat= -p "$1" 2>/dev/null || true)"
  [[ -n "$stat" && "$stat" != Z* ]]
}

# Whether something accepts TCP connections on 127.0.0.1:PORT.
_servers_port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Stops PID with SIGNAL, then SIGKILL if it is still there after 10 s; reaps it when it is a
# child of this shell.
_servers_stop_pid() {
  local pid="$1" signal="$2"
  [[ -n "$pid" ]] || return 0
  if _servers_alive "$pid"; then
    kill "-$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      _servers_alive "$pid" || break
      sleep 0.1
    done
    if _servers_alive "$pid"; then
      echo "servers: pid $pid did not stop on SIG$signal; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do
        _servers_alive "$pid" || break
        sleep 0.1
      done
    fi
  fi
  wait "$pid" 2>/dev/null || true
}

# Prints a file to stderr under a heading, when it exists.
_servers_show_log() {
  if [[ -f "$2" ]]; then
    echo "---- $1 ($2)" >&2
    tail -n 50 "$2" >&2
  fi
}

start_redis() {
  local dir="$1"
  mkdir -p "$dir"
  REDIS_PORT="$(free_port)"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$dir" --save "" --appendonly no \
    --daemonize no --logfile "$dir/redis.log" >/dev/null 2>&1 &
  REDIS_PID=$!
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  for _ in $(seq 1 "$_SERVERS_WAIT_TENTHS"); do
    if [[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; then
      return 0
    fi
    _servers_alive "$REDIS_PID" || break
    sleep 0.1
  done
  _servers_show_log "redis-server log" "$dir/redis.log"
  echo "servers: redis-server did not answer on 127.0.0.1:$REDIS_PORT" >&2
  stop_redis
  return 1
}

stop_redis() {
  _servers_stop_pid "$REDIS_PID" TERM
  REDIS_PID="" REDIS_PORT="" REDIS_URL=""
}

# The newest installed PostgreSQL's bin directory.
_servers_pg_bindir() {
  local dirs
  dirs="$(compgen -G '/usr/lib/postgresql/*/bin' | sort -V | tail -n 1)"
  if [[ -z "$dirs" || ! -x "$dirs/initdb" ]]; then
    echo "servers: no PostgreSQL server under /usr/lib/postgresql/*/bin (run .ci/install-servers.sh)" >&2
    return 1
  fi
  echo "$dirs"
}

# Lets the postgres user reach DIR: parents it cannot enter get o+x, but only temp directories
# (under ${TMPDIR:-/tmp}); anything else is an error.
_servers_pg_reach() {
  local dir="$1" parent tmp
  tmp="$(realpath "${TMPDIR:-/tmp}")"
  parent="$(dirname "$dir")"
  while [[ "$parent" != / ]]; do
    if ! runuser -u postgres -- test -x "$parent"; then
      case "$parent/" in
        "$tmp"/?*/)
          chmod o+x "$parent"
          ;;
        *)
          echo "servers: the postgres user cannot enter $parent (needed for $dir)" >&2
          return 1
          ;;
      esac
    fi
    parent="$(dirname "$parent")"
  done
}

start_postgres() {
  local dir
  mkdir -p "$1"
  dir="$(realpath "$1")"
  PG_BINDIR="$(_servers_pg_bindir)" || return 1
  chown postgres:postgres "$dir"
  chmod 0700 "$dir"
  _servers_pg_reach "$dir" || return 1
  PG_DIR="$dir"
  PG_PORT="$(free_port)"
  PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
  if ! runuser -u postgres -- "$PG_BINDIR/initdb" -D "$dir/data" -A trust -U postgres --no-sync \
    >"$dir/initdb.log" 2>&1; then
    _servers_show_log "initdb output" "$dir/initdb.log"
    echo "servers: initdb failed in $dir/data" >&2
    return 1
  fi
  if ! runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$dir/data" \
    -o "-p $PG_PORT -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" \
    -w -t "$((_SERVERS_WAIT_TENTHS / 10))" start >/dev/null; then
    _servers_show_log "postgres log" "$dir/log"
    echo "servers: postgres did not start on 127.0.0.1:$PG_PORT" >&2
    if [[ -f "$dir/data/postmaster.pid" ]]; then PG_PID="$(head -n 1 "$dir/data/postmaster.pid")"; fi
    stop_postgres
    return 1
  fi
  PG_PID="$(head -n 1 "$dir/data/postmaster.pid")"
}

stop_postgres() {
  if [[ -n "$PG_DIR" && -n "$PG_BINDIR" && -n "$PG_PID" ]] && _servers_alive "$PG_PID"; then
    runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop \
      >/dev/null 2>&1 || true
  fi
  # SIGINT is postgres' fast shutdown; SIGKILL follows if it is still there.
  _servers_stop_pid "$PG_PID" INT
  PG_PID="" PG_PORT="" PG_URL="" PG_DIR=""
}

# The newest php-fpm binary (/usr/sbin/php-fpmX.Y).
_servers_fpm_binary() {
  local binary
  binary="$(compgen -G '/usr/sbin/php-fpm*' | sort -V | tail -n 1)"
  if [[ -z "$binary" ]]; then
    echo "servers: no /usr/sbin/php-fpm* (run .ci/install-servers.sh)" >&2
    return 1
  fi
  echo "$binary"
}

start_php_fpm() {
  local dir children="$2" ini="${3:-}" binary
  mkdir -p "$1"
  dir="$(realpath "$1")"
  binary="$(_servers_fpm_binary)" || return 1
  FPM_PORT="$(free_port)"
  mkdir -p "$dir/conf.d"
  printf '%s\n' "$ini" >"$dir/conf.d/99-servers-extra.ini"
  cat >"$dir/php-fpm.conf" <<CONF
[global]
pid = $dir/php-fpm.pid
error_log = $dir/php-fpm.log
daemonize = no

[test]
user = root
group = root
listen = 127.0.0.1:$FPM_PORT
listen.allowed_clients = 127.0.0.1
pm = static
pm.max_children = $children
clear_env = no
catch_workers_output = yes
php_admin_value[error_log] = $dir/php-error.log
php_admin_flag[log_errors] = on
php_admin_value[ffi.enable] = true
CONF
  # An empty entry in PHP_INI_SCAN_DIR keeps the system's conf.d; DIR/conf.d is read after it.
  PHP_INI_SCAN_DIR=":$dir/conf.d" "$binary" -R --nodaemonize --fpm-config "$dir/php-fpm.conf" \
    >"$dir/php-fpm.out" 2>&1 &
  FPM_PID=$!
  for _ in $(seq 1 "$_SERVERS_WAIT_TENTHS"); do
    _servers_port_open "$FPM_PORT" && return 0
    _servers_alive "$FPM_PID" || break
    sleep 0.1
  done
  _servers_show_log "php-fpm output" "$dir/php-fpm.out"
  _servers_show_log "php-fpm log" "$dir/php-fpm.log"
  echo "servers: php-fpm did not listen on 127.0.0.1:$FPM_PORT" >&2
  stop_php_fpm
  return 1
}

stop_php_fpm() {
  # SIGTERM: the master stops its workers and exits.
  _servers_stop_pid "$FPM_PID" TERM
  FPM_PID="" FPM_PORT=""
}

stop_all_servers() {
  stop_php_fpm
  stop_postgres
  stop_redis
  return 0
}
