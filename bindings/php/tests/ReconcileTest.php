<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\ReconcileReport;
use Storefront\Tests\SandboxHarness as S;
use Storefront\ValidationException;

/**
 * The reconciler through the PHP wrapper (issue 12 item 2), against a sandbox of its own (the
 * test moves its clock by hours): a mix of paid, expired, review, refunded and chargeback
 * payments, a lost notification, duplicate references, an unknown status, a failing lookup and
 * deliberately wrong local records. Every report is checked against what the sandbox holds (its
 * list by reference, and the faults injected here), record by record; the lost notification is
 * re-queued and delivered; a run stopped anywhere resumes from its cursor.
 */
final class ReconcileTest extends TestCase
{
    private const SECRET = 'reconcile-notify-secret-php-0123456789abcdef';

    private static ?S $sandbox = null;
    private S $sbx;
    private Client $client;
    private string $prefix = '';
    /** @var resource|null */
    private $receiver = null;
    private string $dir = '';
    private string $url = '';

    protected function setUp(): void
    {
        self::$sandbox ??= S::own();
        $this->sbx = self::$sandbox;
        $this->client = new Client($this->sbx->config());
        $this->prefix = 'php-rec-' . bin2hex(random_bytes(4));
    }

    protected function tearDown(): void
    {
        if (is_resource($this->receiver)) {
            proc_terminate($this->receiver);
            proc_close($this->receiver);
        }
        // Only the receiver's own temporary folder (set by startReceiver()); never a glob of "/*".
        if ($this->dir !== '' && str_starts_with($this->dir, sys_get_temp_dir() . '/sf-php-reconcile-')) {
            foreach (glob("$this->dir/*") ?: [] as $file) {
                unlink($file);
            }
            @rmdir($this->dir);
        }
        $this->sbx->clearFaults();
    }

