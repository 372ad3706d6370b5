<?php

declare(strict_types=1);

namespace Storefront;

/**
 * Exact conversion between decimal amounts and `amount_minor`, done by the core
 * (sf_money_to_minor / sf_money_from_minor), so PHP converts with the same rules as every
 * other language of the SDK. Contract: `amount_minor` is "a positive integer equal to the amount
 * multiplied by 10 to the power of the currency precision", at most 9007199254740991; "use
 * integer or decimal arithmetic, never floating-point rounding". Nothing is rounded.
 *
 *     Money::toMinor('19.99', 2) === 1999;  Money::fromMinor(1999, 2) === '19.99'
 *
 * Catalog amounts (product prices, order amounts) are "integers in eight-decimal fixed point
 * (value multiplied by 10^8)": parseFixedPoint8 / formatFixedPoint8 convert them through the
 * core (sf_fixed_point8_parse / sf_fixed_point8_format), exactly.
 *
 *     Money::parseFixedPoint8('12.5') === 1250000000;  Money::formatFixedPoint8(1250000000, 2) === '12.50'
 */
final class Money
{
    public const REASON_SYNTAX = 'syntax';
    public const REASON_TOO_MANY_DECIMALS = 'too_many_decimals';
    public const REASON_NOT_POSITIVE = 'not_positive';
    public const REASON_OUT_OF_RANGE = 'out_of_range';
    public const REASON_UNSUPPORTED_SCALE = 'unsupported_scale';

    /**
     * $amount (decimal text such as "19.99") in minor units at the currency precision $decimals
     * (`currency_decimals`). Throws AmountException: too many decimals for the precision, zero or
     * negative, above 9007199254740991, not a plain decimal, or $decimals above 18. A float is a
     * TypeError (strict types): convert from text, never from a float.
     */
    public static function toMinor(string $amount, int $decimals): int
    {
        $scale = Input::int('decimals', $decimals, 0, Input::U32_MAX);
        $ffi = Library::ffi();
        if (strpos($amount, "\0") !== false) {
            throw self::refused('amount', self::REASON_SYNTAX, '`amount` contains a NUL byte');
        }
        $minor = $ffi->new('uint64_t');
        $error = $ffi->new('sf_error*');
        try {
            $result = $ffi->sf_money_to_minor($amount, $scale, \FFI::addr($minor), \FFI::addr($error));
        } finally {
            Logging::afterCall();
        }
        if ($result !== $ffi->SF_RESULT_OK) {
            throw self::typed(self::failure($result, $error));
        }
        return (int) $minor->cdata;
    }

    /**
     * $amountMinor as decimal text with exactly $decimals fractional digits (1999, 2 → "19.99";
     * 1200, 0 → "1200"). Throws AmountException for zero or negative, above 9007199254740991,
     * or $decimals above 18.
     */
    public static function fromMinor(int $amountMinor, int $decimals): string
    {
        if ($amountMinor <= 0) {
            throw self::refused('amount_minor', self::REASON_NOT_POSITIVE, "`amount_minor`: $amountMinor is not positive");
        }
        $scale = Input::int('decimals', $decimals, 0, Input::U32_MAX);
        try {
            return Library::callString('sf_money_from_minor', $amountMinor, $scale);
        } catch (ValidationException $e) {
            throw self::typed($e);
        }
    }

    /**
     * A catalog amount as decimal text ("12.5") to its raw eight-decimal fixed-point integer
     * (value × 10^8, 1250000000), exactly, with the core's rules: a leading "-" is accepted
     * (catalog amounts are signed). Throws AmountException (field `amount`): more than 8
     * significant fractional digits (`too_many_decimals`, no rounding), outside a signed 64-bit
     * raw value (`out_of_range`), not a plain decimal (`syntax`). A float is a TypeError (strict
     * types).
     */
    public static function parseFixedPoint8(string $text): int
    {
        if (strpos($text, "\0") !== false) {
            throw self::refused('amount', self::REASON_SYNTAX, '`amount` contains a NUL byte');
        }
        $ffi = Library::ffi();
        $raw = $ffi->new('int64_t');
        $error = $ffi->new('sf_error*');
        try {
            $result = $ffi->sf_fixed_point8_parse($text, \FFI::addr($raw), \FFI::addr($error));
        } finally {
            Logging::afterCall();
        }
        if ($result !== $ffi->SF_RESULT_OK) {
            throw self::typed(self::failure($result, $error));
        }
        return (int) $raw->cdata;
    }

    /**
     * A raw eight-decimal fixed-point catalog amount (value × 10^8) as decimal text with exactly
     * $decimals fractional digits (1250000000, 2 → "12.50"; -1, 8 → "-0.00000001"). Nothing is
     * rounded: throws AmountException (field `raw`) when significant digits would be cut off
     * (`too_many_decimals`) or $decimals is above 8 (`unsupported_scale`).
     */
    public static function formatFixedPoint8(int $raw, int $decimals): string
    {
        $scale = Input::int('decimals', $decimals, 0, Input::U32_MAX);
        try {
            return Library::callString('sf_fixed_point8_format', $raw, $scale);
        } catch (ValidationException $e) {
            throw self::typed($e);
        }
    }

    private static function failure(int $result, \FFI\CData $error): StorefrontException
    {
        $ffi = Library::ffi();
        if (\FFI::isNull($error)) {
            return StorefrontException::fromDetail(['result' => $result, 'message' => "storefront call failed ($result)"]);
        }
        try {
            $json = (string) $ffi->sf_error_json($error);
        } finally {
            $ffi->sf_error_free($error);
        }
        return StorefrontException::fromDetail(Library::fromJson($json));
    }

    private static function typed(StorefrontException $e): StorefrontException
    {
        if (!$e instanceof ValidationException || $e->errorCode() === null) {
            return $e;
        }
        return new AmountException([
            'result' => $e->result(),
            'result_name' => $e->resultName(),
            'message' => $e->getMessage(),
            'error' => $e->errorCode(),
            'field' => $e->field(),
        ]);
    }

    private static function refused(string $field, string $reason, string $message): AmountException
    {
        return new AmountException([
            'result' => 400,
            'result_name' => 'validation',
            'message' => $message,
            'error' => $reason,
            'field' => $field,
        ]);
    }
}
