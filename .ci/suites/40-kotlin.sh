#!/usr/bin/env bash
# Kotlin (uniffi): the checked-in Kotlin and Swift bindings are not stale, then the Maven suite
# runs the Kotlin API against the standalone sandbox with the freshly built native library.
# Needs only Java 17+ and Maven (present on every machine); Maven pulls its dependencies.
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "40-kotlin: $tool is required (Java 17 + Maven)" >&2; exit 1; }
done

generated=(
  bindings/kotlin/src/main/kotlin/dev/storefront/storefront.kt
  bindings/swift/Sources/Storefront/Storefront.swift
  bindings/swift/include/StorefrontFFI.h
  bindings/swift/include/module.modulemap
)

# Staleness: generate from this checkout's sources into a temporary tree and compare with the
# checked-in files (the working tree is not touched).
fresh=$(mktemp -d)
bash .ci/regen-uniffi "$fresh"
stale=0
for file in "${generated[@]}"; do
  if ! cmp -s "$file" "$fresh/$file"; then
    echo "40-kotlin: $file is stale; run .ci/regen-uniffi and commit the result" >&2
    diff -u "$file" "$fresh/$file" | head -40 >&2 || true
    stale=1
  fi
done
rm -rf "$fresh"
[ "$stale" = 0 ]

cargo build -q -p storefront-sandbox
# -ntp: no download progress; the native library is the copy regen-uniffi made of its build.
mvn -B -ntp -f bindings/kotlin/pom.xml verify \
  -Dstorefront.native.dir="$PWD/target/uniffi" \
  -Dstorefront.sandbox.bin="$PWD/target/debug/storefront-sandbox"
# The build output: a JVM jar carrying the linux-x86-64 native library where JNA looks for it.
jar tf bindings/kotlin/target/storefront-0.1.0.jar | grep -qx 'linux-x86-64/libstorefront.so'
# The example: one Maven command against a standalone sandbox, as a newcomer runs it.
ready_dir=$(mktemp -d)
sandbox_pid=
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -rf "$ready_dir"' EXIT
source .ci/sandbox.sh
start_sandbox target/debug/storefront-sandbox "$ready_dir"
origin=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["origin"])' "$ready_dir/ready.json")
mvn -B -ntp -q -f examples/kotlin/pom.xml compile exec:java -Dsandbox="$origin" | tee "$ready_dir/example.out"
grep -q 'both flows done' "$ready_dir/example.out"
