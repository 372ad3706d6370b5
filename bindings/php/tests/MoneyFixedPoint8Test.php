<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\AmountException;
use Storefront\Money;
use Storefront\ValidationException;

/**
 * Catalog amounts in eight-decimal fixed point (value × 10^8), converted by the core through
 * sf_fixed_point8_parse / sf_fixed_point8_format: exact, never floats, an AmountException with a
 * reason for every refusal.
 *
 * Contract rule: catalog amounts "are integers in eight-decimal fixed point (value multiplied by
 * 10^8)"; "use integer or decimal arithmetic, never floating-point rounding".
 */
final class MoneyFixedPoint8Test extends TestCase
{
    public function testDecimalTextParsesToTheRawIntegerExactly(): void
    {
        $this->assertSame(1250000000, Money::parseFixedPoint8('12.5'));
        $this->assertSame(1250000000, Money::parseFixedPoint8('12.50000000'));
        $this->assertSame(10000000, Money::parseFixedPoint8('0.100000000'));
        $this->assertSame(0, Money::parseFixedPoint8('0'));
        $this->assertSame(1, Money::parseFixedPoint8('0.00000001'));
        // The core's rule: catalog amounts are signed, so a leading minus parses.
        $this->assertSame(-1, Money::parseFixedPoint8('-0.00000001'));
        $this->assertSame(-1250000000, Money::parseFixedPoint8('-12.5'));
        $this->assertSame(PHP_INT_MAX, Money::parseFixedPoint8('92233720368.54775807'));
        $this->assertSame(
            Money::parseFixedPoint8('0.3'),
            Money::parseFixedPoint8('0.1') + Money::parseFixedPoint8('0.2')
        );
    }

    public function testRawIntegersFormatAtADisplayPrecisionExactly(): void
    {
        $this->assertSame('12.50', Money::formatFixedPoint8(1250000000, 2));
        $this->assertSame('12.50000000', Money::formatFixedPoint8(1250000000, 8));
        $this->assertSame('1', Money::formatFixedPoint8(100000000, 0));
        $this->assertSame('0', Money::formatFixedPoint8(0, 0));
        $this->assertSame('-0.00000001', Money::formatFixedPoint8(-1, 8));
        $this->assertSame('-12.5', Money::formatFixedPoint8(-1250000000, 1));
        $this->assertSame('92233720368.54775807', Money::formatFixedPoint8(PHP_INT_MAX, 8));
        $this->assertSame('-92233720368.54775808', Money::formatFixedPoint8(PHP_INT_MIN, 8));
        foreach (['12.5', '-0.00000001', '92233720368.54775807', '0.12345678'] as $text) {
            $raw = Money::parseFixedPoint8($text);
            $this->assertSame($raw, Money::parseFixedPoint8(Money::formatFixedPoint8($raw, 8)), $text);
        }
    }

    public function testRefusedTextThrowsATypedErrorWithAReason(): void
    {
        $cases = [
            ['0.000000001', 'too_many_decimals'], ['1.123456789', 'too_many_decimals'],
            ['92233720368.54775808', 'out_of_range'], ['999999999999999999999999', 'out_of_range'],
            ["1\0", 'syntax'],
        ];
        foreach (['', '.', '1.', '.5', '1e3', '1,5', 'NaN', ' 1', '1 ', '--1'] as $bad) {
            $cases[] = [$bad, 'syntax'];
        }
        foreach ($cases as [$text, $reason]) {
            try {
                Money::parseFixedPoint8($text);
                $this->fail("accepted \"$text\"");
            } catch (AmountException $e) {
                $this->assertSame([$reason, 'amount'], [$e->reason(), $e->field()], "\"$text\"");
                $this->assertInstanceOf(ValidationException::class, $e);
            }
        }
    }

    public function testFormattingRefusalsThrowATypedErrorWithAReason(): void
    {
        $cases = [
            [1250000000, 0, 'too_many_decimals'], // "12.5" at 0 decimals would cut the 5
            [1, 7, 'too_many_decimals'], [-1, 7, 'too_many_decimals'],
            [1, 9, 'unsupported_scale'], [1, 4294967295, 'unsupported_scale'],
        ];
        foreach ($cases as [$raw, $decimals, $reason]) {
            try {
                Money::formatFixedPoint8($raw, $decimals);
                $this->fail("formatted $raw at $decimals");
            } catch (AmountException $e) {
                $this->assertSame([$reason, 'raw'], [$e->reason(), $e->field()], "$raw at $decimals");
            }
        }
    }

    public function testFloatsAreNeverAccepted(): void
    {
        foreach ([
            static fn () => Money::parseFixedPoint8(12.5),
            static fn () => Money::formatFixedPoint8(12.5, 2),
            static fn () => Money::formatFixedPoint8(1, 2.0),
        ] as $call) {
            try {
                $call();
                $this->fail('a float was accepted');
            } catch (\TypeError $e) {
                $this->assertStringContainsString('float', $e->getMessage());
            }
        }
    }
}
