<?php

declare(strict_types=1);

namespace Storefront;

/** The service could not be reached or the exchange broke. */
class TransportException extends StorefrontException
{
}
