<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The inbox event's lease ran out and another worker claimed it: do not book it here, roll back
 * what the handler did (sf_result 501; also completeIn() when the first completion statement
 * changed no row).
 */
class InboxLeaseLostException extends InboxException
{
}