    /** A receiver (`php -S`) answering 500 until the file `accept` exists, then storing bodies. */
    private function startReceiver(): void
    {
        $this->dir = sys_get_temp_dir() . '/sf-php-reconcile-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        file_put_contents("$this->dir/router.php", <<<'PHP'
            <?php
            $dir = __DIR__;
            if (!is_file("$dir/accept")) {
                http_response_code(500);
                return;
            }
            file_put_contents("$dir/got-" . bin2hex(random_bytes(6)) . '.json', file_get_contents('php://input'));
            http_response_code(200);
            PHP);
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $this->receiver = proc_open(
            [PHP_BINARY, '-S', "127.0.0.1:$port", "$this->dir/router.php"],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes
        );
        $this->url = "http://127.0.0.1:$port/hook";
        // Bounded wait until the receiver listens; not a timing assertion.
        for ($i = 0; $i < 100 && @fsockopen('127.0.0.1', $port) === false; $i++) {
            usleep(50_000);
        }
    }

    /** @return list<array<string, mixed>> */
    private function received(): array
    {
        return array_map(fn (string $f) => json_decode((string) file_get_contents($f), true), glob("$this->dir/got-*.json") ?: []);
    }

    private function ref(string $name): string
    {
        return "$this->prefix-$name";
    }

    /** @param array<string, mixed> $extra */
    private function create(string $name, int $amount, array $extra = []): string
    {
        return $this->client->createMerchantPayment(['external_reference' => $this->ref($name), 'amount_minor' => $amount, 'currency' => 'USD'] + $extra)['order_no'];
    }

    /** @param array<string, mixed> $body */
    private function pay(string $orderNo, array $body = ['payment_no' => S::CHANNEL_CARD_USD]): void
    {
        $this->sbx->control('POST', "/merchant-payments/$orderNo/checkout/pay", $body);
    }

    private function force(string $orderNo, string $status): void
    {
        $this->sbx->control('POST', "/merchant-payments/$orderNo/force", ['status' => $status]);
    }

    /** @return list<array<string, mixed>> the sandbox's payments with this reference, newest first */
    private function truth(string $reference): array
    {
        return $this->client->listMerchantPayments(['external_reference' => $reference, 'limit' => 100]);
    }

    /** @return array<string, mixed> the payment as the array the contract sends */
    private function one(string $name): array
    {
        $found = $this->truth($this->ref($name));
        $this->assertCount(1, $found, $name);
        return $found[0]->toArray();
    }

    /** @return list<string> */
    private function deliveries(string $orderNo): array
    {
        return array_column($this->client->notificationRecords($orderNo, 100), 'delivery_status');
    }

    /** @return array<string, mixed> */
    private function record(string $name, int $amount, array $extra = []): array
    {
        return ['external_reference' => $this->ref($name), 'expected_amount' => $amount, 'currency' => 'USD'] + $extra;
    }

    /**
     * @param array<string, mixed> $record
     * @param array<string, mixed> $truth
     * @return array<string, mixed>
     */
    private static function booked(array $record, array $truth): array
    {
        return ['booked_event_id' => $truth['event_id'], 'booked_status_version' => $truth['status_version']] + $record;
    }

    public function testReportMatchesTheSandboxRecordByRecord(): void
    {
        $this->startReceiver();
        // A paid payment whose notifications all failed: automatic attempts exhausted on the
        // sandbox clock.
        $lost = $this->create('lost', 500, ['notify_url' => $this->url, 'notify_secret' => self::SECRET]);
        $this->pay($lost);
        for ($i = 0; $i < 60; $i++) {
            if ($this->deliveries($lost) === ['failed', 'failed']) {
                break;
            }
            $this->sbx->control('POST', '/clock/advance', ['seconds' => 3 * 3600]);
            usleep(50_000);
        }
        $this->assertSame(['failed', 'failed'], $this->deliveries($lost));
        touch("$this->dir/accept");

        foreach (['agree', 'agree-ref', 'refunded', 'chargeback', 'amount'] as $name) {
            $this->pay($this->create($name, 300));
        }
        [$refunded, $chargeback, $agree, $agreeRef] = [$this->one('refunded'), $this->one('chargeback'), $this->one('agree'), $this->one('agree-ref')];
        $this->force($refunded['order_no'], 'refunded');
        $this->force($chargeback['order_no'], 'chargeback');
        $this->pay($this->create('currency', 200));
        $testChannel = $this->create('testmode', 200, ['payment_no' => 'ch_card_test']);
        $this->pay($testChannel, ['payment_no' => 'ch_card_test', 'user' => 'alice']);
        $this->create('expired', 100, ['expires_in' => 60]);
        $this->create('expired-booked', 100, ['expires_in' => 60]);
        $this->force($this->create('review', 150), 'review');
        $this->create('pending', 100);
        $this->create('dup', 100);
        $this->create('dup', 100);
        $unknown = $this->create('unknown', 100);
        $failing = $this->create('failing', 100);
        $this->sbx->control('POST', '/clock/advance', ['seconds' => 120]);
        $this->sbx->control('POST', '/sweep');

        $unknownBody = ['status' => 'settled_v2', 'status_version' => 7] + $this->client->merchantPayment($unknown)->toArray();
        $this->sbx->fault('GET', "/openapi/v1/merchant-payments/$unknown", ['status' => 200, 'body' => $unknownBody, 'times' => 1000]);
        $this->sbx->fault('GET', "/openapi/v1/merchant-payments/$failing", ['status' => 500, 'times' => 1000]);

        $records = [
            self::booked($this->record('agree', 300, ['order_no' => $agree['order_no']]), $agree),
            self::booked($this->record('agree-ref', 300), $agreeRef),
            $this->record('lost', 500),
            $this->record('expired', 100),
            $this->record('expired-booked', 100, ['booked_event_id' => 'pev_never_paid']),
            $this->record('review', 150),
            self::booked($this->record('refunded', 300, ['order_no' => $refunded['order_no']]), $refunded),
            self::booked($this->record('chargeback', 300), $chargeback),
            $this->record('amount', 310),
            ['currency' => 'EUR'] + $this->record('currency', 200),
            $this->record('testmode', 200, ['order_no' => $testChannel, 'test_mode' => false]),
            $this->record('missing', 999),
            $this->record('missing-order', 999, ['order_no' => '999999999999999999999']),
            $this->record('pending', 100),
            $this->record('dup', 100),
            $this->record('unknown', 100, ['order_no' => $unknown]),
            $this->record('failing', 100, ['order_no' => $failing]),
        ];

        $reports = iterator_to_array($this->client->reconcile($records, ['requeue_failed' => true]), false);
        $this->assertCount(count($records), $reports);
        $names = [];
        foreach ($reports as $i => $report) {
            $record = $records[$i];
            $this->assertInstanceOf(ReconcileReport::class, $report);
            $this->assertSame($record['external_reference'], $report->record);
            $this->assertSame($i, $report->index);
            $this->assertSame(['next_index' => $i + 1, 'last_reference' => $record['external_reference']], $report->cursor);
            $this->check($report, $record, $this->truth($record['external_reference']));
            if ($report->record !== $this->ref('lost')) {
                $this->assertSame(0, $report->requeued, $report->record);
            }
            $this->assertNull($report->requeueError);
            $names[substr($report->record, strlen($this->prefix) + 1)] = $report->finding;
        }
        $this->assertSame([
            'agree' => 'in_agreement',
            'agree-ref' => 'in_agreement',
            'lost' => 'paid_not_booked',
            'expired' => 'in_agreement',
            'expired-booked' => 'booked_not_paid',
            'review' => 'under_review',
            'refunded' => 'booked_not_paid',
            'chargeback' => 'booked_not_paid',
            'amount' => 'mismatch',
            'currency' => 'mismatch',
            'testmode' => 'mismatch',
            'missing' => 'missing_at_service',
            'missing-order' => 'missing_at_service',
            'pending' => 'in_agreement',
            'dup' => 'ambiguous',
            'unknown' => 'unknown_status',
            'failing' => 'lookup_failed',
        ], $names);
        $this->assertSame('expired', $this->one('expired')['status']);
        $this->assertSame('expired', $this->one('expired-booked')['status']);
        $unknownReport = $reports[15];
        $this->assertSame('settled_v2', $unknownReport->details['status']);
        $this->assertSame(7, $unknownReport->serviceStatusVersion);
        $this->assertSame($unknown, $unknownReport->orderNo);
        $failed = $reports[16]->details['error'];
        $this->assertSame(['api', 500, 'server_error'], [$failed['kind'], $failed['http_status'], $failed['code']]);

        // Re-queue: both failed deliveries re-queued; the receiver gets the paid notification.
        $this->assertSame(2, $reports[2]->requeued);
        $lostTruth = $this->one('lost');
        for ($i = 0; $i < 400; $i++) {   // bounded wait for the asynchronous delivery
            if (in_array('paid', array_map(fn ($n) => $n['data']['status'], $this->received()), true)) {
                break;
            }
            usleep(25_000);
        }
        $paid = array_values(array_filter($this->received(), fn ($n) => $n['data']['status'] === 'paid'));
        $this->assertNotEmpty($paid);
        $this->assertSame($lostTruth['event_id'], $paid[0]['data']['event_id']);
        $this->assertSame($lostTruth['order_no'], $paid[0]['data']['order_no']);

        // Safe to run again: the same findings, nothing left to re-queue.
        for ($i = 0; $i < 400 && $this->deliveries($lost) !== ['delivered', 'delivered']; $i++) {
            usleep(25_000);
        }
        $again = iterator_to_array($this->client->reconcile($records, ['requeue_failed' => true]), false);
        $this->assertSame(array_map(fn ($r) => [$r->finding, $r->details], $reports), array_map(fn ($r) => [$r->finding, $r->details], $again));
        $this->assertSame([0], array_values(array_unique(array_map(fn ($r) => $r->requeued, $again))));
    }

    /**
     * One report against the sandbox's payments for its record (faulted records are checked by
     * the caller).
     *
     * @param array<string, mixed> $record
     * @param list<array<string, mixed>> $all
     */
    private function check(ReconcileReport $report, array $record, array $all): void
    {
        $ctx = $report->record . ' ' . json_encode($report->details);
        $t = null;
        if (isset($record['order_no'])) {
            foreach ($all as $candidate) {
                if ($candidate['order_no'] === $record['order_no']) {
                    $t = $candidate;
                }
            }
        } elseif (count($all) === 1) {
            $t = $all[0];
        }
        switch ($report->finding) {
            case 'missing_at_service':
                $this->assertSame([], $all, $ctx);
                $this->assertNull($report->orderNo, $ctx);
                return;
            case 'ambiguous':
                $this->assertGreaterThan(1, count($all), $ctx);
                $this->assertSame(array_column($all, 'order_no'), $report->details['order_nos'], $ctx);
                return;
            case 'lookup_failed':
            case 'unknown_status':
                return;
        }
        $this->assertNotNull($t, $ctx);
        $this->assertSame($t['order_no'], $report->orderNo, $ctx);
        $this->assertSame($t['status_version'], $report->serviceStatusVersion, $ctx);
        $amountOk = $record['expected_amount'] === $t['amount_minor'];
        $currencyOk = $record['currency'] === $t['currency'];
        $testModeOk = !isset($record['test_mode']) || $record['test_mode'] === $t['test_mode'];
        if ($report->finding === 'mismatch') {
            $d = $report->details;
            switch ($d['field']) {
                case 'amount':
                    $this->assertFalse($amountOk, $ctx);
                    $this->assertSame([(string) $record['expected_amount'], (string) $t['amount_minor']], [$d['expected'], $d['actual']], $ctx);
                    return;
                case 'currency':
                    $this->assertTrue($amountOk && !$currencyOk, $ctx);
                    $this->assertSame([$record['currency'], $t['currency']], [$d['expected'], $d['actual']], $ctx);
                    return;
                case 'test_mode':
                    $this->assertTrue($amountOk && $currencyOk && !$testModeOk, $ctx);
                    $this->assertSame($t['test_mode'] ? 'true' : 'false', $d['actual'], $ctx);
                    return;
            }
            $this->fail("unexpected mismatch: $ctx");
        }
        $this->assertTrue($amountOk && $currencyOk && $testModeOk, $ctx);
        $booked = isset($record['booked_event_id']);
        $status = $t['status'];
        if ($status === 'paid' && $booked) {
            $this->assertSame('in_agreement', $report->finding, $ctx);
            $this->assertSame($t['event_id'], $record['booked_event_id'], $ctx);
        } elseif ($status === 'paid') {
            $this->assertSame('paid_not_booked', $report->finding, $ctx);
            $this->assertSame($t['event_id'], $report->details['event_id'], $ctx);
            $this->assertSame($t['status_version'], $report->details['status_version'], $ctx);
            $this->assertSame($t['occurred_at'], $report->details['occurred_at'], $ctx);
        } elseif ($booked) {
            $this->assertContains($status, ['pending', 'expired', 'review', 'refunded', 'chargeback'], $ctx);
            $this->assertSame('booked_not_paid', $report->finding, $ctx);
            $this->assertSame($status, $report->details['status'], $ctx);
        } elseif ($status === 'review') {
            $this->assertSame('under_review', $report->finding, $ctx);
        } else {
            $this->assertContains($status, ['pending', 'expired', 'refunded', 'chargeback'], $ctx);
            $this->assertSame('in_agreement', $report->finding, $ctx);
        }
    }

    public function testARunResumesFromItsCursor(): void
    {
        $paid = $this->create('c-paid', 200);
        $this->pay($paid);
        $this->create('c-pending', 100);
        $this->force($this->create('c-review', 100), 'review');
        $this->create('c-dup', 100);
        $this->create('c-dup', 100);
        $records = [
            $this->record('c-paid', 200),
            $this->record('c-pending', 100),
            $this->record('c-missing', 100),
            $this->record('c-review', 100),
            $this->record('c-dup', 100),
            $this->record('c-paid', 200, ['order_no' => $paid]),
        ];
        $full = iterator_to_array($this->client->reconcile($records), false);
        $this->assertSame(
            ['paid_not_booked', 'in_agreement', 'missing_at_service', 'under_review', 'ambiguous', 'paid_not_booked'],
            array_map(fn ($r) => $r->finding, $full)
        );
        for ($stop = 0; $stop <= count($records); $stop++) {
            $first = [];
            foreach ($this->client->reconcile($records) as $report) {
                if (count($first) === $stop) {
                    break;
                }
                $first[] = $report;
            }
            $options = $first === [] ? [] : ['cursor' => end($first)->cursor];
            $rest = iterator_to_array($this->client->reconcile($records, $options), false);
            $this->assertEquals($full, array_merge($first, $rest), "stopped after $stop");
        }

        try {
            iterator_to_array($this->client->reconcile($records, ['cursor' => ['next_index' => 2, 'last_reference' => $this->ref('c-review')]]));
            $this->fail('a cursor of another list was accepted');
        } catch (ValidationException $e) {
            $this->assertSame('cursor', $e->field());
        }
        try {
            $this->client->reconcile([['booked_eventid' => 'x'] + $records[0]]);
            $this->fail('an unknown key was accepted');
        } catch (ValidationException $e) {
            $this->assertSame('records[0].booked_eventid', $e->field());
        }
        try {
            $this->client->reconcile($records, ['requeue' => true]);
            $this->fail('an unknown option was accepted');
        } catch (ValidationException $e) {
            $this->assertSame('options.requeue', $e->field());
        }
    }
}
