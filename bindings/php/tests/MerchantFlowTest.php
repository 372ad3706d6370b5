<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Tests\SandboxHarness as S;
use Storefront\Webhook;

/**
 * Merchant collection through the PHP wrapper: create, pay at the checkout, the signed
 * notification verified by a real PHP endpoint (tests/receiver.php under `php -S`), then
 * reconciled by query.
 */
final class MerchantFlowTest extends TestCase
{
    private const NOTIFY_SECRET = 'whsec_php_suite_0123456789abcdef01234';

    /** @var resource|null */
    private $receiver = null;
    private string $dir = '';
    private string $url = '';

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/sf-php-receiver-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $env = getenv() + ['RECEIVER_DIR' => $this->dir, 'NOTIFY_SECRET' => self::NOTIFY_SECRET];
        $this->receiver = proc_open(
            // Web SAPIs need ffi.enable=true (the CLI's default "preload" covers only the CLI).
            [PHP_BINARY, '-d', 'ffi.enable=1', '-S', "127.0.0.1:$port", __DIR__ . '/receiver.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$this->dir/server.log", 'w'], 2 => ['file', "$this->dir/server.log", 'a']],
            $pipes,
            null,
            $env
        );
        $this->url = "http://127.0.0.1:$port/hooks/storefront";
        // Bounded wait until the receiver listens; not a timing assertion.
        for ($i = 0; $i < 100 && @fsockopen('127.0.0.1', $port) === false; $i++) {
            usleep(50_000);
        }
    }

    protected function tearDown(): void
    {
        if (is_resource($this->receiver)) {
            proc_terminate($this->receiver);
            proc_close($this->receiver);
        }
        foreach (glob("$this->dir/*") ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->dir);
        S::get()->clearFaults();
    }

    /** Contract: the directory lists channels by their real payment_no. */
    public function testChannelDirectoryListsRealChannelIdentifiers(): void
    {
        $numbers = array_column((new Client(S::get()->config()))->channels(), 'payment_no');
        $this->assertContains(S::CHANNEL_PLATFORM_COIN, $numbers);
        $this->assertContains(S::CHANNEL_CARD_USD, $numbers);
    }

    /** Contract (merchant collection and Events): create returns the checkout address and the
     * idempotency key; the signed paid notification verifies at the merchant's endpoint and
     * matches the expectation; the query agrees. */
    public function testMerchantPaymentPaidNotifiedVerifiedAndReconciled(): void
    {
        $client = new Client(S::get()->config());
        $reference = 'php-order-' . bin2hex(random_bytes(8));
        $created = $client->createMerchantPayment([
            'external_reference' => $reference,
            'amount_minor' => 1250,
            'currency' => 'USD',
            'notify_url' => $this->url,
            'notify_secret' => self::NOTIFY_SECRET,
        ]);
        $this->assertSame('pending', $created['status']);
        $this->assertNotEmpty($created['idempotency_key']);
        $orderNo = $created['order_no'];
        S::get()->control('POST', "/merchant-payments/$orderNo/checkout/pay", ['payment_no' => S::CHANNEL_CARD_USD]);

        $paid = null;
        // Bounded wait for the asynchronous delivery; not a timing assertion.
        for ($i = 0; $i < 600 && $paid === null; $i++) {
            foreach (glob("$this->dir/*.json") ?: [] as $file) {
                $notification = json_decode((string) file_get_contents($file), true);
                if ($notification['data']['order_no'] === $orderNo && $notification['data']['status'] === 'paid') {
                    $paid = $notification;
                }
            }
            usleep(100_000);
        }
        $this->assertNotNull($paid, 'the paid notification reached the receiver and verified');
        $this->assertSame([], glob("$this->dir/rejected-*") ?: []);
        $expected = ['external_reference' => $reference, 'amount_minor' => 1250, 'currency' => 'USD', 'test_mode' => false];
        Webhook::checkExpectation($paid['data'], $expected);
        $this->assertSame('stale', Webhook::statusVersionDecision($paid['data']['status_version'], 0));

        $queried = $client->merchantPayment($orderNo);
        $this->assertSame('paid', $queried['status']);
        $this->assertSame($paid['data']['event_id'], $queried['event_id']);
        $listed = $client->listMerchantPayments(['external_reference' => $reference]);
        $this->assertSame([$orderNo], array_column($listed, 'order_no'));
        $records = $client->notificationRecords($orderNo);
        $this->assertNotEmpty($records);
        $this->assertTrue($client->requeueNotification($orderNo, $records[0]['event_id']));
    }

    /** Contract: the same key with identical parameters returns the same payment; a changed
     * amount under the same key gives 409 payment_conflict. */
    public function testSameIdempotencyKeyGivesTheSamePaymentAndChangesConflict(): void
    {
        $client = new Client(S::get()->config());
        $request = ['external_reference' => 'php-idem-' . bin2hex(random_bytes(8)), 'amount_minor' => 990, 'currency' => 'USD'];
        $first = $client->createMerchantPayment($request);
        $again = $client->createMerchantPayment(['idempotency_key' => $first['idempotency_key']] + $request);
        $this->assertSame($first['order_no'], $again['order_no']);
        try {
            $client->createMerchantPayment(['idempotency_key' => $first['idempotency_key'], 'amount_minor' => 991] + $request);
            $this->fail('a changed amount under the same key must conflict');
        } catch (Storefront\ApiException $e) {
            $this->assertSame(409, $e->httpStatus());
            $this->assertSame('payment_conflict', $e->errorCode());
        }
    }
}
