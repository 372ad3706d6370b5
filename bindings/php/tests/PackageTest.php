<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Library;

/**
 * The release package's layout (see .ci/release.d/php.sh): the wrapper finds include/ and
 * lib/<platform>/ inside its own folder with no environment variable, STOREFRONT_LIB and
 * STOREFRONT_HEADER override, VERSION is checked against sf_version(), and after preload.php
 * the library is taken from the FFI scope. Each case runs a fresh `php` without STOREFRONT_*
 * (the CLI allows FFI::cdef under ffi.enable=preload, so loadMode() tells the paths apart).
 */
final class PackageTest extends TestCase
{
    private static string $dir = '';

    public static function setUpBeforeClass(): void
    {
        $source = dirname(__DIR__);
        $dir = sys_get_temp_dir() . '/sf-php-package-' . bin2hex(random_bytes(6));
        $lib = "$dir/lib/" . Library::platform();
        foreach (["$dir/src", "$dir/include", $lib] as $folder) {
            mkdir($folder, 0777, true);
        }
        foreach (['composer.json', 'storefront.php', 'preload.php'] as $file) {
            copy("$source/$file", "$dir/$file");
        }
        foreach (glob("$source/src/*.php") ?: [] as $file) {
            copy($file, "$dir/src/" . basename($file));
        }
        copy(Library::headerPath(), "$dir/include/storefront.h");
        // A copy, not a link: the preloading case may run as nobody, who must read it.
        copy(Library::libraryPath(), "$lib/libstorefront.so");
        self::$dir = $dir;
    }

    public static function tearDownAfterClass(): void
    {
        $files = new RecursiveIteratorIterator(
            new RecursiveDirectoryIterator(self::$dir, FilesystemIterator::SKIP_DOTS),
            RecursiveIteratorIterator::CHILD_FIRST
        );
        foreach ($files as $file) {
            $file->isDir() ? rmdir($file->getPathname()) : unlink($file->getPathname());
        }
        rmdir(self::$dir);
    }

    protected function tearDown(): void
    {
        @unlink(self::$dir . '/VERSION');
    }

    public function testThePackageFindsItsOwnHeaderAndLibrary(): void
    {
        [$status, $output] = $this->php([], 'echo implode("\n", [Storefront\Library::version(), Storefront\Library::loadMode(), Storefront\Library::headerPath(), Storefront\Library::libraryPath()]);');
        $this->assertSame(0, $status, $output);
        $this->assertSame([
            Library::version(),
            'cdef',
            self::$dir . '/include/storefront.h',
            self::$dir . '/lib/' . Library::platform() . '/libstorefront.so',
        ], explode("\n", $output));
    }

    public function testEnvironmentVariablesOverride(): void
    {
        $header = realpath(Library::headerPath());
        [$status, $output] = $this->php([], 'echo Storefront\Library::headerPath();', ['STOREFRONT_HEADER' => $header]);
        $this->assertSame([0, $header], [$status, $output]);

        [$status, $output] = $this->php([], 'Storefront\Library::version();', ['STOREFRONT_LIB' => self::$dir . '/nowhere.so']);
        $this->assertNotSame(0, $status);
        $this->assertStringContainsString('STOREFRONT_LIB names no file: ' . self::$dir . '/nowhere.so', $output);
    }

    public function testALibraryOfAnotherVersionIsRefused(): void
    {
        file_put_contents(self::$dir . '/VERSION', Library::version() . "\n");
        [$status, $output] = $this->php([], 'echo Storefront\Library::version();');
        $this->assertSame([0, Library::version()], [$status, $output]);

        file_put_contents(self::$dir . '/VERSION', "0.0.0-other\n");
        [$status, $output] = $this->php([], 'echo Storefront\Library::version();');
        $this->assertNotSame(0, $status);
        $this->assertStringContainsString('is storefront ' . Library::version() . ' but this package is storefront 0.0.0-other', $output);
    }

