<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The call was stopped by a cancellation token (SF_RESULT_CANCELLED). The PHP wrapper binds no
 * token (a PHP request has no other thread to cancel from), so it only appears when the host
 * process binds one through the C API itself.
 */
class CancelledException extends StorefrontException
{
}
