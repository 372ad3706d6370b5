<?php

declare(strict_types=1);

// Per-request cost of a PHP webhook receiver, and of an API client made per request, each
// configuration served by its own `php -S` (which runs every request fresh, as php-fpm does:
// statics, classes and FFI objects of one request are gone in the next; opcache and what is
// preloaded stay), all measured in one run, interleaved rounds:
//
//   cdef          receiver_storefront.php, ffi.enable=1, no preload: the wrapper binds the
//                 library with FFI::cdef in every request
//   preload       receiver_storefront.php, opcache.preload=bindings/php/preload.php with
//                 ffi.preload (its header) and ffi.enable=preload: FFI::scope per request
//   hand-written  receiver_handwritten.php: hash_hmac + hash_equals + json_decode, no library
//   client/request     receiver_client.php: new Storefront\Client per request, one API call
//   client/persistent  receiver_client.php: Client::persistent per request, one API call
//
// opcache is on everywhere (as in production php-fpm). For each request: X-Elapsed-Ns (the
// script's own time, first line to answer) and the round trip seen here (connect, request,
// answer). Figures are medians over all measured requests, after WARMUP requests per server.
// The client rows also report the token requests the sandbox received and the php -S
// process's thread count.
//
// Usage (benches/php/run.sh sets the environment): php bench.php [ROUNDS] [REQUESTS_PER_ROUND]

require dirname(__DIR__, 2) . '/bindings/php/storefront.php';
require dirname(__DIR__, 2) . '/bindings/php/tests/SandboxHarness.php';

use Storefront\Tests\SandboxHarness;

const SECRET = 'bench-notify-secret-0123456789abcdef0123';
const EVENT_ID = 'evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e';
const WARMUP = 5;

$rounds = (int) ($argv[1] ?? 20);
$perRound = (int) ($argv[2] ?? 20);
if ($rounds < 1 || $perRound < 1) {
    fwrite(STDERR, "usage: php bench.php [ROUNDS] [REQUESTS_PER_ROUND]\n");
    exit(2);
}

/** The notification of benches/webhook.rs, padded to exactly 700 bytes. */
function body700(): string
{
    $head = '{"id":"' . EVENT_ID . '","type":"merchant_payment.status_changed","api_version":1,'
        . '"created_at":"2026-09-21T10:00:05Z","data":{"order_no":"202609211000000000042",'
        . '"external_reference":"shop-order-1001","payment_no":"ch_card_usd","amount_minor":1250,'
        . '"currency":"USD","currency_decimals":2,"status":"paid","status_version":2,'
        . '"test_mode":false,"expires_at":"2026-09-21T10:30:00Z",'
        . '"event_id":"pe_b093a5293d502f614e47126f","provider_trade_no":"PT-';
    $tail = '","occurred_at":"2026-09-21T10:01:00+00:00"}}';
    $body = $head . str_repeat('7', 700 - strlen($head) - strlen($tail)) . $tail;
    assert(strlen($body) === 700);
    return $body;
}

function freePort(): int
{
    $probe = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
    fclose($probe);
    return $port;
}

/**
 * Starts `php [ini] -S` for $script; returns [process, port, log file].
 *
 * @param list<string> $ini
 * @param array<string, string> $env
 */
function serve(string $script, array $ini, array $env, string $dir): array
{
    $port = freePort();
    $log = "$dir/server-$port.log";
    $process = proc_open(
        [PHP_BINARY, ...$ini, '-S', "127.0.0.1:$port", $script],
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'w'], 2 => ['file', $log, 'a']],
        $pipes,
        dirname($script),
        $env + getenv()
    );
    for ($i = 0; $i < 200 && @fsockopen('127.0.0.1', $port) === false; $i++) {
        usleep(50_000);
    }
    return [$process, $port, $log];
}

/**
 * One POST over a fresh connection (php -S closes it after the answer); returns
 * [status, X-Elapsed-Ns, round trip ns, headers].
 *
 * @param array<string, string> $headers
 * @return array{0: int, 1: int, 2: int, 3: array<string, string>}
 */
