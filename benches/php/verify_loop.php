<?php

declare(strict_types=1);

// The verify call alone, in one PHP process (no request set-up), three ways alternately:
// WebhookVerifier::verifyAt (sf_webhook_verify_body, json_decode once, data checks), the
// decoding export the wrapper used before (sf_webhook_verify_at: the library decodes, re-encodes
// JSON, PHP decodes it again) and the hand-written hash_hmac + hash_equals + json_decode.
// Median over ROUNDS rounds of the mean of 2 000 calls, on the process's CPU time.
//   STOREFRONT_LIB=... php -d ffi.enable=1 benches/php/verify_loop.php [ROUNDS]
require dirname(__DIR__, 2) . '/bindings/php/storefront.php';

use Storefront\Library;
use Storefront\Webhook;

$rounds = (int) ($argv[1] ?? 30);
$head = '{"id":"evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e","type":"merchant_payment.status_changed","api_version":1,"created_at":"2026-09-21T10:00:05Z","data":{"order_no":"202609211000000000042","external_reference":"shop-order-1001","payment_no":"ch_card_usd","amount_minor":1250,"currency":"USD","currency_decimals":2,"status":"paid","status_version":2,"test_mode":false,"expires_at":"2026-09-21T10:30:00Z","event_id":"pe_b093a5293d502f614e47126f","provider_trade_no":"PT-';
$tail = '","occurred_at":"2026-09-21T10:01:00+00:00"}}';
$body = $head . str_repeat('7', 700 - strlen($head) - strlen($tail)) . $tail;
$secret = 'bench-notify-secret-0123456789abcdef0123';
$now = 1790000000;
$headers = [
    'Host' => '127.0.0.1', 'Content-Type' => 'application/json', 'Content-Length' => '700',
    'X-Service-Event-ID' => 'evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e', 'X-Service-Timestamp' => (string) $now,
    'X-Service-Signature' => 'sha256=' . hash_hmac('sha256', "$now.$body", $secret),
];
$verifier = new Storefront\WebhookVerifier([$secret]);
$handle = Library::callHandle('sf_webhook_verifier_new', 'sf_webhook_verifier', json_encode([$secret]));
$runs = [
    'verifyAt (verify_body + json_decode)' => fn () => $verifier->verifyAt($headers, $body, $now),
    'decoding export (before)' => function () use ($handle, $headers, $body, $now) {
        [$buffer, $length] = Library::bytes($body);
        return Library::callJson('sf_webhook_verify_at', $handle, Webhook::header($headers, Webhook::EVENT_ID_HEADER), Webhook::header($headers, Webhook::TIMESTAMP_HEADER), Webhook::header($headers, Webhook::SIGNATURE_HEADER), $buffer, $length, $now);
    },
    'hand-written' => function () use ($headers, $body, $secret, $now) {
        $ts = $headers['X-Service-Timestamp'];
        if (abs($now - (int) $ts) > 300 || !hash_equals('sha256=' . hash_hmac('sha256', "$ts.$body", $secret), $headers['X-Service-Signature'])) {
            throw new RuntimeException('not verified');
        }
        return json_decode($body, true);
    },
];
$cpu = fn () => (($u = getrusage())['ru_utime.tv_sec'] + $u['ru_stime.tv_sec']) * 1e6 + $u['ru_utime.tv_usec'] + $u['ru_stime.tv_usec'];
$times = array_fill_keys(array_keys($runs), []);
for ($round = 0; $round < $rounds; $round++) {
    foreach ($runs as $name => $run) {
        $start = $cpu();
        for ($i = 0; $i < 2000; $i++) {
            $run();
        }
        $times[$name][] = ($cpu() - $start) / 2000;
    }
}
foreach ($times as $name => $values) {
    sort($values);
    printf("%-40s %7.2f µs\n", $name, $values[intdiv(count($values), 2)]);
}
Library::ffi()->sf_webhook_verifier_free($handle);
