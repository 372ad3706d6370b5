<?php

declare(strict_types=1);

namespace Storefront;

use FFI;
use FFI\CData;

/**
 * The webhook inbox (sf_inbox): stores each notification before the receiver answers 2xx,
 * hands each payment's state changes to one worker at a time in order, and books each paid
 * payment event once, across the php-fpm workers and cron workers of a host (one SQLite file,
 * `sqlite:///var/lib/shop/inbox.db`) or of many hosts (`postgres://…`).
 *
 * The receiver (the whole endpoint):
 *
 *     $inbox = Storefront\Inbox::open('sqlite:///var/lib/shop/inbox.db', [$secret]);
 *     [$status, $body] = $inbox->receive($_SERVER, file_get_contents('php://input'));
 *     http_response_code($status);
 *     header('Content-Type: application/json');
 *     echo $body;
 *
 * The worker: claim(), book when an event's `book` is true, then complete() — or completeIn()
 * inside the app's own PDO transaction on the same database, so that the booking and the
 * completion commit together.
 *
 * Open the inbox in the process that uses it (per request, or once per php-fpm worker); a
 * handle inherited through fork() rebuilds its runtime and connections on its first call.
 */
final class Inbox
{
    /** The default retention of finished rows: 30 days, in milliseconds. */
    public const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
    /** The default lease of a claimed event, in milliseconds. */
    public const DEFAULT_LEASE_MS = 30_000;

    private ?CData $handle;

    private function __construct(CData $handle)
    {
        $this->handle = $handle;
    }

    /**
     * Opens the inbox at $url (`sqlite:///absolute/path.db` or `postgres://…`), verifying
     * deliveries with any of $secrets (keep old secrets during a rotation). Tables are created
     * on first use; nothing connects here; the SQLite file is created mode 0600. A bad URL is a
     * ConfigException, no secret a WebhookConfigException.
     *
     * @param list<string> $secrets
     * @param array{tolerance_s?: int} $options the timestamp tolerance both ways (default the
     *   contract's 300 seconds)
     */
    public static function open(string $url, array $secrets, array $options = []): self
    {
        $optionsJson = null;
        if ($options !== []) {
            $unknown = array_diff(array_keys($options), ['tolerance_s']);
            if ($unknown !== []) {
                throw Input::refused('options', 'unknown inbox option ' . implode(', ', $unknown) . ' (tolerance_s)');
            }
            $optionsJson = Library::toJson(['tolerance_s' => Input::int('tolerance_s', $options['tolerance_s'], 0)], 'options_json');
        }
        $secretsJson = Library::toJson(array_values($secrets), 'secrets_json');
        return new self(Library::callHandle('sf_inbox_open', 'sf_inbox', $url, $secretsJson, $optionsJson));
    }

    /** Releases the handle (idempotent). Committed events stay in the database. */
    public function close(): void
    {
        if ($this->handle !== null) {
            Library::ffi()->sf_inbox_free($this->handle);
            $this->handle = null;
        }
    }

    public function __destruct()
    {
        $this->close();
    }

    /**
     * Receives one delivery and says what to answer: [HTTP status, answer body, receipt].
     *
     * $server is `$_SERVER` (HTTP_X_SERVICE_EVENT_ID, HTTP_X_SERVICE_TIMESTAMP,
     * HTTP_X_SERVICE_SIGNATURE), getallheaders(), a PSR-7 getHeaders() array or any array of
     * name => value (see Webhook::header()); $body the raw body exactly as received
     * (`file_get_contents('php://input')`). The status is 200 once the notification is stored
     * (or was stored before), 400 when verification fails (also for a duplicated or malformed
     * header), 413 for a body above the inbox's 1 MiB limit (reason body_too_large, counted in
     * status()['rejected'], never stored), 422 for a verified notification that breaks the
     * contract (reason contract_violation, counted in status()['contract_violations']), 503 when
     * the store could not commit (the service delivers again): never 2xx for what was not
     * committed. The receipt is `{status, outcome: stored|duplicate|rejected|contract_violation|
     * store_failed, id, reason, body}`.
     *
     * @param array<string, mixed> $server
     * @return array{0: int, 1: string, 2: array<string, mixed>}
     */
    public function receive(array $server, string $body): array
    {
        return $this->received($server, $body, null);
    }

    /**
     * receive() with the current time given in Unix seconds instead of the system clock (tests
     * against the sandbox's clock, servers with their own time source).
     *
     * @param array<string, mixed> $server
     * @return array{0: int, 1: string, 2: array<string, mixed>}
     */
    public function receiveAt(array $server, string $body, int $nowUnix): array
    {
        return $this->received($server, $body, $nowUnix);
    }

