<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The reconciler behind Client::reconcile(): the shop's own booking records against the
 * service's merchant payments, through sf_reconcile (JSON in, JSON lines out), BATCH records
 * per call, yielding one ReconcileReport per record as the caller iterates.
 *
 * The rules are the core's (src/reconcile.rs): only paid is payment and an unknown status is
 * never paid; reference, amount, currency and test_mode are checked before a payment is offered
 * for booking; book once per event_id; lookups stay within the shared read budget and re-queues
 * within the re-queue budget (the client's rate limiter paces them). A run changes nothing at
 * the service except the optional re-queue of failed deliveries: safe to repeat every few
 * minutes. Stop iterating anywhere and resume later with the last report's cursor.
 *
 * @internal
 */
final class Reconciler
{
    /** Records looked up per sf_reconcile call. */
    public const BATCH = 16;

    private const RECORD = [
        'external_reference' => 'string',
        'expected_amount' => 'amount',
        'currency' => 'string',
        'order_no' => 'string',
        'test_mode' => 'bool',
        'booked_status_version' => 'u64',
        'booked_event_id' => 'string',
    ];

    private const REQUIRED = ['external_reference', 'expected_amount', 'currency'];

    private const OPTIONS = [
        'requeue_failed' => 'bool',
        'window' => ['from' => 'string', 'to' => 'string'],
        'limit' => 'u32',
        'cursor' => ['next_index' => 'u64', 'last_reference' => 'string'],
    ];

    /**
     * Checks the arguments now (ValidationException naming a bad key, as the C library would),
     * then returns the generator that looks records up as it is consumed.
     *
     * @param list<array<string, mixed>> $records
     * @param array<string, mixed> $options
     * @return \Generator<int, ReconcileReport>
     */
    public static function run(Client $client, array $records, array $options): \Generator
    {
        if (!array_is_list($records)) {
            throw Input::refused('records', '`records` must be a list');
        }
        $wire = [];
        foreach ($records as $i => $record) {
            $checked = self::object(self::RECORD, $record, "records[$i].");
            foreach (self::REQUIRED as $key) {
                if (!array_key_exists($key, $checked)) {
                    throw Input::refused("records[$i].$key", "`records[$i].$key` is required");
                }
            }
            $wire[] = $checked;
        }
        return self::iterate($client, $wire, self::object(self::OPTIONS, $options, 'options.'));
    }

    /**
     * Client::callText() (private: raw FFI calls are not API), reached in Client's scope.
     *
     * @param mixed ...$args
     */
    private static function callText(Client $client, string $function, ...$args): string
    {
        static $call = null;
        $call ??= \Closure::bind(static fn (Client $client, string $function, array $args) => $client->callText($function, ...$args), null, Client::class);
        return $call($client, $function, $args);
    }

    /**
     * @param list<array<string, mixed>> $records
     * @param array<string, mixed> $options
     * @return \Generator<int, ReconcileReport>
     */
    private static function iterate(Client $client, array $records, array $options): \Generator
    {
        while (true) {
            $input = Library::toJson(['records' => $records, 'options' => (object) $options], 'input_json');
            $lines = self::callText($client, 'sf_reconcile', $input, self::BATCH);
            $last = null;
            foreach (explode("\n", $lines) as $line) {
                if ($line === '') {
                    continue;
                }
                $last = ReconcileReport::fromArray(Library::fromJson($line));
                yield $last;
            }
            if ($last === null) {
                return;
            }
            $options['cursor'] = $last->cursor;
            if ($last->cursor['next_index'] >= count($records)) {
                return;
            }
        }
    }

    /**
     * @param array<string, mixed> $shape
     * @param mixed $value
     * @return array<string, mixed>
     */
    private static function object(array $shape, $value, string $prefix): array
    {
        if (!is_array($value)) {
            throw Input::refused(rtrim($prefix, '.'), '`' . rtrim($prefix, '.') . '` must be an array with string keys');
        }
        $checked = [];
        foreach ($value as $key => $item) {
            $path = $prefix . $key;
            if (!is_string($key) || !array_key_exists($key, $shape)) {
                throw Input::refused($path, "unknown key `$path` (expected one of: " . implode(', ', array_keys($shape)) . ')');
            }
            if ($item === null) {
                continue;
            }
            $kind = $shape[$key];
            if (is_array($kind)) {
                $checked[$key] = (object) self::object($kind, $item, "$path.");
                continue;
            }
            switch ($kind) {
                case 'string':
                    $checked[$key] = Input::string($path, $item);
                    break;
                case 'bool':
                    if (!is_bool($item)) {
                        throw Input::refused($path, "`$path` must be true or false");
                    }
                    $checked[$key] = $item;
                    break;
                case 'amount':
                    $checked[$key] = Input::int($path, $item, 1, Input::AMOUNT_MINOR_MAX);
                    break;
                case 'u32':
                    $checked[$key] = Input::int($path, $item, 0, Input::U32_MAX);
                    break;
                default:
                    $checked[$key] = Input::int($path, $item, 0);
            }
        }
        return $checked;
    }
}
