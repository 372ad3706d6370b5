<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Channel;
use Storefront\Client;
use Storefront\CreatedMerchantPayment;
use Storefront\MerchantPayment;
use Storefront\MerchantProfile;
use Storefront\Product;
use Storefront\ProductPage;
use Storefront\Result;
use Storefront\Tests\SandboxHarness as S;
use Storefront\VerifiedNotification;
use Storefront\Webhook;
use Storefront\WebhookVerifier;

/**
 * Issue 18 item 6: results are readonly objects with typed, snake_case properties, and the
 * arrays of earlier versions are still there (array access, toArray(), json_encode, foreach).
 * Money stays exact: ints for minor units and eight-decimal amounts, settlement_coin a string.
 */
final class TypedResultsTest extends TestCase
{
    public function testMerchantPaymentsAreTypedAndStillArrays(): void
    {
        $client = new Client(S::get()->config());
        $reference = 'php-typed-' . bin2hex(random_bytes(6));
        $created = $client->createMerchantPayment(['external_reference' => $reference, 'amount_minor' => 1250, 'currency' => 'USD']);
        $this->assertInstanceOf(CreatedMerchantPayment::class, $created);
        $this->assertInstanceOf(MerchantPayment::class, $created);
        $this->assertSame([$reference, 1250, 'USD', 2, null], [$created->external_reference, $created->amount_minor, $created->currency, $created->currency_decimals, $created->status_version]);
        $this->assertSame($created->order_no, $created['order_no']);
        $this->assertSame($created->idempotency_key, $created['idempotency_key']);
        $this->assertIsString($created->checkout_url);
        // The checkout token is redacted in var_dump/print_r, never in the property itself.
        $this->assertStringNotContainsString($created->checkout_url, print_r($created, true));
        $this->assertStringContainsString('[REDACTED]', print_r($created, true));
        $this->assertSame(json_encode($created->toArray()), json_encode($created));
        $this->assertSame($created->toArray(), iterator_to_array($created));
        $this->assertCount(count($created->toArray()), $created);
        $this->assertFalse(isset($created['status_version']));   // null, as isset() on the array said

        $payment = $client->merchantPayment($created->order_no);
        $this->assertSame($created->order_no, $payment->order_no);
        $this->assertIsInt($payment->status_version);
        $this->assertSame('pending', Storefront\PaymentStatus::of($payment)->value());
        $listed = $client->listMerchantPayments(['external_reference' => $reference]);
        $this->assertContainsOnlyInstancesOf(MerchantPayment::class, $listed);
        $this->assertSame([$created->order_no], array_column($listed, 'order_no'));
        Webhook::checkExpectation($payment, ['external_reference' => $reference, 'amount_minor' => 1250, 'currency' => 'USD', 'test_mode' => false]);

        $channels = $client->channels();
        $this->assertContainsOnlyInstancesOf(Channel::class, $channels);
        $this->assertIsBool($channels[0]->login_required);
        $this->assertInstanceOf(MerchantProfile::class, $client->merchantProfile());
        $this->assertSame('M10001', $client->merchantProfile()->merchant_no);
    }

    public function testProductsAreExactIntegers(): void
    {
        $client = new Client(S::get()->config());
        $page = $client->products(['limit' => 3]);
        $this->assertInstanceOf(ProductPage::class, $page);
        $this->assertContainsOnlyInstancesOf(Product::class, $page->list);
        $this->assertIsArray($page['list'][0]);                   // nested values as arrays
        $this->assertIsInt($page->list[0]->actual_price);        // eight-decimal fixed point, exact
        $this->assertSame($page['list'][0]['actual_price'], $page->list[0]->actual_price);
        foreach ($client->iterProducts(['limit' => 50]) as $product) {
            $this->assertInstanceOf(Product::class, $product);
        }
    }

    public function testReadOnly(): void
    {
        $payment = new MerchantPayment(['order_no' => 'MP1', 'external_reference' => 'R1', 'amount_minor' => 1, 'currency' => 'USD',
            'currency_decimals' => 2, 'status' => 'paid', 'status_version' => 3, 'test_mode' => false, 'expires_at' => '2026-01-01T00:00:00Z',
            'settlement_coin' => '1250000000']);
        $this->assertSame('1250000000', $payment->settlement_coin);
        $this->assertSame('', $payment->payment_no);
        try {
            $payment['status'] = 'pending';
            $this->fail('array writes must be refused');
        } catch (\LogicException $e) {
            $this->assertStringContainsString('read-only', $e->getMessage());
        }
        $this->expectException(\Error::class);
        $payment->status = 'pending';   // @phpstan-ignore-line readonly
    }

    public function testAVerifiedNotification(): void
    {
        $secret = 'whsec_typed_0123456789abcdef0123456789';
        $body = (string) json_encode(['id' => 'EVT-7', 'type' => 'merchant_payment.status_changed', 'api_version' => 1,
            'created_at' => '2026-09-21T12:00:00Z', 'data' => ['order_no' => 'MP7', 'external_reference' => 'R7', 'payment_no' => 'ch_card_usd',
                'amount_minor' => 1250, 'currency' => 'USD', 'currency_decimals' => 2, 'status' => 'paid', 'status_version' => 2,
                'test_mode' => false, 'expires_at' => '2026-09-21T12:30:00Z', 'event_id' => 'PE7']]);
        $now = time();
        $notification = (new WebhookVerifier([$secret]))->verify(
            ['X-Service-Event-ID' => 'EVT-7', 'X-Service-Timestamp' => (string) $now, 'X-Service-Signature' => Webhook::sign($secret, $now, $body)],
            $body
        );
        $this->assertInstanceOf(VerifiedNotification::class, $notification);
        $this->assertInstanceOf(Result::class, $notification);
        $this->assertSame(['EVT-7', 'PE7', 2], [$notification->id, $notification->data->event_id, $notification->data->status_version]);
        $this->assertSame(['EVT-7', 'PE7'], [$notification->toArray()['id'], $notification->toArray()['data']['event_id']]);
        $this->assertIsArray($notification['data']);
        Webhook::checkExpectation($notification['data'], ['external_reference' => 'R7', 'amount_minor' => 1250, 'currency' => 'USD', 'test_mode' => false]);
        Webhook::checkExpectation($notification->data, ['external_reference' => 'R7', 'amount_minor' => 1250, 'currency' => 'USD', 'test_mode' => false]);
    }
}
