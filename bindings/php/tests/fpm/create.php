<?php

declare(strict_types=1);

/**
 * php-fpm worker script of .ci/suites/34-php-fpm.sh: one request = one merchant-payment create
 * through a persistent client (Client::persistent, one per worker process and configuration).
 *
 * Environment (inherited from the php-fpm master, clear_env = no): SF_FPM_READY (the sandbox's
 * ready file), SF_FPM_SHARED_STATE (the store URL, e.g. sqlite:///tmp/x/storefront.db),
 * STOREFRONT_LIB / STOREFRONT_HEADER. Query string: ref (the unique external_reference), mode
 * (`shared`, the default: with shared_state; `own`: without, the control run).
 *
 * Prints one JSON object: {"ok": true, "pid", "order_no", "status", "backend"} or
 * {"ok": false, "pid", "error" (class), "message"}.
 */

require dirname(__DIR__, 2) . '/storefront.php';

header('Content-Type: application/json');
$pid = getmypid();
try {
    $ready = json_decode((string) file_get_contents((string) getenv('SF_FPM_READY')), true, 512, JSON_THROW_ON_ERROR);
    $ref = (string) ($_GET['ref'] ?? '');
    if ($ref === '') {
        throw new \RuntimeException('no ref in the query string');
    }
    $config = [
        'base_url' => $ready['base_url'],
        'token_endpoint' => $ready['token_endpoint'],
        'userinfo_endpoint' => $ready['userinfo_endpoint'],
        'client_id' => 'sbx_merchant_client',
        'client_secret' => 'sbx_merchant_secret_9f2c41d7a8e64b0c',
        'scopes' => ['merchant_payments.read', 'merchant_payments.create'],
        'allow_insecure_loopback' => true,
        'overall_deadline_ms' => 60_000,
        'rate_limits' => ['window_ms' => 5_000],
    ];
    if (($_GET['mode'] ?? 'shared') === 'shared') {
        $config['shared_state'] = (string) getenv('SF_FPM_SHARED_STATE');
    }
    $client = Storefront\Client::persistent($config);
    $created = $client->createMerchantPayment([
        'external_reference' => $ref,
        'amount_minor' => 1000,
        'currency' => 'USD',
    ]);
    echo json_encode([
        'ok' => true,
        'pid' => $pid,
        'order_no' => $created['order_no'],
        'status' => $created['status'],
    ]), "\n";
} catch (\Throwable $e) {
    echo json_encode(['ok' => false, 'pid' => $pid, 'error' => get_class($e), 'message' => $e->getMessage()]), "\n";
}
