# shellcheck shell=bash
# Sourced by CI scripts that install the release's artifacts in another Linux and run them there
# as a user would (issue 23: x86_64 and aarch64, old glibc). A "root" is a Debian tree made with
# debootstrap, entered with chroot; an arm64 root runs through qemu-user-static (binfmt_misc).
#
#   root_ensure NAME                 builds root NAME if it is not cached (or its stamp differs) and
#                                    prints its path (only that, on stdout); progress on stderr
#   root_run NAME [--bind DIR]... [--env VAR=value]... [--chdir DIR] -- CMD [ARG]...
#                                    runs CMD inside root NAME (root_ensure first) as root; exit
#                                    status is CMD's (128+N when killed by signal N)
#   roots_names                      prints the known names, one a line
#
# Names:  bullseye-amd64   Debian 11 amd64 (glibc 2.31, Python 3.9, PHP 7.4)
#         bookworm-arm64   Debian 12 arm64 under qemu (glibc 2.36, Python 3.11, PHP 8.2, Java 17)
#
# Environment:
#   STOREFRONT_ROOTS_CACHE   where roots live (default /var/cache/storefront-roots): NAME is the
#                            root, .NAME.lock its lock, .NAME.log the last build's log
#   STOREFRONT_ROOTS_MIRROR  Debian mirror (default: the host's apt source for its own suite)
#
# root_run: CMD runs in new mount and PID namespaces (unshare --mount --propagation private
# --pid --fork --kill-child) with /proc, /sys (read-only), a minimal /dev (null zero full random
# urandom tty, own devpts, /dev/shm tmpfs), a fresh tmpfs on /tmp, and each --bind DIR at the same
# path inside. Nothing is mounted in the host's namespace: the mounts go when CMD's namespace goes,
# and the namespace goes when CMD exits or is killed (a process CMD leaves behind is killed with
# it: the PID namespace's init is a shell that waits for CMD, passes TERM/INT/HUP on to it and
# exits with its status; killing root_run's unshare with SIGKILL kills that init, hence all).
# The network is the host's (a server on the host's 127.0.0.1 is reachable). The environment is
# clean: PATH, HOME=/root, LANG=C.UTF-8 and each --env VAR=value. The working directory is
# --chdir DIR (default /root). Stdin, stdout and stderr are the caller's.
#
# Caching: a root is complete when its stamp (NAME/.storefront-root: format, suite, architecture,
# package list) equals what this file asks for; otherwise it is rebuilt under an exclusive flock,
# in .NAME.build.XXXXXX beside it, and moved into place only when complete (a killed build leaves
# a .build folder, removed by the next build, never a root that looks ready). root_run holds a
# shared lock on the same file (kept by the namespace's init, not passed on to CMD), so a root is
# never replaced under a running command; a root_ensure that must rebuild waits for them.
#
# Host set-up (done by root_ensure when needed, on Debian 12; see also .ci/lib/roots.md): apt-get install debootstrap
# qemu-user-static binfmt-support; mount binfmt_misc on /proc/sys/fs/binfmt_misc when it is not
# (no systemd here to do it); `update-binfmts --enable qemu-aarch64`, which registers qemu with
# the flags "PF": F (fix-binary) makes the kernel open the interpreter at registration, so it
# runs inside a chroot that has no qemu of its own.

_ROOTS_FORMAT=1
_ROOTS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
_ROOTS_COMMON_PKGS="python3 python3-venv python3-pip gcc libc6-dev pkg-config libsqlite3-0 ca-certificates php-cli php-sqlite3"

roots_names() {
  printf '%s\n' bullseye-amd64 bookworm-arm64
}

# _roots_spec NAME: prints "SUITE ARCH PACKAGES..." or fails.
_roots_spec() {
  case "$1" in
    bullseye-amd64) echo "bullseye amd64 $_ROOTS_COMMON_PKGS" ;;
    bookworm-arm64) echo "bookworm arm64 $_ROOTS_COMMON_PKGS default-jre-headless" ;;
    *)
      echo "roots.sh: unknown root '$1' (known: $(roots_names | tr '\n' ' '))" >&2
      return 1
      ;;
  esac
}

_roots_cache() {
  echo "${STOREFRONT_ROOTS_CACHE:-/var/cache/storefront-roots}"
}

