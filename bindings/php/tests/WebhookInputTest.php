<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Library;
use Storefront\Webhook;
use Storefront\WebhookBodyException;
use Storefront\WebhookConfigException;
use Storefront\WebhookException;
use Storefront\WebhookHeaderException;
use Storefront\WebhookVerifier;

/**
 * Every malformed input to WebhookVerifier is a WebhookException (issue 9), so the README's
 * receiver answers 400 with one catch: never a \TypeError, a global \InvalidArgumentException
 * or a Storefront exception outside the webhook hierarchy (InvalidUtf8Exception...).
 */
final class WebhookInputTest extends TestCase
{
    private const SECRET = 'whsec_0123456789abcdef0123456789abcdef';
    private const NOW = 1790000000;

    private static function body(): string
    {
        return (string) json_encode([
            'id' => 'EVT-1', 'type' => 'merchant_payment.status_changed', 'api_version' => 1,
            'created_at' => '2026-09-21T12:00:00Z',
            'data' => [
                'order_no' => 'MP1', 'external_reference' => 'R1', 'payment_no' => 'ch_card_usd',
                'amount_minor' => 1250, 'currency' => 'USD', 'currency_decimals' => 2,
                'status' => 'paid', 'status_version' => 2, 'test_mode' => false,
                'expires_at' => '2026-09-21T12:30:00Z', 'event_id' => 'PE-1',
                'provider_trade_no' => 'T1', 'occurred_at' => '2026-09-21T20:00:00+08:00',
            ],
        ]);
    }

    /** @return array<string, string> */
    private static function headers(): array
    {
        return [
            'X-Service-Event-ID' => 'EVT-1',
            'X-Service-Timestamp' => (string) self::NOW,
            'X-Service-Signature' => Webhook::sign(self::SECRET, self::NOW, self::body()),
        ];
    }

    /**
     * @param class-string<WebhookException> $class
     */
    private function assertWebhookFailure(string $class, ?string $field, callable $call): void
    {
        try {
            $call();
        } catch (\Throwable $e) {
            $this->assertInstanceOf(WebhookException::class, $e, get_class($e) . ': ' . $e->getMessage());
            $this->assertInstanceOf($class, $e, $e->getMessage());
            if ($field !== null) {
                $this->assertSame($field, $e->field(), $e->getMessage());
            }
            return;
        }
        $this->fail("expected $class");
    }

    public function testValidDeliveryStillVerifies(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $this->assertSame('EVT-1', $verifier->verifyAt(self::headers(), self::body(), self::NOW)['id']);
    }

    /** $_SERVER names (HTTP_X_SERVICE_...), any letter case, PSR-7 lists of one value. */
    public function testHeadersAreFoundUnderServerVariableNamesAndAnyCase(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $server = ['REQUEST_METHOD' => 'POST', 'argv' => ['x', 'y'], 'CONTENT_TYPE' => 'application/json'];
        foreach (self::headers() as $name => $value) {
            $server['HTTP_' . strtr(strtoupper($name), '-', '_')] = $value;
        }
        $this->assertSame('EVT-1', $verifier->verifyAt($server, self::body(), self::NOW)['id']);
        $mixed = [];
        foreach (self::headers() as $name => $value) {
            $mixed[strtoupper($name)] = [$value];
        }
        $this->assertSame('EVT-1', $verifier->verifyAt($mixed, self::body(), self::NOW)['id']);
        $this->assertSame('EVT-1', $verifier->verifyAt(new ArrayIterator(array_change_key_case(self::headers())), self::body(), self::NOW)['id']);
    }

    public function testMalformedHeadersAreWebhookHeaderFailures(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $body = self::body();
        $cases = [
            'non-UTF-8 value' => ['X-Service-Event-ID' => "EVT-\xff\xfe"],
            'NUL byte' => ['X-Service-Event-ID' => "EVT-1\0EVT-2"],
            'two values' => ['X-Service-Event-ID' => ['EVT-1', 'EVT-1']],
            'an integer' => ['X-Service-Event-ID' => 17],
            'a nested array' => ['X-Service-Event-ID' => [['EVT-1']]],
            'oversized' => ['X-Service-Event-ID' => str_repeat('E', 100000)],
            'an object' => ['X-Service-Event-ID' => new stdClass()],
        ];
        foreach ($cases as $what => $override) {
            $this->assertWebhookFailure(WebhookHeaderException::class, 'X-Service-Event-ID', fn () => $verifier->verify($override + self::headers(), $body));
        }
        $duplicated = self::headers() + ['HTTP_X_SERVICE_SIGNATURE' => self::headers()['X-Service-Signature']];
        $this->assertWebhookFailure(WebhookHeaderException::class, 'X-Service-Signature', fn () => $verifier->verify($duplicated, $body));
        $missing = self::headers();
        unset($missing['X-Service-Signature']);
        $this->assertWebhookFailure(WebhookHeaderException::class, 'X-Service-Signature', fn () => $verifier->verify($missing, $body));
        $this->assertWebhookFailure(WebhookHeaderException::class, null, fn () => $verifier->verify('X-Service-Event-ID: EVT-1', $body));
        $this->assertWebhookFailure(WebhookHeaderException::class, null, fn () => $verifier->verify(null, $body));
    }

