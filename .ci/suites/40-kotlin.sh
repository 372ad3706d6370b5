#!/usr/bin/env bash
# Kotlin (uniffi): the checked-in Kotlin and Swift bindings are not stale, then the Maven suite
# runs the Kotlin API and its Java forms (Kotlin and Java tests) against the standalone sandbox
# with the freshly built native library, and the Kotlin and Java examples, which depend on
# dev.storefront:storefront:VERSION by its coordinates, run against the jar just tested; the
# JUnit 5 sandbox extension (bindings/kotlin-testing) is built and tested against that jar too.
# Then every Kotlin and Java block of the READMEs not tagged otherwise (.ci/readme-blocks
# --jvm-project: one generated Maven project, Kotlin by kotlin-maven-plugin, Java by javac) runs
# against the sandbox with these two jars, and a broken page must fail naming file, line, language.
# Needs Java 17+ and Maven (present on every machine; Maven pulls its dependencies) and
# PostgreSQL, which .ci/install-servers.sh installs from Debian's packages when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in java mvn unzip; do
  command -v "$tool" >/dev/null || { echo "40-kotlin: $tool is required (Java 17 + Maven)" >&2; exit 1; }
done

# The poms carry literal versions (Maven installs them as written): they must be Cargo's.
bash bindings/kotlin/check-version.sh
version=$(bash .ci/version)

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

# InboxTest completes an inbox event inside the app's own JDBC transaction on PostgreSQL (not on
# SQLite: a JDBC SQLite driver carries a second copy of SQLite into the process). The server is
# Debian's, on loopback, stopped by its pid when this script ends, however it ends.
bash .ci/install-servers.sh
source .ci/lib/servers.sh
work=$(mktemp -d)
sandbox_pid=
trap 'kill "$sandbox_pid" 2>/dev/null || true; stop_all_servers; rm -rf "$work"' EXIT
start_postgres "$work/pg"

# -ntp: no download progress; the native library is the copy regen-uniffi made of its build.
mvn -B -ntp -f bindings/kotlin/pom.xml verify \
  -Dstorefront.native.dir="$PWD/target/uniffi" \
  -Dstorefront.sandbox.bin="$PWD/target/debug/storefront-sandbox" \
  -Dstorefront.pgUrl="$PG_URL"
stop_postgres
# The build output: a JVM jar carrying the linux-x86-64 native library where JNA looks for it.
jar="bindings/kotlin/target/storefront-$version.jar"
listing=$(unzip -l "$jar")   # (not piped into grep -q: with pipefail, SIGPIPE could fail it)
grep -qE ' linux-x86-64/libstorefront\.so$' <<<"$listing" \
  || { echo "40-kotlin: $jar has no linux-x86-64/libstorefront.so" >&2; exit 1; }

# The example, by coordinates, as a newcomer runs it after `mvn install`, against the jar just
# tested (debug library). Its local Maven repository is a temporary copy of ~/.m2/repository
# without any dev/storefront artifact, holding this jar: ~/.m2 is left alone (it may hold the
# release jar .ci/release installed) and cannot stand in for this build.
source .ci/lib/maven.sh
m2="$work/m2"
seed_m2 "$m2"
mvn -B -ntp -q -Dmaven.repo.local="$m2" org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file \
  -Dfile="$jar" -DpomFile=bindings/kotlin/pom.xml
# The JUnit 5 extension (dev.storefront:storefront-testing, bindings/kotlin-testing) against that
# jar: its Java tests use it as a shop does (@ExtendWith, an injected client, trigger pay). Installed
# into $m2 too, for the README's JUnit test below.
mvn -B -ntp -Dmaven.repo.local="$m2" -f bindings/kotlin-testing/pom.xml install \
  -Dstorefront.sandbox.bin="$PWD/target/debug/storefront-sandbox"
source .ci/sandbox.sh
start_sandbox target/debug/storefront-sandbox "$work"
origin=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["origin"])' "$work/ready.json")
mvn -B -ntp -q -Dmaven.repo.local="$m2" -f examples/kotlin/pom.xml compile exec:java -Dsandbox="$origin" | tee "$work/example.out"
grep -q 'both flows done' "$work/example.out"
grep -q "storefront $version against" "$work/example.out"
# The Java example (javac only, no Kotlin plugin): blocking calls and CompletableFuture, by the
# same coordinates.
mvn -B -ntp -q -Dmaven.repo.local="$m2" -f examples/java/pom.xml compile exec:java -Dsandbox="$origin" | tee "$work/example-java.out"
grep -q 'both flows done' "$work/example-java.out"
grep -q "storefront $version against" "$work/example-java.out"

# The READMEs' Kotlin and Java blocks, as written, by the same coordinates (both jars in $m2):
# each program gets the sandbox's STOREFRONT_* variables and USER_ACCESS_TOKEN after a reset; the
# JUnit test class (storefront-testing) starts its own sandbox from STOREFRONT_SANDBOX_BIN.
export STOREFRONT_READY_FILE="$work/ready.json" STOREFRONT_SANDBOX_BIN="$PWD/target/debug/storefront-sandbox"
python3 .ci/readme-blocks --jvm-project "$work/readme-jvm" --maven-repo "$m2"

# The runner fails, naming file, line and language: a Kotlin program that throws (a payment that
# does not exist: 404), and a Java program that does not compile (the page's line 14).
cat >"$work/broken.md" <<'MD'
# broken

```kotlin
import dev.storefront.*

suspend fun main() {
    Storefront.client(Storefront.configFromEnv()).getMerchantPayment("no-such-order")
}
```

```java Broken.java
public class Broken {
    public static void main(String[] args) {
        undefinedMethod();
    }
}
```
MD
if python3 .ci/readme-blocks --jvm-project "$work/broken-jvm" --maven-repo "$m2" "$work/broken.md" >"$work/broken.out" 2>&1; then
  cat "$work/broken.out"; echo "readme-blocks passed a broken page" >&2; exit 1
fi
for expected in 'FAIL .*broken.md:3 \(kotlin\): exit 1' 'StorefrontException\$Api: status=404' \
                'FAIL .*broken.md:11 \(java\): does not compile' 'Broken.java:\[4,9\] \[.*broken.md:14\] cannot find symbol'; do
  grep -qE "$expected" "$work/broken.out" || { cat "$work/broken.out"; echo "readme-blocks did not report: $expected" >&2; exit 1; }
done
rm -rf "$(sed -n 's/^the programs as run are kept in //p' "$work/broken.out")"
echo "readme-blocks --jvm-project: a broken page fails with its file, line and language"
