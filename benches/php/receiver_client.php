<?php

declare(strict_types=1);

// One API call per request (the merchant profile) through a client made in the request:
// BENCH_PERSISTENT=1 takes the worker's persistent client (Client::persistent), otherwise an
// ordinary client lives and dies with the request. X-Elapsed-Ns as in receiver_storefront.php.
$started = hrtime(true);
require dirname(__DIR__, 2) . '/bindings/php/storefront.php';

$config = json_decode((string) getenv('BENCH_CLIENT_CONFIG'), true);
$client = getenv('BENCH_PERSISTENT') === '1' ? Storefront\Client::persistent($config) : new Storefront\Client($config);
$profile = $client->merchantProfile();
$client->close();
header('X-Elapsed-Ns: ' . (hrtime(true) - $started));
http_response_code($profile['merchant_no'] !== '' ? 200 : 500);