    /**
     * @param array<string, mixed> $server
     * @return array{0: int, 1: string, 2: array<string, mixed>}
     */
    private function received(array $server, string $body, ?int $now): array
    {
        $handle = $this->live();
        try {
            // The lookup WebhookVerifier uses: any spelling, exactly one value per header.
            [$eventId, $timestamp, $signature] = Webhook::deliveryHeaders($server);
        } catch (WebhookException $e) {
            return self::answer(400, 'rejected', $e->resultName());
        }
        $ffi = Library::ffi();
        [$buffer, $length] = Library::bytes($body);
        $status = $ffi->new('uint16_t');
        $out = $ffi->new('char*');
        $error = $ffi->new('sf_error*');
        try {
            $result = $now === null
                ? $ffi->sf_inbox_receive($handle, $eventId, $timestamp, $signature, $buffer, $length, FFI::addr($status), FFI::addr($out), FFI::addr($error))
                : $ffi->sf_inbox_receive_at($handle, $now, $eventId, $timestamp, $signature, $buffer, $length, FFI::addr($status), FFI::addr($out), FFI::addr($error));
        } finally {
            Logging::afterCall();
        }
        if ($result !== $ffi->SF_RESULT_OK) {
            // Nothing was stored (a cancelled call, an unusable header): not acknowledged. A body
            // too large is not a failure: the library answers it (413 body_too_large).
            $reason = 'other';
            if (!FFI::isNull($error)) {
                try {
                    $reason = (string) (Library::fromJson((string) $ffi->sf_error_json($error))['result_name'] ?? 'other');
                } finally {
                    $ffi->sf_error_free($error);
                }
            }
            return self::answer(503, 'store_failed', $reason);
        }
        try {
            $receipt = Library::fromJson(FFI::string($out));
        } finally {
            $ffi->sf_string_free($out);
        }
        return [(int) $status->cdata, (string) $receipt['body'], $receipt];
    }

    /**
     * An answer decided here, before the library (shaped like the library's receipts).
     *
     * @return array{0: int, 1: string, 2: array<string, mixed>}
     */
    private static function answer(int $status, string $outcome, string $reason): array
    {
        $body = (string) json_encode(['outcome' => $outcome, 'id' => null, 'reason' => $reason]);
        return [$status, $body, ['status' => $status, 'outcome' => $outcome, 'id' => null, 'reason' => $reason, 'body' => $body]];
    }

    /**
     * Claims up to $n events for $leaseMs milliseconds: the oldest waiting ones, at most one per
     * payment, none of a payment whose previous event is still out (empty when nothing waits).
     * Each event: id, claim, order_no, external_reference, status, status_version, event_id,
     * amount_minor, currency, test_mode, book, source (notification|reconciliation), replayed,
     * attempts, body. Book the payment when `book` is true, then complete the event before the
     * lease runs out.
     *
     * @return list<array<string, mixed>>
     */
    public function claim(int $n = 10, int $leaseMs = self::DEFAULT_LEASE_MS): array
    {
        $n = Input::int('n', $n, 1, 0xFFFFFFFF);
        $leaseMs = Input::int('lease_ms', $leaseMs, 1);
        return Library::callJson('sf_inbox_claim', $this->live(), $n, $leaseMs);
    }

    /**
     * Marks a claimed event handled (for a `book` event, its payment event booked).
     * InboxLeaseLostException when its lease ran out and another worker claimed it.
     *
     * @param array<string, mixed> $event from claim()
     */
    public function complete(array $event): void
    {
        [$id, $claim] = self::idAndClaim($event);
        Library::callUnit('sf_inbox_complete', $this->live(), $id, $claim);
    }

    /**
     * Gives a claimed event back (the handler failed): it waits for a worker again at once.
     *
     * @param array<string, mixed> $event from claim()
     */
    public function release(array $event): void
    {
        [$id, $claim] = self::idAndClaim($event);
        Library::callUnit('sf_inbox_release', $this->live(), $id, $claim);
    }

    /**
     * The statements that complete an event inside the app's own transaction on the same
     * database: `:id` and `:claim` (SQLite) or `$1` and `$2` (PostgreSQL), one per line, each
     * ending with `;`. completeIn() runs them with PDO.
     */
    public function completionSql(): string
    {
        return Library::callString('sf_inbox_completion_sql', $this->live());
    }

    /**
     * Completes $event inside $pdo's open transaction (the caller's, on the inbox's database),
     * so that the app's booking and the completion commit together: runs completionSql()'s
     * statements in order with the event's id and claim bound. Throws InboxLeaseLostException
     * when the first statement changed no row (the lease ran out and another worker holds the
     * event, or it was completed before): roll the transaction back then. Commit is the
     * caller's.
     *
     * @param array<string, mixed> $event from claim()
     */
    public function completeIn(\PDO $pdo, array $event): void
    {
        [$id, $claim] = self::idAndClaim($event);
        if (!$pdo->inTransaction()) {
            throw new InvalidArgumentException([
                'result' => 5, 'result_name' => 'invalid_argument', 'field' => 'pdo',
                'message' => 'completeIn() runs inside the caller\'s transaction: call $pdo->beginTransaction() first',
            ]);
        }
        // Every :id/:claim (PostgreSQL: $1/$2) as a positional `?` bound in order: a name used
        // twice in one statement works with every PDO driver, emulated prepares or not.
        $sql = strtr($this->completionSql(), ['$1' => ':id', '$2' => ':claim']);
        $statements = array_values(array_filter(array_map('trim', preg_split('/;\s*$/m', $sql) ?: []), 'strlen'));
        foreach ($statements as $index => $text) {
            $bound = [];
            $text = (string) preg_replace_callback('/:(id|claim)\b/', function (array $m) use (&$bound, $id, $claim): string {
                $bound[] = $m[1] === 'id' ? $id : $claim;
                return '?';
            }, $text);
            $statement = $pdo->prepare($text);
            if ($statement === false || $statement->execute($bound) === false) {
                // PDO in ERRMODE_SILENT or _WARNING: the statement failed without throwing.
                throw new InboxStoreException([
                    'result' => 500, 'result_name' => 'inbox_store',
                    'message' => 'a completion statement failed: ' . implode(' ', $pdo->errorInfo()),
                ]);
            }
            if ($index === 0 && $statement->rowCount() !== 1) {
                throw new InboxLeaseLostException([
                    'result' => 501, 'result_name' => 'inbox_lease_lost', 'field' => 'claim',
                    'message' => "the lease of inbox event $id ran out and another worker holds it (or it was completed before): roll back",
                ]);
            }
        }
    }

