<?php

declare(strict_types=1);

namespace Storefront;

/** A request parameter broke a limit of the contract; nothing was sent (see field()). */
class ValidationException extends InvalidArgumentException
{
}
