<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A webhook failed verification, or its input was malformed (WebhookVerifier throws nothing
 * else for any input): answer 400 and do not book it.
 */
class WebhookException extends StorefrontException
{
}
