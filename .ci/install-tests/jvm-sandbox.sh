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
# (never dev/storefront), as jvm.sh does.
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
no_rust_toolchain
passed=0
failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1" >&2; failed=$((failed + 1)); }
finish() {
  echo "install-jvm-sandbox: $passed passed, $failed failed"
  [[ "$failed" == 0 ]]
}
for tool in java mvn unzip python3 sha256sum; do
  command -v "$tool" >/dev/null || { echo "install-jvm-sandbox: $tool is required" >&2; exit 1; }
done
mvn_plain() { mvn -B -ntp -Dstyle.color=never "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'; }

dist_jvm="$STOREFRONT_DIST/jvm"
tarball_bin="$STOREFRONT_SANDBOX_BIN"   # (only compared with, never run)
pom=$(ls "$dist_jvm"/storefront-*.pom 2>/dev/null | head -1)
[[ -n "$pom" && -d "$dist_jvm/repo" ]] || { echo "install-jvm-sandbox: no pom and repo/ in $dist_jvm (run .ci/release)" >&2; exit 1; }
version=$(python3 -c 'import sys, xml.etree.ElementTree as E; print(E.parse(sys.argv[1]).getroot().find("{http://maven.apache.org/POM/4.0.0}version").text)' "$pom")
sandbox_jar="$dist_jvm/repo/dev/storefront/storefront-sandbox/$version/storefront-sandbox-$version.jar"
expected_sha=$(sha256sum <"$tarball_bin" | cut -d' ' -f1)

# No sandbox but the jar's: no variable, and no PATH directory holding storefront-sandbox.
unset STOREFRONT_SANDBOX_BIN
clean_path=()
IFS=: read -ra path_dirs <<<"$PATH"
for dir in "${path_dirs[@]}"; do
  [[ -e "${dir:-.}/storefront-sandbox" ]] || clean_path+=("$dir")
done
PATH=$(IFS=:; echo "${clean_path[*]}")
export PATH
if [[ -z "${STOREFRONT_SANDBOX_BIN+set}" ]] && ! command -v storefront-sandbox >/dev/null; then
  pass "no STOREFRONT_SANDBOX_BIN and no storefront-sandbox on PATH"
else
  fail "a sandbox other than the jar's is reachable: ${STOREFRONT_SANDBOX_BIN:-} $(command -v storefront-sandbox || true)"
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
mkdir -p "$m2"
home_m2="$HOME/.m2/repository"
if [[ -d "$home_m2" ]]; then
  (cd "$home_m2" && find . -mindepth 1 -maxdepth 1 ! -name dev -exec cp -r {} "$m2/" \;)
  if [[ -d "$home_m2/dev" ]]; then
    mkdir -p "$m2/dev"
    (cd "$home_m2/dev" && find . -mindepth 1 -maxdepth 1 ! -name storefront -exec cp -r {} "$m2/dev/" \;)
  fi
fi
[[ ! -e "$m2/dev/storefront" ]]
repo_url="file://$dist_jvm/repo"

mkdir -p project-shop/src/test/java/shop
cat >project-shop/pom.xml <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>shop</groupId>
  <artifactId>shop</artifactId>
  <version>1</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <maven.compiler.release>17</maven.compiler.release>
  </properties>
  <repositories>
    <repository><id>storefront</id><url>$repo_url</url></repository>
  </repositories>
  <dependencies>
    <dependency><groupId>dev.storefront</groupId><artifactId>storefront</artifactId><version>$version</version></dependency>
    <dependency><groupId>dev.storefront</groupId><artifactId>storefront-testing</artifactId><version>$version</version><scope>test</scope></dependency>
    <dependency><groupId>dev.storefront</groupId><artifactId>storefront-sandbox</artifactId><version>$version</version><scope>test</scope></dependency>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.13.4</version><scope>test</scope></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.14.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.5.4</version></plugin>
    </plugins>
  </build>
</project>
POM
cat >project-shop/src/test/java/shop/CheckoutTest.java <<'JAVA'
package shop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.storefront.Storefront;
import dev.storefront.StorefrontClient;
import dev.storefront.testing.StorefrontSandbox;
import dev.storefront.testing.StorefrontSandboxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(StorefrontSandboxExtension.class)
class CheckoutTest {
    @Test
    void paid(StorefrontClient client, StorefrontSandbox sandbox) throws Exception {
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

        String orderNo = client.createMerchantPayment(Storefront.merchantPaymentRequest()
            .externalReference("shop-1").amountMinor(1250).currency("USD").build()).getPayment().getOrderNo();
        sandbox.trigger("pay", orderNo, "--channel", "ch_card_usd");
        assertTrue(Storefront.isPaid(client.getMerchantPayment(orderNo).getStatus()));
    }
}
JAVA
if EXPECTED_SHA256="$expected_sha" mvn_plain -f project-shop/pom.xml -C "-Dmaven.repo.local=$m2" -Djna.nosys=true test >shop-test.out &&
  grep -q 'Tests run: 1, Failures: 0, Errors: 0, Skipped: 0' shop-test.out; then
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
