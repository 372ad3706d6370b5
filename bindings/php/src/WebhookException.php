<?php

declare(strict_types=1);

namespace Storefront;

/** A webhook failed verification: answer non-2xx and do not book it. */
class WebhookException extends StorefrontException
{
}
