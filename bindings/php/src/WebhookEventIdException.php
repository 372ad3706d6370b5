<?php

declare(strict_types=1);

namespace Storefront;

/** X-Service-Event-ID differs from the body's id. */
class WebhookEventIdException extends WebhookException
{
}
