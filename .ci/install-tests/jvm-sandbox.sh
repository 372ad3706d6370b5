#!/usr/bin/env bash
# Install test: dev.storefront:storefront-sandbox:VERSION (the sandbox binary in a jar, deployed by
# .ci/release.d/sandbox.sh into OUT/jvm/repo next to storefront and storefront-testing). A shop's
# Maven project with storefront, storefront-testing and storefront-sandbox (test scope), resolved
# by their coordinates from the release's repository, runs a JUnit 5 test with
# StorefrontSandboxExtension that creates, pays and reads a merchant payment, with no
# STOREFRONT_SANDBOX_BIN, no -Dstorefront.sandbox.bin and no storefront-sandbox on PATH (all
# checked): StorefrontSandbox.binaryPath() is the program extracted from the jar (a private
# folder and file, mode 0700, deleted when the JVM exits), byte for byte the release tarball's
# binary, and it is the process the extension started (/proc/PID/exe).
#
# Maven's local repository: a fresh one in this folder seeded with ~/.m2's third-party artifacts
# (never dev/storefront), as jvm.sh does (seed_m2, .ci/lib/maven.sh).
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
source "$STOREFRONT_CI/lib/maven.sh"
no_rust_toolchain
for tool in java mvn unzip python3 sha256sum; do
  command -v "$tool" >/dev/null || { echo "install-jvm-sandbox: $tool is required" >&2; exit 1; }
done

dist_jvm="$STOREFRONT_DIST/jvm"
tarball_bin="$STOREFRONT_SANDBOX_BIN"   # (only compared with, never run)
pom=$(ls "$dist_jvm"/storefront-*.pom 2>/dev/null | head -1)
[[ -n "$pom" && -d "$dist_jvm/repo" ]] || { echo "install-jvm-sandbox: no pom and repo/ in $dist_jvm (run .ci/release)" >&2; exit 1; }
version=$(python3 -c 'import sys, xml.etree.ElementTree as E; print(E.parse(sys.argv[1]).getroot().find("{http://maven.apache.org/POM/4.0.0}version").text)' "$pom")
sandbox_jar="$dist_jvm/repo/dev/storefront/storefront-sandbox/$version/storefront-sandbox-$version.jar"
expected_sha=$(sha256sum <"$tarball_bin" | cut -d' ' -f1)

# No sandbox but the jar's: no variable, and no PATH directory holding storefront-sandbox.
hide_other_sandboxes
if no_other_sandbox; then
  pass "no STOREFRONT_SANDBOX_BIN and no storefront-sandbox on PATH"
else
  fail "a sandbox other than the jar's is reachable (above)"
  finish
fi

listing=$(unzip -l "$sandbox_jar" 2>&1 || true)
if grep -qE ' dev/storefront/sandbox/linux-x86-64/storefront-sandbox$' <<<"$listing" &&
  unzip -p "$sandbox_jar" dev/storefront/sandbox/linux-x86-64/storefront-sandbox | cmp -s - "$tarball_bin"; then
  pass "$sandbox_jar holds dev/storefront/sandbox/linux-x86-64/storefront-sandbox = the tarball's binary"
else
  fail "no tarball binary at dev/storefront/sandbox/linux-x86-64/storefront-sandbox in $sandbox_jar: $listing"
fi

m2="$PWD/m2"
seed_m2 "$m2"
repo_url="file://$dist_jvm/repo"

# The test first checks the program StorefrontSandbox runs: the one extracted from the jar.
shop_project project-shop "$repo_url" "$version" storefront-testing storefront-sandbox <<'JAVA'
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
assertNull(System.getenv("STOREFRONT_SANDBOX_BIN"));
assertNull(System.getProperty("storefront.sandbox.bin"));
Path program = Path.of(StorefrontSandbox.binaryPath());
System.out.println("extracted sandbox: " + program);
assertTrue(program.getParent().getFileName().toString().startsWith("storefront-sandbox-bin-"), program.toString());
assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(program)));
assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(program.getParent())));
assertEquals(System.getenv("EXPECTED_SHA256"),
    HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(program))));
// The process the extension started is that file.
assertEquals(program, Files.readSymbolicLink(Path.of("/proc", Long.toString(sandbox.pid()), "exe")));

JAVA
if shop_test project-shop "$m2" EXPECTED_SHA256="$expected_sha" >shop-test.out; then
  pass "a shop's JUnit 5 test with storefront-testing + storefront-sandbox $version: created, paid and read against the jar's sandbox"
else
  cat shop-test.out >&2
  fail "the shop's JUnit 5 test with storefront-sandbox"
fi
extracted=$(sed -n 's/^extracted sandbox: //p' shop-test.out | head -1)
echo "    extracted sandbox: ${extracted:-?}"
for artifact in storefront-testing storefront-sandbox; do
  remote="$m2/dev/storefront/$artifact/$version/_remote.repositories"
  if [[ -f "$remote" ]] && grep -q "^$artifact-$version\.jar>storefront=" "$remote"; then
    pass "dev.storefront:$artifact:$version was resolved from the release repository $repo_url"
  else
    fail "dev.storefront:$artifact:$version was not resolved from $repo_url"
  fi
done
if [[ -n "$extracted" && ! -e "$extracted" && ! -e "$(dirname "$extracted")" ]]; then
  pass "the extracted program and its folder are gone after the test JVM exited"
else
  fail "the extracted program ${extracted:-?} is still there (or was never reported)"
fi
finish
