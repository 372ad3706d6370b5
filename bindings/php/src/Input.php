<?php

declare(strict_types=1);

namespace Storefront;

/**
 * Checks of the configuration and request arrays before anything reaches the C library.
 *
 * The C library is the authority: it refuses unknown keys at any depth and numbers its fields
 * cannot hold (SF_RESULT_VALIDATION, field = the key's path; docs/c-abi-hosts.md, "Strict
 * input"). The wrapper checks the same rules first so that a misspelt key (`notifyUrl`,
 * `atempt_timeout_ms`, `retry.max_attempt`) or a float or numeric string where an integer belongs
 * fails the same way, with the key named, even against an older library, and so that no PHP
 * value is ever cast: `'1250'`, `12.5`, `true` where an integer belongs and a negative number for
 * an unsigned C field are refused, never converted.
 *
 * Every refusal is a ValidationException whose field() is the key's path
 * (`retry.max_attempt`, `scopes[2]`). Keys whose value is null are left out (an absent optional
 * field).
 *
 * @internal
 */
final class Input
{
    /** Largest uint32_t. */
    public const U32_MAX = 4294967295;

    /** The contract's largest amount_minor (2**53 - 1). */
    public const AMOUNT_MINOR_MAX = 9007199254740991;

    // Field kinds.
    private const STRING = 'string';
    private const BOOL = 'bool';
    private const U32 = 'u32';
    /** uint64_t; PHP's int stops at PHP_INT_MAX, so 0 to PHP_INT_MAX. */
    private const U64 = 'u64';
    private const AMOUNT = 'amount';
    private const STRINGS = 'list<string>';
    private const STRING_MAP = 'map<string>';

    private const RETRY = [
        'max_attempts' => self::U32,
        'base_delay_ms' => self::U64,
        'max_delay_ms' => self::U64,
        'max_retry_after_ms' => self::U64,
    ];

    /** The client-side rate limiter (`rate_limits` of the configuration). */
    private const RATE_LIMITS = [
        'enabled' => self::BOOL,
        'create_per_window' => self::U32,
        'read_per_window' => self::U32,
        'requeue_per_window' => self::U32,
        'window_ms' => self::U64,
        'margin_ms' => self::U64,
    ];

    /** The shapes by name: key => kind, or key => nested shape (an array). */
    private const SHAPES = [
        'config' => [
            'base_url' => self::STRING,
            'token_endpoint' => self::STRING,
            'userinfo_endpoint' => self::STRING,
            'client_id' => self::STRING,
            'client_secret' => self::STRING,
            'scopes' => self::STRINGS,
            'connect_timeout_ms' => self::U64,
            'attempt_timeout_ms' => self::U64,
            'overall_deadline_ms' => self::U64,
            'retry' => self::RETRY,
            'user_agent' => self::STRING,
            'root_ca_pem' => self::STRING,
            'allow_insecure_loopback' => self::BOOL,
            'max_response_bytes' => self::U64,
            'token_refresh_margin_ms' => self::U64,
            'rate_limits' => self::RATE_LIMITS,
            'max_in_flight' => self::U64,
            'shared_state' => self::STRING,
        ],
        'merchant_payment' => [
            'external_reference' => self::STRING,
            'idempotency_key' => self::STRING,
            'amount_minor' => self::AMOUNT,
            'currency' => self::STRING,
            'payment_no' => self::STRING,
            'description' => self::STRING,
            'expires_in' => self::U32,
            'notify_enabled' => self::BOOL,
            'notify_url' => self::STRING,
            'notify_secret' => self::STRING,
            'return_url' => self::STRING,
            'expected_currency_decimals' => self::U32,
        ],
        'merchant_payments_query' => [
            'external_reference' => self::STRING,
            'order_no' => self::STRING,
            'limit' => self::U32,
        ],
        'products_query' => [
            'page' => self::U32,
            'limit' => self::U32,
            'gd_no' => self::STRING,
            'search_value' => self::STRING,
        ],
        'order' => [
            'gd_no' => self::STRING,
            'quantity' => self::U32,
            'payment_no' => self::STRING,
            'other_ipu' => self::STRING_MAP,
        ],
        'expectation' => [
            'external_reference' => self::STRING,
            'amount_minor' => self::AMOUNT,
            'currency' => self::STRING,
            'test_mode' => self::BOOL,
        ],
    ];

