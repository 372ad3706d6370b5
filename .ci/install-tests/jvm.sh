#!/usr/bin/env bash
# Install test (run by .ci/install-tests/run, in an empty scratch folder without a Rust toolchain):
# a JVM project that depends on dev.storefront:storefront:VERSION by its coordinates, resolved
# from the Maven repository of the release folder (OUT/jvm/repo, written by
# .ci/release.d/jvm.sh), runs the Kotlin example and the Java example (javac, the Java API with
# CompletableFuture) against a standalone sandbox, the README's Java and Kotlin quick starts
# (bindings/kotlin/README.md's ```java QuickStart.java and ```kotlin QuickStart.kt, taken out of
# the page by .ci/lib/md-block) as written, and a shop's own JUnit 5 test with the sandbox
# extension dev.storefront:storefront-testing:VERSION from the same repository.
#
# Maven's local repository: a fresh one in this folder (so an SDK that `mvn install` or suite
# 40-kotlin put into ~/.m2 can never stand in for the released one: Maven prefers a locally
# installed artifact to any repository), seeded with a copy of ~/.m2/repository's third-party
# artifacts (never its dev/storefront ones) to avoid downloading Kotlin again (seed_m2,
# .ci/lib/maven.sh).
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
source "$STOREFRONT_CI/lib/maven.sh"
no_rust_toolchain
for tool in java mvn unzip python3; do
  command -v "$tool" >/dev/null || { echo "install-jvm: $tool is required" >&2; exit 1; }
