<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Webhook;
use Storefront\WebhookVerifier;

/** Webhook verification through the PHP wrapper (the test signer signs like the service). */
final class WebhookTest extends TestCase
{
    private const SECRET = 'whsec_0123456789abcdef0123456789abcdef';
    private const NOW = 1790000000;

    private static function body(): string
    {
        return json_encode([
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
        ], JSON_PRETTY_PRINT);
    }

    /** @return array<string, string> */
    private static function headers(?string $body = null, int $timestamp = self::NOW, string $eventId = 'EVT-1', string $secret = self::SECRET): array
    {
        return [
            'X-Service-Event-ID' => $eventId,
            'X-Service-Timestamp' => (string) $timestamp,
            'X-Service-Signature' => Webhook::sign($secret, $timestamp, $body ?? self::body()),
        ];
    }

    /** Contract: HMAC-SHA256 over the timestamp, a dot and the raw body; typed result. */
    public function testValidNotificationVerifiesOverTheRawBody(): void
    {
        $notification = (new WebhookVerifier(self::SECRET))->verifyAt(self::headers(), self::body(), self::NOW);
        $this->assertSame('EVT-1', $notification['id']);
        $this->assertSame(1250, $notification['data']['amount_minor']);
        $this->assertSame('PE-1', $notification['data']['event_id']);
    }

    /** Frameworks and $_SERVER spell header names differently. */
    public function testHeaderNamesAreMatchedInAnyForm(): void
    {
        $server = [];
        foreach (self::headers() as $name => $value) {
            $server['HTTP_' . strtr(strtoupper($name), '-', '_')] = $value;
        }
        $verifier = new WebhookVerifier([self::SECRET]);
        $this->assertSame('EVT-1', $verifier->verifyAt($server, self::body(), self::NOW)['id']);
        $lower = array_change_key_case(self::headers(), CASE_LOWER);
        $this->assertSame('EVT-1', $verifier->verifyAt($lower, self::body(), self::NOW)['id']);
    }

    /** Contract: the receiver keeps old secrets until old notifications finish. */
    public function testAnyConfiguredSecretVerifiesDuringRotation(): void
    {
        $verifier = new WebhookVerifier(['whsec_new_secret_0000000000000000000', self::SECRET]);
        $this->assertSame('EVT-1', $verifier->verifyAt(self::headers(), self::body(), self::NOW)['id']);
    }

    /** Contract: reject timestamps differing from now by more than 5 minutes, both ways. */
    public function testToleranceIsFiveMinutesInBothDirections(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $this->assertSame('EVT-1', $verifier->verifyAt(self::headers(), self::body(), self::NOW + 300)['id']);
        $this->assertSame('EVT-1', $verifier->verifyAt(self::headers(), self::body(), self::NOW - 300)['id']);
        $this->assertFailure('webhook_timestamp_too_old', fn () => $verifier->verifyAt(self::headers(), self::body(), self::NOW + 301));
        $this->assertFailure('webhook_timestamp_in_future', fn () => $verifier->verifyAt(self::headers(), self::body(), self::NOW - 301));
    }

    /** Contract: constant-time signature check, event id equals body id; distinct failures. */
    public function testEachMalformedInputGetsItsOwnError(): void
    {
        $verifier = new WebhookVerifier([self::SECRET]);
        $body = self::body();
        $this->assertFailure('webhook_signature_mismatch', fn () => $verifier->verifyAt(self::headers(), str_replace('1250', '1251', $body), self::NOW));
        $this->assertFailure('webhook_signature_mismatch', fn () => $verifier->verifyAt(self::headers(null, self::NOW, 'EVT-1', 'whsec_someone_else_000000000000000000'), $body, self::NOW));
        $this->assertFailure('webhook_malformed_signature', fn () => $verifier->verifyAt(['X-Service-Signature' => 'sha1=abc'] + self::headers(), $body, self::NOW));
        $this->assertFailure('webhook_malformed_timestamp', fn () => $verifier->verifyAt(['X-Service-Timestamp' => 'soon'] + self::headers(), $body, self::NOW));
        $this->assertFailure('webhook_event_id_mismatch', fn () => $verifier->verifyAt(self::headers(null, self::NOW, 'EVT-2'), $body, self::NOW));
        $this->assertFailure('webhook_invalid_body', fn () => $verifier->verifyAt(self::headers('[]'), '[]', self::NOW));
        $missing = self::headers();
        unset($missing['X-Service-Timestamp']);
        try {
            $verifier->verifyAt($missing, $body, self::NOW);
            $this->fail('a missing header must be refused');
        } catch (Storefront\WebhookHeaderException $e) {
            $this->assertSame('X-Service-Timestamp', $e->field());
        }
        $this->expectException(Storefront\WebhookConfigException::class);
        new WebhookVerifier(['']);
    }

    /** Contract: a lower version must not overwrite a higher one. */
    public function testLowerStatusVersionNeverOverwritesHigher(): void
    {
        $this->assertSame('apply', Webhook::statusVersionDecision(null, 0));
        $this->assertSame('apply', Webhook::statusVersionDecision(2, 3));
        $this->assertSame('duplicate', Webhook::statusVersionDecision(3, 3));
        $this->assertSame('stale', Webhook::statusVersionDecision(3, 2));
    }

    /** Contract: after verifying, check reference, amount, currency and test_mode. */
    public function testExpectationNamesTheDifferingField(): void
    {
        $data = json_decode(self::body(), true)['data'];
        $expected = ['external_reference' => 'R1', 'amount_minor' => 1250, 'currency' => 'USD', 'test_mode' => false];
        Webhook::checkExpectation($data, $expected);
        foreach (['external_reference' => 'R2', 'amount_minor' => 1300, 'currency' => 'EUR', 'test_mode' => true] as $field => $value) {
            try {
                Webhook::checkExpectation($data, [$field => $value] + $expected);
                $this->fail("$field must be checked");
            } catch (Storefront\ExpectationMismatchException $e) {
                $this->assertSame($field, $e->field());
            }
        }
    }

    private function assertFailure(string $resultName, callable $call): void
    {
        try {
            $call();
            $this->fail("expected $resultName");
        } catch (Storefront\WebhookException $e) {
            $this->assertSame($resultName, $e->resultName());
        }
    }
}