    /**
     * $value checked against the shape $shape ('config', 'merchant_payment',
     * 'merchant_payments_query', 'products_query', 'order', 'expectation'), null values left out.
     *
     * @param mixed $value
     * @return array<string, mixed>
     */
    public static function check(string $shape, $value): array
    {
        return self::object(self::SHAPES[$shape], $value, '', $shape);
    }

    /**
     * An integer argument of a C function: an int (never a float, a numeric string or a bool)
     * within [$min, $max], else ValidationException naming $name.
     *
     * @param mixed $value
     */
    public static function int(string $name, $value, int $min, int $max = PHP_INT_MAX): int
    {
        if (!is_int($value)) {
            throw self::refused($name, "`$name` must be an integer, not " . self::describe($value));
        }
        if ($value < $min || $value > $max) {
            throw self::refused($name, "`$name` must be between $min and $max, got $value");
        }
        return $value;
    }

    /**
     * A string argument of a C function, else ValidationException naming $name.
     *
     * @param mixed $value
     */
    public static function string(string $name, $value): string
    {
        if (!is_string($value)) {
            throw self::refused($name, "`$name` must be a string, not " . self::describe($value));
        }
        return $value;
    }

    /** A ValidationException raised by the wrapper itself (nothing was sent). */
    public static function refused(string $field, string $message): ValidationException
    {
        return new ValidationException(['result' => 400, 'result_name' => 'validation', 'message' => $message, 'field' => $field]);
    }

    /**
     * @param array<string, mixed> $shape
     * @param mixed $value
     * @return array<string, mixed>
     */
    private static function object(array $shape, $value, string $prefix, string $what): array
    {
        if (is_object($value) && !($value instanceof \JsonSerializable)) {
            $value = get_object_vars($value);
        }
        if (!is_array($value)) {
            throw self::refused(rtrim($prefix, '.') ?: $what, ($prefix === '' ? "the $what" : '`' . rtrim($prefix, '.') . '`') . ' must be an array with string keys, not ' . self::describe($value));
        }
        $checked = [];
        foreach ($value as $key => $item) {
            $path = $prefix . $key;
            if (!is_string($key) || !array_key_exists($key, $shape)) {
                throw self::refused($path, "unknown key `$path` (expected one of: " . implode(', ', array_keys($shape)) . ')');
            }
            if ($item === null) {
                continue;
            }
            $kind = $shape[$key];
            $checked[$key] = is_array($kind) ? self::object($kind, $item, "$path.", $what) : self::value($kind, $item, $path);
        }
        return $checked;
    }

    /**
     * @param mixed $item
     * @return mixed
     */
    private static function value(string $kind, $item, string $path)
    {
        switch ($kind) {
            case self::U32:
                return self::int($path, $item, 0, self::U32_MAX);
            case self::U64:
                return self::int($path, $item, 0);
            case self::AMOUNT:
                return self::int($path, $item, 0, self::AMOUNT_MINOR_MAX);
            case self::BOOL:
                if (!is_bool($item)) {
                    throw self::refused($path, "`$path` must be true or false, not " . self::describe($item));
                }
                return $item;
            case self::STRING:
                return self::string($path, $item);
            case self::STRINGS:
                if (!is_array($item) || !array_is_list($item)) {
                    throw self::refused($path, "`$path` must be a list of strings, not " . self::describe($item));
                }
                foreach ($item as $index => $text) {
                    self::string("{$path}[$index]", $text);
                }
                return $item;
            case self::STRING_MAP:
                if (is_object($item)) {
                    $item = get_object_vars($item);
                }
                if (!is_array($item)) {
                    throw self::refused($path, "`$path` must be an array of strings by key, not " . self::describe($item));
                }
                foreach ($item as $key => $text) {
                    self::string("$path.$key", $text);
                }
                return (object) $item;
        }
        throw new \LogicException("unknown kind $kind");
    }

    /** @param mixed $value */
    private static function describe($value): string
    {
        if (is_float($value)) {
            return 'a float (' . var_export($value, true) . ')';
        }
        if (is_string($value)) {
            return 'a string';
        }
        if (is_bool($value)) {
            return $value ? 'true' : 'false';
        }
        return get_debug_type($value);
    }
}
