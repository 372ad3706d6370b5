<?php

declare(strict_types=1);

namespace Storefront\Testing;

use Storefront\StorefrontException;

/**
 * The sandbox could not be found, did not start, or refused a control request or a trigger
 * (resultName() says which: `sandbox_not_installed`, `sandbox_not_started`, `sandbox_refused`).
 */
final class SandboxException extends StorefrontException
{
    public static function because(string $reason, string $message): self
    {
        return new self(['result' => 499, 'result_name' => $reason, 'message' => $message]);
    }
}
