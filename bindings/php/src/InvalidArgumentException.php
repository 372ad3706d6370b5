<?php

declare(strict_types=1);

namespace Storefront;

/** An argument was refused before anything was sent. */
class InvalidArgumentException extends StorefrontException
{
}
