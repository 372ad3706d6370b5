#!/usr/bin/env bash
# Release step (run by .ci/release): the JVM artifact dev.storefront:storefront:$STOREFRONT_VERSION.
#   OUT/jvm/storefront-VERSION.jar          Kotlin API + native libraries in JNA's resource layout:
#                                           linux-x86-64/libstorefront.so (the stripped release
#                                           library) and one <os>-<arch>/ folder per library given
#                                           in STOREFRONT_JVM_LIBS
#   OUT/jvm/storefront-VERSION.pom          its pom (dependencies: kotlin-stdlib, coroutines, JNA)
#   OUT/jvm/storefront-VERSION-sources.jar
#   OUT/jvm/repo/                           a Maven repository holding the three (point a build at
#                                           it: file:///.../jvm/repo); the install test uses it;
#                                           also dev.storefront:storefront-testing:VERSION, the
#                                           JUnit 5 sandbox extension (bindings/kotlin-testing)
# and, only with `.ci/release --install-m2` (STOREFRONT_INSTALL_M2=1), installs the same artifact
# into the local Maven repository (~/.m2), where examples/kotlin and any other JVM project on
# this machine then resolve it by its coordinates.
# Tests are skipped here: suite 40-kotlin runs them (against the debug library).
#
# Environment (set by .ci/release): STOREFRONT_VERSION, STOREFRONT_RELEASE_LIB, STOREFRONT_OUT.
# Optional: STOREFRONT_JVM_LIBS="darwin-aarch64=/path/libstorefront.dylib win32-x86-64=/path/storefront.dll
#           linux-aarch64=/path/libstorefront.so ..." (JNA platform prefix = library built for it).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${STOREFRONT_VERSION:?set by .ci/release}" "${STOREFRONT_RELEASE_LIB:?set by .ci/release}" "${STOREFRONT_OUT:?set by .ci/release}"
for tool in java mvn unzip; do
  command -v "$tool" >/dev/null || { echo "jvm: $tool is required (Java 17 + Maven)" >&2; exit 1; }
done
version="$STOREFRONT_VERSION"
budget=4000000   # bytes; .ci/release-sizes checks the same budget
# Maven 3.8 (Debian) writes ANSI resets even in batch mode; keep logs plain.
mvn_plain() { mvn -B -ntp -Dstyle.color=never "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'; }

# The pom carries a literal version (Maven installs it as written): it must be Cargo's.
bash bindings/kotlin/check-version.sh
pom_version=$(python3 -c 'import sys, xml.etree.ElementTree as E; print(E.parse(sys.argv[1]).getroot().find("{http://maven.apache.org/POM/4.0.0}version").text)' bindings/kotlin/pom.xml)
if [[ "$pom_version" != "$version" ]]; then
  echo "jvm: bindings/kotlin/pom.xml has version $pom_version, the release is $version" >&2
  exit 1
fi

lib="$STOREFRONT_RELEASE_LIB"
[[ -f "$lib" ]] || { echo "jvm: no release library at $lib" >&2; exit 1; }
if command -v file >/dev/null; then
  description=$(file -L "$lib")
  [[ "$description" == *"ELF 64-bit"*"x86-64"* ]] || { echo "jvm: $lib is not an x86-64 ELF library: $description" >&2; exit 1; }
  [[ "$description" == *", stripped"* ]] || { echo "jvm: $lib is not stripped: $description" >&2; exit 1; }
fi

out="$STOREFRONT_OUT/jvm"
rm -rf "$out"
mkdir -p "$out/repo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The linux-x86-64 library under the name JNA looks for, and the other platforms' libraries in
# JNA's layout.
mkdir -p "$work/linux-x86-64" "$work/resources"
cp "$lib" "$work/linux-x86-64/libstorefront.so"
expected_entries=(linux-x86-64/libstorefront.so)
for spec in ${STOREFRONT_JVM_LIBS:-}; do
  platform="${spec%%=*}"
  file="${spec#*=}"
  [[ "$spec" == *=* && -f "$file" ]] || { echo "jvm: STOREFRONT_JVM_LIBS entry '$spec' is not PLATFORM=EXISTING_FILE" >&2; exit 1; }
  [[ "$platform" =~ ^[a-z0-9]+-[a-z0-9-]+$ ]] || { echo "jvm: '$platform' is not a JNA platform prefix (darwin-aarch64, linux-aarch64, win32-x86-64, ...)" >&2; exit 1; }
  [[ "$platform" != linux-x86-64 ]] || { echo "jvm: linux-x86-64 comes from STOREFRONT_RELEASE_LIB" >&2; exit 1; }
  case "$platform" in
    darwin-*) name=libstorefront.dylib ;;
    win32-*) name=storefront.dll ;;
    *) name=libstorefront.so ;;
  esac
  mkdir -p "$work/resources/$platform"
  cp "$file" "$work/resources/$platform/$name"
  expected_entries+=("$platform/$name")
done

