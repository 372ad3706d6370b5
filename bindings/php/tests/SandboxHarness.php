<?php

declare(strict_types=1);

namespace Storefront\Tests;

/** Starts the standalone sandbox binary once per test run and drives its control endpoints. */
final class SandboxHarness
{
    public const MERCHANT_NO = 'M10001';
    public const MERCHANT_CLIENT_ID = 'sbx_merchant_client';
    public const MERCHANT_CLIENT_SECRET = 'sbx_merchant_secret_9f2c41d7a8e64b0c';
    public const ALL_SCOPES = [
        'openid', 'merchant.profile.read', 'products.read', 'orders.create', 'orders.read',
        'payments.create', 'payments.read', 'merchant_payments.read', 'merchant_payments.create',
    ];
    public const CHANNEL_PLATFORM_COIN = 'ch_platform_coin';
    public const CHANNEL_CARD_USD = 'ch_card_usd';
    public const PRODUCT_BEANS = 'G1001';
    public const PRODUCT_GIFT_CARD = 'G1002';
    public const ENABLED_PRODUCT_COUNT = 25;

    private static ?self $instance = null;

    /** @var resource */
    private $process;
    private string $dir;
    /** @var array<string, mixed> */
    public array $info;

    public static function get(): self
    {
        if (self::$instance === null) {
            self::$instance = new self();
            register_shutdown_function([self::$instance, 'stop']);
        }
        return self::$instance;
    }

    /** A sandbox of the caller alone (a test that moves the clock by hours), stopped at exit. */
    public static function own(): self
    {
        $own = new self();
        register_shutdown_function([$own, 'stop']);
        return $own;
    }

    private function __construct()
    {
        $repo = dirname(__DIR__, 3);
        $binary = getenv('STOREFRONT_SANDBOX_BIN') ?: "$repo/target/debug/storefront-sandbox";
        $this->dir = sys_get_temp_dir() . '/sf-php-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $ready = "$this->dir/ready.json";
        $this->process = proc_open(
            [$binary, '--port', '0', '--ready-file', $ready],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$this->dir/sandbox.log", 'w'], 2 => ['file', "$this->dir/sandbox.log", 'a']],
            $pipes
        );
        // Startup wait, bounded; not a timing assertion.
        for ($i = 0; $i < 600; $i++) {
            clearstatcache();
            if (is_file($ready) && filesize($ready) > 0) {
                $info = json_decode((string) file_get_contents($ready), true);
                if (is_array($info)) {
                    $this->info = $info;
                    return;
                }
            }
            if (!proc_get_status($this->process)['running']) {
                throw new \RuntimeException('sandbox exited: ' . file_get_contents("$this->dir/sandbox.log"));
            }
            usleep(100_000);
        }
        throw new \RuntimeException('sandbox did not become ready');
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
        foreach (glob("$this->dir/*") ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->dir);
    }

    public function origin(): string
    {
        return $this->info['origin'];
    }

    /**
     * The merchant client's configuration for this sandbox.
     *
     * @param array<string, mixed> $overrides
     * @return array<string, mixed>
     */
    public function config(array $overrides = []): array
    {
        return $overrides + [
            'base_url' => $this->info['base_url'],
            'token_endpoint' => $this->info['token_endpoint'],
            'userinfo_endpoint' => $this->info['userinfo_endpoint'],
            'client_id' => self::MERCHANT_CLIENT_ID,
            'client_secret' => self::MERCHANT_CLIENT_SECRET,
            'scopes' => self::ALL_SCOPES,
            'allow_insecure_loopback' => true,
        ];
    }

    /**
     * Calls a control endpoint under /_sandbox and returns its JSON answer.
     *
     * @param mixed $body
     * @return mixed
     */
    public function control(string $method, string $path, $body = null)
    {
        $options = ['http' => ['method' => $method, 'ignore_errors' => true, 'timeout' => 30]];
        if ($body !== null) {
            $options['http']['header'] = "Content-Type: application/json\r\n";
            $options['http']['content'] = json_encode($body);
        }
        $text = file_get_contents($this->info['control_url'] . $path, false, stream_context_create($options));
        $status = (int) explode(' ', $http_response_header[0])[1];
        if ($status >= 300) {
            throw new \RuntimeException("control $method $path: $status $text");
        }
        return $text === '' ? null : json_decode((string) $text, true);
    }

    public function userToken(string $user = 'alice'): string
    {
        return $this->control('POST', "/users/$user/tokens", ['client_id' => self::MERCHANT_CLIENT_ID])['access_token'];
    }

    /** @param array<string, mixed> $spec */
    public function fault(string $method, string $path, array $spec): void
    {
        $prefix = substr($this->info['base_url'], strlen($this->origin()));
        $this->control('POST', '/faults', ['method' => $method, 'path' => $prefix . $path] + $spec);
    }

    public function clearFaults(): void
    {
        $this->control('DELETE', '/faults');
    }
}
