<?php

declare(strict_types=1);

namespace Storefront;

/** A required argument was missing (NULL). */
class NullArgumentException extends InvalidArgumentException
{
}
