<?php

declare(strict_types=1);

namespace Storefront;

/** The signed body is not a supported status notification. */
class WebhookBodyException extends WebhookException
{
}
