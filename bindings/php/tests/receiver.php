<?php

declare(strict_types=1);

// A merchant's webhook endpoint, run by `php -S` in the merchant-flow test: it verifies each
// delivery with the three lines of the README and stores the verified notification (or the
// failure) in RECEIVER_DIR, answering 2xx only after storing a verified notification.

require_once dirname(__DIR__) . '/storefront.php';

$dir = (string) getenv('RECEIVER_DIR');
try {
    $verifier = new Storefront\WebhookVerifier([(string) getenv('NOTIFY_SECRET')]);
    $notification = $verifier->verify(getallheaders(), (string) file_get_contents('php://input'));
    file_put_contents("$dir/" . $notification['id'] . '.json', json_encode($notification));
    http_response_code(204);
} catch (Storefront\WebhookException $e) {
    file_put_contents("$dir/rejected-" . bin2hex(random_bytes(4)) . '.txt', $e->resultName());
    http_response_code(400);
}
