<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The webhook inbox's database failed (unreachable, locked past the timeout, a constraint): nothing
 * changed, try again (sf_result 500).
 */
class InboxStoreException extends InboxException
{
}