function post(int $port, array $headers, string $body): array
{
    $request = "POST / HTTP/1.1\r\nHost: 127.0.0.1:$port\r\nContent-Type: application/json\r\nContent-Length: " . strlen($body) . "\r\nConnection: close\r\n";
    foreach ($headers as $name => $value) {
        $request .= "$name: $value\r\n";
    }
    $request .= "\r\n" . $body;
    $started = hrtime(true);
    $socket = stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 30);
    if ($socket === false) {
        throw new RuntimeException("connect to $port: $errstr");
    }
    fwrite($socket, $request);
    $answer = stream_get_contents($socket);
    fclose($socket);
    $roundTrip = hrtime(true) - $started;
    [$head] = explode("\r\n\r\n", (string) $answer, 2);
    $lines = explode("\r\n", $head);
    $status = (int) explode(' ', $lines[0])[1];
    $fields = [];
    foreach (array_slice($lines, 1) as $line) {
        [$name, $value] = array_map('trim', explode(':', $line, 2)) + [1 => ''];
        $fields[strtolower($name)] = $value;
    }
    return [$status, (int) ($fields['x-elapsed-ns'] ?? -1), $roundTrip, $fields];
}

function median(array $values): float
{
    sort($values);
    $n = count($values);
    return $n % 2 ? (float) $values[intdiv($n, 2)] : ($values[$n / 2 - 1] + $values[$n / 2]) / 2;
}

function threads(int $pid): int
{
    $status = (string) @file_get_contents("/proc/$pid/status");
    return preg_match('/^Threads:\s+(\d+)/m', $status, $m) === 1 ? (int) $m[1] : -1;
}

/** The pid of the php -S process (proc_open runs it directly, without a shell). */
function pid($process): int
{
    return (int) proc_get_status($process)['pid'];
}

$dir = sys_get_temp_dir() . '/sf-php-bench-' . bin2hex(random_bytes(4));
mkdir($dir);
$here = __DIR__;
$library = (string) getenv('STOREFRONT_LIB');
$opcache = ['-d', 'opcache.enable=1', '-d', 'opcache.enable_cli=1'];
$ffiHeader = "$dir/storefront-ffi.h";
file_put_contents($ffiHeader, Storefront\Library::scopeHeader());
$preloadUser = function_exists('posix_geteuid') && posix_geteuid() === 0 ? ['-d', 'opcache.preload_user=root'] : [];
$env = ['BENCH_SECRET' => SECRET, 'STOREFRONT_LIB' => $library];

$sandbox = SandboxHarness::get();
$clientEnv = $env + ['BENCH_CLIENT_CONFIG' => json_encode($sandbox->config(['user_agent' => 'php-bench-' . bin2hex(random_bytes(3))]))];

$configs = [
    'cdef' => ["$here/receiver_storefront.php", [...$opcache, '-d', 'ffi.enable=1'], $env],
    'preload' => ["$here/receiver_storefront.php", [...$opcache, '-d', 'ffi.enable=preload', '-d', "ffi.preload=$ffiHeader", '-d', 'opcache.preload=' . dirname($here, 2) . '/bindings/php/preload.php', ...$preloadUser], $env],
    'hand-written' => ["$here/receiver_handwritten.php", $opcache, $env],
    'client/request' => ["$here/receiver_client.php", [...$opcache, '-d', 'ffi.enable=1'], $clientEnv + ['BENCH_PERSISTENT' => '0']],
    'client/persistent' => ["$here/receiver_client.php", [...$opcache, '-d', 'ffi.enable=1'], $clientEnv + ['BENCH_PERSISTENT' => '1']],
];

