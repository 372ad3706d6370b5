<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Library;
use Storefront\Webhook;
use Storefront\WebhookBodyException;
use Storefront\WebhookEventIdException;
use Storefront\WebhookException;
use Storefront\WebhookFfi;
use Storefront\WebhookHeaderException;
use Storefront\WebhookSignatureException;
use Storefront\WebhookTimestampException;
use Storefront\WebhookVerifier;

/**
 * WebhookVerifier::verify through sf_webhook_verify_body (the library checks signature and
 * envelope over the caller's string; json_decode decodes it once): the same notification as the
 * decoding export, the documented exception for every failure (a signed data that is not a valid
 * payment snapshot included), and the small binding it uses matches the shipped header.
 */
final class WebhookBodyTest extends TestCase
{
    private const SECRET = 'whsec_0123456789abcdef0123456789abcdef';
    private const NOW = 1790000000;

    /** @return array<string, mixed> */
    private static function notification(): array
    {
        return [
            'id' => 'EVT-1',
            'type' => 'merchant_payment.status_changed',
            'api_version' => 1,
            'created_at' => '2026-09-21T12:00:00Z',
            'data' => [
                'order_no' => 'MP1', 'external_reference' => 'R1', 'payment_no' => 'ch_card_usd',
                'amount_minor' => 1250, 'currency' => 'USD', 'currency_decimals' => 2,
                'status' => 'paid', 'status_version' => 2, 'test_mode' => false,
                'expires_at' => '2026-09-21T12:30:00Z', 'event_id' => 'PE-1',
                'provider_trade_no' => 'T1', 'occurred_at' => '2026-09-21T20:00:00+08:00',
            ],
        ];
    }

    /** The notification with data fields replaced (a value of null with $remove removes it). */
    private static function body(array $changes = [], array $remove = []): string
    {
        $notification = self::notification();
        foreach ($changes as $name => $value) {
            $notification['data'][$name] = $value;
        }
        foreach ($remove as $name) {
            unset($notification['data'][$name]);
        }
        return json_encode($notification, JSON_PRETTY_PRINT);
    }

    /** @return array<string, string> */
    private static function headers(string $body, int $timestamp = self::NOW): array
    {
        return [
            'X-Service-Event-ID' => 'EVT-1',
            'X-Service-Timestamp' => (string) $timestamp,
            'X-Service-Signature' => Webhook::sign(self::SECRET, $timestamp, $body),
        ];
    }

    /** What the decoding export (verify, decode, re-encode) gives for the same delivery. */
    private static function decodingExport(string $body): array
    {
        $verifier = Library::callHandle('sf_webhook_verifier_new', 'sf_webhook_verifier', json_encode([self::SECRET]));
        try {
            [$buffer, $length] = Library::bytes($body);
            $h = self::headers($body);
            return Library::callJson('sf_webhook_verify_at', $verifier, $h['X-Service-Event-ID'], $h['X-Service-Timestamp'], $h['X-Service-Signature'], $buffer, $length, self::NOW);
        } finally {
            Library::ffi()->sf_webhook_verifier_free($verifier);
        }
    }

    private static function failure(callable $call): WebhookException
    {
        try {
            $call();
        } catch (WebhookException $e) {
            return $e;
        }
        self::fail('verified');
    }

    public function testSameNotificationAsTheDecodingExport(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $body = self::body();
        $this->assertSame(self::decodingExport($body), $verifier->verifyAt(self::headers($body), $body, self::NOW)->toArray());
        $sparse = self::body([], ['payment_no', 'event_id', 'provider_trade_no', 'occurred_at']);
        $onePass = $verifier->verifyAt(self::headers($sparse), $sparse, self::NOW);
        $this->assertEquals(self::decodingExport($sparse), $onePass->toArray());
        $this->assertSame('', $onePass['data']['payment_no']);
        $this->assertNull($onePass['data']['event_id']);
    }

    public function testEveryHeaderFailureRaisesItsException(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $body = self::body();
        $good = self::headers($body);
        $cases = [
            [['X-Service-Event-ID' => null], WebhookHeaderException::class, 'webhook_missing_header'],
            [['X-Service-Timestamp' => null], WebhookHeaderException::class, 'webhook_missing_header'],
            [['X-Service-Signature' => null], WebhookHeaderException::class, 'webhook_missing_header'],
            [['X-Service-Timestamp' => '17900000OO'], WebhookTimestampException::class, 'webhook_malformed_timestamp'],
            [['X-Service-Timestamp' => (string) (self::NOW - 301)], WebhookTimestampException::class, 'webhook_timestamp_too_old'],
            [['X-Service-Timestamp' => (string) (self::NOW + 301)], WebhookTimestampException::class, 'webhook_timestamp_in_future'],
            [['X-Service-Signature' => 'sha256=' . str_repeat('A', 64)], WebhookSignatureException::class, 'webhook_malformed_signature'],
            [['X-Service-Signature' => 'sha256=' . str_repeat('a', 64)], WebhookSignatureException::class, 'webhook_signature_mismatch'],
            [['X-Service-Event-ID' => 'EVT-2'], WebhookEventIdException::class, 'webhook_event_id_mismatch'],
        ];
        foreach ($cases as [$change, $class, $resultName]) {
            $given = array_filter(array_merge($good, $change), fn ($value) => $value !== null);
            $e = self::failure(fn () => $verifier->verifyAt($given, $body, self::NOW));
            $this->assertInstanceOf($class, $e, json_encode($change));
            $this->assertSame($resultName, $e->resultName(), json_encode($change));
        }
        $missing = self::failure(fn () => $verifier->verifyAt(array_diff_key($good, ['X-Service-Timestamp' => 1]), $body, self::NOW));
        $this->assertSame('X-Service-Timestamp', $missing->field());
    }

