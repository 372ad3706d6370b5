<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The signed body is not a supported status notification, or is no usable raw body (not a
 * string, longer than Library::maxInputBytes()).
 */
class WebhookBodyException extends WebhookException
{
}
