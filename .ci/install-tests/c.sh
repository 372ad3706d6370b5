#!/usr/bin/env bash
# C: unpack the release tarball into a fresh prefix, build examples/c/storefront_example.c with
# nothing but `pkg-config --cflags --libs storefront`, check the program needs the versioned
# SONAME, run it against a standalone sandbox; then link the same program against the static
# library (`pkg-config --static`) and run that too.
# Then the quick start docs/c.md, its blocks taken out of the page (.ci/lib/md-block) and run as
# written: the private-prefix lines (no LD_LIBRARY_PATH, no PKG_CONFIG_PATH of ours), and as root
# the system-wide lines (`tar -C /usr/local && ldconfig`) in a mount namespace of their own, where
# /usr/local is an empty tmpfs and /etc an overlay, so the machine's /usr/local and
# /etc/ld.so.cache are untouched. The program reads its configuration with sf_config_from_env: the
# page's sandbox lines (```sh sandbox-env, the sandbox on port 8080) are checked against the lines
# this test's sandbox prints (its port replaced by 8080), and the program runs with exactly the
# variables that sandbox gives (its ready file's "env"), nothing else of this script's.
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
no_rust_toolchain
passed=0

prefix="$PWD/prefix"
mkdir -p "$prefix"
tarball=$(ls "$STOREFRONT_DIST"/c/storefront-c-*-linux-x86_64.tar.gz)
version=$(basename "$tarball" | sed 's/^storefront-c-\(.*\)-linux-x86_64.tar.gz$/\1/')
tar -xzf "$tarball" -C "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[[ "$(pkg-config --modversion storefront)" == "$version" ]]
passed=$((passed + 1))

cp "$STOREFRONT_EXAMPLES/c/storefront_example.c" .
# shellcheck disable=SC2046
gcc -std=c99 -Wall -Wextra -Werror storefront_example.c $(pkg-config --cflags --libs storefront) -o example_shared
needed=$(readelf -d example_shared | sed -n 's/.*Shared library: \[\(libstorefront[^]]*\)\]/\1/p')
[[ "$needed" == "libstorefront.so.${version%%.*}" ]] || { echo "install-c: program needs '$needed'" >&2; exit 1; }
passed=$((passed + 1))

# shellcheck disable=SC2046
gcc -std=c99 -Wall -Wextra -Werror storefront_example.c $(pkg-config --cflags storefront) \
  "$prefix/lib/libstorefront.a" $(pkg-config --static --libs-only-l storefront | sed 's/-lstorefront//') \
  -o example_static
if readelf -d example_static | grep -q 'libstorefront'; then
  echo "install-c: the static program still needs the shared library" >&2
  exit 1
fi
passed=$((passed + 1))

start_sandbox "$STOREFRONT_SANDBOX_BIN" "$PWD"
LD_LIBRARY_PATH="$prefix/lib" ./example_shared "$PWD/ready.json" > shared.out
grep -qx "all checks passed" shared.out
passed=$((passed + 1))
./example_static "$PWD/ready.json" > static.out
grep -qx "all checks passed" static.out
passed=$((passed + 1))

# --- docs/c.md, as written ----------------------------------------------------------------------
doc="$STOREFRONT_CI/../docs/c.md"
md_block() { python3 "$STOREFRONT_CI/lib/md-block" "$doc" "$1"; }
# The sandbox lines the page shows are what the sandbox prints (its port shown as 8080), and the
# program gets exactly the variables the running sandbox gives.
md_block "c quickstart.c" >quickstart.c
md_block "sh sandbox-env" >sandbox-env.sh
python3 - "$PWD/ready.json" "$PWD/sandbox.log" sandbox-env.sh >quickstart.env <<'EOF'
import json, sys
ready = json.load(open(sys.argv[1]))
log, documented = (open(p).read() for p in sys.argv[2:])
port = ready["origin"].rsplit(":", 1)[1]
printed = [line.strip().replace(":" + port + "/", ":8080/")
           for line in log.split("your app's configuration", 1)[1].splitlines()[1:]
           if line.startswith("  export STOREFRONT_")]
