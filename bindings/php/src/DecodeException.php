<?php

declare(strict_types=1);

namespace Storefront;

/** The service's answer did not have the contract's shape. */
class DecodeException extends StorefrontException
{
}
