<?php

declare(strict_types=1);

/*
 * storefront PHP example: verifies a webhook and walks the catalog flow (and a merchant payment)
 * against the standalone sandbox, with a persistent client (PHP-FPM), strict input and the
 * library's log events sent to a PSR-3-style logger.
 *
 *   target/debug/storefront-sandbox --port 0 --ready-file /tmp/sbx.json &
 *   STOREFRONT_LIB=$PWD/target/debug/libstorefront.so php examples/php/storefront_example.php /tmp/sbx.json
 *
 * Copied into a Composer project that requires storefront/storefront, it loads
 * vendor/autoload.php beside it and needs no environment variable (the package ships the
 * library and the header).
 */

if (is_file(__DIR__ . '/vendor/autoload.php')) {
    require_once __DIR__ . '/vendor/autoload.php';
} else {
    require_once dirname(__DIR__, 2) . '/bindings/php/storefront.php';
}

use Storefront\Client;
use Storefront\Webhook;
use Storefront\WebhookVerifier;

/** Sandbox-only control call (mints a user token, plays the buyer); not part of the SDK. */
function sandbox_control(array $ready, string $path, array $body): array
{
    $context = stream_context_create(['http' => [
        'method' => 'POST',
        'header' => "Content-Type: application/json\r\n",
        'content' => json_encode($body),
        'timeout' => 30,
    ]]);
    $text = file_get_contents($ready['control_url'] . $path, false, $context);
    if ($text === false) {
        throw new RuntimeException("sandbox control $path failed");
    }
    return $text === '' ? [] : json_decode($text, true);
}

function check(bool $condition, string $what): void
{
    if (!$condition) {
        fwrite(STDERR, "check failed: $what\n");
        exit(1);
    }
}

function webhook_demo(): void
{
    $secret = 'whsec_example_0123456789abcdef0123456789';
    $body = json_encode([
        'id' => 'EVT-42', 'type' => 'merchant_payment.status_changed', 'api_version' => 1,
        'created_at' => '2026-11-22T12:00:00Z',
        'data' => [
            'order_no' => 'MP42', 'external_reference' => 'order-42', 'payment_no' => 'ch_card_usd',
            'amount_minor' => 1250, 'currency' => 'USD', 'currency_decimals' => 2, 'status' => 'paid',
            'status_version' => 2, 'test_mode' => false, 'expires_at' => '2026-11-22T12:30:00Z',
            'event_id' => 'PE42', 'provider_trade_no' => 'T42', 'occurred_at' => '2026-11-22T12:01:00Z',
        ],
    ]);
    $now = time();
    // What the service would send (the test signer signs exactly like it).
    $headers = [
        'X-Service-Event-ID' => 'EVT-42',
        'X-Service-Timestamp' => (string) $now,
        'X-Service-Signature' => Webhook::sign($secret, $now, $body),
    ];

    // The three lines of a webhook endpoint:
    $verifier = new WebhookVerifier([$secret]);
    $notification = $verifier->verify($headers, $body);
    Webhook::checkExpectation($notification->data, ['external_reference' => 'order-42', 'amount_minor' => 1250, 'currency' => 'USD', 'test_mode' => false]);
    // Typed results (Storefront\VerifiedNotification, ->data a MerchantPayment); $notification['data'] is still the array.
    echo "webhook verified: {$notification->id} {$notification->data->status}\n";
    check(Webhook::statusVersionDecision(1, $notification->data->status_version) === 'apply', 'version guard');

    try {
        $verifier->verify($headers, str_replace('1250', '9999', $body));
        check(false, 'a tampered body must be rejected');
    } catch (Storefront\WebhookSignatureException $e) {
        echo "tampered webhook rejected: {$e->resultName()}\n";
    }
}

/** A PSR-3-shaped logger (any object with log($level, $message, array $context) will do). */
final class CountingLogger
{
    /** @var array<string, int> */
    public array $levels = [];
    public int $requests = 0;

