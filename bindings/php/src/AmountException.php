<?php

declare(strict_types=1);

namespace Storefront;

/**
 * An amount refused by Money::toMinor() or Money::fromMinor(). Branch on reason() (`syntax`,
 * `too_many_decimals`, `not_positive`, `out_of_range`, `unsupported_scale`: the core's code,
 * also errorCode()), never on the message; field() is `amount` or `amount_minor`.
 */
class AmountException extends ValidationException
{
    /** Why the amount was refused (one of the Money::REASON_* codes). */
    public function reason(): string
    {
        return (string) $this->errorCode();
    }
}
