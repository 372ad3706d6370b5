<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Library;

/**
 * Issue 18 item 6: every failure the wrapper can meet before its first call is a
 * Storefront\LibraryException (a StorefrontException) whose message says what to change. Each
 * case runs a fresh `php` (no STOREFRONT_* but the case's) over a copy of the package in a
 * temporary folder: the FFI extension not loaded (`php -n`), `ffi.enable=0`, `ffi.enable=preload`
 * under `php -S` with nothing preloaded, a wrong STOREFRONT_LIB, no library in the package, a
 * file that is not a library, a header that is not C or declares a function the library lacks,
 * and a library of another version.
 */
final class LibraryExceptionTest extends TestCase
{
    private static string $dir = '';

    /** @var resource|null */
    private $server = null;

    public static function setUpBeforeClass(): void
    {
        $source = dirname(__DIR__);
        $dir = sys_get_temp_dir() . '/sf-php-library-' . bin2hex(random_bytes(6));
        foreach (["$dir/src", "$dir/include"] as $folder) {
            mkdir($folder, 0777, true);
        }
        foreach (['composer.json', 'storefront.php', 'preload.php'] as $file) {
            copy("$source/$file", "$dir/$file");
        }
        foreach (glob("$source/src/*.php") ?: [] as $file) {
            copy($file, "$dir/src/" . basename($file));
        }
        copy(Library::headerPath(), "$dir/include/storefront.h");
        file_put_contents("$dir/not-a-library.so", "this is not a shared library\n");
        file_put_contents("$dir/garbage.h", "int sf_version(void) this is not C;\n");
        file_put_contents("$dir/newer.h", file_get_contents(Library::headerPath()) . "\nint sf_function_of_a_newer_version(void);\n");
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
        if ($this->server !== null) {
            proc_terminate($this->server);
            proc_close($this->server);
            $this->server = null;
        }
        @unlink(self::$dir . '/VERSION');
        @unlink(self::$dir . '/lib/' . Library::platform() . '/libstorefront.so');
        @rmdir(self::$dir . '/lib/' . Library::platform());
        @rmdir(self::$dir . '/lib');
    }

    public function testTheFfiExtensionMissing(): void
    {
        exec(escapeshellarg(PHP_BINARY) . ' -n -r ' . escapeshellarg('echo extension_loaded("ffi") ? "yes" : "no";'), $out);
        if (($out[0] ?? '') !== 'no') {
            $this->markTestSkipped('FFI is built into this PHP: `php -n` still has it');
        }
        $failure = $this->failure(['-n'], 'Storefront\Library::version();', ['STOREFRONT_LIB' => Library::libraryPath()]);
        $this->assertSame('ffi_missing', $failure['reason']);
        $this->assertStringContainsString('FFI extension is not loaded', $failure['message']);
        $this->assertStringContainsString('extension=ffi', $failure['message']);
    }

    public function testFfiDisabled(): void
    {
        $failure = $this->failure(['-d', 'ffi.enable=0'], 'Storefront\Library::version();', ['STOREFRONT_LIB' => Library::libraryPath()]);
        $this->assertSame('ffi_disabled', $failure['reason']);
        $this->assertStringContainsString('ffi.enable=true', $failure['message']);
        $this->assertSame('FFI\Exception', $failure['previous']);

        // The webhook verifier's own binding says the same, and it is not a WebhookException
        // (a receiver must answer 500 for its own setup, never 400 as for a forged request).
        $failure = $this->failure(['-d', 'ffi.enable=0'], '(new Storefront\WebhookVerifier(["whsec_0123456789abcdef0123456789abcdef"]))->verify([], "{}");', ['STOREFRONT_LIB' => Library::libraryPath()]);
        $this->assertSame('ffi_disabled', $failure['reason']);
    }

