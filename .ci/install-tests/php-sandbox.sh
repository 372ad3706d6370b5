#!/usr/bin/env bash
# Install test: the Composer package storefront/sandbox (OUT/php/storefront-sandbox-php, written
# by .ci/release.d/sandbox.sh) next to the SDK's storefront/storefront (OUT/php/storefront-php),
# both installed into a fresh Composer project from their "path" repositories (copied), the SDK
# with the README's lines and the sandbox with `composer require --dev storefront/sandbox`. With
# no STOREFRONT_SANDBOX_BIN and no storefront-sandbox on PATH (both checked), a shop's PHPUnit
# test using Storefront\Testing\SandboxTrait, and a plain script using Sandbox::start(), create
# and query a merchant payment against the sandbox Composer installed: Sandbox::binaryPath() is
# vendor/storefront/sandbox/bin/storefront-sandbox (vendor/bin/storefront-sandbox links to it),
# byte for byte the binary of the release tarball, and it is that process that answers.
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
no_rust_toolchain

export DEBIAN_FRONTEND=noninteractive
if ! command -v php >/dev/null || ! command -v composer >/dev/null || ! command -v phpunit >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq php-cli composer phpunit >/dev/null
fi

dist="$STOREFRONT_DIST/php"
sdk="$dist/storefront-php"
package="$dist/storefront-sandbox-php"
tarball_bin="$STOREFRONT_SANDBOX_BIN"   # (only compared with, never run)
shopt -s nullglob
zips=("$dist"/storefront-sandbox-php-*.zip)
shopt -u nullglob
((${#zips[@]} == 1)) || { echo "install-php-sandbox: expected one storefront-sandbox-php-VERSION.zip in $dist" >&2; exit 1; }
version=$(basename "${zips[0]}" .zip)
version=${version#storefront-sandbox-php-}
# From here on no STOREFRONT_* variable is set, and no directory of PATH holds a
# storefront-sandbox: the only sandbox there is, is the one Composer installs.
unset_storefront_env
hide_other_sandboxes
export COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_NO_INTERACTION=1 COMPOSER_HOME="$PWD/composer-home"

check "no STOREFRONT_SANDBOX_BIN and no storefront-sandbox on PATH" no_other_sandbox

# The release zip holds exactly the package folder under storefront-sandbox-php/.
check "the zip holds the package folder" zip_holds_folder "${zips[0]}" "$package"
check "the package's bin/storefront-sandbox is the release tarball's binary" cmp -s "$package/bin/storefront-sandbox" "$tarball_bin"
check "the package's composer.json has the stable version $version and bin/storefront-sandbox" \
  php -r '$j = json_decode(file_get_contents($argv[1]), true); exit($j["version"] === $argv[2] && $j["bin"] === ["bin/storefront-sandbox"] ? 0 : 1);' "$package/composer.json" "$version"

# A fresh project (what `composer init` leaves), both packages next to it as path repositories,
# installed with the package README's lines as written: the fenced blocks after the
# "install-test: php composer" (the SDK) and "install-test: php-sandbox composer" (the sandbox)
# markers of storefront-php/README.md, the copy a user reads.
readme_lines() {  # FILE MARKER
  awk -v marker="<!-- install-test: $2 " 'index($0, marker) == 1 { seen = 1; next }
       seen && /^```sh$/ { inside = 1; next }
       inside && /^```$/ { exit }
       inside { print }' "$1"
}
mapfile -t sdk_lines < <(readme_lines "$sdk/README.md" "php composer")
mapfile -t sandbox_lines < <(readme_lines "$sdk/README.md" "php-sandbox composer")
lines_found() {
  ((${#sdk_lines[@]} == 2 && ${#sandbox_lines[@]} == 2)) &&
    [[ "${sandbox_lines[1]}" == "composer require --dev storefront/sandbox" ]] ||
    { echo "install-php-sandbox: README lines: ${sdk_lines[*]} / ${sandbox_lines[*]}" >&2; return 1; }
}
check "the package README has the SDK's and the sandbox's composer lines" lines_found
cp -R "$sdk" storefront-php
cp -R "$package" storefront-sandbox-php
mkdir app
printf '{\n    "name": "storefront-install-test/app",\n    "require": {}\n}\n' >app/composer.json
install_both() {
  local line
  for line in "${sdk_lines[@]}" "${sandbox_lines[@]}"; do
    echo "\$ $line" >>composer.log
    (cd app && bash -c "$line") >>composer.log 2>&1 || { cat composer.log >&2; return 1; }
  done
  grep -q '"storefront/sandbox": "^'"$version"'"' app/composer.json || { cat app/composer.json >&2; return 1; }
}
check "composer require --dev storefront/sandbox $version (and storefront/storefront) from the release folder" install_both
installed="$PWD/app/vendor/storefront/sandbox/bin/storefront-sandbox"
installed_binary() {
  [[ -f "$installed" && ! -L "$PWD/app/vendor/storefront/sandbox" && -x "$installed" ]] &&
    cmp -s "$installed" "$tarball_bin" || { ls -l app/vendor/storefront/sandbox/bin >&2; return 1; }
}
check "vendor/storefront/sandbox/bin/storefront-sandbox is the packaged binary (copied, executable)" installed_binary
# vendor/bin/storefront-sandbox: Composer's link or proxy script to it, which runs.
vendor_bin() {
  local target
  [[ -x app/vendor/bin/storefront-sandbox ]] || { ls -l app/vendor/bin >&2; return 1; }
  if [[ -L app/vendor/bin/storefront-sandbox ]]; then
    target=$(readlink -f app/vendor/bin/storefront-sandbox)
    [[ "$target" == "$(readlink -f "$installed")" ]] || { echo "vendor/bin/storefront-sandbox -> $target" >&2; return 1; }
  else
    # (Composer 2's proxy script: cd to the package's bin folder, then runs storefront-sandbox.)
    grep -q "storefront/sandbox/bin'" app/vendor/bin/storefront-sandbox || { cat app/vendor/bin/storefront-sandbox >&2; return 1; }
  fi
  local usage
  usage=$(cd app && vendor/bin/storefront-sandbox --help 2>&1 || true)
  [[ "$usage" == usage:* ]] || { echo "vendor/bin/storefront-sandbox --help: $usage" >&2; return 1; }
}
check "composer put vendor/bin/storefront-sandbox, which runs it" vendor_bin

# A plain script: Sandbox::binaryPath() is the Composer-installed binary, Sandbox::start() runs
# it, and the process answering is that file.
cat >app/sandbox_script.php <<'PHP'
<?php

declare(strict_types=1);

require __DIR__ . '/vendor/autoload.php';

echo 'binary ', Storefront\Testing\Sandbox::binaryPath(), "\n";
$sandbox = Storefront\Testing\Sandbox::start();
echo 'running ', readlink('/proc/' . $sandbox->pid() . '/exe'), "\n";
$client = new Storefront\Client($sandbox->config());
$created = $client->createMerchantPayment(new Storefront\MerchantPaymentRequest(
    ['external_reference' => 'script-1', 'amount_minor' => 1250, 'currency' => 'USD']));
$sandbox->trigger('pay', $created->order_no, '--channel', 'ch_card_usd');
echo 'paid ', Storefront\PaymentStatus::of($client->merchantPayment($created->order_no))->isPaid() ? 'yes' : 'no', "\n";
PHP
run_script() {
  (cd app && php sandbox_script.php) >script.log 2>&1 &&
    grep -qxF "binary $installed" script.log &&
    grep -qxF "running $(readlink -f "$installed")" script.log &&
    grep -qx 'paid yes' script.log || { cat script.log >&2; return 1; }
}
check "Sandbox::start() runs vendor/storefront/sandbox/bin/storefront-sandbox: a payment created, paid and read" run_script

# A shop's PHPUnit test with SandboxTrait (Debian's phpunit, the project's autoloader).
mkdir -p app/tests
cat >app/tests/CheckoutTest.php <<'PHP'
<?php

declare(strict_types=1);

final class CheckoutTest extends PHPUnit\Framework\TestCase
{
    use Storefront\Testing\SandboxTrait;

    public function testPaid(): void
    {
        $this->assertSame(getenv('EXPECTED_BINARY'), Storefront\Testing\Sandbox::binaryPath());
        $this->assertSame(getenv('EXPECTED_EXE'), readlink('/proc/' . self::sandbox()->pid() . '/exe'));
        $client = new Storefront\Client(self::sandboxConfig());
        $created = $client->createMerchantPayment(new Storefront\MerchantPaymentRequest(
            ['external_reference' => 'order-42', 'amount_minor' => 1250, 'currency' => 'USD']));
        self::sandbox()->trigger('pay', $created->order_no, '--channel', 'ch_card_usd');
        $this->assertTrue(Storefront\PaymentStatus::of($client->merchantPayment($created->order_no))->isPaid());
    }
}
PHP
run_phpunit() {
  (cd app && EXPECTED_BINARY="$installed" EXPECTED_EXE="$(readlink -f "$installed")" \
    phpunit --do-not-cache-result --bootstrap vendor/autoload.php tests/CheckoutTest.php) >phpunit.log 2>&1 &&
    grep -q '^OK (1 test, ' phpunit.log || { cat phpunit.log >&2; return 1; }
}
check "a PHPUnit test with SandboxTrait runs the Composer-installed sandbox: created, paid, read" run_phpunit

# Without the package the fixture says how to get it.
not_installed() {
  (cd app && composer remove --dev storefront/sandbox) >>composer.log 2>&1 || { cat composer.log >&2; return 1; }
  (cd app && php -r '
    require "vendor/autoload.php";
    try { Storefront\Testing\Sandbox::binaryPath(); echo "found\n"; } catch (Storefront\StorefrontException $e) { echo $e->getMessage(), "\n"; }
  ') >missing.log 2>&1
  grep -qF 'composer require --dev storefront/sandbox' missing.log || { cat missing.log >&2; return 1; }
}
check "without storefront/sandbox the fixture names composer require --dev storefront/sandbox" not_installed

finish
