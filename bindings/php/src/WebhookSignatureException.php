<?php

declare(strict_types=1);

namespace Storefront;

/** The signature is malformed or matches no secret. */
class WebhookSignatureException extends WebhookException
{
}
