<?php

declare(strict_types=1);

namespace Storefront;

/** An order creation or payment start may have been processed; it was not re-sent. */
class OutcomeUnknownException extends StorefrontException
{
}
