#!/usr/bin/env bash
# Install test on an older Linux (see run; issue 23): the release's artifacts installed and used in
# the Debian 11 (bullseye, glibc 2.31, Python 3.9) amd64 root of .ci/lib/roots.sh, the way a user
# there installs them:
#   - one venv: `pip install --no-index` of the SDK wheel (OUT/python) and of the sandbox wheel
#     (OUT/sandbox); pip must accept both platform tags on glibc 2.31, and the SDK must load its
#     library there;
#   - the sandbox wheel's `storefront-sandbox` command started in the root (port 0, ready file;
#     stopped by PID at the end);
#   - bindings/python/README.md's quick start, taken out of the page (.ci/lib/md-block) and run
#     as written (as python.sh runs it: exactly the sandbox's variables and USER_ACCESS_TOKEN,
#     .ci/lib/sandbox_env.py), the request log checked (.ci/lib/quickstart-sandbox check); then
#     that merchant payment paid (`storefront-sandbox trigger pay`) and read back as paid by the SDK;
#   - docs/c.md's quick start with its private-prefix lines (as c.sh runs them): the C tarball
#     unpacked, quickstart.c compiled with the root's gcc and pkg-config, run against the sandbox.
# Needs root (the roots are chroots). The root is built once and cached (root_ensure); the test
# itself takes some 15 s. Everything that touches an artifact runs inside the root; the host only
# copies the three artifacts into the scratch folder (nothing of OUT is mounted) and takes the
# Markdown blocks out of the pages. The host side re-runs this script inside the root (--inside),
# bind-mounting the scratch folder and $STOREFRONT_CI (helpers, read only in practice): there
# common.sh's pass/fail/finish count the checks. Every process started in the root ends with it
# (root_run's PID namespace).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
root_name=bullseye-amd64

