<?php

declare(strict_types=1);

// Webhook receiver through the storefront wrapper (the README's three lines), served by
// `php -S` in benches/php/bench.php. Answers 204 for a verified delivery, 400 otherwise, with
// X-Elapsed-Ns: the time from this script's first line to its answer (loading the wrapper,
// binding the library, verifying, decoding), and X-Load-Mode: how the library was bound.
$started = hrtime(true);
require dirname(__DIR__, 2) . '/bindings/php/storefront.php';

try {
    $verifier = new Storefront\WebhookVerifier([(string) getenv('BENCH_SECRET')]);
    $notification = $verifier->verify(getallheaders(), (string) file_get_contents('php://input'));
    $status = $notification['data']['amount_minor'] === 1250 ? 204 : 500;
} catch (Storefront\WebhookException $e) {
    $status = 400;
}
header('X-Load-Mode: ' . (Storefront\WebhookFfi::bodyInPlace() ? 'cdef' : 'scope'));
header('X-Elapsed-Ns: ' . (hrtime(true) - $started));
http_response_code($status);
