<?php

declare(strict_types=1);

namespace Storefront\Testing;

/**
 * A running `storefront-sandbox` (the shipped simulator of the payment and catalog service),
 * started on a free loopback port for a shop's own tests and stopped by stop() or when the
 * object goes away:
 *
 *     $sandbox = Storefront\Testing\Sandbox::start();
 *     $client = new Storefront\Client($sandbox->config());
 *     $sandbox->trigger('pay', $orderNo, '--channel', 'ch_card_usd');
 *
 * The binary is not part of the SDK's Composer package (it is a separate 4 MB program): it is
 * $options['binary'], else $STOREFRONT_SANDBOX_BIN, else the one the Composer package
 * storefront/sandbox installed (`composer require --dev storefront/sandbox`), else
 * `storefront-sandbox` on PATH (`pip install storefront-sandbox`, or the release tarball
 * storefront-sandbox-VERSION-...tar.gz).
 * PHPUnit tests use SandboxTrait, which starts one per test class.
 */
final class Sandbox
{
    private const PROGRAM = 'storefront-sandbox';
    /** The Composer package carrying the program as bin/storefront-sandbox. */
    private const COMPOSER_PACKAGE = 'storefront/sandbox';

    /** @var resource|null */
    private $process;
    private string $binary;
    private string $dir;
    /**
     * The ready file's content: origin, base_url, token_endpoint, userinfo_endpoint,
     * control_url, ca_pem_path, clients, users, merchant_no, other_merchant_no.
     *
     * @var array<string, mixed>
     */
    private array $ready;

    /**
     * Path of the sandbox program: $STOREFRONT_SANDBOX_BIN when set, else bin/storefront-sandbox
     * of the Composer package storefront/sandbox when the project installed it (found through
     * Composer's runtime API, Composer\InstalledVersions), else the first `storefront-sandbox` on
     * PATH; a SandboxException saying how to install it otherwise.
     */
    public static function binaryPath(): string
    {
        $chosen = getenv('STOREFRONT_SANDBOX_BIN');
        if (is_string($chosen) && $chosen !== '') {
            if (!is_file($chosen) || !is_executable($chosen)) {
                throw SandboxException::because('sandbox_not_installed', "STOREFRONT_SANDBOX_BIN is $chosen, which is not an executable file");
            }
            return $chosen;
        }
        $composer = self::composerBinary();
        if ($composer !== null) {
            return $composer;
        }
        foreach (explode(PATH_SEPARATOR, (string) getenv('PATH')) as $folder) {
            $candidate = ($folder === '' ? '.' : $folder) . '/' . self::PROGRAM;
            if (is_file($candidate) && is_executable($candidate)) {
                return $candidate;
            }
        }
        throw SandboxException::because(
            'sandbox_not_installed',
            'storefront-sandbox is not installed: `pip install storefront-sandbox` puts it on PATH, '
            . '`composer require --dev storefront/sandbox` installs it into the project, or unpack the release tarball storefront-sandbox-VERSION-x86_64-linux.tar.gz and set '
            . 'STOREFRONT_SANDBOX_BIN to the binary'
        );
    }

    /**
     * bin/storefront-sandbox of the Composer package storefront/sandbox, when the running
     * project installed it (Composer 2's runtime API; null without Composer's autoloader, when the
     * package is not installed, or when its binary is not an executable file).
     */
    private static function composerBinary(): ?string
    {
        if (!class_exists(\Composer\InstalledVersions::class)
            || !\Composer\InstalledVersions::isInstalled(self::COMPOSER_PACKAGE)) {
            return null;
        }
        $folder = \Composer\InstalledVersions::getInstallPath(self::COMPOSER_PACKAGE);
        if ($folder === null) {
            return null;
        }
        $candidate = (realpath($folder) ?: $folder) . '/bin/' . self::PROGRAM;
        return is_file($candidate) && is_executable($candidate) ? $candidate : null;
    }

