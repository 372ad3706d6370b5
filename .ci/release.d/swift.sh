#!/usr/bin/env bash
# Release step (run by .ci/release): what a Mac needs to build the Swift package, in OUT/swift/:
# Package.swift, Sources/, include/ (C header and module map), Examples/, README.md and
# build-xcframework.sh. NO xcframework: it can only be built on macOS with Xcode, and this
# machine has no Swift or Apple toolchain; nothing here was compiled as Swift. NOT-BUILT.txt
# says what to run on a Mac.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${STOREFRONT_VERSION:?set by .ci/release}" "${STOREFRONT_OUT:?set by .ci/release}"
version="$STOREFRONT_VERSION"
out="$STOREFRONT_OUT/swift"
rm -rf "$out"
mkdir -p "$out"
src=bindings/swift
for item in Package.swift README.md build-xcframework.sh Sources include Examples; do
  cp -R "$src/$item" "$out/"
done

# The package expects the xcframework beside it; none is shipped from here.
grep -q '\.binaryTarget(name: "StorefrontFFI", path: "StorefrontFFI.xcframework")' "$out/Package.swift" \
  || { echo "swift: Package.swift does not consume StorefrontFFI.xcframework as a binaryTarget" >&2; exit 1; }
for file in Sources/Storefront/Storefront.swift include/StorefrontFFI.h include/module.modulemap; do
  [[ -s "$out/$file" ]] || { echo "swift: $file missing" >&2; exit 1; }
done
if find "$out" -name '*.xcframework' | grep -q .; then
  echo "swift: an xcframework is in $out; only a Mac build may produce one" >&2; exit 1
fi

cat >"$out/NOT-BUILT.txt" <<TXT
storefront $version, Swift package: sources only. StorefrontFFI.xcframework is NOT included and
nothing here was compiled as Swift: the machine that ran .ci/release has no Swift toolchain,
Xcode or Apple Rust targets. On a Mac with Xcode:

  rustup target add aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios aarch64-apple-darwin x86_64-apple-darwin
  # from a checkout of storefront $version:
  bindings/swift/build-xcframework.sh --zip
  # or from this folder, with the storefront crate's sources (for example the .crate in ../rust/, untarred):
  STOREFRONT_MANIFEST=/path/to/storefront-$version/Cargo.toml ./build-xcframework.sh --zip
  swift build          # in the folder holding Package.swift and StorefrontFFI.xcframework

See README.md ("Build", "Release") for the path and url + checksum forms of the binary target.
TXT
echo "swift: copied the Swift package sources to $out (no xcframework: macOS + Xcode only, see NOT-BUILT.txt)"
ls "$out"
