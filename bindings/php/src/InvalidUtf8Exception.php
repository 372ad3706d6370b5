<?php

declare(strict_types=1);

namespace Storefront;

/** A string argument was not valid UTF-8. */
class InvalidUtf8Exception extends InvalidArgumentException
{
}
