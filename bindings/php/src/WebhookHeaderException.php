<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A webhook header is absent, given more than once, or unusable (not text, not UTF-8, holding
 * a NUL byte, too long); field() names it.
 */
class WebhookHeaderException extends WebhookException
{
}
