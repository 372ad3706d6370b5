<?php

declare(strict_types=1);

namespace Storefront;

/** TLS setup or certificate verification failed. */
class TlsException extends TransportException
{
}
