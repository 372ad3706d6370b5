#!/usr/bin/env bash
# Install test: the Composer package (OUT/php/storefront-php, .ci/release.d/php.sh) installed
# into a fresh Composer project with the README's two lines as written (a "path" repository,
# copied; `composer require storefront/storefront` with no version), then used with
# no STOREFRONT_* variable: the example program against a standalone sandbox, the README's quick
# start taken out of the page and run as written against it, and a webhook
# receiver (the README's three lines) under `php -S`, loading the library with FFI::cdef
# (ffi.enable=1) and preloaded under ffi.enable=preload (FFI::scope), as PHP-FPM runs it: a
# signed notification verifies, a forged or malformed one gets 400, and a persistent client
# created per request makes one token request for all the requests one process serves.
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
no_rust_toolchain

export DEBIAN_FRONTEND=noninteractive
if ! command -v php >/dev/null || ! command -v composer >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq php-cli composer >/dev/null
fi
if ! php -m | grep -qx 'Zend OPcache'; then
  apt-get install -y -qq php-opcache >/dev/null
fi

dist="$STOREFRONT_DIST/php"
package="$dist/storefront-php"
sandbox_bin="$STOREFRONT_SANDBOX_BIN"
example="$STOREFRONT_EXAMPLES/php/storefront_example.php"
top_readme="$STOREFRONT_CI/../README.md"   # the repository's README (its PHP install row)
ci="$STOREFRONT_CI"                        # kept: every STOREFRONT_* variable is unset below
shopt -s nullglob
zips=("$dist"/storefront-php-*.zip)
shopt -u nullglob
((${#zips[@]} == 1)) || { echo "install-php: expected one storefront-php-VERSION.zip in $dist" >&2; exit 1; }
version=$(basename "${zips[0]}" .zip)
version=${version#storefront-php-}
# From here on no STOREFRONT_* variable is set: the package must find its own files.
unset_storefront_env
export COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_NO_INTERACTION=1 COMPOSER_HOME="$PWD/composer-home"

servers=()
cleanup() {
  local pid
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  [[ -n "$sandbox_pid" ]] && kill "$sandbox_pid" 2>/dev/null || true
}
trap cleanup EXIT

# The release zip holds exactly the package folder under storefront-php/.
check "the zip holds the package folder" zip_holds_folder "${zips[0]}" "$package"

# A Composer project installing the package with the README's lines, exactly as written: the
# fenced block after the "install-test: php composer" marker of the package's own README.md
# (the copy a user reads), each line also present verbatim in the top README's PHP row. The
# package folder sits next to the project (../storefront-php), as the README says; its
# composer.json carries the stable version, so minimum-stability stable accepts it.
readme_lines() {
  awk '/<!-- install-test: php composer/ { marker = 1; next }
       marker && /^```sh$/ { inside = 1; next }
       inside && /^```$/ { exit }
       inside { print }' "$1"
}
mapfile -t install_lines < <(readme_lines "$package/README.md")
lines_documented() {
  ((${#install_lines[@]} == 2)) || { echo "install-php: expected 2 install lines in the package README, found ${#install_lines[@]}" >&2; return 1; }
  local line
  for line in "${install_lines[@]}"; do
    grep -qF -- "\`$line\`" "$top_readme" || { echo "install-php: the top README lacks: $line" >&2; return 1; }
  done
}
check "the package README's composer lines are the top README's" lines_documented
check "the package's composer.json has the stable version $version" \
  php -r 'exit(json_decode(file_get_contents($argv[1]), true)["version"] === $argv[2] ? 0 : 1);' "$package/composer.json" "$version"
cp -R "$package" storefront-php
mkdir app
# A fresh project (what `composer init` leaves), with nothing but the defaults: minimum-stability stable.
printf '{\n    "name": "storefront-install-test/app",\n    "require": {}\n}\n' >app/composer.json
run_readme_lines() {
  local line
  for line in "${install_lines[@]}"; do
    echo "\$ $line" >>composer.log
    (cd app && bash -c "$line") >>composer.log 2>&1 || { cat composer.log >&2; return 1; }
  done
  grep -q '"storefront/storefront": "^'"$version"'"' app/composer.json || { cat app/composer.json >&2; return 1; }
}
check "the README's composer lines install storefront/storefront $version" run_readme_lines
installed=app/vendor/storefront/storefront
copied() {
  [[ -d "$installed" && ! -L "$installed" ]] &&
    [[ -f "$installed/include/storefront.h" && -f "$installed/composer.json" && -f "$installed/preload.php" ]] &&
    compgen -G "$installed/lib/*/libstorefront.so" >/dev/null
}
check "the package is copied into vendor/ with its header and library" copied

# The example program, loading vendor/autoload.php, against a standalone sandbox.
cp "$example" app/storefront_example.php
start_sandbox "$sandbox_bin" "$PWD"
run_example() {
  (cd app && php storefront_example.php "$OLDPWD/ready.json") >example.log 2>&1 || { cat example.log >&2; return 1; }
  grep -qx "storefront $version against .*" example.log && grep -qx 'all checks passed' example.log ||
    { cat example.log >&2; return 1; }
}
check "the example passes with the installed package (library $version)" run_example

# The package README's quick start ("Both flows", the block after its install-test marker), taken
# out of the page (.ci/lib/md-block) and run as written in the project, after the README's
# `require __DIR__ . '/vendor/autoload.php';`: nothing of this script's environment but PATH, and
# exactly the variables of the shipped sandbox (its ready file's "env", the README's sandbox lines)
# plus USER_ACCESS_TOKEN, the user token the block reads (minted for alice after a reset,
# .ci/lib/sandbox_env.py). The sandbox's request log must then hold one merchant payment
# created and that payment queried.
autoload_line="require __DIR__ . '/vendor/autoload.php';"
run_quickstart() {
  grep -qF -- "$autoload_line" "$package/README.md" || { echo "install-php: the README no longer says $autoload_line" >&2; return 1; }
  { printf '<?php\n%s\n' "$autoload_line"; python3 "$ci/lib/md-block" "$package/README.md" "php quickstart"; } >app/quickstart.php || return 1
  local vars order_no
  mapfile -t vars < <(python3 "$ci/lib/sandbox_env.py" "$PWD/ready.json")
  (cd app && env -i PATH="$PATH" HOME="$HOME" "${vars[@]}" php -d error_reporting=-1 -d display_errors=stderr quickstart.php) >quickstart.log 2>&1 &&
    grep -qx 'final' quickstart.log && ! grep -qE 'Warning|Notice|Deprecated' quickstart.log &&
    order_no=$(python3 "$ci/lib/quickstart-sandbox" check "$PWD/ready.json") ||
    { cat quickstart.log >&2; return 1; }
  echo "install-php: the quick start created and queried merchant payment $order_no"
}
check "the package README's quick start, as written, creates and queries a merchant payment" run_quickstart

# The PHPUnit fixture's class (src/Testing) from the installed package: with the binary named it
# starts the sandbox and its config() reaches it; without one it says how to install it.
cat >app/sandbox_fixture.php <<'PHP'
<?php

declare(strict_types=1);

require __DIR__ . '/vendor/autoload.php';

try {
    $sandbox = Storefront\Testing\Sandbox::start();
} catch (Storefront\StorefrontException $missing) {
    echo 'missing: ', $missing->getMessage(), "\n";
    exit(0);
}
echo 'merchant ', (new Storefront\Client($sandbox->config()))->merchantProfile()->merchant_no, "\n";
PHP
run_sandbox_fixture() {
  (cd app && STOREFRONT_SANDBOX_BIN="$sandbox_bin" php sandbox_fixture.php) >fixture.log 2>&1 &&
    grep -qx 'merchant M10001' fixture.log &&
    (cd app && PATH=/usr/bin:/bin php sandbox_fixture.php) >fixture-missing.log 2>&1 &&
    grep -q 'missing: storefront-sandbox is not installed: `pip install storefront-sandbox`' fixture-missing.log ||
    { cat fixture.log fixture-missing.log >&2; return 1; }
}
check "Storefront\\Testing\\Sandbox from the installed package starts the sandbox" run_sandbox_fixture

# The webhook receiver (the README's three lines) and a sender that signs with the wrapper's
# test signer (like the service: sha256 HMAC over "timestamp.body").
secret=whsec_install_test_0123456789abcdef0123
cat >app/receiver.php <<PHP
<?php

declare(strict_types=1);

require __DIR__ . '/vendor/autoload.php';

try {
    \$verifier = new Storefront\WebhookVerifier(['$secret']);
    \$notification = \$verifier->verify(getallheaders(), (string) file_get_contents('php://input'));
    Storefront\Webhook::checkExpectation(\$notification['data'], ['external_reference' => 'order-42', 'amount_minor' => 1250, 'currency' => 'USD', 'test_mode' => false]);
    echo 'verified ', \$notification['id'], ' ffi=', Storefront\Library::loadMode();
} catch (Storefront\WebhookException \$e) {
    http_response_code(400);
    echo 'rejected ', \$e->resultName();
}
PHP
cat >app/send.php <<'PHP'
<?php

declare(strict_types=1);

// php send.php URL SECRET [malformed]: POSTs a status notification signed with SECRET (with
// "malformed", its event id header is not UTF-8 and given twice); prints "STATUS BODY".
require __DIR__ . '/vendor/autoload.php';

[$script, $url, $secret] = $argv;
$malformed = ($argv[3] ?? '') === 'malformed';
$body = json_encode([
    'id' => 'EVT-42', 'type' => 'merchant_payment.status_changed', 'api_version' => 1,
    'created_at' => gmdate('Y-m-d\TH:i:s\Z'),
    'data' => [
        'order_no' => 'MP42', 'external_reference' => 'order-42', 'payment_no' => 'ch_card_usd',
        'amount_minor' => 1250, 'currency' => 'USD', 'currency_decimals' => 2, 'status' => 'paid',
        'status_version' => 2, 'test_mode' => false, 'expires_at' => gmdate('Y-m-d\TH:i:s\Z', time() + 1800),
        'event_id' => 'PE42', 'provider_trade_no' => 'T42', 'occurred_at' => gmdate('Y-m-d\TH:i:s\Z'),
    ],
]);
$now = time();
$headers = [
    'Content-Type: application/json',
    'X-Service-Event-ID: EVT-42',
    "X-Service-Timestamp: $now",
    'X-Service-Signature: ' . Storefront\Webhook::sign($secret, $now, $body),
];
if ($malformed) {
    $headers[] = "X-Service-Event-ID: EVT-\xff";
}
$answer = file_get_contents($url, false, stream_context_create(['http' => [
    'method' => 'POST', 'header' => implode("\r\n", $headers), 'content' => $body,
    'ignore_errors' => true, 'timeout' => 30,
]]));
echo explode(' ', $http_response_header[0] ?? 'HTTP/1.0 000')[1], ' ', $answer, "\n";
PHP

# A PHP-FPM-like front script: a persistent client per request, one call (prints the pid).
cat >app/persistent.php <<'PHP'
<?php

declare(strict_types=1);

require __DIR__ . '/vendor/autoload.php';

$ready = json_decode((string) file_get_contents(__DIR__ . '/../ready.json'), true);
$client = Storefront\Client::persistent([
    'base_url' => $ready['base_url'], 'token_endpoint' => $ready['token_endpoint'],
    'client_id' => 'sbx_merchant_client', 'client_secret' => 'sbx_merchant_secret_9f2c41d7a8e64b0c',
    'allow_insecure_loopback' => true,
]);
echo getmypid(), ' ', $client->merchantProfile()['merchant_no'], ' ffi=', Storefront\Library::loadMode();
PHP

free_port() {
  php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);'
}
# serve NAME [RUNNER...] -- PHP_OPTIONS...: starts `php OPTIONS -S` on a free port, sets $port.
serve() {
  local name=$1 runner=()
  shift
  while [[ "$1" != -- ]]; do runner+=("$1"); shift; done
  shift
  port=$(free_port)
  (cd app && exec "${runner[@]}" php "$@" -S "127.0.0.1:$port" "${ROUTER:-receiver.php}") >"$name.log" 2>&1 &
  servers+=($!)
  local pid=$!
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "receiver $name did not start:" >&2
  cat "$name.log" >&2
  return 1
}
# expect NAME PATTERN SECRET [malformed]: the answer to a notification signed with SECRET
# matches PATTERN.
expect() {
  local answer
  answer=$(cd app && php send.php "http://127.0.0.1:$port/hooks/storefront" "$3" ${4:-})
  [[ "$answer" =~ $2 ]] || { echo "receiver $1 answered: $answer" >&2; cat "$1.log" >&2; return 1; }
}
forged=whsec_forged_by_someone_else_0000000000
receiver_checks() {  # NAME MODE
  check "receiver $1: a signed notification is verified (2xx, FFI $2)" expect "$1" "^2[0-9][0-9] verified EVT-42 ffi=$2\$" "$secret"
  check "receiver $1: a forged notification is refused (400)" expect "$1" '^400 rejected webhook_signature_mismatch$' "$forged"
  check "receiver $1: a malformed notification is refused (400, not 500)" expect "$1" '^400 rejected ' "$secret" malformed
}

# token_requests: how many client-credentials token requests the sandbox has received.
token_requests() {
  php -r '
    $ready = json_decode((string) file_get_contents($argv[1]), true);
    $path = parse_url($ready["token_endpoint"], PHP_URL_PATH);
    echo count(json_decode((string) file_get_contents($ready["control_url"] . "/requests?method=POST&path=" . rawurlencode($path)), true));
  ' "$PWD/ready.json"
}
# persistent_checks NAME MODE: 3 requests to persistent.php served by one process (the server
# started by `ROUTER=persistent.php serve NAME ...`) make one token request.
persistent_one_token() {
  local before after answer pids=()
  before=$(token_requests)
  for _ in 1 2 3; do
    answer=$(php -r 'echo file_get_contents($argv[1]);' "http://127.0.0.1:$port/")
    [[ "$answer" =~ ^([0-9]+)\ M10001\ ffi=$2$ ]] || { echo "persistent $1 answered: $answer" >&2; cat "$1.log" >&2; return 1; }
    pids+=("${BASH_REMATCH[1]}")
  done
  after=$(token_requests)
  [[ "${pids[0]}" == "${pids[1]}" && "${pids[1]}" == "${pids[2]}" ]] || { echo "persistent $1: served by ${pids[*]}" >&2; return 1; }
  ((after - before == 1)) || { echo "persistent $1: $((after - before)) token requests for 3 requests" >&2; return 1; }
}

# 1. FFI::cdef: a web SAPI with ffi.enable=true, nothing preloaded.
if serve cdef -- -d ffi.enable=1; then receiver_checks cdef cdef; else check "receiver cdef starts" false; fi
if ROUTER=persistent.php serve persistent-cdef -- -d ffi.enable=1; then
  check "persistent client (FFI cdef): 3 requests of one process, 1 token request" persistent_one_token persistent-cdef cdef
else
  check "persistent-cdef starts" false
fi

# 2. ffi.enable=preload (PHP-FPM's default) without preloading: FFI is refused, and the wrapper
#    says how to preload.
refused_without_preload() {
  expect plain '^500' "$secret" && grep -q 'preload.php with opcache.preload' plain.log
}
if serve plain -- -d ffi.enable=preload; then
  check "ffi.enable=preload without preloading refuses FFI with a pointer to preload.php" refused_without_preload
else
  check "receiver plain starts" false
fi

# 3. ffi.enable=preload with opcache.preload=preload.php (FFI::load under the scope
#    "storefront", wrapper classes preloaded): the receiver takes FFI::scope. Preloading as root
#    needs opcache.preload_user, where PHP refuses FFI::load, so as root this runs as nobody.
preload_options=(-d ffi.enable=preload -d opcache.enable=1 -d opcache.enable_cli=1 -d "opcache.preload=$PWD/$installed/preload.php")
as_user=()
if (($(id -u) == 0)); then
  chmod -R a+rX "$PWD"
  if command -v setpriv >/dev/null; then
    as_user=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
  else
    as_user=(runuser -u nobody --)
  fi
fi
if serve preload "${as_user[@]}" -- "${preload_options[@]}"; then
  receiver_checks preload scope
else
  check "receiver preload starts" false
fi

# 4. The PHP-FPM-as-root setup: opcache.preload_user, the scope bound at startup by ffi.preload
#    (header written by `php preload.php --ffi-header FILE`), preload.php preloading the classes.
(cd app && php vendor/storefront/storefront/preload.php --ffi-header "$PWD/storefront-ffi.h" >/dev/null)
ffi_preload_options=("${preload_options[@]}" -d "ffi.preload=$PWD/app/storefront-ffi.h")
(($(id -u) == 0)) && ffi_preload_options+=(-d "opcache.preload_user=$(id -un)")
if serve ffi-preload -- "${ffi_preload_options[@]}"; then
  receiver_checks ffi-preload scope
else
  check "receiver ffi-preload starts" false
fi
if ROUTER=persistent.php serve persistent-preload -- "${ffi_preload_options[@]}"; then
  check "persistent client (preloaded, FFI scope): 3 requests of one process, 1 token request" persistent_one_token persistent-preload scope
else
  check "persistent-preload starts" false
fi

finish
