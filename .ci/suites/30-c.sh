#!/usr/bin/env bash
# C ABI: the checked-in header is what cbindgen generates now; the header compiles as C99 and
# C2x with warnings as errors; the pkg-config file builds a program; examples/c, which calls
# every function of the header, walks the webhook, catalog and merchant flows against the
# standalone sandbox under valgrind with no leak and no memory error. The debug library built here is reused by the Python and PHP suites.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The server library links the system SQLite; the store and inbox tests use real servers.
bash .ci/install-servers.sh
missing=()
for tool in gcc valgrind pkg-config; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
work=$(mktemp -d)
sandbox_pid=
cleanup() {
  [[ -n "$sandbox_pid" ]] && kill "$sandbox_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
passed=0

# 1. The header is not stale.
bash .ci/regen-header "$work/storefront.h" >/dev/null
if ! cmp -s "$work/storefront.h" include/storefront.h; then
  diff -u include/storefront.h "$work/storefront.h" | head -40 || true
  echo "include/storefront.h is stale: run .ci/regen-header and commit it" >&2
  exit 1
fi
passed=$((passed + 1))

# 2. One debug build of the library (capi) and the sandbox.
cargo build --quiet -p storefront --features capi,uniffi -p storefront-sandbox
target_dir="${CARGO_TARGET_DIR:-$PWD/target}/debug"

# 3. The header alone compiles in C99 and C2x with every warning as an error.
for std in c99 c2x; do
  printf '#include "storefront.h"\nint main(void) { return (int)SF_RESULT_OK; }\n' > "$work/header.c"
  gcc -std="$std" -Wall -Wextra -Wpedantic -Werror -Iinclude -c "$work/header.c" -o "$work/header.o"
  passed=$((passed + 1))
done

# 4. pkg-config: a staged prefix with lib/, include/ and lib/pkgconfig/ (the .pc file finds its
# prefix from its own place), then the example built from it. The release install, with the
# versioned SONAME and the static library, is tested from a fresh prefix by .ci/install-tests/c.sh.
# The library's SONAME is libstorefront.so.<major> (build.rs), so programs linked with
# -lstorefront load that name: the staged prefix has both, as an install does.
version=$(bash .ci/version)
mkdir -p "$work/prefix/lib/pkgconfig" "$work/prefix/include"
ln -s "$target_dir/libstorefront.so" "$work/prefix/lib/libstorefront.so.${version%%.*}"
ln -s "libstorefront.so.${version%%.*}" "$work/prefix/lib/libstorefront.so"
cp include/storefront.h "$work/prefix/include/"
sed -e "s|@VERSION@|$version|" include/storefront.pc.in > "$work/prefix/lib/pkgconfig/storefront.pc"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
[[ "$(pkg-config --modversion storefront)" == "$version" ]]
# shellcheck disable=SC2046
gcc -std=c99 -Wall -Wextra -Werror examples/c/storefront_example.c $(pkg-config --cflags --libs storefront) \
  -Wl,-rpath,"$work/prefix/lib" -o "$work/storefront_example"
passed=$((passed + 1))

# 5. The example calls every function of the header, so valgrind below covers every export.
uncovered=$(comm -23 <(grep -o 'sf_[a-z0-9_]*(' include/storefront.h | tr -d '(' | sort -u) \
                     <(grep -o 'sf_[a-z0-9_]*(' examples/c/storefront_example.c | tr -d '(' | sort -u))
if [[ -n "$uncovered" ]]; then
  echo "examples/c/storefront_example.c does not call: $uncovered" >&2
  exit 1
fi
passed=$((passed + 1))

# 6. The example against the standalone sandbox, under valgrind.
source .ci/sandbox.sh
start_sandbox "$target_dir/storefront-sandbox" "$work"
valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
  "$work/storefront_example" "$work/ready.json"
passed=$((passed + 1))

# 7. Fork safety of a SQLite inbox (issue 27, item 2): a thread receives, claims and completes
# while the main thread forks 25 times; every child stores its deliveries (no 503 for good).
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror -pthread -Iinclude tests/c/inbox_fork.c \
  $(pkg-config --libs storefront) -Wl,-rpath,"$work/prefix/lib" -o "$work/inbox_fork"
mkdir -m 700 "$work/fork"
"$work/inbox_fork" "$work/fork" 25
passed=$((passed + 1))

# 8. Hostile arguments across the inbox's C ABI (NULLs, invalid UTF-8, a NULL body with a
# length) under AddressSanitizer and UBSan: each refused with its code, the inbox still works.
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-omit-frame-pointer -Iinclude \
  tests/c/inbox_bad_args.c $(pkg-config --libs storefront) -Wl,-rpath,"$work/prefix/lib" \
  -o "$work/inbox_bad_args"
mkdir -m 700 "$work/bad-args"
"$work/inbox_bad_args" "$work/bad-args"
passed=$((passed + 1))

echo "c-abi: $passed passed, 0 failed"
