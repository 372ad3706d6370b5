<?php

declare(strict_types=1);

namespace Storefront;

/** The host's user-token provider failed. */
class TokenProviderException extends StorefrontException
{
}
