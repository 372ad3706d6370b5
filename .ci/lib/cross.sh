# Cross builds for the release's Linux targets (issue 23), sourced by .ci/release and its steps.
# zig is the linker (cargo-zigbuild): it links against a glibc of any version from 2.17 on (the
# target suffix `.2.17`) and against musl, for x86_64 and aarch64, from this x86_64 machine,
# without Docker or a sysroot. Both come from PyPI (ziglang, cargo-zigbuild) into a private
# venv kept between runs (STOREFRONT_TOOLS_CACHE, default ~/.cache/storefront); the Rust
# standard libraries of the targets from rustup.
#
#   cross_tools                     the venv, on PATH (idempotent)
#   cross_lib TRIPLE                builds the release cdylib (features uniffi,capi) for TRIPLE
#                                   (x86_64-unknown-linux-gnu.2.17, aarch64-unknown-linux-gnu.2.17,
#                                   x86_64-unknown-linux-musl, aarch64-unknown-linux-musl) and
#                                   prints its path
#   cross_sandbox TRIPLE            builds the release sandbox for a musl TRIPLE (a static binary
#                                   that runs on any Linux of its architecture) and prints its path
#
# SQLite: the library links the system's libsqlite3.so.0 dynamically on every target (one SQLite
# per process, shared with the app's own driver: two copies in one process do not see each
# other's POSIX locks). A cross link only needs the names: .ci/lib/sqlite-link-stub makes a stub
# with the real SONAME per target; nothing of it ships.
# shellcheck shell=bash

cross_zigbuild_version=0.24.1
cross_ziglang_version=0.17.1

cross_tools() {
  local cache="${STOREFRONT_TOOLS_CACHE:-${HOME:-/root}/.cache/storefront}"
  local venv="$cache/zig-$cross_ziglang_version-zigbuild-$cross_zigbuild_version"
  if [[ ! -f "$venv/.complete" ]]; then
    rm -rf "$venv"
    mkdir -p "$cache"
    python3 -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      "ziglang==$cross_ziglang_version" "cargo-zigbuild==$cross_zigbuild_version" >&2
    "$venv/bin/python" -m ziglang version >/dev/null
    touch "$venv/.complete"
  fi
  case ":$PATH:" in
    *":$venv/bin:"*) ;;
    *) PATH="$venv/bin:$PATH" ;;
  esac
  export PATH
}

# The Rust target of a zig-style triple (the glibc suffix dropped).
cross_rust_target() { echo "${1%.2.*}"; }

cross_target_added() {
  local target
  target=$(cross_rust_target "$1")
  rustup target list --installed 2>/dev/null | grep -qx "$target" \
    || { echo "cross: the Rust target $target is not installed: rustup target add $target" >&2; return 1; }
}

cross_lib() {
  local triple="$1" target target_dir stub zig_target
  target=$(cross_rust_target "$triple")
  target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
  cross_tools
  cross_target_added "$triple"
  # zig's name of the target: x86_64-linux-gnu.2.17, aarch64-linux-musl.
  zig_target="${target%%-*}-linux-${triple#*-linux-}"
  stub="$target_dir/sqlite-link-stub/$target"
  [[ -f "$stub/libsqlite3.so" ]] || bash .ci/lib/sqlite-link-stub "$zig_target" "$stub" >&2
  local flags_var
  flags_var="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
  local -a env_flags=()
  if [[ "$target" == *-musl ]]; then
    # A musl cdylib links musl dynamically (the app's interpreter, Alpine's python3 or php,
    # loads it); the static sandbox of the same target keeps its own folder, so neither build
    # undoes the other's.
    target_dir="$target_dir/musl-cdylib"
    env_flags=("$flags_var=-C target-feature=-crt-static" "CARGO_TARGET_DIR=$target_dir")
  fi
  env "${env_flags[@]}" SQLITE3_LIB_DIR="$stub" SQLITE3_INCLUDE_DIR=/usr/include \
    PKG_CONFIG_LIBDIR=/nonexistent \
    cargo-zigbuild rustc --release --locked -p storefront --features uniffi,capi \
    --crate-type cdylib --target "$triple" >&2
  echo "$target_dir/$target/release/libstorefront.so"
}

cross_sandbox() {
  local triple="$1" target target_dir
  target=$(cross_rust_target "$triple")
  [[ "$target" == *-musl ]] || { echo "cross_sandbox: $triple is not a musl target" >&2; return 1; }
  target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
  cross_tools
  cross_target_added "$triple"
  cargo-zigbuild build --release --locked -p storefront-sandbox --target "$triple" >&2
  echo "$target_dir/$target/release/storefront-sandbox"
}