    /**
     * Starts the sandbox (`--port 0 --ready-file FILE`) and returns once it listens.
     *
     * @param array{binary?: string, tls?: bool, args?: list<string>, timeout?: float} $options
     *   binary: the program (default binaryPath()); tls: HTTPS with a generated CA (config()
     *   then carries root_ca_pem); args: more command-line options (`--token-lifetime`, `2`...);
     *   timeout: seconds to wait for the ready file (default 60)
     */
    public static function start(array $options = []): self
    {
        foreach (array_keys($options) as $key) {
            if (!in_array($key, ['binary', 'tls', 'args', 'timeout'], true)) {
                throw new \InvalidArgumentException("unknown sandbox option `$key` (expected: binary, tls, args, timeout)");
            }
        }
        return new self(
            $options['binary'] ?? self::binaryPath(),
            (bool) ($options['tls'] ?? false),
            array_values($options['args'] ?? []),
            (float) ($options['timeout'] ?? 60.0)
        );
    }

    /** @param list<string> $args */
    private function __construct(string $binary, bool $tls, array $args, float $timeout)
    {
        $this->binary = $binary;
        $this->dir = sys_get_temp_dir() . '/storefront-sandbox-' . bin2hex(random_bytes(6));
        mkdir($this->dir, 0700);
        $readyFile = $this->readyFile();
        $log = "$this->dir/sandbox.log";
        $command = [$binary, '--port', '0', '--ready-file', $readyFile];
        if ($tls) {
            $command[] = '--tls';
        }
        $process = @proc_open(
            array_merge($command, $args),
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'w'], 2 => ['file', $log, 'a']],
            $pipes
        );
        if (!is_resource($process)) {
            $this->removeFolder();
            throw SandboxException::because('sandbox_not_started', "could not run $binary");
        }
        $this->process = $process;
        // Bounded wait for the ready file (written atomically once the sandbox listens).
        $deadline = microtime(true) + $timeout;
        while (microtime(true) < $deadline) {
            clearstatcache(true, $readyFile);
            if (is_file($readyFile)) {
                $ready = json_decode((string) file_get_contents($readyFile), true);
                if (is_array($ready)) {
                    $this->ready = $ready;
                    return;
                }
            }
            if (!proc_get_status($process)['running']) {
                break;
            }
            usleep(20_000);
        }
        $output = (string) @file_get_contents($log);
        $this->stop();
        throw SandboxException::because('sandbox_not_started', "storefront-sandbox ($binary) did not start:\n$output");
    }

    public function __destruct()
    {
        $this->stop();
    }

    /** Stops the process (SIGTERM, by its pid) and removes its folder; idempotent. */
    public function stop(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
        $this->process = null;
        $this->removeFolder();
    }

    public function isRunning(): bool
    {
        return is_resource($this->process) && proc_get_status($this->process)['running'];
    }

    /** Process id of the sandbox, or null once stopped. */
    public function pid(): ?int
    {
        return is_resource($this->process) ? proc_get_status($this->process)['pid'] : null;
    }

    /**
     * The seeded merchant client's configuration for Storefront\Client: the endpoints, the
     * credentials of the ready file's first client (the merchant client with every scope), and
     * allow_insecure_loopback (plain HTTP) or root_ca_pem (the sandbox's CA, with tls).
     *
     * @param array<string, mixed> $overrides keys replaced or added
     * @return array<string, mixed>
     */
    public function config(array $overrides = []): array
    {
        $client = $this->ready['clients'][0];
        $config = [
            'base_url' => $this->ready['base_url'],
            'token_endpoint' => $this->ready['token_endpoint'],
            'userinfo_endpoint' => $this->ready['userinfo_endpoint'],
            'client_id' => $client['client_id'],
            'client_secret' => $client['client_secret'],
        ];
        if (!empty($this->ready['ca_pem_path'])) {
            $config['root_ca_pem'] = (string) file_get_contents($this->ready['ca_pem_path']);
        } else {
            $config['allow_insecure_loopback'] = true;
        }
        return $overrides + $config;
    }

    /**
     * The ready file's content (origin, base_url, token_endpoint, userinfo_endpoint,
     * control_url, ca_pem_path, clients, users, merchant_no, other_merchant_no).
     *
     * @return array<string, mixed>
     */
    public function ready(): array
    {
        return $this->ready;
    }

    /** Path of the ready file (what `storefront-sandbox trigger --ready-file` reads). */
    public function readyFile(): string
    {
        return "$this->dir/ready.json";
    }

    /** `http://127.0.0.1:PORT` (`https://` with tls). */
    public function origin(): string
    {
        return $this->ready['origin'];
    }

    /** The contract's {base_url}. */
    public function baseUrl(): string
    {
        return $this->ready['base_url'];
    }

    /** Base address of the control endpoints (`{origin}/_sandbox`; its dashboard too). */
    public function controlUrl(): string
    {
        return $this->ready['control_url'];
    }

    /** The seeded merchant the merchant client belongs to (`M10001`). */
    public function merchantNo(): string
    {
        return $this->ready['merchant_no'];
    }

    /**
     * One control request (`/_sandbox` + $path, e.g. `POST /users/alice/tokens`); returns the
     * JSON answer (null when empty). A status of 300 or more throws SandboxException.
     *
     * @param mixed $body sent as JSON unless null
     * @return mixed
     */
    public function control(string $method, string $path, $body = null)
    {
        $options = ['http' => ['method' => $method, 'ignore_errors' => true, 'timeout' => 30]];
        if ($body !== null) {
            $options['http']['header'] = "Content-Type: application/json\r\n";
            $options['http']['content'] = json_encode($body, JSON_THROW_ON_ERROR);
        }
        if (!empty($this->ready['ca_pem_path'])) {
            $options['ssl'] = ['cafile' => $this->ready['ca_pem_path'], 'verify_peer' => true];
        }
        $http_response_header = [];
        $text = @file_get_contents($this->controlUrl() . $path, false, stream_context_create($options));
        if ($text === false || $http_response_header === []) {
            throw SandboxException::because('sandbox_refused', "control $method $path: no answer from the sandbox");
        }
        $status = (int) explode(' ', $http_response_header[0])[1];
        if ($status >= 300) {
            throw SandboxException::because('sandbox_refused', "control $method $path: HTTP $status $text");
        }
        return $text === '' ? null : json_decode($text, true);
    }

    /**
     * `storefront-sandbox trigger ACTION ARGS... --ready-file` against this sandbox (pay, session,
     * unclear, review, paid, refund, chargeback, expire, advance, redeliver, delivery); returns
     * its JSON answer. A refused action throws SandboxException with the sandbox's message.
     *
     * @return mixed
     */
    public function trigger(string $action, string ...$args)
    {
        $process = proc_open(
            array_merge([$this->binary, 'trigger', '--ready-file', $this->readyFile(), $action], $args),
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes
        );
        if (!is_resource($process)) {
            throw SandboxException::because('sandbox_refused', "could not run $this->binary trigger");
        }
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $status = proc_close($process);
        if ($status !== 0) {
            throw SandboxException::because('sandbox_refused', "trigger $action: " . trim($err !== '' ? $err : $out));
        }
        return json_decode($out, true);
    }

    /** Moves the sandbox clock forward; due expiries and notification retries run. */
    public function advanceClock(int $seconds): void
    {
        $this->control('POST', '/clock/advance', ['seconds' => $seconds]);
    }

    /**
     * A user-authorized token for a seeded buyer (default: the first, `alice`) through the
     * merchant client, for Client::user() (the authorization-code flow is not in the contract).
     */
    public function userToken(?string $user = null): string
    {
        $user ??= (string) $this->ready['users'][0];
        $answer = $this->control('POST', '/users/' . rawurlencode($user) . '/tokens', ['client_id' => $this->ready['clients'][0]['client_id']]);
        return (string) $answer['access_token'];
    }

    /** Everything stored goes back to the seed (payments, orders, tokens, faults...). */
    public function reset(): void
    {
        $this->control('POST', '/reset');
    }

    private function removeFolder(): void
    {
        if (!is_dir($this->dir)) {
            return;
        }
        foreach (glob("$this->dir/*") ?: [] as $file) {
            @unlink($file);
        }
        @rmdir($this->dir);
    }
}
