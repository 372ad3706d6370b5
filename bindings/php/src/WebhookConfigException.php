<?php

declare(strict_types=1);

namespace Storefront;

/** The verifier was given no usable secret (none, not text, not UTF-8, holding a NUL byte). */
class WebhookConfigException extends WebhookException
{
}