# _roots_stamp NAME: the stamp a complete root NAME carries.
_roots_stamp() {
  local spec suite arch pkgs
  spec="$(_roots_spec "$1")" || return 1
  read -r suite arch pkgs <<<"$spec"
  printf 'format=%s\nsuite=%s\narch=%s\npackages=%s\n' "$_ROOTS_FORMAT" "$suite" "$arch" "$pkgs"
}

# _roots_mirror: the Debian mirror the host's apt uses for the host's own suite.
_roots_mirror() {
  if [[ -n "${STOREFRONT_ROOTS_MIRROR:-}" ]]; then
    echo "$STOREFRONT_ROOTS_MIRROR"
    return 0
  fi
  local codename uri
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  # deb822 (.sources): a paragraph with Types deb and the codename in Suites; its first URI.
  uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v s="$codename" '
    function flush() { if (deb && suite && uri != "" && found == "") found = uri; deb = 0; suite = 0; uri = "" }
    /^[ \t]*#/ { next }
    /^[ \t]*$/ { flush(); next }
    tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
    tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) suite = 1 }
    tolower($1) == "uris:" { uri = $2 }
    END { flush(); if (found != "") print found }')"
  if [[ -z "$uri" ]]; then
    # One-line format: deb [options] URI SUITE COMPONENTS...
    uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v s="$codename" '
      $1 == "deb" { i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == s) { print $i; exit } }')"
  fi
  if [[ -z "$uri" ]]; then
    echo "roots.sh: no Debian mirror for '$codename' in the host's apt sources; set STOREFRONT_ROOTS_MIRROR" >&2
    return 1
  fi
  echo "$uri"
}

# _roots_apt_install PACKAGE...: on the host (apt-get update first only when needed); waits for
# another apt to finish rather than failing on its lock.
_roots_apt_install() {
  local apt=(apt-get -y -q -o DPkg::Lock::Timeout=600)
  if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install "$@" >&2; then
    "${apt[@]}" update >&2
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install "$@" >&2
  fi
}

