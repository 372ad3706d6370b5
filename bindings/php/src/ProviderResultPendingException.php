<?php

declare(strict_types=1);

namespace Storefront;

/** HTTP 202 provider_result_pending: not success; keep the original payment and check it. */
class ProviderResultPendingException extends StorefrontException
{
}
