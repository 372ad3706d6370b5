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

    /** Longest header value accepted, in bytes (a signature header is far shorter). */
    public const MAX_HEADER_BYTES = 8192;

    /** Every name header() reads as one of the three delivery headers (any case, '-' or '_'). */
    private const DELIVERY_NAMES = '/^(?:http[-_])?x[-_]service[-_](?:event[-_]id|timestamp|signature)$/i';

    /** Lower-cased names, '_' as '-', under which header() finds the three delivery headers. */
    private const DELIVERY_SPELLINGS = [
        'x-service-event-id' => 0, 'http-x-service-event-id' => 0,
        'x-service-timestamp' => 1, 'http-x-service-timestamp' => 1,
        'x-service-signature' => 2, 'http-x-service-signature' => 2,
    ];

    /**
     * The single value of header $name in $headers, or null when absent.
     *
     * $headers is what the host has: getallheaders(), $_SERVER (HTTP_X_SERVICE_SIGNATURE), a
     * PSR-7 getHeaders() array (name => list of values), or any array of name => value; names
     * match in any letter case, with '-' or '_'. Throws WebhookHeaderException naming the header
     * when it is given more than once (two entries, or a list of two values), is not a string,
     * is not UTF-8, holds a NUL byte or is longer than MAX_HEADER_BYTES; a $headers that is not
     * an array (or Traversable) is a WebhookHeaderException too.
     *
     * @param mixed $headers
     */
    public static function header($headers, string $name): ?string
    {
        if ($headers instanceof \Traversable) {
            $headers = iterator_to_array($headers, true);
        }
        if (!is_array($headers)) {
            throw self::headerError($name, 'webhook_bad_headers', 'headers must be an array of name => value, not ' . get_debug_type($headers));
        }
        $wanted = strtolower(strtr($name, '_', '-'));
        $values = [];
        foreach ($headers as $key => $value) {
            $key = strtolower(strtr((string) $key, '_', '-'));
            if (strncmp($key, 'http-', 5) === 0) {
                $key = substr($key, 5);
            }
            if ($key !== $wanted || $value === null) {
                continue;
            }
            if (is_array($value)) {
                foreach ($value as $item) {
                    $values[] = $item;
                }
            } else {
                $values[] = $value;
            }
        }
        return self::single($name, $values);
    }

    /**
     * The three delivery headers (X-Service-Event-ID, X-Service-Timestamp,
     * X-Service-Signature), each as header() returns it (same spellings, same checks and
     * exceptions), found in one pass over $headers.
     *
     * @param mixed $headers
     * @return array{0: ?string, 1: ?string, 2: ?string}
     */
    public static function deliveryHeaders($headers): array
    {
        if ($headers instanceof \Traversable) {
            $headers = iterator_to_array($headers, true);
        }
        if (!is_array($headers)) {
            throw self::headerError(self::EVENT_ID_HEADER, 'webhook_bad_headers', 'headers must be an array of name => value, not ' . get_debug_type($headers));
        }
        $found = [[], [], []];
        // Only the names that are spellings of the three headers (usually three of many) are
        // visited: preg_grep picks them in one call.
        foreach (preg_grep(self::DELIVERY_NAMES, array_keys($headers)) ?: [] as $key) {
            $value = $headers[$key];
            if ($value === null) {
                continue;
            }
            $index = self::DELIVERY_SPELLINGS[strtr(strtolower((string) $key), '_', '-')] ?? null;
            if ($index === null) {
                continue;
            }
            if (is_array($value)) {
                foreach ($value as $item) {
                    $found[$index][] = $item;
                }
            } else {
                $found[$index][] = $value;
            }
        }
        return [
            self::single(self::EVENT_ID_HEADER, $found[0]),
            self::single(self::TIMESTAMP_HEADER, $found[1]),
            self::single(self::SIGNATURE_HEADER, $found[2]),
        ];
    }

    /**
     * The one value among $values (every value given for header $name), checked as header()
     * documents; null when there is none.
     *
     * @param list<mixed> $values
     */
    private static function single(string $name, array $values): ?string
    {
        if ($values === []) {
            return null;
        }
        if (count($values) > 1) {
            throw self::headerError($name, 'webhook_duplicate_header', "header $name is given " . count($values) . ' times');
        }
        $value = $values[0];
        if (!is_string($value)) {
            throw self::headerError($name, 'webhook_malformed_header', "header $name must be a string, not " . get_debug_type($value));
        }
        if (strlen($value) > self::MAX_HEADER_BYTES) {
            throw self::headerError($name, 'webhook_malformed_header', "header $name is longer than " . self::MAX_HEADER_BYTES . ' bytes');
        }
        if (strpos($value, "\0") !== false) {
            throw self::headerError($name, 'webhook_malformed_header', "header $name contains a NUL byte");
        }
        if (preg_match('//u', $value) !== 1) {
            throw self::headerError($name, 'webhook_malformed_header', "header $name is not UTF-8");
        }
        return $value;
    }

    private static function headerError(string $name, string $resultName, string $message): WebhookHeaderException
    {
        return new WebhookHeaderException(['result' => 300, 'result_name' => $resultName, 'message' => $message, 'field' => $name]);
    }

    /**
     * The X-Service-Signature value for $body at $timestamp: a test signer for the host's own
     * receiver tests.
     *
     * @param int $timestamp Unix seconds (an int, never a float or a numeric string)
     */
    public static function sign(string $secret, $timestamp, string $body): string
    {
        $timestamp = Input::int('timestamp', $timestamp, PHP_INT_MIN);
        [$buffer, $length] = Library::bytes($body);
        return Library::callString('sf_webhook_sign', $secret, $timestamp, $buffer, $length);
    }

    /**
     * Checks a payment (a notification's data or a queried payment) against the merchant's
     * expectation ['external_reference', 'amount_minor', 'currency', 'test_mode']. Throws
     * ExpectationMismatchException naming the first differing field.
     *
     * @param MerchantPayment|array<string, mixed> $payment
     * @param array{external_reference: string, amount_minor: int, currency: string, test_mode: bool} $expected
     */
    public static function checkExpectation(MerchantPayment|array $payment, array $expected): void
    {
        $payment = $payment instanceof MerchantPayment ? $payment->toArray() : $payment;
        Library::callUnit('sf_payment_expectation_check', Library::toJson($payment, 'payment_json'), Library::toJson(Input::check('expectation', $expected), 'expected_json'));
    }

    /**
     * What to do with a notification of $incoming status version when $stored is stored (null
     * when nothing is): 'apply', 'duplicate' or 'stale' (must not overwrite the newer state).
     * Versions are non-negative ints (a float, a numeric string or a negative number is a
     * ValidationException).
     *
     * @param int|null $stored
     * @param int $incoming
     */
    public static function statusVersionDecision($stored, $incoming): string
    {
        $incoming = Input::int('incoming', $incoming, 0);
        $stored = $stored === null ? null : Input::int('stored', $stored, 0);
        return self::DECISIONS[Library::ffi()->sf_status_version_decision($stored ?? -1, $incoming)];
    }

    /**
     * A checked other_ipu for an order of $product (as listed): keys are the key part of its
     * other_ipu_cnf (a label is refused), required inputs need a value.
     *
     * @param Product|array<string, mixed> $product
     * @param array<string, string> $values
     * @return array<string, string>
     */
    public static function otherIpu(Product|array $product, array $values): array
    {
        $product = $product instanceof Product ? $product->toArray() : $product;
        return Library::callJson('sf_other_ipu_build', Library::toJson($product), Library::toJson((object) $values));
    }
}