# _roots_host_prereqs ARCH: debootstrap (and for a foreign ARCH, qemu with binfmt_misc, fix-binary).
_roots_host_prereqs() {
  local arch="$1" host_arch need=()
  host_arch="$(dpkg --print-architecture)"
  command -v debootstrap >/dev/null || need+=(debootstrap)
  command -v unshare >/dev/null || need+=(util-linux)
  if [[ "$arch" != "$host_arch" ]]; then
    [[ -x /usr/bin/qemu-aarch64-static ]] || need+=(qemu-user-static)
    command -v update-binfmts >/dev/null || need+=(binfmt-support)
  fi
  if ((${#need[@]})); then
    echo "roots.sh: installing ${need[*]}" >&2
    _roots_apt_install "${need[@]}"
  fi
  [[ "$arch" == "$host_arch" ]] && return 0
  local qname
  case "$arch" in
    arm64) qname=qemu-aarch64 ;;
    *) echo "roots.sh: no qemu set-up for architecture $arch" >&2; return 1 ;;
  esac
  local bm=/proc/sys/fs/binfmt_misc
  if [[ ! -e "$bm/register" ]]; then
    mount -t binfmt_misc binfmt_misc "$bm" || {
      echo "roots.sh: cannot mount binfmt_misc on $bm" >&2
      return 1
    }
  fi
  if [[ ! -e "$bm/$qname" ]] || ! grep -qx enabled "$bm/$qname"; then
    update-binfmts --enable "$qname" >&2 || {
      echo "roots.sh: update-binfmts --enable $qname failed" >&2
      return 1
    }
  fi
  if ! grep -q '^flags:.*F' "$bm/$qname"; then
    echo "roots.sh: $qname is registered in binfmt_misc without the F (fix-binary) flag, so it cannot" \
      "run inside a chroot; re-register it: update-binfmts --disable $qname && update-binfmts --enable $qname" \
      "(binfmt-support's entry has 'fix_binary yes')" >&2
    return 1
  fi
}

# _roots_ns_init ROOT CHDIR LOCKFD NBIND BIND... NENV ENV... CMD...: runs as PID 1 of the new PID
# namespace, in the new mount namespace (host's bash, outside the root): mounts, then CMD. It keeps
# the lock file descriptor LOCKFD (if not empty) open for as long as the namespace lives, but CMD
# does not inherit it.
_roots_ns_init() {
  local root="$1" chdir="$2" lockfd="$3" n d i
  shift 3
  local binds=() envs=()
  n="$1"; shift
  for ((i = 0; i < n; i++)); do binds+=("$1"); shift; done
  n="$1"; shift
  for ((i = 0; i < n; i++)); do envs+=("$1"); shift; done
  set -e
  mount --make-rprivate /
  mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
  mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
  mount -t tmpfs -o mode=755,nosuid,size=16m tmpfs "$root/dev"
  for d in null zero full random urandom tty; do
    : >"$root/dev/$d"
    mount --bind "/dev/$d" "$root/dev/$d"
  done
  mkdir "$root/dev/pts" "$root/dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
  ln -s pts/ptmx "$root/dev/ptmx"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
  ln -s /proc/self/fd "$root/dev/fd"
  ln -s /proc/self/fd/0 "$root/dev/stdin"
  ln -s /proc/self/fd/1 "$root/dev/stdout"
  ln -s /proc/self/fd/2 "$root/dev/stderr"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
  for d in "${binds[@]}"; do
    if [[ -d "$d" ]]; then
      mkdir -p "$root$d"
    else
      mkdir -p "$(dirname "$root$d")"
      [[ -e "$root$d" ]] || : >"$root$d"
    fi
    mount --rbind "$d" "$root$d"
  done
  set +e
  local child rc
  trap '[[ -n "${child:-}" ]] && kill -TERM "$child" 2>/dev/null' TERM INT HUP
  # An asynchronous command's stdin would be /dev/null: give it ours explicitly.
  if [[ -n "$lockfd" ]]; then
    chroot "$root" /usr/bin/env -i -C "$chdir" PATH="$_ROOTS_PATH" HOME=/root LANG=C.UTF-8 \
      "${envs[@]}" "$@" 0<&0 {lockfd}>&- &
  else
    chroot "$root" /usr/bin/env -i -C "$chdir" PATH="$_ROOTS_PATH" HOME=/root LANG=C.UTF-8 \
      "${envs[@]}" "$@" 0<&0 &
  fi
  child=$!
  while :; do
    wait "$child"
    rc=$?
    kill -0 "$child" 2>/dev/null || break
  done
  exit "$rc"
}

# _roots_exec ROOT BINDS_NAME ENVS_NAME CHDIR LOCKFD CMD...: CMD in ROOT in its own namespaces
# (BINDS_NAME, ENVS_NAME: names of arrays; LOCKFD: a descriptor CMD must not inherit, or "").
_roots_exec() {
  local root="$1" chdir="$4" lockfd="$5"
  local -n _binds="$2" _envs="$3"
  shift 5
  unshare --mount --propagation private --pid --fork --kill-child -- \
    bash -c "$(declare -f _roots_ns_init); _ROOTS_PATH='$_ROOTS_PATH'; _roots_ns_init \"\$@\"" \
    _roots_ns_init "$root" "$chdir" "$lockfd" "${#_binds[@]}" "${_binds[@]}" "${#_envs[@]}" "${_envs[@]}" "$@"
}

# _roots_rm DIR: removes a build or old root (never across a mount point).
_roots_rm() {
  local d="$1"
  [[ -e "$d" ]] || return 0
  if findmnt -rn -o TARGET | grep -qF -- "$d"; then
    echo "roots.sh: $d has mounts in the host's namespace; not removing it" >&2
    return 1
  fi
  rm -rf --one-file-system -- "$d"
}

# _roots_build NAME CACHE: builds NAME and moves it into CACHE/NAME (caller holds the lock).
_roots_build() {
  local name="$1" cache="$2" spec suite arch pkgs mirror tmp log old start
  spec="$(_roots_spec "$name")"
  read -r suite arch pkgs <<<"$spec"
  _roots_host_prereqs "$arch"
  mirror="$(_roots_mirror)"
  local d
  for d in "$cache/.$name.build."* "$cache/.$name.old."*; do
    [[ -e "$d" ]] && _roots_rm "$d"
  done
  tmp="$(mktemp -d "$cache/.$name.build.XXXXXX")"
  chmod 755 "$tmp"
  log="$cache/.$name.log"
  start=$SECONDS
  echo "roots.sh: building $name ($suite $arch from $mirror) in $tmp; log in $log" >&2
  # shellcheck disable=SC2034  # used through namerefs in _roots_exec
  local no=() env=(DEBIAN_FRONTEND=noninteractive)
  # debootstrap in a private mount namespace too: its /proc, /sys mounts in the target
  # cannot outlive it. With binfmt (F flag) it runs the second stage of a foreign root itself.
  if ! unshare --mount --propagation private --pid --fork --kill-child -- \
    debootstrap --variant=minbase --arch="$arch" "$suite" "$tmp" "$mirror" >"$log" 2>&1; then
    echo "roots.sh: debootstrap failed for $name; the end of $log:" >&2
    tail -n 30 "$log" >&2
    _roots_rm "$tmp"
    return 1
  fi
  echo "roots.sh: $name: debootstrap done after $((SECONDS - start)) s; installing packages" >&2
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod 755 "$tmp/usr/sbin/policy-rc.d"
  cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
  # shellcheck disable=SC2086  # the package list is words
  if ! _roots_exec "$tmp" no env / "" sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $pkgs && apt-get clean && rm -rf /var/lib/apt/lists/*" >>"$log" 2>&1; then
    echo "roots.sh: installing packages failed for $name; the end of $log:" >&2
    tail -n 30 "$log" >&2
    _roots_rm "$tmp"
    return 1
  fi
  _roots_stamp "$name" >"$tmp/.storefront-root"
  echo "mirror=$mirror" >"$tmp/.storefront-root-mirror"
  if [[ -e "$cache/$name" ]]; then
    old="$(mktemp -u "$cache/.$name.old.XXXXXX")"
    mv -T "$cache/$name" "$old"
  fi
  mv -T "$tmp" "$cache/$name"
  [[ -n "${old:-}" ]] && _roots_rm "$old"
  echo "roots.sh: $name ready in $((SECONDS - start)) s" >&2
}

_roots_ready() {
  local dir="$1" name="$2"
  [[ -f "$dir/.storefront-root" ]] && [[ "$(cat "$dir/.storefront-root")" == "$(_roots_stamp "$name")" ]]
}

root_ensure() {
  local name="${1:?usage: root_ensure NAME}" cache dir
  _roots_spec "$name" >/dev/null || return 1
  cache="$(_roots_cache)"
  dir="$cache/$name"
  if ! _roots_ready "$dir" "$name"; then
    mkdir -p "$cache"
    (
      exec {lock}>>"$cache/.$name.lock"
      flock -x "$lock"
      _roots_ready "$dir" "$name" || _roots_build "$name" "$cache"
    ) || return 1
  fi
  # A foreign root needs binfmt at every run (the registration does not survive a reboot).
  local arch
  arch="$(_roots_spec "$name" | awk '{print $2}')"
  _roots_host_prereqs "$arch" || return 1
  echo "$dir"
}

root_run() {
  local name="${1:?usage: root_run NAME [--bind DIR]... [--env VAR=value]... [--chdir DIR] -- CMD...}"
  shift
  local binds=() envs=() chdir=/root d
  while (($#)); do
    case "$1" in
      --bind)
        d="$(realpath -e -- "${2:?--bind needs a path}")" || return 2
        binds+=("$d"); shift 2 ;;
      --env)
        [[ "${2:-}" == [A-Za-z_]*=* ]] || { echo "root_run: --env needs VAR=value" >&2; return 2; }
        envs+=("$2"); shift 2 ;;
      --chdir) chdir="${2:?--chdir needs a path}"; shift 2 ;;
      --) shift; break ;;
      *) echo "root_run: unknown option '$1' (options come before --)" >&2; return 2 ;;
    esac
  done
  (($#)) || { echo "root_run: no command after --" >&2; return 2; }
  local root cache
  root="$(root_ensure "$name")" || return 1
  cache="$(_roots_cache)"
  (
    exec {lock}>>"$cache/.$name.lock"
    flock -s "$lock"
    # The namespace's init keeps the shared lock while anything runs in the root.
    _roots_exec "$root" binds envs "$chdir" "$lock" "$@"
  )
}
