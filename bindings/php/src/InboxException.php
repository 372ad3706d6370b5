<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A failure of the webhook inbox's own operations (Inbox::claim(), complete(), completeIn(),
 * release(), status(), purge(), replay()...): InboxStoreException, InboxLeaseLostException or
 * InboxNotFoundException. A delivery that fails verification is not an exception:
 * Inbox::receive() answers it with 400. A bad inbox URL is a ConfigException.
 */
class InboxException extends StorefrontException
{
}