documented = [line.strip() for line in documented.splitlines() if line.strip()]
if printed != documented:
    sys.exit("install-c: docs/c.md's sandbox lines differ from what the sandbox prints:\n"
             + "\n".join(documented) + "\n--- printed (port as 8080) ---\n" + "\n".join(printed))
for name, value in ready["env"].items():
    print(f"{name}={value}")
EOF
passed=$((passed + 1))
# The page's own settings, nothing of this script's: the sandbox's variables, HOME for its $HOME.
mapfile -t sandbox_vars <quickstart.env
quickstart_env=(env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH)
for name in STOREFRONT_BASE_URL STOREFRONT_TOKEN_ENDPOINT STOREFRONT_USERINFO_ENDPOINT STOREFRONT_CLIENT_ID \
  STOREFRONT_CLIENT_SECRET STOREFRONT_SCOPES STOREFRONT_ALLOW_INSECURE_LOOPBACK STOREFRONT_ROOT_CA_PEM_FILE \
  STOREFRONT_SHARED_STATE; do
  quickstart_env+=(-u "$name")
done
quickstart_env+=("${sandbox_vars[@]}")
expected_line="^storefront $version: payment [A-Za-z0-9_-]+ of 12\.50 USD is pending\$"
# The program also compiles cleanly as strict C11.
gcc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$prefix/include" quickstart.c

mkdir -p private && cp "$tarball" quickstart.c private/
md_block "sh private-prefix" >private/private-prefix.sh
(cd private && "${quickstart_env[@]}" HOME="$PWD/home" bash -euo pipefail private-prefix.sh >out.txt)
grep -qE "$expected_line" private/out.txt || { cat private/out.txt >&2; echo "install-c: the private-prefix quick start printed the above" >&2; exit 1; }
readelf -d private/quickstart | grep -q "R.*PATH.*$PWD/private/home/.local/storefront/lib" \
  || { echo "install-c: the private-prefix program has no rpath to its prefix" >&2; exit 1; }
echo "install-c: docs/c.md private prefix: $(cat private/out.txt)"
passed=$((passed + 1))

if [[ $(id -u) == 0 ]] && unshare --mount --propagation private true 2>/dev/null; then
  mkdir -p system/etc-up system/etc-work && cp "$tarball" quickstart.c system/
  md_block "sh system-wide" >system/system-wide.sh
  cache_before=$(sha256sum /etc/ld.so.cache)
  (cd system && "${quickstart_env[@]}" unshare --mount --propagation private bash -euo pipefail -c '
    mount -t tmpfs tmpfs /usr/local
    # /etc writable for ldconfig (it renames its new cache over /etc/ld.so.cache, which a bind
    # mount of the file alone refuses): an overlay, or a bind-mounted copy where overlays fail.
    if ! mount -t overlay overlay -o "lowerdir=/etc,upperdir=$PWD/etc-up,workdir=$PWD/etc-work" /etc 2>/dev/null; then
      cp -a /etc "$PWD/etc-copy" && mount --bind "$PWD/etc-copy" /etc
    fi
    bash -euo pipefail system-wide.sh >out.txt
    ldd ./quickstart | grep -q "libstorefront.so.0 => /usr/local/lib/libstorefront.so.0"       || { ldd ./quickstart >&2; echo "install-c: the system-wide program does not load /usr/local/lib" >&2; exit 1; }
    ! readelf -d ./quickstart | grep -q "R.*PATH"
  ')
  grep -qE "$expected_line" system/out.txt || { cat system/out.txt >&2; echo "install-c: the system-wide quick start printed the above" >&2; exit 1; }
  [[ ! -e /usr/local/lib/libstorefront.so.0 && "$(sha256sum /etc/ld.so.cache)" == "$cache_before" ]] \
    || { echo "install-c: the system-wide run touched the real /usr/local or /etc/ld.so.cache" >&2; exit 1; }
  echo "install-c: docs/c.md system-wide (own mount namespace): $(cat system/out.txt)"
  passed=$((passed + 1))
else
  echo "install-c: docs/c.md system-wide lines NOT run: needs root and unshare --mount (an isolated /usr/local)"
fi
echo "install-c: $passed passed, 0 failed"
