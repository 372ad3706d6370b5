<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Logging;
use Storefront\Tests\SandboxHarness as S;

/** A PSR-3-shaped logger keeping every record in memory (no psr/log package needed). */
final class MemoryLogger
{
    /** @var list<array{level: string, message: string, context: array<string, mixed>}> */
    public array $records = [];

    /**
     * @param mixed $level
     * @param string|\Stringable $message
     * @param array<string, mixed> $context
     */
    public function log($level, $message, array $context = []): void
    {
        $this->records[] = ['level' => (string) $level, 'message' => (string) $message, 'context' => $context];
    }
}

/**
 * The library's log events reach a PSR-3 logger through the drain buffer (issue 9): request
 * events with their path template, status and attempt, and never a secret.
 */
final class LoggingTest extends TestCase
{
    protected function tearDown(): void
    {
        Logging::disable();
        S::get()->clearFaults();
    }

    /** A client-credentials token minted at the sandbox, handed to the SDK's client by a
     * fault on the token endpoint, so that the test knows the client's access token. */
    private static function knownClientToken(): string
    {
        $answer = file_get_contents(S::get()->info['token_endpoint'], false, stream_context_create(['http' => [
            'method' => 'POST', 'header' => 'Content-Type: application/x-www-form-urlencoded', 'timeout' => 30,
            'content' => http_build_query([
                'grant_type' => 'client_credentials', 'client_id' => S::MERCHANT_CLIENT_ID,
                'client_secret' => S::MERCHANT_CLIENT_SECRET, 'scope' => implode(' ', S::ALL_SCOPES),
            ]),
        ]]));
        $token = json_decode((string) $answer, true);
        $path = (string) parse_url(S::get()->info['token_endpoint'], PHP_URL_PATH);
        S::get()->control('POST', '/faults', ['method' => 'POST', 'path' => $path, 'status' => 200, 'body' => $token]);
        return $token['access_token'];
    }

    public function testRequestEventsReachTheLoggerWithoutSecrets(): void
    {
        $logger = new MemoryLogger();
        Logging::toLogger($logger, 'trace');
        $accessToken = self::knownClientToken();
        $client = new Client(S::get()->config());
        $created = $client->createMerchantPayment([
            'external_reference' => 'php-log-' . bin2hex(random_bytes(6)), 'amount_minor' => 1250, 'currency' => 'USD',
        ]);
        $checkoutUrl = $created['checkout_url'];
        $checkoutToken = basename((string) parse_url($checkoutUrl, PHP_URL_PATH));
        $client->merchantPayment($created['order_no']);
        $userToken = S::get()->userToken('alice');
        $client->user($userToken)->merchantProfile();
        Logging::flush();

        $this->assertNotEmpty($logger->records, 'events were delivered after the calls');
        $requests = array_values(array_filter($logger->records, fn ($r) => isset($r['context']['status'], $r['context']['attempt'])));
        $this->assertNotEmpty($requests, 'request events carry status and attempt: ' . json_encode(array_slice($logger->records, 0, 5)));
        $paths = array_map(fn ($r) => (string) ($r['context']['path'] ?? $r['context']['path_template'] ?? ''), $requests);
        $this->assertContains('/openapi/v1/merchant-payments/{order_no}', $paths, 'the path template, not the order number: ' . implode(', ', $paths));
        $this->assertContains('/openapi/v1/merchant-payments', $paths);
        foreach ($requests as $record) {
            $this->assertContains($record['level'], ['error', 'warning', 'info', 'debug']);
            $this->assertIsInt($record['context']['attempt']);
            $this->assertArrayHasKey('target', $record['context']);
        }

        $everything = json_encode($logger->records, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE);
        $this->assertGreaterThan(8, strlen($checkoutToken));
        foreach (['client secret' => S::MERCHANT_CLIENT_SECRET, 'access token' => $accessToken, 'user token' => $userToken, 'checkout token' => $checkoutToken, 'checkout url' => $checkoutUrl] as $what => $secret) {
            $this->assertStringNotContainsString($secret, $everything, "the $what must not be logged");
            $this->assertStringNotContainsString(rawurlencode($secret), $everything, "the $what must not be logged");
        }
    }

    /** Under PHP-FPM the buffer is the worker's: what an earlier request (one without a
     * logger) left in it is not delivered to the next request's logger. */
    public function testEventsOfAnEarlierRequestAreNotDelivered(): void
    {
        Storefront\Library::ffi()->sf_log_buffer_enable(4, 100);
        (new Client(S::get()->config()))->merchantProfile();
        $logger = new MemoryLogger();
        Logging::toLogger($logger, 'debug');
        Logging::flush();
        $this->assertSame([], $logger->records);
        (new Client(S::get()->config()))->merchantProfile();
        $this->assertNotEmpty($logger->records);
    }

    /** The level filters; disable() stops delivery; a non-logger is refused. */
    public function testLevelFilterAndDisable(): void
    {
        $logger = new MemoryLogger();
        Logging::toLogger($logger, 'error');
        (new Client(S::get()->config()))->merchantProfile();
        $this->assertSame([], array_values(array_filter($logger->records, fn ($r) => $r['level'] !== 'error')));
        Logging::toLogger($logger, 'debug');
        Logging::disable();
        $logger->records = [];
        (new Client(S::get()->config()))->merchantProfile();
        Logging::flush();
        $this->assertSame([], $logger->records);
        $this->expectException(\InvalidArgumentException::class);
        Logging::toLogger(new stdClass());
    }
}
