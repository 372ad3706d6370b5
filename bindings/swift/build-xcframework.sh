#!/usr/bin/env bash
# Builds StorefrontFFI.xcframework beside Package.swift, which consumes it as a path-based
# binaryTarget. macOS with Xcode only. NOT RUN on the project's Linux machines (no Swift, Xcode
# or Apple targets there): this script has never been executed in CI.
#   rustup target add aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios aarch64-apple-darwin x86_64-apple-darwin
#
# Usage: bindings/swift/build-xcframework.sh [--zip]
#   --zip                 also writes StorefrontFFI.xcframework.zip and prints the checksum for
#                         the url + checksum form of the binaryTarget (README.md, "Release")
#   STOREFRONT_MANIFEST   Cargo.toml of the storefront crate; default: the checkout this script
#                         is in (set it when running from a release folder, OUT/swift)
#   CARGO_TARGET_DIR      default: build/target beside this script
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
manifest="${STOREFRONT_MANIFEST:-$here/../../Cargo.toml}"
[[ -f "$manifest" ]] || { echo "build-xcframework: no Cargo.toml at $manifest (set STOREFRONT_MANIFEST)" >&2; exit 1; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/build/target}"
target_dir="$CARGO_TARGET_DIR"

targets=(aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios aarch64-apple-darwin x86_64-apple-darwin)
for t in "${targets[@]}"; do
  cargo build --release --manifest-path "$manifest" -p storefront --features uniffi --target "$t"
done

out="$here/build"
framework="$here/StorefrontFFI.xcframework"
rm -rf "$out/ios-sim" "$out/macos" "$framework"
mkdir -p "$out/ios-sim" "$out/macos"
lipo -create "$target_dir/aarch64-apple-ios-sim/release/libstorefront.a" "$target_dir/x86_64-apple-ios/release/libstorefront.a" \
  -output "$out/ios-sim/libstorefront.a"
lipo -create "$target_dir/aarch64-apple-darwin/release/libstorefront.a" "$target_dir/x86_64-apple-darwin/release/libstorefront.a" \
  -output "$out/macos/libstorefront.a"

# include/ holds StorefrontFFI.h and module.modulemap (module StorefrontFFI), the headers of
# every slice.
xcodebuild -create-xcframework \
  -library "$target_dir/aarch64-apple-ios/release/libstorefront.a" -headers "$here/include" \
  -library "$out/ios-sim/libstorefront.a" -headers "$here/include" \
  -library "$out/macos/libstorefront.a" -headers "$here/include" \
  -output "$framework"
echo "built $framework"

if [[ "${1:-}" == --zip ]]; then
  zip="$here/StorefrontFFI.xcframework.zip"
  rm -f "$zip"
  (cd "$here" && ditto -c -k --sequesterRsrc --keepParent StorefrontFFI.xcframework "$zip")
  echo "built $zip"
  echo "checksum for .binaryTarget(name: \"StorefrontFFI\", url: ..., checksum: ...):"
  swift package --package-path "$here" compute-checksum "$zip"
fi
