<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Tests\SandboxHarness as S;

/**
 * fork() (issue 9): a client created and used before pcntl_fork() works in the child (the
 * library rebuilds its runtime there) or fails at once, never hangs, and keeps working in the
 * parent. The parent waits for the child with a timeout and kills a hung child.
 */
final class ForkTest extends TestCase
{
    private const CHILD_TIMEOUT_S = 30;

    protected function setUp(): void
    {
        if (!function_exists('pcntl_fork') || !function_exists('posix_kill')) {
            $this->markTestSkipped('the pcntl and posix extensions are needed to fork (Debian\'s php-cli has them for the CLI; `php -m | grep pcntl`)');
        }
    }

    /**
     * Forks; the child runs $child with the client, writes its outcome and leaves with _exit
     * (no PHP shutdown: PHPUnit's and the sandbox harness's shutdown functions stay the
     * parent's). Returns the child's outcome: "ok <value>", "error <class> <message>" or
     * "hung" (killed after CHILD_TIMEOUT_S).
     */
    private function inChild(callable $child): string
    {
        $file = tempnam(sys_get_temp_dir(), 'sf-fork-');
        $pid = pcntl_fork();
        $this->assertNotSame(-1, $pid, 'fork failed');
        if ($pid === 0) {
            try {
                $outcome = 'ok ' . $child();
            } catch (\Throwable $e) {
                $outcome = 'error ' . get_class($e) . ' ' . $e->getMessage();
            }
            file_put_contents($file, $outcome);
            FFI::cdef('void _exit(int status);')->_exit(0);
        }
        $deadline = microtime(true) + self::CHILD_TIMEOUT_S;
        $status = 0;
        while (pcntl_waitpid($pid, $status, WNOHANG) === 0) {
            if (microtime(true) > $deadline) {
                posix_kill($pid, SIGKILL);
                pcntl_waitpid($pid, $status);
                unlink($file);
                return 'hung';
            }
            usleep(20_000);
        }
        $outcome = (string) file_get_contents($file);
        unlink($file);
        return $outcome === '' ? 'died with status ' . $status : $outcome;
    }

    public function testClientUsedBeforeForkWorksInChildAndParent(): void
    {
        $client = new Client(S::get()->config());
        $this->assertSame(S::MERCHANT_NO, $client->merchantProfile()['merchant_no']);
        $started = microtime(true);
        $outcome = $this->inChild(fn () => $client->merchantProfile()['merchant_no'] . ' ' . count($client->products(['limit' => 2])['list']));
        $this->assertNotSame('hung', $outcome, 'the child must not hang');
        $this->assertSame('ok ' . S::MERCHANT_NO . ' 2', $outcome, 'the child rebuilt the runtime and called');
        $this->assertLessThan(self::CHILD_TIMEOUT_S, microtime(true) - $started);
        // The parent's client is untouched by the child.
        $this->assertSame(S::MERCHANT_NO, $client->merchantProfile()['merchant_no']);
        $this->assertCount(3, $client->products(['limit' => 3])['list']);
    }

    /** A persistent client (PHP-FPM forks its workers from a master) survives a fork too. */
    public function testPersistentClientUsedBeforeForkWorksInChildAndParent(): void
    {
        $client = Client::persistent(S::get()->config(['user_agent' => 'php-fork-' . bin2hex(random_bytes(4))]));
        $client->merchantProfile();
        $outcome = $this->inChild(fn () => Client::persistent(S::get()->config(['user_agent' => 'php-fork-child']))->merchantProfile()['merchant_no'] . ' ' . $client->merchantProfile()['merchant_no']);
        $this->assertSame('ok ' . S::MERCHANT_NO . ' ' . S::MERCHANT_NO, $outcome);
        $this->assertSame(S::MERCHANT_NO, $client->merchantProfile()['merchant_no']);
    }
}