done
mvn_plain() { mvn -B -ntp -Dstyle.color=never "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'; }

dist_jvm="$STOREFRONT_DIST/jvm"
pom=$(ls "$dist_jvm"/storefront-*.pom 2>/dev/null | head -1)
[[ -n "$pom" && -d "$dist_jvm/repo" ]] || { echo "install-jvm: no jar, pom and repo/ in $dist_jvm (run .ci/release)" >&2; exit 1; }
version=$(python3 -c 'import sys, xml.etree.ElementTree as E; print(E.parse(sys.argv[1]).getroot().find("{http://maven.apache.org/POM/4.0.0}version").text)' "$pom")
cargo_version=$(bash "$STOREFRONT_CI/version")
if [[ "$version" == "$cargo_version" ]]; then
  pass "released pom version $version = Cargo.toml [workspace.package] version"
else
  fail "released pom version $version != Cargo.toml version $cargo_version"
fi
released_jar="$dist_jvm/storefront-$version.jar"

# The projects: the Kotlin and the Java example's sources and poms (they depend on the
# coordinates, nothing else). The Java one is compiled by javac alone and calls the Java API
# (blocking and CompletableFuture forms).
for lang in kotlin java; do
  mkdir "project-$lang"
  cp -r "$STOREFRONT_EXAMPLES/$lang/pom.xml" "$STOREFRONT_EXAMPLES/$lang/src" "project-$lang/"
  # (Comments aside: the pom's elements name no folder of the checkout and run no cargo.)
  pom_elements=$(python3 -c 'import sys, xml.etree.ElementTree as E; print(E.tostring(E.parse(sys.argv[1]).getroot(), encoding="unicode"))' "project-$lang/pom.xml")
  if grep -qE 'bindings/|\.\./|repo\.root|cargo' <<<"$pom_elements"; then
    fail "examples/$lang/pom.xml still refers to the checkout"
  else
    pass "examples/$lang/pom.xml depends on dev.storefront:storefront by coordinates only"
  fi
done

m2="$PWD/m2"
seed_m2 "$m2"
repo_url="file://$dist_jvm/repo"
maven_args=(-C "-Dmaven.repo.local=$m2" "-Dstorefront.repo=$repo_url" "-Dstorefront.version=$version")

# The resolved classpath: the storefront jar comes from the release repository, is the released
# jar byte for byte, carries the native library where JNA looks, and is under 4 MB.
mvn_plain -q -f project-kotlin/pom.xml "${maven_args[@]}" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.outputFile="$PWD/classpath.txt" >maven-classpath.log || { cat maven-classpath.log >&2; fail "resolve the classpath"; finish; }
resolved=$(tr ':' '\n' <classpath.txt | grep "/dev/storefront/storefront/$version/storefront-$version.jar\$" || true)
if [[ -n "$resolved" && -f "$resolved" ]]; then
  pass "classpath has $resolved"
else
  fail "no storefront-$version.jar on the classpath: $(cat classpath.txt)"
  finish
fi
if grep -q '^storefront-'"$version"'\.jar>storefront=' "$(dirname "$resolved")/_remote.repositories"; then
  pass "it was resolved from the release repository $repo_url"
else
  fail "it was not resolved from $repo_url: $(cat "$(dirname "$resolved")/_remote.repositories")"
fi
if cmp -s "$resolved" "$released_jar"; then pass "it is the released jar $released_jar"; else fail "it differs from $released_jar"; fi
listing=$(unzip -l "$resolved")   # (not piped into grep -q: with pipefail, SIGPIPE would fail it)
if grep -qE ' linux-x86-64/libstorefront\.so$' <<<"$listing"; then
  pass "it carries linux-x86-64/libstorefront.so"
else
  fail "no linux-x86-64/libstorefront.so in $resolved"
fi
size=$(stat -c %s "$resolved")
if (( size < 4000000 )); then pass "jar size $size bytes < 4000000"; else fail "jar size $size bytes >= 4000000"; fi

# The examples against a standalone sandbox. jna.nosys: JNA takes the library from the jar only.
start_sandbox "$STOREFRONT_SANDBOX_BIN" "$PWD"
origin=$(sandbox_origin "$PWD")
for lang in kotlin java; do
  out="example-$lang.out"
  if mvn_plain -q -f "project-$lang/pom.xml" "${maven_args[@]}" -Djna.nosys=true compile exec:java -Dsandbox="$origin" >"$out"; then
    cat "$out"
    if grep -q 'both flows done' "$out"; then pass "$lang example ran both flows"; else fail "$lang example did not finish both flows"; fi
    if grep -q "storefront $version against" "$out"; then pass "$lang: the native library reports version $version"; else fail "$lang: the native library does not report $version"; fi
  else
    cat "$out" >&2
    fail "$lang example failed"
  fi
done

# The README's quick starts, as written, each the one source of a project of its own depending on
# the coordinates (Java: javac only; Kotlin: kotlin-maven-plugin), run against the sandbox with its
# STOREFRONT_* variables and USER_ACCESS_TOKEN after a reset (.ci/lib/sandbox_env.py, as suites
# 36 and 40 give the README's programs). The sandbox's request log must then hold one merchant
# payment created and that payment queried (.ci/lib/quickstart-sandbox check).
readme="$STOREFRONT_CI/../bindings/kotlin/README.md"
quickstart_pom() {  # LANG
  local kotlin=
  if [[ "$1" == kotlin ]]; then
    kotlin='<plugin><groupId>org.jetbrains.kotlin</groupId><artifactId>kotlin-maven-plugin</artifactId><version>2.2.21</version>
        <configuration><jvmTarget>17</jvmTarget></configuration>
        <executions><execution><id>compile</id><goals><goal>compile</goal></goals></execution></executions></plugin>'
  fi
  cat <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>shop</groupId>
  <artifactId>quickstart-$1</artifactId>
  <version>1</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <repositories>
    <repository><id>storefront</id><url>$repo_url</url></repository>
  </repositories>
  <dependencies>
    <dependency><groupId>dev.storefront</groupId><artifactId>storefront</artifactId><version>$version</version></dependency>
  </dependencies>
  <build>
    <sourceDirectory>src/main/$1</sourceDirectory>
    <plugins>
      $kotlin
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.14.0</version>
        <configuration><release>17</release></configuration></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
    </plugins>
  </build>
</project>
POM
}
for lang in java kotlin; do
  case $lang in java) source_file=QuickStart.java main=QuickStart ;; kotlin) source_file=QuickStart.kt main=QuickStartKt ;; esac
  dir="quickstart-$lang"
  mkdir -p "$dir/src/main/$lang"
  quickstart_pom "$lang" >"$dir/pom.xml"
  if ! python3 "$STOREFRONT_CI/lib/md-block" "$readme" "$lang $source_file" >"$dir/src/main/$lang/$source_file"; then
    fail "the README's $lang quick start (\`\`\`$lang $source_file) is not in bindings/kotlin/README.md"
    continue
  fi
  if ! mvn_plain -q -f "$dir/pom.xml" -C "-Dmaven.repo.local=$m2" compile \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$PWD/$dir/classpath.txt" >"$dir/build.out"; then
    cat "$dir/build.out" >&2
    fail "the README's $lang quick start does not compile against the release"
    continue
  fi
  mapfile -t program_env < <(python3 "$STOREFRONT_CI/lib/sandbox_env.py" "$PWD/ready.json")
  if env "${program_env[@]}" java -Djna.nosys=true -cp "$dir/target/classes:$(cat "$dir/classpath.txt")" "$main" >"$dir/run.out" 2>&1 &&
    grep -q '^persist with the order: ' "$dir/run.out" && ! grep -q '^JNA: ' "$dir/run.out" &&
    order_no=$(python3 "$STOREFRONT_CI/lib/quickstart-sandbox" check "$PWD/ready.json"); then
    sed 's/^/    /' "$dir/run.out"
    pass "the README's $lang quick start ($source_file) created and queried $order_no against the sandbox with the release jar"
  else
    cat "$dir/run.out" >&2
    fail "the README's $lang quick start ($source_file) failed against the sandbox"
  fi
done

# A shop's own JUnit 5 test (Java) with dev.storefront:storefront-testing:VERSION from the release
# repository: @ExtendWith(StorefrontSandboxExtension.class) starts $STOREFRONT_SANDBOX_BIN and
# injects a client of the seeded merchant; the buyer pays through trigger.
shop_project project-shop "$repo_url" "$version" storefront-testing </dev/null
if shop_test project-shop "$m2" STOREFRONT_SANDBOX_BIN="$STOREFRONT_SANDBOX_BIN" >shop-test.out; then
  pass "a shop's JUnit 5 test with dev.storefront:storefront-testing:$version (from the release repository) sees paid"
else
  cat shop-test.out >&2
  fail "the shop's JUnit 5 test with storefront-testing"
fi
finish
