<?php

declare(strict_types=1);

namespace Storefront;

/**
 * HTTP 202 provider_result_pending: not success; keep the original payment and check it by
 * lookup()['order_no'] (or lookup()['external_reference'] for a merchant payment); see advice().
 */
class ProviderResultPendingException extends StorefrontException
{
}
