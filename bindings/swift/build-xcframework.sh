#!/usr/bin/env bash
# Builds StorefrontFFI.xcframework for Package.swift. macOS with Xcode only (never run in CI:
# these machines have no Swift or Xcode toolchain).
#   rustup target add aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios aarch64-apple-darwin x86_64-apple-darwin
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=(aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios aarch64-apple-darwin x86_64-apple-darwin)
for t in "${targets[@]}"; do
  cargo build --release -p storefront --features uniffi --target "$t"
done

out=bindings/swift/build
rm -rf "$out" bindings/swift/StorefrontFFI.xcframework
mkdir -p "$out/ios-sim" "$out/macos"
lipo -create target/aarch64-apple-ios-sim/release/libstorefront.a target/x86_64-apple-ios/release/libstorefront.a \
  -output "$out/ios-sim/libstorefront.a"
lipo -create target/aarch64-apple-darwin/release/libstorefront.a target/x86_64-apple-darwin/release/libstorefront.a \
  -output "$out/macos/libstorefront.a"

xcodebuild -create-xcframework \
  -library target/aarch64-apple-ios/release/libstorefront.a -headers bindings/swift/include \
  -library "$out/ios-sim/libstorefront.a" -headers bindings/swift/include \
  -library "$out/macos/libstorefront.a" -headers bindings/swift/include \
  -output bindings/swift/StorefrontFFI.xcframework
echo "built bindings/swift/StorefrontFFI.xcframework"
