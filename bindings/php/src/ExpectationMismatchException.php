<?php

declare(strict_types=1);

namespace Storefront;

/** A payment or notification does not match the merchant's expectation: do not book it. */
class ExpectationMismatchException extends StorefrontException
{
}
