<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The C library's log events delivered to a PSR-3 logger.
 *
 * PHP cannot take callbacks from the library's own threads, so the library keeps its events
 * in a bounded buffer (sf_log_buffer_enable) and the wrapper drains it (sf_log_drain) after
 * every call it makes into the library, and when flush() is called. Each event becomes one
 * `$logger->log($level, $message, $context)` call:
 *
 *   level    library level 1 error -> 'error', 2 warn -> 'warning', 3 info -> 'info',
 *            4 debug and 5 trace -> 'debug' (PSR-3 level names)
 *   message  the event's message
 *   context  the event's fields (e.g. method, path template, status, attempt, elapsed_ms)
 *            plus 'target' (the library module that logged it)
 *
 * Any object with a PSR-3 style `log($level, $message, array $context = [])` method is
 * accepted (Psr\Log\LoggerInterface, Monolog\Logger, ...): the psr/log package is not
 * required. The library never logs secrets, tokens or checkout addresses.
 *
 *     Storefront\Logging::toLogger($logger, 'info');   // once per request, before the calls
 */
final class Logging
{
    /** PSR-3 level name => the library's max_level that delivers it and everything above. */
    private const MAX_LEVELS = [
        'emergency' => 1, 'alert' => 1, 'critical' => 1, 'error' => 1,
        'warning' => 2, 'notice' => 3, 'info' => 3, 'debug' => 4, 'trace' => 5,
    ];

    /** The library's level => the PSR-3 level name. */
    private const PSR_LEVELS = [1 => 'error', 2 => 'warning', 3 => 'info', 4 => 'debug', 5 => 'debug'];

    /** The library's level names, should an event carry one instead of its number. */
    private const NAMED_LEVELS = ['error' => 1, 'warn' => 2, 'warning' => 2, 'info' => 3, 'debug' => 4, 'trace' => 5];

    /** Events the library keeps between two drains; older ones are dropped first. */
    public const DEFAULT_CAPACITY = 1000;

    private static ?object $logger = null;
    private static bool $draining = false;

    /**
     * Sends the library's events at $level and above ('error', 'warning', 'info', 'debug', or
     * 'trace' for the most detail, delivered as 'debug') to $logger: an object with a PSR-3
     * `log($level, $message, array $context)` method. Replaces any previous logger (whose
     * undelivered events go to the new one); events buffered while no logger was set (by an
     * earlier request of the same PHP-FPM worker) are discarded.
     */
    public static function toLogger(object $logger, string $level = 'debug', int $capacity = self::DEFAULT_CAPACITY): void
    {
        if (!method_exists($logger, 'log')) {
            throw new \InvalidArgumentException('the logger needs a PSR-3 log($level, $message, array $context) method');
        }
        $maxLevel = self::MAX_LEVELS[strtolower($level)] ?? null;
        if ($maxLevel === null) {
            throw new \InvalidArgumentException("unknown log level `$level` (expected one of: " . implode(', ', array_keys(self::MAX_LEVELS)) . ')');
        }
        if ($capacity < 1) {
            throw new \InvalidArgumentException('the capacity is at least 1');
        }
        $ffi = Library::ffi();
        $ffi->sf_log_buffer_enable($maxLevel, $capacity);
        if (self::$logger === null) {
            // The buffer is the worker process's and outlives a request (PHP-FPM): what an
            // earlier request left in it is not this request's, so it is discarded.
            $stale = $ffi->sf_log_drain();
            if ($stale !== null) {
                $ffi->sf_string_free($stale);
            }
        }
        self::$logger = $logger;
    }

    /** Stops delivering events and tells the library to stop buffering them. */
    public static function disable(): void
    {
        if (self::$logger === null) {
            return;
        }
        self::flush();
        self::$logger = null;
        Library::ffi()->sf_log_buffer_enable(0, 0);
    }

    /** The logger events go to, or null. */
    public static function logger(): ?object
    {
        return self::$logger;
    }

    /** Delivers every buffered event to the logger now (also done after each call). */
    public static function flush(): void
    {
        $logger = self::$logger;
        if ($logger === null || self::$draining) {
            return;
        }
        self::$draining = true;
        try {
            $ffi = Library::ffi();
            $text = $ffi->sf_log_drain();
            if ($text === null) {
                return;
            }
            try {
                $lines = \FFI::string($text);
            } finally {
                $ffi->sf_string_free($text);
            }
            foreach (explode("\n", $lines) as $line) {
                if ($line === '') {
                    continue;
                }
                $event = json_decode($line, true, 64, JSON_BIGINT_AS_STRING);
                if (!is_array($event)) {
                    continue;
                }
                $level = $event['level'] ?? 4;
                $level = is_string($level) ? (self::NAMED_LEVELS[strtolower($level)] ?? 4) : (int) $level;
                try {
                    $logger->log(self::PSR_LEVELS[$level] ?? 'debug', (string) ($event['message'] ?? ''), self::context($event));
                } catch (\Throwable $ignored) {
                    // A failing logger must not turn a call that succeeded (a created payment
                    // and its idempotency key) into a failure.
                }
            }
        } finally {
            self::$draining = false;
        }
    }

    /**
     * The PSR-3 context of an event: its fields (those of enclosing spans first, when the event
     * carries any) and 'target'.
     *
     * @param array<string, mixed> $event
     * @return array<string, mixed>
     */
    private static function context(array $event): array
    {
        $context = [];
        foreach (is_array($event['spans'] ?? null) ? $event['spans'] : [] as $span) {
            if (is_array($span)) {
                $context = array_merge($context, $span);
            }
        }
        foreach (['span', 'fields'] as $key) {
            if (is_array($event[$key] ?? null)) {
                $context = array_merge($context, $event[$key]);
            }
        }
        foreach ($event as $key => $value) {
            if (!in_array($key, ['level', 'message', 'fields', 'span', 'spans'], true)) {
                $context[$key] = $value;
            }
        }
        $context['target'] = (string) ($event['target'] ?? '');
        return $context;
    }

    /** @internal called by Library after every call into the library */
    public static function afterCall(): void
    {
        if (self::$logger !== null) {
            self::flush();
        }
    }
}