    /**
     * Counts: pending, claimed, completed, stale, duplicate, rejected (reason => count, with
     * body_too_large), contract_violations (rule => count: missing_event_id, event_id_reused,
     * status_version_out_of_range), oldest_pending_ms (null when nothing waits), booked.
     *
     * @return array<string, mixed>
     */
    public function status(): array
    {
        return Library::callJson('sf_inbox_status', $this->live());
    }

    /**
     * Deletes finished rows (completed, stale, duplicate) older than $retentionMs (default 30
     * days). Watermarks and bookings are kept. Returns how many rows were deleted.
     */
    public function purge(int $retentionMs = self::DEFAULT_RETENTION_MS): int
    {
        return $this->callCount('sf_inbox_purge', Input::int('retention_ms', $retentionMs, 0));
    }

    /**
     * Hands finished events to the handler again (`replayed` true; `book` false for a booking
     * already made): one event by its id (a string), or the events received in
     * ['from_ms' => …, 'to_ms' => …] (Unix milliseconds, inclusive start, exclusive end).
     * Returns how many; InboxNotFoundException for an unknown id.
     *
     * @param string|array{from_ms: int, to_ms: int} $which
     */
    public function replay(string|array $which): int
    {
        if (is_string($which)) {
            $json = Library::toJson(['event' => $which], 'replay_json');
        } else {
            $json = Library::toJson(['received' => [
                'from_ms' => Input::int('from_ms', $which['from_ms'] ?? null, PHP_INT_MIN),
                'to_ms' => Input::int('to_ms', $which['to_ms'] ?? null, PHP_INT_MIN),
            ]], 'replay_json');
        }
        return $this->callCount('sf_inbox_replay', $json);
    }

    /**
     * Every payment the inbox knows: order_no, external_reference, status_version, status,
     * amount_minor, currency, booked_event_id (the shop's local records for
     * Client::reconcile()).
     *
     * @return list<array<string, mixed>>
     */
    public function watermarks(): array
    {
        return Library::callJson('sf_inbox_watermarks', $this->live());
    }

    /**
     * Enters a payment the reconciler found (as Client::merchantPayment() returns it) into the
     * same flow, marked `source: reconciliation`: the one handler books it once. Returns
     * `stored` or `duplicate` (a version the payment has moved past is kept as stale when a worker claims),
     * or `contract_violation` when the payment breaks the contract (paid without event_id, an
     * event_id of another payment, a version above 2^63 - 1): not entered; it needs attention.
     *
     * @param array<string, mixed> $payment
     */
    public function enterReconciled(array $payment): string
    {
        return Library::callString('sf_inbox_enter_reconciled', $this->live(), Library::toJson($payment, 'payment_json'));
    }

    /** `$function(inbox, $argument, uint64_t *out, sf_error **error_out)`. */
    private function callCount(string $function, int|string $argument): int
    {
        $ffi = Library::ffi();
        $out = $ffi->new('uint64_t');
        $error = $ffi->new('sf_error*');
        try {
            $result = $ffi->$function($this->live(), $argument, FFI::addr($out), FFI::addr($error));
        } finally {
            Logging::afterCall();
        }
        if ($result !== $ffi->SF_RESULT_OK) {
            if (FFI::isNull($error)) {
                throw StorefrontException::fromDetail(['result' => $result, 'message' => "storefront call failed ($result)"]);
            }
            try {
                $detail = Library::fromJson((string) $ffi->sf_error_json($error));
            } finally {
                $ffi->sf_error_free($error);
            }
            throw StorefrontException::fromDetail($detail);
        }
        return (int) $out->cdata;
    }

    /**
     * @param array<string, mixed> $event
     * @return array{0: string, 1: string}
     */
    private static function idAndClaim(array $event): array
    {
        return [Input::string('id', $event['id'] ?? null), Input::string('claim', $event['claim'] ?? null)];
    }

    private function live(): CData
    {
        if ($this->handle === null) {
            throw new \LogicException('the inbox is closed');
        }
        return $this->handle;
    }
}
