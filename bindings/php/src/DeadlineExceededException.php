<?php

declare(strict_types=1);

namespace Storefront;

/** The overall deadline across retries ran out. */
class DeadlineExceededException extends TransportException
{
}
