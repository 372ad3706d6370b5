<?php

declare(strict_types=1);

namespace Storefront;

/** The client configuration was refused (URL, HTTPS-only rule, CA). */
class ConfigException extends StorefrontException
{
}
