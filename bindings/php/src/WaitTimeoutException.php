<?php

declare(strict_types=1);

namespace Storefront;

/** No final payment status within the wait timeout. */
class WaitTimeoutException extends StorefrontException
{
}
