<?php

declare(strict_types=1);

// receiver_storefront.php cut into timed parts, for the explanation of its figure
// (benches/php/profile.sh): answers X-Parts-Us with the microseconds of each part, in order:
// loading the wrapper, binding the library, creating the verifier, reading headers and body,
// the verify call (header lookup, the library's verification, json_decode and the data checks).
$marks = [hrtime(true)];
require dirname(__DIR__, 2) . '/bindings/php/storefront.php';
$marks[] = hrtime(true);
Storefront\WebhookFfi::ffi();
$marks[] = hrtime(true);
$verifier = new Storefront\WebhookVerifier([(string) getenv('BENCH_SECRET')]);
$marks[] = hrtime(true);
$headers = getallheaders();
$body = (string) file_get_contents('php://input');
$marks[] = hrtime(true);
$notification = $verifier->verify($headers, $body);
$marks[] = hrtime(true);
$parts = [];
for ($i = 1; $i < count($marks); $i++) {
    $parts[] = number_format(($marks[$i] - $marks[$i - 1]) / 1000, 1, '.', '');
}
header('X-Parts-Us: ' . implode(' ', $parts));
header('X-Binding: ' . (Storefront\WebhookFfi::bodyInPlace() ? 'cdef' : 'scope'));
http_response_code($notification['data']['amount_minor'] === 1250 ? 204 : 500);