    public function testMalformedBodiesAreWebhookBodyFailures(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $headers = self::headers();
        $this->assertWebhookFailure(WebhookBodyException::class, 'body', fn () => $verifier->verify($headers, null));
        $this->assertWebhookFailure(WebhookBodyException::class, 'body', fn () => $verifier->verify($headers, ['id' => 'EVT-1']));
        $this->assertWebhookFailure(WebhookBodyException::class, 'body', fn () => $verifier->verify($headers, 12345));
        $this->assertWebhookFailure(WebhookBodyException::class, 'body', fn () => $verifier->verify($headers, str_repeat(' ', Library::maxInputBytes() + 1)));
        $this->assertWebhookFailure(WebhookException::class, null, fn () => $verifier->verify($headers, "\xff\xfe not UTF-8"));
        $this->assertWebhookFailure(WebhookException::class, null, fn () => $verifier->verifyAt($headers, self::body(), (float) self::NOW));
        $this->assertWebhookFailure(WebhookException::class, null, fn () => $verifier->verifyAt($headers, self::body(), (string) self::NOW));
    }

    public function testMalformedSecretsAreWebhookConfigFailures(): void
    {
        foreach (["whsec_\0tail", "whsec_\xff\xfe", 42, null, ['ok_secret_0000000000000', ['nested']], [], ''] as $secrets) {
            $this->assertWebhookFailure(WebhookConfigException::class, null, fn () => new WebhookVerifier($secrets));
        }
    }

    /** The README's receiver: one catch, 400 for anything malformed (run as a real endpoint). */
    public function testReceiverAnswers400ForMalformedInputUnderPhpServer(): void
    {
        $dir = sys_get_temp_dir() . '/sf-php-recv-' . bin2hex(random_bytes(6));
        mkdir($dir);
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $server = proc_open(
            [PHP_BINARY, '-d', 'ffi.enable=1', '-S', "127.0.0.1:$port", __DIR__ . '/receiver.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/server.log", 'w'], 2 => ['file', "$dir/server.log", 'a']],
            $pipes,
            null,
            getenv() + ['RECEIVER_DIR' => $dir, 'NOTIFY_SECRET' => self::SECRET]
        );
        try {
            for ($i = 0; $i < 100 && @fsockopen('127.0.0.1', $port) === false; $i++) {
                usleep(50_000);
            }
            $send = function (array $headers, string $body) use ($port): int {
                $lines = ['Content-Type: application/json'];
                foreach ($headers as $name => $value) {
                    $lines[] = "$name: $value";
                }
                @file_get_contents("http://127.0.0.1:$port/hooks", false, stream_context_create(['http' => [
                    'method' => 'POST', 'header' => implode("\r\n", $lines), 'content' => $body, 'ignore_errors' => true, 'timeout' => 30,
                ]]));
                return (int) explode(' ', $http_response_header[0] ?? 'HTTP/1.0 0')[1];
            };
            $now = time();
            $body = self::body();
            $good = ['X-Service-Event-ID' => 'EVT-1', 'X-Service-Timestamp' => (string) $now, 'X-Service-Signature' => Webhook::sign(self::SECRET, $now, $body)];
            $this->assertSame(400, $send(['X-Service-Event-ID' => "EVT-\xff"] + $good, $body), 'non-UTF-8 header');
            $this->assertSame(400, $send(array_diff_key($good, ['X-Service-Timestamp' => 1]), $body), 'missing header');
            $this->assertSame(400, $send($good, "\xff" . $body), 'non-UTF-8 body');
            $this->assertSame(400, $send($good, str_repeat('x', 70000)), 'oversized mismatching body');
            $this->assertSame([], glob("$dir/*.json") ?: []);
            $log = (string) file_get_contents("$dir/server.log");
            $this->assertStringNotContainsString('Fatal', $log);
            $this->assertStringNotContainsString('Uncaught', $log);
        } finally {
            proc_terminate($server);
            proc_close($server);
            array_map('unlink', glob("$dir/*") ?: []);
            rmdir($dir);
        }
    }
}
