<?php

declare(strict_types=1);

namespace Storefront;

/** The verifier was given no usable secret. */
class WebhookConfigException extends WebhookException
{
}
