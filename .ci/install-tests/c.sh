#!/usr/bin/env bash
# C: unpack the release tarball into a fresh prefix, build examples/c/storefront_example.c with
# nothing but `pkg-config --cflags --libs storefront`, check the program needs the versioned
# SONAME, run it against a standalone sandbox; then link the same program against the static
# library (`pkg-config --static`) and run that too.
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
echo "install-c: $passed passed, 0 failed"
