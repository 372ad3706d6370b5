<?php

declare(strict_types=1);

namespace Storefront;

/** A JSON argument was not valid JSON. */
class InvalidJsonException extends InvalidArgumentException
{
}
