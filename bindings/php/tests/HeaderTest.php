<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Library;

/** The wrapper loads the shipped header, and uses every function it declares. */
final class HeaderTest extends TestCase
{
    public function testTheShippedHeaderIsLoaded(): void
    {
        $this->assertSame(realpath(dirname(__DIR__, 3) . '/include/storefront.h'), realpath(Library::headerPath()));
        $this->assertSame(0, Library::ffi()->SF_RESULT_OK);
        $this->assertSame(100, Library::ffi()->SF_RESULT_API);
        $this->assertMatchesRegularExpression('/^\d+\.\d+\.\d+/', Library::ffi()->sf_version());
    }

    public function testEveryHeaderFunctionIsWrappedAndNothingElseIsCalled(): void
    {
        preg_match_all('/^[^\/#][^(]*?\b(sf_\w+)\(/m', (string) file_get_contents(Library::headerPath()), $declared);
        $sources = implode("\n", array_map('file_get_contents', glob(dirname(__DIR__) . '/src/*.php') ?: []));
        preg_match_all('/\b(sf_[a-z0-9_]+)\b(?!\.)/', $sources, $used);
        // The error accessors are covered by sf_error_json, which carries every field.
        $accessors = ['sf_error_result', 'sf_error_http_status', 'sf_error_retry_after_ms', 'sf_error_message', 'sf_error_code', 'sf_error_description', 'sf_error_field'];
        // Cancellation tokens serve hosts with threads (Python's asyncio, Ctrl-C), and the log
        // callback runs on the library's threads, which PHP cannot take: the wrapper uses the
        // drain buffer (sf_log_buffer_enable, sf_log_drain) instead.
        // Webhooks are verified through sf_webhook_verify_body[_at] (one JSON pass: PHP decodes
        // the verified body itself); the decoding exports serve C hosts.
        $decoding = ['sf_webhook_verify', 'sf_webhook_verify_at'];
        $declared = array_values(array_filter(
            array_diff(array_unique($declared[1]), [...$accessors, ...$decoding, 'sf_log_set_callback']),
            fn ($name) => strncmp($name, 'sf_cancel_', 10) !== 0
        ));
        $used = array_unique(array_filter($used[1], fn ($name) => !in_array($name, ['sf_error', 'sf_client', 'sf_inbox', 'sf_webhook_verifier', 'sf_result', 'sf_version_decision', 'sf_cancel_token', 'sf_log_callback'], true)));
        sort($declared);
        sort($used);
        $this->assertSame($declared, array_values($used));
    }

    /** The exception mapping follows the header's sf_result numbers. */
    public function testEveryResultNumberMapsToAnExceptionClass(): void
    {
        preg_match_all('/^\s*SF_RESULT_\w+ = (\d+),/m', (string) file_get_contents(Library::headerPath()), $numbers);
        $classes = (new ReflectionClassConstant(Storefront\StorefrontException::class, 'CLASSES'))->getValue();
        $expected = array_values(array_diff(array_map('intval', $numbers[1]), [0, 499]));
        $mapped = array_keys($classes);
        sort($expected);
        sort($mapped);
        $this->assertSame($expected, $mapped);
    }
}
