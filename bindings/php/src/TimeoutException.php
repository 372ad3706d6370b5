<?php

declare(strict_types=1);

namespace Storefront;

/** An attempt timed out. */
class TimeoutException extends TransportException
{
}