    /**
     * opcache.preload=preload.php alone (FFI::load under the scope). Preloading as root needs
     * opcache.preload_user, where PHP refuses FFI::load: as root this runs as nobody.
     */
    public function testPreloadedTheLibraryIsTakenFromTheFfiScope(): void
    {
        $runner = [];
        if (self::isRoot()) {
            $setpriv = trim((string) shell_exec('command -v setpriv'));
            $runuser = trim((string) shell_exec('command -v runuser'));
            if ($setpriv !== '') {
                $runner = [$setpriv, '--reuid=nobody', '--regid=' . trim((string) shell_exec('id -g nobody')), '--clear-groups'];
            } elseif ($runuser !== '') {
                $runner = [$runuser, '-u', 'nobody', '--'];
            } else {
                $this->markTestSkipped('running as root without setpriv or runuser to preload as another user');
            }
        }
        [$status, $output] = $this->php(self::preloadOptions(), 'echo Storefront\Library::version(), " ", Storefront\Library::loadMode();', [], $runner);
        $this->assertSame([0, Library::version() . ' scope'], [$status, $output]);
    }

    /**
     * The PHP-FPM-as-root setup: ffi.preload binds the scope at startup (header written by
     * `php preload.php --ffi-header FILE`), preload.php under opcache.preload_user only
     * preloads the classes.
     */
    public function testTheFfiPreloadHeaderBindsTheScope(): void
    {
        $header = self::$dir . '/storefront-ffi.h';
        $process = proc_open(
            [PHP_BINARY, self::$dir . '/preload.php', '--ffi-header', $header],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            sys_get_temp_dir(),
            self::environment([])
        );
        $output = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($process), $output);
        $lines = explode("\n", (string) file_get_contents($header));
        $this->assertSame('#define FFI_SCOPE "storefront"', $lines[0]);
        $this->assertSame('#define FFI_LIB "' . realpath(self::$dir . '/lib/' . Library::platform() . '/libstorefront.so') . '"', $lines[1]);
        $this->assertStringEndsWith((string) file_get_contents(Library::headerPath()), (string) file_get_contents($header));

        $options = [...self::preloadOptions(), '-d', "ffi.preload=$header"];
        if (self::isRoot()) {
            $options = [...$options, '-d', 'opcache.preload_user=root'];
        }
        [$status, $output] = $this->php($options, 'echo Storefront\Library::version(), " ", Storefront\Library::loadMode();');
        unlink($header);
        $this->assertSame([0, Library::version() . ' scope'], [$status, $output]);
    }

    private static function isRoot(): bool
    {
        return function_exists('posix_geteuid') ? posix_geteuid() === 0 : trim((string) shell_exec('id -u')) === '0';
    }

    /** @return list<string> */
    private static function preloadOptions(): array
    {
        if (!extension_loaded('Zend OPcache')) {
            self::markTestSkipped('opcache is not loaded');
        }
        return ['-d', 'ffi.enable=preload', '-d', 'opcache.enable=1', '-d', 'opcache.enable_cli=1', '-d', 'opcache.preload=' . self::$dir . '/preload.php'];
    }

    /**
     * Runs `php OPTIONS -r CODE` (after requiring the package's storefront.php) from the temp
     * folder, with no STOREFRONT_* variable but $env.
     *
     * @param list<string> $options
     * @param array<string, string> $env
     * @param list<string> $runner command prefix (another user)
     * @return array{0: int, 1: string}
     */
    private function php(array $options, string $code, array $env = [], array $runner = []): array
    {
        $code = 'require ' . var_export(self::$dir . '/storefront.php', true) . '; ' . $code;
        $process = proc_open(
            [...$runner, PHP_BINARY, '-d', 'display_errors=stderr', ...$options, '-r', $code],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            sys_get_temp_dir(),
            self::environment($env)
        );
        $stdout = (string) stream_get_contents($pipes[1]);
        $stderr = (string) stream_get_contents($pipes[2]);
        $status = proc_close($process);
        return [$status, $status === 0 ? $stdout : $stdout . $stderr];
    }

    /**
     * @param array<string, string> $extra
     * @return array<string, string>
     */
    private static function environment(array $extra): array
    {
        $env = array_filter(getenv(), fn ($name) => strncmp((string) $name, 'STOREFRONT_', 11) !== 0, ARRAY_FILTER_USE_KEY);
        return $extra + $env;
    }
}