    /** @param array<string, mixed> $context */
    public function log($level, $message, array $context = []): void
    {
        $this->levels[$level] = ($this->levels[$level] ?? 0) + 1;
        if (isset($context['status'], $context['attempt'])) {
            $this->requests++;
        }
    }
}

/** A misspelt key is refused with the key named; nothing is sent. */
function strict_demo(array $config): void
{
    try {
        new Client($config + ['atempt_timeout_ms' => 5000]);
        check(false, 'a misspelt configuration key must be refused');
    } catch (Storefront\ValidationException $e) {
        echo "misspelt key refused: {$e->field()}\n";
    }
}

function catalog_demo(array $ready, Client $client): void
{
    echo 'merchant: ', $client->merchantProfile()->name, "\n";
    $page = $client->products(['limit' => 5]);                      // Storefront\ProductPage, ->list of Product
    echo 'products: ', implode(', ', array_map(fn (Storefront\Product $p) => "$p->gd_no " . Storefront\Money::formatFixedPoint8($p->actual_price, $p->currency_decimals), $page->list)), "\n";
    $token = sandbox_control($ready, '/users/alice/tokens', ['client_id' => 'sbx_merchant_client']);
    $alice = $client->user($token['access_token']);
    $orderNo = $alice->createOrder('G1001', 1, 'ch_platform_coin');
    $start = $alice->startPayment($orderNo, 'ch_platform_coin');
    echo "order $orderNo payment started at {$start->redirect}\n";
    $outcome = $alice->waitForPayment($orderNo, 200, 30000);
    check($outcome['outcome'] === 'final' && $outcome['payment_status'] === 1, 'the order is paid');
    echo "order paid; order status {$outcome['order']['status']}\n";
}

function merchant_demo(array $ready, Client $client): void
{
    $created = $client->createMerchantPayment(['external_reference' => 'example-' . bin2hex(random_bytes(8)), 'amount_minor' => 1250, 'currency' => 'USD']);
    // Storefront\CreatedMerchantPayment: typed properties, the contract's names; toArray() is the old array.
    echo "merchant payment {$created->order_no} idempotency key {$created->idempotency_key}\n";
    sandbox_control($ready, "/merchant-payments/{$created->order_no}/checkout/pay", ['payment_no' => 'ch_card_usd']);
    $payment = $client->merchantPayment($created->order_no);
    check(Storefront\PaymentStatus::of($payment)->isPaid(), 'the merchant payment is paid');
    echo 'merchant payment paid, ', Storefront\Money::fromMinor($payment->amount_minor, $payment->currency_decimals), " $payment->currency, event {$payment->event_id}\n";
    try {
        $client->merchantPayment('MP-DOES-NOT-EXIST');
        check(false, 'an unknown payment must be refused');
    } catch (Storefront\ApiException $e) {
        echo "unknown payment: {$e->httpStatus()} {$e->errorCode()}\n";
    }
}

if ($argc !== 2) {
    fwrite(STDERR, "usage: {$argv[0]} SANDBOX_READY_FILE\n");
    exit(2);
}
$ready = json_decode((string) file_get_contents($argv[1]), true);
echo 'storefront ', Storefront\Library::version(), " against {$ready['origin']}\n";
webhook_demo();
$config = [
    'base_url' => $ready['base_url'],
    'token_endpoint' => $ready['token_endpoint'],
    'userinfo_endpoint' => $ready['userinfo_endpoint'],
    'client_id' => 'sbx_merchant_client',
    'client_secret' => 'sbx_merchant_secret_9f2c41d7a8e64b0c',
    'allow_insecure_loopback' => true,
];
strict_demo($config);
$logger = new CountingLogger();
Storefront\Logging::toLogger($logger, 'debug');
// Under PHP-FPM a persistent client serves every request of the worker with one token.
$client = Client::persistent($config);
catalog_demo($ready, $client);
merchant_demo($ready, $client);
Storefront\Logging::flush();
check($logger->requests > 0, 'request events reached the logger');
echo "logged {$logger->requests} request events (", implode(', ', array_map(fn ($l, $n) => "$l $n", array_keys($logger->levels), $logger->levels)), ")\n";
echo "all checks passed\n";
