<?php

declare(strict_types=1);

namespace Storefront\Testing;

/**
 * For a PHPUnit TestCase: one storefront sandbox per test class, started by the first call of
 * sandbox() and stopped after the class's last test.
 *
 *     final class CheckoutTest extends PHPUnit\Framework\TestCase
 *     {
 *         use Storefront\Testing\SandboxTrait;
 *
 *         public function testPaid(): void
 *         {
 *             $client = new Storefront\Client(self::sandboxConfig());
 *             ...
 *             self::sandbox()->trigger('pay', $orderNo, '--channel', 'ch_card_usd');
 *         }
 *     }
 *
 * Start options (tls, args, binary) come from sandboxOptions(), which a class may redefine.
 * The sandbox is stopped by stopStorefrontSandbox() (an after-class hook), or at the latest when
 * the process exits.
 */
trait SandboxTrait
{
    private static ?Sandbox $storefrontSandbox = null;

    /** The class's sandbox, started on first use. */
    protected static function sandbox(): Sandbox
    {
        if (self::$storefrontSandbox === null || !self::$storefrontSandbox->isRunning()) {
            self::$storefrontSandbox = Sandbox::start(static::sandboxOptions());
        }
        return self::$storefrontSandbox;
    }

    /**
     * The seeded merchant client's configuration for Storefront\Client.
     *
     * @param array<string, mixed> $overrides
     * @return array<string, mixed>
     */
    protected static function sandboxConfig(array $overrides = []): array
    {
        return self::sandbox()->config($overrides);
    }

    /**
     * Options for Sandbox::start() (tls, args, binary, timeout); none by default.
     *
     * @return array{binary?: string, tls?: bool, args?: list<string>, timeout?: float}
     */
    protected static function sandboxOptions(): array
    {
        return [];
    }

    /**
     * @afterClass
     */
    #[\PHPUnit\Framework\Attributes\AfterClass]
    public static function stopStorefrontSandbox(): void
    {
        if (self::$storefrontSandbox !== null) {
            self::$storefrontSandbox->stop();
            self::$storefrontSandbox = null;
        }
    }
}
