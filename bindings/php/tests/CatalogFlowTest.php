<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Tests\SandboxHarness as S;
use Storefront\Webhook;

/** Catalog flow through the PHP wrapper against the standalone sandbox. */
final class CatalogFlowTest extends TestCase
{
    private Client $client;
    private Storefront\UserSession $alice;

    protected function setUp(): void
    {
        $this->client = new Client(S::get()->config());
        $this->alice = $this->client->user(S::get()->userToken('alice'));
    }

    /** Contract: profile and products accept a user or a client token; pages carry total. */
    public function testProfileAndProductsReadWithClientOrUserToken(): void
    {
        $this->assertSame(S::MERCHANT_NO, $this->client->merchantProfile()['merchant_no']);
        $this->assertSame(S::MERCHANT_NO, $this->alice->merchantProfile()['merchant_no']);
        $page = $this->client->products(['limit' => 20]);
        $this->assertSame(S::ENABLED_PRODUCT_COUNT, $page['total']);
        $this->assertCount(20, $page['list']);
        $numbers = array_map(fn ($p) => $p['gd_no'], iterator_to_array($this->alice->iterProducts(['limit' => 20]), false));
        $this->assertCount(S::ENABLED_PRODUCT_COUNT, array_unique($numbers));
        $beans = $this->client->products(['gd_no' => S::PRODUCT_BEANS])['list'][0];
        $this->assertIsInt($beans['actual_price']);
        $this->assertInstanceOf(\Storefront\Userinfo::class, $this->alice->userinfo());
        $this->assertIsArray($this->alice->userinfo()->toArray());
    }

    /** Contract: the platform coin pays during start; the redirect is absolute against the
     * service origin; the wait stops at paid and reads the order. */
    public function testPlatformCoinOrderPaidAtStartAndWaitedFor(): void
    {
        $orderNo = $this->alice->createOrder(S::PRODUCT_BEANS, 1, S::CHANNEL_PLATFORM_COIN);
        $this->assertSame(0, $this->alice->order($orderNo)['status']);
        $start = $this->alice->startPayment($orderNo, S::CHANNEL_PLATFORM_COIN);
        $this->assertStringStartsWith(S::get()->origin(), $start['redirect']);
        $outcome = $this->alice->waitForPayment($orderNo, 50, 10000);
        $this->assertSame(1, $outcome['payment_status']);
        $this->assertContains($outcome['order']['status'], [1, 3]);
        $this->assertSame(1, $this->alice->paymentStatus($orderNo));
    }

    /** Contract: payment start is not proof of payment; the card trade completes later. */
    public function testCardOrderPaidLaterIsSeenByTheWait(): void
    {
        $orderNo = $this->alice->createOrder(S::PRODUCT_BEANS, 1, S::CHANNEL_CARD_USD);
        $start = $this->alice->startPayment($orderNo, S::CHANNEL_CARD_USD);
        $this->assertSame(0, $this->alice->paymentStatus($orderNo));
        S::get()->control('POST', "/catalog/trades/{$start['trade_no']}/pay");
        $this->assertSame(1, $this->alice->waitForPayment($orderNo, 50, 10000)['payment_status']);
    }

    /** Issue 12 item 3: no final status within the timeout is the outcome "still pending". */
    public function testWaitReportsStillPendingAsAnOutcome(): void
    {
        $orderNo = $this->alice->createOrder(S::PRODUCT_BEANS, 1, S::CHANNEL_CARD_USD);
        $outcome = $this->alice->waitForPayment($orderNo, 20, 200);
        $this->assertSame('still_pending', $outcome['outcome']);
        $this->assertSame(0, $outcome['last_status']);
        $this->assertFalse($outcome['last_poll_failed']);
        $this->assertArrayNotHasKey('order', $outcome);
    }

    /** Contract: other_ipu keys are the key part of other_ipu_cnf, never labels. */
    public function testOtherIpuUsesKeysNotLabels(): void
    {
        $product = $this->client->products(['gd_no' => S::PRODUCT_GIFT_CARD])['list'][0];
        $extra = Webhook::otherIpu($product, ['recipient_email' => 'bob@example.com']);
        $this->assertSame(['recipient_email' => 'bob@example.com'], $extra);
        try {
            Webhook::otherIpu($product, ['Recipient email' => 'bob@example.com']);
            $this->fail('a label must be refused');
        } catch (Storefront\ValidationException $e) {
            $this->assertSame('other_ipu.Recipient email', $e->field());
        }
        $orderNo = $this->alice->createOrder(S::PRODUCT_GIFT_CARD, 1, S::CHANNEL_PLATFORM_COIN, $extra);
        $this->assertSame(S::PRODUCT_GIFT_CARD, $this->alice->order($orderNo)['gd_no']);
    }
}
