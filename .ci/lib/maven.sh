# Sourced by the scripts that build Maven projects against a storefront jar they name (suite
# 40-kotlin, the JVM install tests). Gives:
#
#   seed_m2 DIR          makes DIR a fresh Maven local repository holding a copy of
#                        ~/.m2/repository's third-party artifacts (everything but dev/storefront),
#                        so that no storefront artifact installed in ~/.m2 (by `mvn install`, suite
#                        40-kotlin or .ci/release) can stand in for the one under test (Maven
#                        prefers a locally installed artifact to any repository), without
#                        downloading Kotlin, JUnit and the plugins again. ~/.m2 is left alone.
#   shop_project DIR REPO_URL VERSION [ARTIFACT...]
#                        writes DIR/pom.xml, a shop's Maven project (Java 17, surefire) depending
#                        on dev.storefront:storefront:VERSION and, test scope, on each
#                        dev.storefront:ARTIFACT:VERSION and JUnit Jupiter, all resolved from the
#                        Maven repository REPO_URL, and its JUnit 5 test
#                        DIR/src/test/java/shop/CheckoutTest.java: with
#                        @ExtendWith(StorefrontSandboxExtension.class) and the injected client of
#                        the seeded merchant, it creates a merchant payment, pays it as the buyer
#                        through sandbox.trigger and asserts it paid. Java lines on stdin (may be
#                        none: </dev/null) go first into that test method, before the payment
#                        (`client` and `sandbox` in scope); their `import ...;` lines go to the
#                        class's imports.
#   shop_test DIR M2 [NAME=VALUE...]
#                        runs DIR's tests (mvn test, local repository M2, JNA taking its library
#                        from the jar only) with the NAME=VALUE variables set, the output (no
#                        colours) on stdout; succeeds when its one test ran and passed.

seed_m2() {
  local m2=$1 home_m2="$HOME/.m2/repository"
  mkdir -p "$m2"
  if [[ -d "$home_m2" ]]; then
    (cd "$home_m2" && find . -mindepth 1 -maxdepth 1 ! -name dev -exec cp -r {} "$m2/" \;)
    if [[ -d "$home_m2/dev" ]]; then
      mkdir -p "$m2/dev"
      (cd "$home_m2/dev" && find . -mindepth 1 -maxdepth 1 ! -name storefront -exec cp -r {} "$m2/dev/" \;)
    fi
  fi
  [[ ! -e "$m2/dev/storefront" ]] || { echo "seed_m2: $m2/dev/storefront exists" >&2; return 1; }
}

shop_project() {
  local dir=$1 repo_url=$2 version=$3 artifact test_deps=
  for artifact in "${@:4}"; do
    test_deps+="
    <dependency><groupId>dev.storefront</groupId><artifactId>$artifact</artifactId><version>$version</version><scope>test</scope></dependency>"
  done
  mkdir -p "$dir/src/test/java/shop"
  cat >"$dir/pom.xml" <<POM
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
    <dependency><groupId>dev.storefront</groupId><artifactId>storefront</artifactId><version>$version</version></dependency>$test_deps
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
  local checks
  checks=$(cat)
  {
    echo 'package shop;'
    echo
    echo 'import static org.junit.jupiter.api.Assertions.assertTrue;'
    echo
    echo 'import dev.storefront.Storefront;'
    echo 'import dev.storefront.StorefrontClient;'
    echo 'import dev.storefront.testing.StorefrontSandbox;'
    echo 'import dev.storefront.testing.StorefrontSandboxExtension;'
    echo 'import org.junit.jupiter.api.Test;'
    echo 'import org.junit.jupiter.api.extension.ExtendWith;'
    [[ -z "$checks" ]] || grep '^import ' <<<"$checks" || true
    cat <<'JAVA'

@ExtendWith(StorefrontSandboxExtension.class)
class CheckoutTest {
    @Test
    void paid(StorefrontClient client, StorefrontSandbox sandbox) throws Exception {
JAVA
    [[ -z "$checks" ]] || grep -v '^import ' <<<"$checks" | sed '/./s/^/        /'
    cat <<'JAVA'
        String orderNo = client.createMerchantPayment(Storefront.merchantPaymentRequest()
            .externalReference("shop-1").amountMinor(1250).currency("USD").build()).getPayment().getOrderNo();
        sandbox.trigger("pay", orderNo, "--channel", "ch_card_usd");
        assertTrue(Storefront.isPaid(client.getMerchantPayment(orderNo).getStatus()));
    }
}
JAVA
  } >"$dir/src/test/java/shop/CheckoutTest.java"
}

shop_test() {
  local out status=0
  out=$(env "${@:3}" mvn -B -ntp -Dstyle.color=never -f "$1/pom.xml" -C "-Dmaven.repo.local=$2" -Djna.nosys=true test 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g') || status=$?
  printf '%s\n' "$out"
  ((status == 0)) && grep -q 'Tests run: 1, Failures: 0, Errors: 0, Skipped: 0' <<<"$out"
}