    public function testTamperedBodiesFailTheSignature(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $body = self::body();
        $headers = self::headers($body);
        foreach ([str_replace('1250', '1251', $body), json_encode(json_decode($body)), substr($body, 0, -1), ''] as $tampered) {
            $e = self::failure(fn () => $verifier->verifyAt($headers, $tampered, self::NOW));
            $this->assertInstanceOf(WebhookSignatureException::class, $e);
            $this->assertSame('webhook_signature_mismatch', $e->resultName());
        }
    }

    public function testSignedBodiesThatAreNotNotificationsAreBodyFailures(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $body = self::body();
        $cases = [
            'not json' => 'webhook_invalid_body',
            '[]' => 'webhook_invalid_body',
            '{"id":"EVT-1"}' => 'webhook_invalid_body',
            str_replace('2026-09-21T12:00:00Z', 'yesterday', $body) => 'webhook_invalid_body',
            str_replace('status_changed', 'created', $body) => 'webhook_unsupported_event_type',
            str_replace('"api_version": 1', '"api_version": 2', $body) => 'webhook_unsupported_api_version',
        ];
        foreach ($cases as $signed => $resultName) {
            $e = self::failure(fn () => $verifier->verifyAt(self::headers((string) $signed), (string) $signed, self::NOW));
            $this->assertInstanceOf(WebhookBodyException::class, $e, (string) $signed);
            $this->assertSame($resultName, $e->resultName(), (string) $signed);
        }
    }

    public function testSignedDataThatIsNotASnapshotIsABodyFailure(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $cases = [
            ['currency_decimals', 4294967295], ['currency_decimals', 19], ['currency_decimals', -1],
            ['amount_minor', '1250'], ['amount_minor', 0], ['amount_minor', 9007199254740992],
            ['amount_minor', true], ['amount_minor', 12.5], ['status_version', -1],
            ['status_version', '18446744073709551616'], ['test_mode', 'false'], ['external_reference', 7],
            ['currency', null], ['status', ['paid']], ['expires_at', 'tomorrow'],
            ['expires_at', '2026-13-21T12:30:00Z'], ['payment_no', null], ['event_id', 12],
            ['provider_trade_no', ['a' => 1]], ['occurred_at', '2026-09-21 20:00'],
        ];
        foreach ($cases as [$field, $value]) {
            $body = self::body([$field => $value]);
            if ($field === 'status_version' && is_string($value)) {
                $body = str_replace('"status_version": "' . $value . '"', '"status_version": ' . $value, $body);
            }
            $e = self::failure(fn () => $verifier->verifyAt(self::headers($body), $body, self::NOW)->toArray());
            $this->assertInstanceOf(WebhookBodyException::class, $e, "$field " . json_encode($value));
            $this->assertSame('webhook_invalid_body', $e->resultName());
            $this->assertStringContainsString("data.$field", $e->getMessage());
        }
        $missing = self::body([], ['order_no']);
        $e = self::failure(fn () => $verifier->verifyAt(self::headers($missing), $missing, self::NOW));
        $this->assertInstanceOf(WebhookBodyException::class, $e);
        $this->assertStringContainsString('data.order_no', $e->getMessage());
        foreach ([[], 'x', null, 1] as $data) {
            $n = self::notification();
            $n['data'] = $data;
            $body = json_encode($n);
            $this->assertInstanceOf(WebhookBodyException::class, self::failure(fn () => $verifier->verifyAt(self::headers($body), $body, self::NOW)));
        }
    }

    /** A status_version beyond PHP's integers stays a string, as the decoding export gave it. */
    public function testLargeStatusVersionStaysAString(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $body = str_replace('"status_version": 2', '"status_version": 18446744073709551615', self::body());
        $this->assertSame('18446744073709551615', $verifier->verifyAt(self::headers($body), $body, self::NOW)['data']['status_version']);
    }

