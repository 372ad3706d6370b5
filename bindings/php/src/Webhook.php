<?php

declare(strict_types=1);

namespace Storefront;

/** Helpers applied around verification, and the test signer. */
final class Webhook
{
    public const EVENT_ID_HEADER = 'X-Service-Event-ID';
    public const TIMESTAMP_HEADER = 'X-Service-Timestamp';
    public const SIGNATURE_HEADER = 'X-Service-Signature';

    /** sf_version_decision numbers. */
    private const DECISIONS = [0 => 'apply', 1 => 'duplicate', 2 => 'stale'];

    /**
     * Case-insensitive header lookup (null when absent).
     *
     * @param array<string, string|list<string>> $headers
     */
    public static function header(array $headers, string $name): ?string
    {
        foreach ($headers as $key => $value) {
            if (strcasecmp((string) $key, $name) === 0 || strcasecmp((string) $key, 'HTTP_' . strtr(strtoupper($name), '-', '_')) === 0) {
                return is_array($value) ? (string) reset($value) : (string) $value;
            }
        }
        return null;
    }

    /**
     * The X-Service-Signature value for $body at $timestamp: a test signer for the host's own
     * receiver tests.
     */
    public static function sign(string $secret, int $timestamp, string $body): string
    {
        [$buffer, $length] = Library::bytes($body);
        return Library::callString('sf_webhook_sign', $secret, $timestamp, $buffer, $length);
    }

    /**
     * Checks a payment (a notification's data or a queried payment) against the merchant's
     * expectation ['external_reference', 'amount_minor', 'currency', 'test_mode']. Throws
     * ExpectationMismatchException naming the first differing field.
     *
     * @param array<string, mixed> $payment
     * @param array{external_reference: string, amount_minor: int, currency: string, test_mode: bool} $expected
     */
    public static function checkExpectation(array $payment, array $expected): void
    {
        Library::callUnit('sf_payment_expectation_check', Library::toJson($payment), Library::toJson($expected));
    }

    /**
     * What to do with a notification of $incoming status version when $stored is stored (null
     * when nothing is): 'apply', 'duplicate' or 'stale' (must not overwrite the newer state).
     */
    public static function statusVersionDecision(?int $stored, int $incoming): string
    {
        if ($incoming < 0 || ($stored !== null && $stored < 0)) {
            throw new \InvalidArgumentException('status versions are non-negative');
        }
        return self::DECISIONS[Library::ffi()->sf_status_version_decision($stored ?? -1, $incoming)];
    }

    /**
     * A checked other_ipu for an order of $product (as listed): keys are the key part of its
     * other_ipu_cnf (a label is refused), required inputs need a value.
     *
     * @param array<string, mixed> $product
     * @param array<string, string> $values
     * @return array<string, string>
     */
    public static function otherIpu(array $product, array $values): array
    {
        return Library::callJson('sf_other_ipu_build', Library::toJson($product), Library::toJson((object) $values));
    }
}
