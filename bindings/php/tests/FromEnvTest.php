<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\ConfigException;
use Storefront\Tests\SandboxHarness as S;

/**
 * Issue 18 item 3: the variables the sandbox prints (its ready file's "env"), put in the process
 * environment with putenv(), configure a client through Client::fromEnv (the core's
 * Config::from_env), which creates and reads a merchant payment over real HTTP.
 */
final class FromEnvTest extends TestCase
{
    private const NAMES = [
        'STOREFRONT_BASE_URL', 'STOREFRONT_TOKEN_ENDPOINT', 'STOREFRONT_USERINFO_ENDPOINT',
        'STOREFRONT_CLIENT_ID', 'STOREFRONT_CLIENT_SECRET', 'STOREFRONT_SCOPES',
        'STOREFRONT_ALLOW_INSECURE_LOOPBACK', 'STOREFRONT_ROOT_CA_PEM_FILE', 'STOREFRONT_SHARED_STATE',
    ];

    protected function setUp(): void
    {
        $this->clearEnv();
        foreach (S::get()->info['env'] as $name => $value) {
            putenv("$name=$value");
        }
    }

    protected function tearDown(): void
    {
        $this->clearEnv();
    }

    private function clearEnv(): void
    {
        foreach (self::NAMES as $name) {
            putenv($name);
        }
    }

    public function testTheSandboxVariablesConfigureAWorkingClient(): void
    {
        $config = Client::configFromEnv();
        $this->assertSame(S::MERCHANT_CLIENT_ID, $config['client_id']);
        $this->assertTrue($config['allow_insecure_loopback']);
        $this->assertSame(S::get()->info['base_url'], $config['base_url']);

        $client = Client::fromEnv();
        $reference = 'php-from-env-' . bin2hex(random_bytes(8));
        $created = $client->createMerchantPayment([
            'external_reference' => $reference,
            'amount_minor' => 1250,
            'currency' => 'USD',
        ]);
        $read = $client->merchantPayment($created['order_no']);
        $this->assertSame($reference, $read['external_reference']);
        $this->assertSame(1250, $read['amount_minor']);
        $client->close();

        $persistent = Client::fromEnv(['persistent' => true]);
        $this->assertTrue($persistent->isPersistent());
        $persistent->close();
    }

    public function testAMissingOrBadVariableIsAConfigExceptionNamingIt(): void
    {
        putenv('STOREFRONT_ALLOW_INSECURE_LOOPBACK');
        try {
            Client::fromEnv();
            $this->fail('plain http without the flag must be refused');
        } catch (ConfigException $e) {
            $this->assertStringContainsString('STOREFRONT_ALLOW_INSECURE_LOOPBACK=1', $e->getMessage());
            $this->assertStringNotContainsString(S::MERCHANT_CLIENT_SECRET, $e->getMessage());
        }
        putenv('STOREFRONT_CLIENT_ID');
        $this->expectException(ConfigException::class);
        $this->expectExceptionMessage('STOREFRONT_CLIENT_ID');
        Client::configFromEnv();
    }
}
