<?php

declare(strict_types=1);

namespace Storefront;

/** The operation needs another kind of token; nothing was sent. */
class WrongTokenSubjectException extends StorefrontException
{
}
