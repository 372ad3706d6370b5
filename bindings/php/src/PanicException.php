<?php

declare(strict_types=1);

namespace Storefront;

/** A bug inside the library was caught at its boundary; the client stays usable. */
class PanicException extends StorefrontException
{
}