    /** ffi.enable=preload allows FFI in the CLI: the restriction shows under `php -S` (like php-fpm). */
    public function testFfiRestrictedToPreloadingUnderAWebSapi(): void
    {
        $router = self::$dir . '/router.php';
        file_put_contents($router, '<?php require ' . var_export(self::$dir . '/storefront.php', true) . '; ' . self::catcher(
            'Storefront\Library::version();',
        ));
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($socket, false), ':'), 1);
        fclose($socket);
        $this->server = proc_open(
            [PHP_BINARY, '-d', 'ffi.enable=preload', '-S', "127.0.0.1:$port", $router],
            [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            self::$dir,
            self::environment(['STOREFRONT_LIB' => Library::libraryPath()])
        );
        $answer = false;
        for ($i = 0; $i < 100 && $answer === false; $i++) {
            usleep(100_000);
            $answer = @file_get_contents("http://127.0.0.1:$port/");
        }
        $this->assertIsString($answer, 'php -S did not answer');
        $failure = json_decode($answer, true);
        $this->assertIsArray($failure, $answer);
        $this->assertSame(['Storefront\LibraryException', true, 'ffi_restricted'], [$failure['class'], $failure['storefront'], $failure['reason']]);
        $this->assertStringContainsString(self::$dir . '/preload.php with opcache.preload', $failure['message']);
        $this->assertStringContainsString('ffi.enable=true', $failure['message']);
    }

    public function testAWrongStorefrontLib(): void
    {
        $failure = $this->failure([], 'Storefront\Library::version();', ['STOREFRONT_LIB' => self::$dir . '/nowhere.so']);
        $this->assertSame('library_not_found', $failure['reason']);
        $this->assertStringContainsString('STOREFRONT_LIB names no file: ' . self::$dir . '/nowhere.so', $failure['message']);
        $this->assertStringContainsString(self::$dir . '/lib/' . Library::platform() . '/libstorefront.so', $failure['message']);
    }

    public function testNoLibraryInThePackageNamesThePathsTriedAndTheVariable(): void
    {
        $failure = $this->failure([], 'Storefront\Library::version();');
        $this->assertSame('library_not_found', $failure['reason']);
        $this->assertStringContainsString('tried ' . self::$dir . '/lib/' . Library::platform() . '/libstorefront.so, ' . self::$dir . '/libstorefront.so', $failure['message']);
        $this->assertStringContainsString('set STOREFRONT_LIB', $failure['message']);
    }

    public function testAFileThatIsNotALibrary(): void
    {
        $failure = $this->failure([], 'Storefront\Library::version();', ['STOREFRONT_LIB' => self::$dir . '/not-a-library.so']);
        $this->assertSame('library_unloadable', $failure['reason']);
        $this->assertStringContainsString(self::$dir . '/not-a-library.so could not be loaded', $failure['message']);
    }

    public function testAHeaderThatIsNotCOrOfAnotherVersion(): void
    {
        $failure = $this->failure([], 'Storefront\Library::version();', ['STOREFRONT_LIB' => Library::libraryPath(), 'STOREFRONT_HEADER' => self::$dir . '/garbage.h']);
        $this->assertSame('header_invalid', $failure['reason']);
        $this->assertStringContainsString('unset STOREFRONT_HEADER', $failure['message']);

        $failure = $this->failure([], 'Storefront\Library::version();', ['STOREFRONT_LIB' => Library::libraryPath(), 'STOREFRONT_HEADER' => self::$dir . '/newer.h']);
        $this->assertSame('header_mismatch', $failure['reason']);
        $this->assertStringContainsString('sf_function_of_a_newer_version', $failure['message']);
        $this->assertStringContainsString('different versions', $failure['message']);

        $failure = $this->failure([], 'Storefront\Library::version();', ['STOREFRONT_LIB' => Library::libraryPath(), 'STOREFRONT_HEADER' => self::$dir . '/none.h']);
        $this->assertSame('header_not_found', $failure['reason']);
    }

    public function testALibraryOfAnotherVersion(): void
    {
        mkdir(self::$dir . '/lib/' . Library::platform(), 0777, true);
        copy(Library::libraryPath(), self::$dir . '/lib/' . Library::platform() . '/libstorefront.so');
        file_put_contents(self::$dir . '/VERSION', "0.0.0-other\n");
        $failure = $this->failure([], 'Storefront\Library::version();');
        $this->assertSame('version_mismatch', $failure['reason']);
        $this->assertStringContainsString('but this package is storefront 0.0.0-other', $failure['message']);
        $this->assertStringContainsString('composer reinstall storefront/storefront', $failure['message']);
    }

    /** PHP code that runs $code and prints the LibraryException it throws as JSON. */
    private static function catcher(string $code): string
    {
        return 'try { ' . $code . ' echo json_encode(["class" => "none"]); } catch (Throwable $e) { echo json_encode(['
            . '"class" => get_class($e), "storefront" => $e instanceof Storefront\StorefrontException, '
            . '"reason" => $e instanceof Storefront\StorefrontException ? $e->resultName() : null, '
            . '"message" => $e->getMessage(), "previous" => $e->getPrevious() ? get_class($e->getPrevious()) : null]); }';
    }

    /**
     * Runs `php OPTIONS -r CODE` over the package copy and returns the LibraryException it threw.
     *
     * @param list<string> $options
     * @param array<string, string> $env
     * @return array{class: string, storefront: bool, reason: ?string, message: string, previous: ?string}
     */
    private function failure(array $options, string $code, array $env = []): array
    {
        $code = 'require ' . var_export(self::$dir . '/storefront.php', true) . '; ' . self::catcher($code);
        $process = proc_open(
            [PHP_BINARY, ...$options, '-r', $code],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            sys_get_temp_dir(),
            self::environment($env)
        );
        $stdout = (string) stream_get_contents($pipes[1]);
        $stderr = (string) stream_get_contents($pipes[2]);
        proc_close($process);
        $failure = json_decode($stdout, true);
        $this->assertIsArray($failure, $stdout . $stderr);
        $this->assertSame('Storefront\LibraryException', $failure['class'], $stdout . $stderr);
        $this->assertTrue($failure['storefront']);
        return $failure;
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
