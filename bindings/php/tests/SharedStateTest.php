<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Tests\SandboxHarness as S;

/**
 * Shared client state (issue 15): two Client objects with one `shared_state` SQLite file, as
 * two php-fpm workers would have, share the create budget and one client-credentials token;
 * sharedState() reports what the store holds. The same under real php-fpm with 4 workers and
 * 120 concurrent creates is .ci/suites/34-php-fpm.sh.
 */
final class SharedStateTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/sf-php-shared-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        foreach (glob("$this->dir/*") ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->dir);
    }

    private function tokenRequests(): int
    {
        $tokenPath = (string) parse_url(S::get()->info['token_endpoint'], PHP_URL_PATH);
        return count(S::get()->control('GET', '/requests?method=POST&path=' . rawurlencode($tokenPath)));
    }

    /** @param array<string, mixed> $state */
    private static function window(array $state, string $class): array
    {
        foreach ($state['stored']['windows'] as $window) {
            if ($window['class'] === $class) {
                return $window;
            }
        }
        throw new \RuntimeException("no `$class` window in " . json_encode($state));
    }

    private static function create(Client $client): \Storefront\CreatedMerchantPayment
    {
        return $client->createMerchantPayment([
            'external_reference' => 'php-shared-' . bin2hex(random_bytes(8)),
            'amount_minor' => 700,
            'currency' => 'USD',
        ]);
    }

    public function testTwoClientsShareTheBudgetAndOneToken(): void
    {
        $db = "$this->dir/storefront.db";
        $config = S::get()->config(['shared_state' => "sqlite://$db"]);
        $first = new Client($config);
        $second = new Client($config);

        $before = $first->sharedState();
        $this->assertSame('sqlite', $before['backend']);
        $this->assertTrue($before['available']);
        $this->assertFalse($before['stored']['token_shared']);

        $tokensBefore = $this->tokenRequests();
        self::create($first);
        self::create($second);
        self::create($first);
        self::create($second);
        self::create($second);
        $this->assertSame(1, $this->tokenRequests() - $tokensBefore, 'one token request for both clients');

        foreach ([$first, $second] as $client) {
            $state = $client->sharedState();
            $this->assertSame('sqlite', $state['backend']);
            $this->assertTrue($state['available']);
            $this->assertTrue($state['stored']['token_shared']);
            $this->assertGreaterThan(0, $state['stored']['token_expires_in_ms']);
            $this->assertFalse($state['stored']['token_lease_held']);
            $this->assertSame(0, $state['stored']['token_failures_in_a_row']);
            $create = self::window($state, 'create');
            $this->assertSame(5, $create['in_window'], 'the create window counts both clients\' creates');
            $this->assertNull($create['paused_for_ms']);
        }
        $this->assertStringNotContainsString('access_token', json_encode($first->sharedState()));

        clearstatcache();
        $this->assertFileExists($db);
        $this->assertSame(0600, fileperms($db) & 0777, 'the store holds the token: owner only');
        $first->close();
        $second->close();
    }

    public function testPersistentClientReportsItsStore(): void
    {
        $config = S::get()->config(['shared_state' => "sqlite://$this->dir/persistent.db"]);
        $client = Client::persistent($config);
        self::create($client);
        $client->close();
        // A later request of the same worker: a new handle on the same shared client.
        $again = Client::persistent($config);
        $state = $again->sharedState();
        $this->assertSame('sqlite', $state['backend']);
        $this->assertTrue($state['available']);
        $this->assertTrue($state['stored']['token_shared']);
        $this->assertSame(1, self::window($state, 'create')['in_window']);
        $again->close();
    }

    public function testWithoutSharedStateTheStateIsTheProcesses(): void
    {
        $client = new Client(S::get()->config());
        $state = $client->sharedState();
        $this->assertSame('memory', $state['backend']);
        $this->assertTrue($state['available']);
        $this->assertNull($state['stored']);
    }

    public function testSharedStateMustBeAString(): void
    {
        try {
            new Client(S::get()->config(['shared_state' => 42]));
            $this->fail('a non-string shared_state must be refused');
        } catch (Storefront\ValidationException $e) {
            $this->assertSame('shared_state', $e->field());
        }
    }
}