if [[ "${1:-}" != --inside ]]; then
  # ---- on the host ---------------------------------------------------------------------------
  if [[ "$(id -u)" != 0 ]]; then
    echo "install-bullseye: needs root: the Debian 11 root is a chroot (.ci/lib/roots.sh); run .ci/install-tests/run as root" >&2
    exit 1
  fi
  # shellcheck source=../lib/roots.sh
  source "$STOREFRONT_CI/lib/roots.sh"
  repo="$(cd "$STOREFRONT_CI/.." && pwd)"
  shopt -s nullglob
  one() { # one WHAT GLOB...: the path of the one file matching, or fail the test
    local what="$1"
    shift
    if (($# != 1)); then
      echo "install-bullseye: expected one $what, found $#: $*" >&2
      exit 1
    fi
    echo "$1"
  }
  sdk_wheel=$(one "SDK wheel" "$STOREFRONT_DIST"/python/storefront-*-manylinux*.whl)
  sandbox_wheel=$(one "sandbox wheel" "$STOREFRONT_DIST"/sandbox/storefront_sandbox-*.whl)
  c_tarball=$(one "C tarball" "$STOREFRONT_DIST"/c/storefront-c-*-linux-x86_64.tar.gz)
  mkdir dist
  cp "$sdk_wheel" "$sandbox_wheel" "$c_tarball" dist/
  md_block() { python3 "$STOREFRONT_CI/lib/md-block" "$@"; }
  md_block "$repo/bindings/python/README.md" "python quickstart" >quickstart.py
  md_block "$repo/docs/c.md" "c quickstart.c" >quickstart.c
  md_block "$repo/docs/c.md" "sh private-prefix" >private-prefix.sh
  echo "install-bullseye: artifacts: $(basename "$sdk_wheel"), $(basename "$sandbox_wheel"), $(basename "$c_tarball")"
  root_ensure "$root_name" >/dev/null
  ci="$(realpath -e "$STOREFRONT_CI")"
  status=0
  root_run "$root_name" --bind "$PWD" --bind "$ci" --env STOREFRONT_CI="$ci" --chdir "$(pwd -P)" \
    -- bash "$ci/install-tests/bullseye.sh" --inside || status=$?
  exit "$status"
fi

# ---- inside the root: PATH, HOME=/root, LANG and STOREFRONT_CI only; cwd the scratch folder ------
# shellcheck source=common.sh
source "$STOREFRONT_CI/install-tests/common.sh" # pass, fail, finish; start_sandbox; kills $sandbox_pid at exit
glibc=$(getconf GNU_LIBC_VERSION)
# shellcheck disable=SC1091 # the root's /etc/os-release
echo "install-bullseye: in $(. /etc/os-release && echo "$PRETTY_NAME"), $glibc, $(python3 --version)"
[[ "$glibc" == "glibc 2.31" ]] || { echo "install-bullseye: not in the bullseye root ($glibc)" >&2; exit 1; }
sdk_wheel=$(echo dist/storefront-*.whl)
sandbox_wheel=$(echo dist/storefront_sandbox-*.whl)
c_tarball=$(echo dist/storefront-c-*.tar.gz)
version=$(basename "$c_tarball" | sed 's/^storefront-c-\(.*\)-linux-x86_64.tar.gz$/\1/')
show() { sed 's/^/    /' "$1" | tail -n "${2:-15}" >&2; } # the end of a log, indented, on stderr

# 1. One venv, both wheels, local files only.
python3 -m venv venv
pip_install() { venv/bin/python -m pip install --no-index --disable-pip-version-check -q "$1" >"$2" 2>&1; }
if pip_install "$sdk_wheel" pip-sdk.log; then
  pass "pip $(venv/bin/pip --version | cut -d' ' -f2) installs $(basename "$sdk_wheel")"
  if venv/bin/python -c 'import storefront; print(storefront.library_version())' >load.log 2>&1 \
    && [[ "$(cat load.log)" == "$version" ]]; then
    pass "the SDK loads its library (version $version) under $(venv/bin/python --version)"
  else
    show load.log
    fail "the SDK does not load its library in the root"
  fi
else
  show pip-sdk.log
  fail "pip refuses $(basename "$sdk_wheel") on $glibc"
fi
sandbox_bin="$PWD/venv/bin/storefront-sandbox"
if pip_install "$sandbox_wheel" pip-sandbox.log; then
  pass "pip installs $(basename "$sandbox_wheel")"
else
  show pip-sandbox.log
  fail "pip refuses $(basename "$sandbox_wheel") on $glibc"
  # Not a check: whether the binary would run here if pip took it.
  python3 - "$sandbox_wheel" <<'PY' && sandbox_bin="$PWD/unpacked/storefront-sandbox"
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith(".data/scripts/storefront-sandbox"))
    os.makedirs("unpacked", exist_ok=True)
    with open("unpacked/storefront-sandbox", "wb") as out:
        out.write(wheel.read(name))
os.chmod("unpacked/storefront-sandbox", 0o755)
PY
  echo "    (the binary in the wheel, run directly: $("$sandbox_bin" --help 2>&1 | head -3 | tr '\n' ' '))" >&2
fi

# 2. The sandbox from that wheel, in the root.
sandbox_running=0
if [[ -x "$sandbox_bin" ]] && [[ "$("$sandbox_bin" --help 2>&1 | head -1 || true)" == usage:* ]]; then
  start_sandbox "$sandbox_bin" "$PWD" # fails the test with its log if it is not ready within 60 s
  sandbox_running=1
  pass "the wheel's storefront-sandbox runs in the root: pid $sandbox_pid, $(sandbox_origin "$PWD")"
else
  fail "no storefront-sandbox from the sandbox wheel runs in the root"
fi

# 3. The Python quick start, as written, with the sandbox's variables only.
order_no=
if ((sandbox_running)) && [[ -x venv/bin/python ]] && venv/bin/python -c 'import storefront' 2>/dev/null; then
  mapfile -t quickstart_vars < <(python3 "$STOREFRONT_CI/lib/sandbox_env.py" "$PWD/ready.json")
  if ((${#quickstart_vars[@]})) \
    && env -i PATH="$PATH" HOME="$PWD" "${quickstart_vars[@]}" venv/bin/python quickstart.py >quickstart.log 2>&1 \
    && grep -qx '12.50' quickstart.log && grep -qx 'final' quickstart.log \
    && order_no=$(python3 "$STOREFRONT_CI/lib/quickstart-sandbox" check "$PWD/ready.json"); then
    pass "bindings/python/README.md's quick start, as written, created and queried merchant payment $order_no; the catalog order is final"
  else
    show quickstart.log 30
    fail "bindings/python/README.md's quick start in the root"
  fi
  if [[ -n "$order_no" ]] \
    && "$sandbox_bin" trigger --ready-file "$PWD/ready.json" pay "$order_no" --channel ch_card_usd >pay.log 2>&1 \
    && env -i PATH="$PATH" HOME="$PWD" "${quickstart_vars[@]}" venv/bin/python - "$order_no" >paid.log 2>&1 <<'PY'
import sys
import storefront

with storefront.Client.from_env() as client:
    status = client.merchant_payment(sys.argv[1])["status"]
print(status)
sys.exit(0 if status.is_paid else 1)
PY
  then
    pass "merchant payment $order_no paid (storefront-sandbox trigger pay) and read back as $(cat paid.log) by the SDK"
  else
    [[ -z "$order_no" ]] || show pay.log
    [[ ! -f paid.log ]] || show paid.log
    fail "the quick start's merchant payment did not reach paid"
  fi
else
  fail "bindings/python/README.md's quick start not run: no SDK or no sandbox in the root"
fi

# 4. docs/c.md's private-prefix lines and program, as c.sh runs them, with the sandbox's variables
#    only (its ready file's "env", after a reset: no USER_ACCESS_TOKEN).
mkdir -p private
cp "$c_tarball" quickstart.c private-prefix.sh private/
c_vars=()
if ((sandbox_running)); then
  mapfile -t c_vars < <(python3 "$STOREFRONT_CI/lib/sandbox_env.py" "$PWD/ready.json" | grep -v '^USER_ACCESS_TOKEN=')
fi
expected_line="^storefront $version: payment [A-Za-z0-9_-]+ of 12\.50 USD is pending\$"
if (cd private && env -i PATH="$PATH" HOME="$PWD/home" "${c_vars[@]}" bash -euo pipefail private-prefix.sh >out.txt 2>&1) \
  && grep -qE "$expected_line" private/out.txt \
  && readelf -d private/quickstart | grep -q "R.*PATH.*$PWD/private/home/.local/storefront/lib" \
  && c_order=$(python3 "$STOREFRONT_CI/lib/quickstart-sandbox" check "$PWD/ready.json") \
  && grep -q "payment $c_order of" private/out.txt; then
  pass "docs/c.md's private-prefix quick start, built with $(gcc --version | head -1) and pkg-config: $(cat private/out.txt)"
else
  show private/out.txt 30
  if ((sandbox_running)); then
    fail "docs/c.md's private-prefix quick start in the root"
  else
    fail "docs/c.md's private-prefix quick start in the root (no sandbox running there)"
  fi
fi

if [[ -n "$sandbox_pid" ]]; then
  kill "$sandbox_pid" 2>/dev/null || true
  wait "$sandbox_pid" 2>/dev/null || true
  sandbox_pid=
fi
finish
