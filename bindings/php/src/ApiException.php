<?php

declare(strict_types=1);

namespace Storefront;

/** The service answered with an HTTP error; see httpStatus() and errorCode(). */
class ApiException extends StorefrontException
{
}