echo "jvm: building dev.storefront:storefront:$version with ${expected_entries[*]}"
# deploy = package + install (~/.m2, skipped unless asked for) + deploy into the release's file
# repository.
m2_skip=()
[[ "${STOREFRONT_INSTALL_M2:-0}" == 1 ]] || m2_skip=(-Dmaven.install.skip=true)
mvn_plain -q -f bindings/kotlin/pom.xml deploy "${m2_skip[@]}" \
  -DskipTests \
  -Dstorefront.native.dir="$work/linux-x86-64" \
  -Dstorefront.native.resources="$work/resources" \
  -Dstorefront.build.dir="$work/build" \
  -DaltDeploymentRepository="storefront-dist::file://$out/repo"

repo_dir="$out/repo/dev/storefront/storefront/$version"
for suffix in .jar .pom -sources.jar; do
  cp "$repo_dir/storefront-$version$suffix" "$out/"
done
jar="$out/storefront-$version.jar"

# The jar: the native libraries where JNA looks, byte for byte the given ones, under budget.
listing=$(unzip -l "$jar")
for entry in "${expected_entries[@]}"; do
  grep -qE " $entry\$" <<<"$listing" || { echo "jvm: $entry missing from $jar" >&2; echo "$listing" >&2; exit 1; }
done
# (Compared with the copy taken above: the build tree's file may be rebuilt meanwhile.)
unzip -p "$jar" linux-x86-64/libstorefront.so | cmp -s - "$work/linux-x86-64/libstorefront.so" \
  || { echo "jvm: linux-x86-64/libstorefront.so in the jar is not the release library" >&2; exit 1; }
echo "jvm: linux-x86-64/libstorefront.so = $lib, sha256 $(sha256sum <"$work/linux-x86-64/libstorefront.so" | cut -d' ' -f1)"
grep -qE ' dev/storefront/Client\.class$' <<<"$listing" || { echo "jvm: Kotlin classes missing from $jar" >&2; exit 1; }
grep -qE ' dev/storefront/StorefrontClient\.class$' <<<"$listing" || { echo "jvm: Java API classes missing from $jar" >&2; exit 1; }
size=$(stat -c %s "$jar")
echo "jvm: $jar: $size bytes (budget $budget)"
(( size < budget )) || { echo "jvm: the jar is over its budget" >&2; exit 1; }

# dev.storefront:storefront-testing:VERSION (bindings/kotlin-testing): the JUnit 5 sandbox
# extension, a separate artifact (a shop adds it with <scope>test</scope>; JUnit is `provided`),
# deployed into the same repository only (OUT/jvm/repo; the top of OUT/jvm keeps the SDK's three
# files). It resolves the storefront jar just built from a scratch local repository (a copy of
# ~/.m2/repository's third-party artifacts plus that jar and pom), so ~/.m2 is left alone.
testing_m2="$work/m2"
mkdir -p "$testing_m2"
if [[ -d "$HOME/.m2/repository" ]]; then
  (cd "$HOME/.m2/repository" && find . -mindepth 1 -maxdepth 1 ! -name dev -exec cp -r {} "$testing_m2/" \;)
fi
mvn_plain -q -Dmaven.repo.local="$testing_m2" org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file \
  -Dfile="$jar" -DpomFile="$out/storefront-$version.pom"
mvn_plain -q -Dmaven.repo.local="$testing_m2" -f bindings/kotlin-testing/pom.xml deploy -Dmaven.install.skip=true \
  -DskipTests \
  -Dstorefront.build.dir="$work/testing-build" \
  -DaltDeploymentRepository="storefront-dist::file://$out/repo"
testing_jar="$out/repo/dev/storefront/storefront-testing/$version/storefront-testing-$version.jar"
testing_listing=$(unzip -l "$testing_jar")
grep -qE ' dev/storefront/testing/StorefrontSandboxExtension\.class$' <<<"$testing_listing" \
  || { echo "jvm: the extension is missing from $testing_jar" >&2; exit 1; }
! grep -qE ' org/junit/' <<<"$testing_listing" || { echo "jvm: $testing_jar carries JUnit classes" >&2; exit 1; }
echo "jvm: dev.storefront:storefront-testing:$version in $out/repo ($(stat -c %s "$testing_jar") bytes)"
if [[ "${STOREFRONT_INSTALL_M2:-0}" == 1 ]]; then
  mvn_plain -q org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file \
    -Dfile="$testing_jar" -DpomFile="${testing_jar%.jar}.pom"
fi

if [[ "${STOREFRONT_INSTALL_M2:-0}" == 1 ]]; then
  # What was installed into ~/.m2 is this same jar.
  m2="$(mvn_plain -q org.apache.maven.plugins:maven-help-plugin:3.5.1:evaluate -Dexpression=settings.localRepository -DforceStdout || echo "$HOME/.m2/repository")"
  cmp -s "$jar" "$m2/dev/storefront/storefront/$version/storefront-$version.jar" \
    || { echo "jvm: the jar installed in $m2 differs from $jar" >&2; exit 1; }
  echo "jvm: installed dev.storefront:storefront:$version into $m2 and $out/repo"
else
  echo "jvm: dev.storefront:storefront:$version in $out/repo (not installed into ~/.m2: .ci/release --install-m2 does)"
fi
( cd "$out" && ls -l storefront-"$version"* && echo "jar contents (native libraries):" && unzip -l "storefront-$version.jar" | grep -E '\.(so|dylib|dll)$' )
