<?php

declare(strict_types=1);

namespace Storefront;

/** A required webhook header is absent (field() names it). */
class WebhookHeaderException extends WebhookException
{
}
