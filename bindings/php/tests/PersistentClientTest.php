<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Tests\SandboxHarness as S;

/**
 * Persistent clients (issue 9): consecutive requests served by one PHP process share the
 * runtime, the connection pool and the token, like PHP-FPM's worker reusing
 * PDO::ATTR_PERSISTENT connections. `php -S` serves every request in one process, so five
 * requests to a front script that creates a persistent client per request make one token
 * request; without `persistent` each request makes its own.
 */
final class PersistentClientTest extends TestCase
{
    private const REQUESTS = 5;

    /**
     * Serves tests/front.php-like script $options under `php -S`, sends REQUESTS requests and
     * returns [their answers, the token requests the sandbox received meanwhile].
     *
     * @param array<string, mixed> $options Client options for every request
     * @return array{0: list<string>, 1: int}
     */
    private function serve(array $options, array $iniOptions = ['-d', 'ffi.enable=1']): array
    {
        $dir = sys_get_temp_dir() . '/sf-php-front-' . bin2hex(random_bytes(6));
        mkdir($dir);
        $wrapper = dirname(__DIR__) . '/storefront.php';
        file_put_contents("$dir/front.php", '<?php
declare(strict_types=1);
require ' . var_export($wrapper, true) . ';
$config = json_decode((string) getenv("FRONT_CONFIG"), true);
$options = json_decode((string) getenv("FRONT_OPTIONS"), true);
$client = new Storefront\Client($config, $options);
$profile = $client->merchantProfile();
echo getmypid(), " ", $profile["merchant_no"], " ", $client->isPersistent() ? "persistent" : "own";
');
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $env = getenv() + ['FRONT_CONFIG' => json_encode(S::get()->config()), 'FRONT_OPTIONS' => json_encode((object) $options)];
        unset($env['PHP_CLI_SERVER_WORKERS']);
        $server = proc_open(
            [PHP_BINARY, ...$iniOptions, '-S', "127.0.0.1:$port", "$dir/front.php"],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/server.log", 'w'], 2 => ['file', "$dir/server.log", 'a']],
            $pipes,
            $dir,
            $env
        );
        try {
            for ($i = 0; $i < 100 && @fsockopen('127.0.0.1', $port) === false; $i++) {
                usleep(50_000);
            }
            $tokenPath = (string) parse_url(S::get()->info['token_endpoint'], PHP_URL_PATH);
            $before = count(S::get()->control('GET', '/requests?method=POST&path=' . rawurlencode($tokenPath)));
            $answers = [];
            for ($i = 0; $i < self::REQUESTS; $i++) {
                $answers[] = (string) file_get_contents("http://127.0.0.1:$port/", false, stream_context_create(['http' => ['timeout' => 60, 'ignore_errors' => true]]));
            }
            $after = count(S::get()->control('GET', '/requests?method=POST&path=' . rawurlencode($tokenPath)));
            return [$answers, $after - $before];
        } finally {
            proc_terminate($server);
            proc_close($server);
            $log = (string) @file_get_contents("$dir/server.log");
            array_map('unlink', glob("$dir/*") ?: []);
            rmdir($dir);
            $this->assertStringNotContainsString('Fatal', $log, $log);
        }
    }

    /** @param list<string> $answers */
    private function assertOneProcessServedAll(array $answers, string $mode): void
    {
        $this->assertCount(self::REQUESTS, $answers);
        $pids = [];
        foreach ($answers as $answer) {
            $this->assertMatchesRegularExpression('/^\d+ ' . S::MERCHANT_NO . " $mode\$/", $answer);
            $pids[] = explode(' ', $answer)[0];
        }
        $this->assertCount(1, array_unique($pids), 'php -S served every request in one process');
    }

    public function testPersistentClientSharesOneTokenAcrossRequestsOfOneProcess(): void
    {
        [$answers, $tokenRequests] = $this->serve(['persistent' => true]);
        $this->assertOneProcessServedAll($answers, 'persistent');
        $this->assertSame(1, $tokenRequests, 'one token request for ' . self::REQUESTS . ' requests of one worker');
    }

    /** The documented default: an ordinary client lives for one request, so each request
     * makes its own token request. */
    public function testOrdinaryClientMakesOneTokenRequestPerRequest(): void
    {
        [$answers, $tokenRequests] = $this->serve([]);
        $this->assertOneProcessServedAll($answers, 'own');
        $this->assertSame(self::REQUESTS, $tokenRequests);
    }

    /** In one script: two handles on one configuration share the client; close() releases
     * only the handle; another configuration is another client. */
    public function testHandlesShareTheClientAndCloseReleasesOnlyTheHandle(): void
    {
        $config = S::get()->config(['user_agent' => 'php-persistent-' . bin2hex(random_bytes(4))]);
        $tokenPath = (string) parse_url(S::get()->info['token_endpoint'], PHP_URL_PATH);
        $count = fn () => count(S::get()->control('GET', '/requests?method=POST&path=' . rawurlencode($tokenPath)));
        $before = $count();
        $first = Client::persistent($config);
        $this->assertTrue($first->isPersistent());
        $first->merchantProfile();
        $first->close();
        $second = new Client($config, ['persistent' => true]);
        $this->assertSame(S::MERCHANT_NO, $second->merchantProfile()['merchant_no']);
        $this->assertSame(1, $count() - $before, 'the second handle reused the first one\'s token');
        $other = Client::persistent(['user_agent' => 'php-persistent-other-' . bin2hex(random_bytes(4))] + $config);
        $other->merchantProfile();
        $this->assertSame(2, $count() - $before, 'another configuration is another client');
        $this->assertFalse((new Client($config))->isPersistent());
    }
}