    /**
     * The binding WebhookFfi makes when not preloaded declares the functions exactly as the
     * shipped header does (the body as const char * for const uint8_t *: same ABI).
     */
    public function testTheSmallBindingMatchesTheShippedHeader(): void
    {
        $normalize = fn (string $text) => trim((string) preg_replace('/\s+/', ' ', $text));
        $header = $normalize((string) preg_replace('~//[^\n]*~', '', (string) file_get_contents(Library::headerPath())));
        $declarations = array_filter(array_map('trim', explode(';', WebhookFfi::DECLARATIONS)));
        $this->assertGreaterThanOrEqual(10, count($declarations));
        foreach ($declarations as $declaration) {
            $asInHeader = str_replace('const char *body,', 'const uint8_t *body,', $normalize($declaration));
            $this->assertStringContainsString($asInHeader . ';', $header, $declaration);
        }
        $this->assertTrue(WebhookFfi::bodyInPlace(), 'the CLI binds with FFI::cdef');
    }
    /**
     * A receiver served by `php -S` (every request fresh, as under php-fpm) verifies through
     * the small FFI::cdef binding without preloading and through the FFI scope when preloaded
     * (opcache.preload + ffi.preload, ffi.enable=preload: FFI::cdef is refused there), three
     * requests each: a genuine delivery answers 204, a tampered one 400.
     */
    public function testReceiverUnderPhpServerWithAndWithoutPreload(): void
    {
        $dir = sys_get_temp_dir() . '/sf-php-receiver-' . bin2hex(random_bytes(6));
        mkdir($dir);
        file_put_contents("$dir/receiver.php", '<?php
declare(strict_types=1);
require ' . var_export(dirname(__DIR__) . '/storefront.php', true) . ';
try {
    $n = (new Storefront\WebhookVerifier([(string) getenv("RECEIVER_SECRET")]))->verify(getallheaders(), (string) file_get_contents("php://input"));
    header("X-Binding: " . (Storefront\WebhookFfi::bodyInPlace() ? "cdef" : "scope"));
    http_response_code($n["data"]["amount_minor"] === 1250 ? 204 : 500);
} catch (Storefront\WebhookException $e) {
    header("X-Failure: " . $e->resultName());
    http_response_code(400);
}
');
        file_put_contents("$dir/ffi.h", Library::scopeHeader());
        $preloadUser = function_exists('posix_geteuid') && posix_geteuid() === 0 ? ['-d', 'opcache.preload_user=root'] : [];
        $modes = [
            'cdef' => ['-d', 'ffi.enable=1'],
            'scope' => ['-d', 'ffi.enable=preload', '-d', "ffi.preload=$dir/ffi.h", '-d', 'opcache.enable=1', '-d', 'opcache.enable_cli=1',
                '-d', 'opcache.preload=' . dirname(__DIR__) . '/preload.php', ...$preloadUser],
        ];
        $body = self::body();
        $now = time();
        $headers = ['X-Service-Event-ID' => 'EVT-1', 'X-Service-Timestamp' => (string) $now, 'X-Service-Signature' => Webhook::sign(self::SECRET, $now, $body)];
        try {
            foreach ($modes as $mode => $ini) {
                $probe = stream_socket_server('tcp://127.0.0.1:0');
                $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
                fclose($probe);
                $env = getenv() + ['RECEIVER_SECRET' => self::SECRET];
                unset($env['PHP_CLI_SERVER_WORKERS']);
                $server = proc_open([PHP_BINARY, ...$ini, '-S', "127.0.0.1:$port", "$dir/receiver.php"],
                    [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/$mode.log", 'w'], 2 => ['file', "$dir/$mode.log", 'a']], $pipes, $dir, $env);
                try {
                    for ($i = 0; $i < 100 && @fsockopen('127.0.0.1', $port) === false; $i++) {
                        usleep(50_000);   // startup wait, bounded; not a timing assertion
                    }
                    $post = function (string $sent) use ($port, $headers): array {
                        $lines = ['Content-Type: application/json'];
                        foreach ($headers as $name => $value) {
                            $lines[] = "$name: $value";
                        }
                        $context = stream_context_create(['http' => ['method' => 'POST', 'header' => implode("\r\n", $lines), 'content' => $sent, 'ignore_errors' => true, 'timeout' => 30]]);
                        file_get_contents("http://127.0.0.1:$port/", false, $context);
                        return $http_response_header;
                    };
                    for ($i = 0; $i < 3; $i++) {
                        $answer = $post($body);
                        $this->assertStringContainsString(' 204', $answer[0], "$mode: " . implode(' | ', $answer) . file_get_contents("$dir/$mode.log"));
                        $this->assertContains("X-Binding: $mode", $answer);
                        $tampered = $post(str_replace('1250', '1251', $body));
                        $this->assertStringContainsString(' 400', $tampered[0], $mode);
                        $this->assertContains('X-Failure: webhook_signature_mismatch', $tampered);
                    }
                } finally {
                    proc_terminate($server);
                    proc_close($server);
                }
                $this->assertStringNotContainsString('Fatal', (string) file_get_contents("$dir/$mode.log"));
            }
        } finally {
            array_map('unlink', glob("$dir/*") ?: []);
            rmdir($dir);
        }
    }
}
