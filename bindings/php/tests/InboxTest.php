<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\ConfigException;
use Storefront\Inbox;
use Storefront\InboxLeaseLostException;
use Storefront\InboxNotFoundException;
use Storefront\InvalidArgumentException;

/**
 * The webhook inbox (issue 16) through the PHP wrapper: deliveries signed here with hash_hmac
 * as the service signs them, given to receive() as $_SERVER would hold them; a worker claims,
 * books in its own PDO transaction on the same SQLite file and completes there with
 * completeIn(); a stale claim's completeIn() throws and the app's booking rolls back with it.
 */
final class InboxTest extends TestCase
{
    private const SECRET = 'whsec_php_inbox_0123456789abcdef0123456789';

    private string $dir;
    private string $file;
    private Inbox $inbox;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/sf-php-inbox-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $this->file = "$this->dir/inbox.db";
        $this->inbox = Inbox::open("sqlite://$this->file", ['an-older-secret-still-kept-0001', self::SECRET]);
    }

    protected function tearDown(): void
    {
        $this->inbox->close();
        foreach (glob("$this->dir/*") ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->dir);
    }

    private static function body(string $id, string $status, int $version, ?string $eventId): string
    {
        return json_encode([
            'id' => $id,
            'type' => 'merchant_payment.status_changed',
            'api_version' => 1,
            'created_at' => '2026-09-21T12:00:00Z',
            'data' => [
                'order_no' => 'MP-PHP-1', 'external_reference' => 'ORDER-1', 'payment_no' => 'ch_card_usd',
                'amount_minor' => 1250, 'currency' => 'USD', 'currency_decimals' => 2,
                'status' => $status, 'status_version' => $version, 'test_mode' => false,
                'expires_at' => '2026-09-21T12:30:00Z', 'event_id' => $eventId,
                'provider_trade_no' => null, 'occurred_at' => null,
            ],
        ], JSON_THROW_ON_ERROR);
    }

    /**
     * $_SERVER of a delivery, signed like the service: sha256= HMAC over "timestamp.body".
     *
     * @return array<string, string>
     */
    private static function server(string $id, string $body, ?int $timestamp = null, string $secret = self::SECRET): array
    {
        $timestamp ??= time();
        return [
            'REQUEST_METHOD' => 'POST',
            'CONTENT_TYPE' => 'application/json',
            'HTTP_X_SERVICE_EVENT_ID' => $id,
            'HTTP_X_SERVICE_TIMESTAMP' => (string) $timestamp,
            'HTTP_X_SERVICE_SIGNATURE' => 'sha256=' . hash_hmac('sha256', "$timestamp.$body", $secret),
        ];
    }

    private static function pdo(string $file): \PDO
    {
        $pdo = new \PDO("sqlite:$file");
        $pdo->setAttribute(\PDO::ATTR_ERRMODE, \PDO::ERRMODE_EXCEPTION);
        $pdo->exec('PRAGMA busy_timeout = 5000');
        $pdo->exec('CREATE TABLE IF NOT EXISTS bookings (n INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, order_no TEXT NOT NULL, amount_minor INTEGER NOT NULL)');
        return $pdo;
    }

    /**
     * The app's worker step: its booking and the inbox completion in one PDO transaction.
     *
     * @param array<string, mixed> $event
     */
    private function book(\PDO $pdo, array $event): void
    {
        $pdo->beginTransaction();
        try {
            $pdo->prepare('INSERT INTO bookings (event_id, order_no, amount_minor) VALUES (?, ?, ?)')
                ->execute([$event['event_id'], $event['order_no'], $event['amount_minor']]);
            $this->inbox->completeIn($pdo, $event);
            $pdo->commit();
        } catch (\Throwable $e) {
            $pdo->rollBack();
            throw $e;
        }
    }

    private static function bookings(\PDO $pdo): int
    {
        return (int) $pdo->query('SELECT COUNT(*) FROM bookings')->fetchColumn();
    }

    /** Stored, duplicate, stale and rejected deliveries get the answers the contract needs. */
    public function testReceiveAnswersStoredDuplicateStaleAndRejected(): void
    {
        $paid = self::body('EVT-PAID', 'paid', 2, 'PE-1');
        [$status, $answer, $receipt] = $this->inbox->receive(self::server('EVT-PAID', $paid), $paid);
        $this->assertSame(200, $status);
        $this->assertSame('stored', json_decode($answer, true)['outcome']);
        $this->assertSame('EVT-PAID', $receipt['id']);

        // The same notification again: acknowledged, stored once.
        [$status, $answer] = $this->inbox->receive(self::server('EVT-PAID', $paid), $paid);
        $this->assertSame(200, $status);
        $this->assertSame('duplicate', json_decode($answer, true)['outcome']);

        // An older version of the same payment arriving late: acknowledged and stored; the claim
        // keeps it as stale, never hands it out.
        $pending = self::body('EVT-PENDING', 'pending', 1, null);
        [$status, , $receipt] = $this->inbox->receive(self::server('EVT-PENDING', $pending), $pending);
        $this->assertSame(200, $status);
        $this->assertSame('stored', $receipt['outcome']);

        // Refused: a tampered body, a wrong secret, an old timestamp, a missing header, a header twice.
        [$status, , $receipt] = $this->inbox->receive(self::server('EVT-PAID', $paid), $paid . ' ');
        $this->assertSame([400, 'rejected', 'signature_mismatch'], [$status, $receipt['outcome'], $receipt['reason']]);
        [$status] = $this->inbox->receive(self::server('EVT-PAID', $paid, null, 'another-secret-entirely-000000000'), $paid);
        $this->assertSame(400, $status);
        [$status, , $receipt] = $this->inbox->receive(self::server('EVT-PAID', $paid, time() - 600), $paid);
        $this->assertSame([400, 'rejected'], [$status, $receipt['outcome']]);
        $server = self::server('EVT-PAID', $paid);
        unset($server['HTTP_X_SERVICE_SIGNATURE']);
        [$status] = $this->inbox->receive($server, $paid);
        $this->assertSame(400, $status);
        $twice = self::server('EVT-PAID', $paid) + ['X-Service-Signature' => 'sha256=' . str_repeat('0', 64)];
        [$status, , $receipt] = $this->inbox->receive($twice, $paid);
        $this->assertSame([400, 'rejected'], [$status, $receipt['outcome']]);

        // receiveAt: the sandbox's clock (or the server's own) instead of the system clock.
        $late = self::body('EVT-LATE', 'refunded', 3, 'PE-1');
        [$status] = $this->inbox->receiveAt(self::server('EVT-LATE', $late, 1_800_000_000), $late, 1_800_000_010);
        $this->assertSame(200, $status);

        $counts = $this->inbox->status();
        $this->assertSame(2, $counts['rejected']['signature_mismatch'] ?? null, 'the tampered body and the wrong secret');
        $this->assertGreaterThanOrEqual(4, array_sum($counts['rejected']));
    }

    /** A paid event is booked once in the app's PDO transaction; a stale claim books nothing. */
    public function testClaimBookAndCompleteInOwnPdoTransaction(): void
    {
        $paid = self::body('EVT-P1', 'paid', 2, 'PE-7');
        $this->assertSame(200, $this->inbox->receive(self::server('EVT-P1', $paid), $paid)[0]);

        $events = $this->inbox->claim(10, 30_000);
        $this->assertCount(1, $events);
        $event = $events[0];
        $this->assertSame('EVT-P1', $event['id']);
        $this->assertSame('paid', $event['status']);
        $this->assertTrue($event['book']);
        $this->assertSame('PE-7', $event['event_id']);
        $this->assertSame(1250, $event['amount_minor']);
        $this->assertSame('notification', $event['source']);
        $this->assertSame($paid, $event['body']);
        $this->assertSame([], $this->inbox->claim(), 'one event of a payment out at a time');

        $pdo = self::pdo($this->file);
        // Another worker's (stale) claim: completeIn throws, the app's booking rolls back.
        try {
            $this->book($pdo, ['claim' => str_repeat('0', 32)] + $event);
            $this->fail('a stale claim completed');
        } catch (InboxLeaseLostException $e) {
            $this->assertSame(501, $e->result());
            $this->assertSame('inbox_lease_lost', $e->resultName());
        }
        $this->assertFalse($pdo->inTransaction());
        $this->assertSame(0, self::bookings($pdo));

        // The claim holder: booking and completion commit together.
        $this->book($pdo, $event);
        $this->assertSame(1, self::bookings($pdo));
        $counts = $this->inbox->status();
        $this->assertSame(1, $counts['booked']);
        $this->assertSame(0, $counts['claimed']);
        $this->assertSame(1, $counts['completed']);

        // Completing again (the claim is spent): throws, still one booking.
        $this->expectExceptionThrown(InboxLeaseLostException::class, fn () => $this->book($pdo, $event));
        $this->assertSame(1, self::bookings($pdo));
        $this->expectExceptionThrown(InboxLeaseLostException::class, fn () => $this->inbox->complete($event));

        // Outside a transaction completeIn refuses to run.
        $this->expectExceptionThrown(InvalidArgumentException::class, fn () => $this->inbox->completeIn($pdo, $event));

        // The same payment event under a new notification id is not booked again.
        $again = self::body('EVT-P1-AGAIN', 'paid', 3, 'PE-7');
        $this->assertSame(200, $this->inbox->receive(self::server('EVT-P1-AGAIN', $again), $again)[0]);
        $this->assertSame([], $this->inbox->claim());
        $this->assertSame(1, $this->inbox->status()['duplicate']);

        // The reconciler's view, replay, release, retention.
        $watermark = $this->inbox->watermarks()[0];
        $this->assertSame(['MP-PHP-1', 3, 'PE-7'], [$watermark['order_no'], $watermark['status_version'], $watermark['booked_event_id']]);
        $this->assertSame(1, $this->inbox->replay('EVT-P1'));
        $replayed = $this->inbox->claim()[0];
        $this->assertTrue($replayed['replayed']);
        $this->assertFalse($replayed['book']);
        $this->inbox->release($replayed);
        $replayed = $this->inbox->claim()[0];
        $this->assertSame(2, $replayed['attempts'], 'claimed before: the first time and after the replay');
        $this->inbox->complete($replayed);
        $this->expectExceptionThrown(InboxNotFoundException::class, fn () => $this->inbox->replay('EVT-NONE'));
        $this->assertSame(0, $this->inbox->replay(['from_ms' => 0, 'to_ms' => 1]));
        $this->assertGreaterThanOrEqual(1, $this->inbox->purge(0));
        $this->assertSame(1, $this->inbox->status()['booked']);
    }

    /** A reconciled payment enters the same flow and is booked once. */
    public function testEnterReconciled(): void
    {
        $payment = json_decode(self::body('X', 'paid', 4, 'PE-9'), true)['data'];
        $this->assertSame('stored', $this->inbox->enterReconciled($payment));
        $this->assertSame('duplicate', $this->inbox->enterReconciled($payment), 'the same reconciliation again');
        $this->assertSame('stored', $this->inbox->enterReconciled(['status_version' => 3] + $payment), 'a lower version: stored, never handed out');
        $event = $this->inbox->claim()[0];
        $this->assertSame(['reconciliation', true, 'reconciled:MP-PHP-1:4'], [$event['source'], $event['book'], $event['id']]);
        $this->inbox->complete($event);
        $this->assertStringContainsString(':claim', $this->inbox->completionSql());
    }

    public function testBadUrlIsAConfigError(): void
    {
        $this->expectException(ConfigException::class);
        Inbox::open('mysql://localhost/shop', [self::SECRET]);
    }

    /** The inbox's tables are not namespaced: a `namespace` is refused on SQLite as on PostgreSQL. */
    public function testNamespaceIsAConfigErrorOnEveryBackend(): void
    {
        foreach (["sqlite://$this->file?namespace=shop-a", 'postgres://shop@127.0.0.1:5432/shop?namespace=shop-a'] as $url) {
            $this->expectExceptionThrown(ConfigException::class, fn () => Inbox::open($url, [self::SECRET]));
        }
    }

    /**
     * One body limit for every binding, the core inbox's (1 MiB): above it the library answers
     * 413 body_too_large, counted, nothing stored (the same status and reason as Rust and
     * Python); a body of exactly the limit is stored.
     */
    public function testBodyAboveTheCoreLimitIsAnswered413AndCounted(): void
    {
        $limit = 1 << 20;
        $base = self::body('EVT-BIG-1', 'pending', 1, null);
        $exact = $base . str_repeat(' ', $limit - strlen($base));
        [$status, , $receipt] = $this->inbox->receive(self::server('EVT-BIG-1', $exact), $exact);
        $this->assertSame([200, 'stored'], [$status, $receipt['outcome']]);
        $over = str_replace('EVT-BIG-1', 'EVT-BIG-2', $exact) . ' ';
        [$status, $answer, $receipt] = $this->inbox->receive(self::server('EVT-BIG-2', $over), $over);
        $this->assertSame([413, 'rejected', 'body_too_large'], [$status, $receipt['outcome'], $receipt['reason']]);
        $this->assertSame('body_too_large', json_decode($answer, true)['reason']);
        [$status, $answer] = $this->inbox->receive([], str_repeat('[', 8 << 20));
        $this->assertSame([413, 'body_too_large'], [$status, json_decode($answer, true)['reason']]);
        $counts = $this->inbox->status();
        $this->assertSame(['body_too_large' => 2], $counts['rejected']);
        $this->assertSame(1, $counts['pending']);
        $event = $this->inbox->claim()[0];
        $this->assertSame(['EVT-BIG-1', $limit], [$event['id'], strlen($event['body'])]);
    }

    /** A verified notification that breaks the contract: 422 contract_violation, counted per rule. */
    public function testContractViolationIsAnswered422AndCounted(): void
    {
        $paid = self::body('EVT-CV', 'paid', 2, null);
        [$status, , $receipt] = $this->inbox->receive(self::server('EVT-CV', $paid), $paid);
        $this->assertSame([422, 'contract_violation', 'contract_violation'], [$status, $receipt['outcome'], $receipt['reason']]);
        $this->assertSame(['missing_event_id' => 1], $this->inbox->status()['contract_violations']);
        $this->assertSame('contract_violation', $this->inbox->enterReconciled(json_decode($paid, true)['data']));
    }

    /** @param class-string<\Throwable> $class */
    private function expectExceptionThrown(string $class, callable $call): void
    {
        try {
            $call();
        } catch (\Throwable $e) {
            $this->assertInstanceOf($class, $e, $e->getMessage());
            return;
        }
        $this->fail("$class was not thrown");
    }
}
