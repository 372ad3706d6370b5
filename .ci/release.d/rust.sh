#!/usr/bin/env bash
# Rust: `cargo package` for the two published crates (storefront and storefront-sandbox; the
# packaged crate is built from its .crate contents, so a missing file fails here), the .crate
# files copied to $STOREFRONT_OUT/rust/, and the declared minimum supported Rust version
# (rust-version in Cargo.toml) checked by building both crates, every feature, with that
# toolchain and the locked dependencies (.ci/release checks that toolchain is installed first).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${STOREFRONT_VERSION:?}" "${STOREFRONT_OUT:?}"
out="$STOREFRONT_OUT/rust"
rm -rf "$out"
mkdir -p "$out"
target="${CARGO_TARGET_DIR:-$PWD/target}"

# A release is cut from committed sources; STOREFRONT_RELEASE_ALLOW_DIRTY=1 lets a developer try
# the step on a work tree with changes.
dirty=()
[[ "${STOREFRONT_RELEASE_ALLOW_DIRTY:-}" == 1 ]] && dirty=(--allow-dirty)
cargo package --locked "${dirty[@]}" -p storefront -p storefront-sandbox
for crate in storefront storefront-sandbox; do
  cp "$target/package/$crate-$STOREFRONT_VERSION.crate" "$out/"
done
# The storefront crate ships only what builds it (Cargo.toml `include`).
unexpected=$(tar -tzf "$out/storefront-$STOREFRONT_VERSION.crate" | grep -v -E "^storefront-$STOREFRONT_VERSION/(src/|build.rs$|include/storefront.h$|README.md$|LICENSE-|Cargo\.|\.cargo_vcs_info.json$)" || true)
if [[ -n "$unexpected" ]]; then
  echo "rust: unexpected files in the storefront crate:" >&2
  echo "$unexpected" >&2
  exit 1
fi

msrv=$(sed -n '/^\[workspace.package\]/,/^\[/s/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
# The toolchain is installed by .ci/release-prerequisites --install, never here.
rustup toolchain list | grep -q "^$msrv-" || {
  echo "rust: the MSRV toolchain $msrv is not installed: rustup toolchain install $msrv --profile minimal" >&2
  exit 1
}
CARGO_TARGET_DIR="$target/msrv" cargo "+$msrv" check --locked -q -p storefront -p storefront-sandbox --all-features --lib --bins
echo "rust: packaged $(cd "$out" && ls) ; builds with the declared MSRV $msrv"