$servers = [];
$exit = 0;
try {
    foreach ($configs as $name => [$script, $ini, $configEnv]) {
        $servers[$name] = serve($script, $ini, $configEnv, $dir);
    }
    $now = time();
    $body = body700();
    $headers = [
        'X-Service-Event-ID' => EVENT_ID,
        'X-Service-Timestamp' => (string) $now,
        'X-Service-Signature' => 'sha256=' . hash_hmac('sha256', "$now.$body", SECRET),
    ];
    $tokenPath = (string) parse_url($sandbox->info['token_endpoint'], PHP_URL_PATH);
    $tokens = fn () => count($sandbox->control('GET', '/requests?method=POST&path=' . rawurlencode($tokenPath)));

    $elapsed = $trip = $first = $modes = $requests = $tokenCount = [];
    foreach ($servers as $name => [$process, $port]) {
        $before = $tokens();
        for ($i = 0; $i < WARMUP; $i++) {
            [$status, $ns, $rt, $fields] = post($port, $headers, $body);
            if ($status >= 300) {
                throw new RuntimeException("$name answered $status: " . file_get_contents($servers[$name][2]));
            }
            if ($i === 0) {
                $first[$name] = $ns;
            }
            $modes[$name] = $fields['x-load-mode'] ?? '';
        }
        $requests[$name] = WARMUP;
        $tokenCount[$name] = $tokens() - $before;
        $elapsed[$name] = $trip[$name] = [];
    }
    $names = array_keys($servers);
    for ($round = 0; $round < $rounds; $round++) {
        $order = [...array_slice($names, $round % count($names)), ...array_slice($names, 0, $round % count($names))];
        foreach ($order as $name) {
            $port = $servers[$name][1];
            $before = str_starts_with($name, 'client/') ? $tokens() : 0;
            for ($i = 0; $i < $perRound; $i++) {
                [$status, $ns, $rt] = post($port, $headers, $body);
                if ($status >= 300) {
                    throw new RuntimeException("$name answered $status");
                }
                $elapsed[$name][] = $ns;
                $trip[$name][] = $rt;
            }
            $requests[$name] += $perRound;
            if (str_starts_with($name, 'client/')) {
                $tokenCount[$name] += $tokens() - $before;
            }
        }
    }

    printf("PHP %s, library %s; %d rounds x %d requests per configuration (after %d warm-up requests); medians\n", PHP_VERSION, $library, $rounds, $perRound, WARMUP);
    printf("  %-18s %14s %14s %16s %s\n", 'configuration', 'in script', 'round trip', 'first request', 'binding');
    $median = [];
    foreach ($names as $name) {
        $median[$name] = median($elapsed[$name]);
        printf("  %-18s %11.1f µs %11.1f µs %13.1f µs %s\n", $name, $median[$name] / 1000, median($trip[$name]) / 1000, $first[$name] / 1000, $modes[$name]);
    }
    $hand = $median['hand-written'];
    echo "ratios (in script):\n";
    printf("  cdef / hand-written      %7.2fx  (target <= 3)\n", $median['cdef'] / $hand);
    printf("  preload / hand-written   %7.2fx  (target <= 1.5)\n", $median['preload'] / $hand);
    printf("  client/request - client/persistent  %+.1f µs per request\n", ($median['client/request'] - $median['client/persistent']) / 1000);
    foreach (['client/request', 'client/persistent'] as $name) {
        printf("  %-18s %d token requests for %d requests; php -S threads after the run: %d\n", $name, $tokenCount[$name], $requests[$name], threads(pid($servers[$name][0])));
    }
    foreach ($servers as $name => [, , $log]) {
        $text = (string) file_get_contents($log);
        if (preg_match('/(Fatal|Warning|Deprecated)/', $text) === 1) {
            fwrite(STDERR, "$name server log:\n$text\n");
            $exit = 1;
        }
    }
} finally {
    foreach ($servers as [$process]) {
        proc_terminate($process);
        proc_close($process);
    }
    array_map('unlink', glob("$dir/*") ?: []);
    rmdir($dir);
    $sandbox->stop();
}
exit($exit);
