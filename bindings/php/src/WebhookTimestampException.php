<?php

declare(strict_types=1);

namespace Storefront;

/** The timestamp is malformed or outside the 5-minute tolerance. */
class WebhookTimestampException extends WebhookException
{
}
