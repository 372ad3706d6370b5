<?php

declare(strict_types=1);

namespace Storefront;

/** An argument exceeded the library's input limit. */
class InputTooLargeException extends InvalidArgumentException
{
}
