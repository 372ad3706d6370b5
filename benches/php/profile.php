<?php

declare(strict_types=1);

// Where a receiver's time goes per request (receiver_profile.php) under php -S, without and with
// preloading: the median of each part over REQUESTS requests after warm-up.
//   php benches/php/profile.php [REQUESTS]   (STOREFRONT_LIB names the library; run.sh sets it)
require dirname(__DIR__, 2) . '/bindings/php/storefront.php';

$requests = (int) ($argv[1] ?? 200);
$secret = 'bench-notify-secret-0123456789abcdef0123';
$dir = sys_get_temp_dir() . '/sf-php-profile-' . bin2hex(random_bytes(4));
mkdir($dir);
file_put_contents("$dir/ffi.h", Storefront\Library::scopeHeader());
$preloadUser = function_exists('posix_geteuid') && posix_geteuid() === 0 ? ['-d', 'opcache.preload_user=root'] : [];
$opcache = ['-d', 'opcache.enable=1', '-d', 'opcache.enable_cli=1'];
$modes = [
    'cdef' => [...$opcache, '-d', 'ffi.enable=1'],
    'preload' => [...$opcache, '-d', 'ffi.enable=preload', '-d', "ffi.preload=$dir/ffi.h", '-d', 'opcache.preload=' . dirname(__DIR__, 2) . '/bindings/php/preload.php', ...$preloadUser],
];
$body = '{"id":"evt_1","type":"merchant_payment.status_changed","api_version":1,"created_at":"2026-09-21T10:00:05Z","data":{"order_no":"202609211000000000042","external_reference":"shop-order-1001","payment_no":"ch_card_usd","amount_minor":1250,"currency":"USD","currency_decimals":2,"status":"paid","status_version":2,"test_mode":false,"expires_at":"2026-09-21T10:30:00Z","event_id":"pe_b093a5293d502f614e47126f","provider_trade_no":"PT-1","occurred_at":"2026-09-21T10:01:00+00:00"}}';
$labels = ['load wrapper', 'bind library', 'new verifier', 'read request', 'verify'];
foreach ($modes as $mode => $ini) {
    $probe = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
    fclose($probe);
    $server = proc_open([PHP_BINARY, ...$ini, '-S', "127.0.0.1:$port", __DIR__ . '/receiver_profile.php'],
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/$mode.log", 'w'], 2 => ['file', "$dir/$mode.log", 'a']],
        $pipes, __DIR__, ['BENCH_SECRET' => $secret] + getenv());
    try {
        for ($i = 0; $i < 200 && @fsockopen('127.0.0.1', $port) === false; $i++) {
            usleep(50_000);
        }
        $parts = [];
        $binding = '?';
        for ($i = 0; $i < $requests + 5; $i++) {
            $now = time();
            $header = "Content-Type: application/json\r\nX-Service-Event-ID: evt_1\r\nX-Service-Timestamp: $now\r\nX-Service-Signature: sha256=" . hash_hmac('sha256', "$now.$body", $secret);
            $answer = @file_get_contents("http://127.0.0.1:$port/", false, stream_context_create(['http' => ['method' => 'POST', 'header' => $header, 'content' => $body, 'ignore_errors' => true]]));
            if ($answer === false) {
                throw new RuntimeException("$mode: no answer: " . file_get_contents("$dir/$mode.log"));
            }
            foreach ($http_response_header as $line) {
                if (stripos($line, 'X-Binding:') === 0) {
                    $binding = trim(substr($line, 10));
                }
                if ($i >= 5 && stripos($line, 'X-Parts-Us:') === 0) {
                    $parts[] = array_map('floatval', explode(' ', trim(substr($line, 11))));
                }
            }
        }
        if (count($parts) !== $requests) {
            throw new RuntimeException("$mode: " . count($parts) . " answers with parts of $requests: " . file_get_contents("$dir/$mode.log"));
        }
        echo "$mode (binding: $binding; median µs per request, $requests requests):";
        foreach ($labels as $k => $label) {
            $column = array_column($parts, $k);
            sort($column);
            printf('  %s %.1f', $label, $column[intdiv(count($column), 2)]);
        }
        echo "\n";
    } finally {
        proc_terminate($server);
        proc_close($server);
    }
}
array_map('unlink', glob("$dir/*") ?: []);
rmdir($dir);
