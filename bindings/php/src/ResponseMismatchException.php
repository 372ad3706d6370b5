<?php

declare(strict_types=1);

namespace Storefront;

/** The answer contradicts the request (amount, currency or precision). */
class ResponseMismatchException extends StorefrontException
{
}
