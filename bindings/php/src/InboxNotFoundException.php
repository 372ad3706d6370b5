<?php

declare(strict_types=1);

namespace Storefront;

/**
 * No such inbox event (sf_result 502; replay() of an unknown id).
 */
class InboxNotFoundException extends InboxException
{
}
