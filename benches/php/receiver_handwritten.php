<?php

declare(strict_types=1);

// The hand-written webhook receiver the wrapper is compared with: hash_hmac + hash_equals +
// json_decode and the tolerance and event-id checks, no library. Same answers and
// X-Elapsed-Ns as receiver_storefront.php.
$started = hrtime(true);
$headers = getallheaders();
$body = (string) file_get_contents('php://input');
$timestamp = (string) ($headers['X-Service-Timestamp'] ?? '');
$signature = (string) ($headers['X-Service-Signature'] ?? '');
$status = 400;
if ($timestamp !== '' && ctype_digit($timestamp) && abs(time() - (int) $timestamp) <= 300
    && hash_equals('sha256=' . hash_hmac('sha256', "$timestamp.$body", (string) getenv('BENCH_SECRET')), $signature)) {
    $notification = json_decode($body, true);
    if (is_array($notification) && ($notification['id'] ?? null) === ($headers['X-Service-Event-ID'] ?? null)) {
        $status = $notification['data']['amount_minor'] === 1250 ? 204 : 500;
    }
}
header('X-Elapsed-Ns: ' . (hrtime(true) - $started));
http_response_code($status);
