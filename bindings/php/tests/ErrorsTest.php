<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Library;
use Storefront\Tests\SandboxHarness as S;

/** Error mapping: each failure becomes its exception class with the service's details. */
final class ErrorsTest extends TestCase
{
    protected function tearDown(): void
    {
        S::get()->clearFaults();
    }

    /** Contract (Errors): branch on HTTP status and `error`. */
    public function testUnknownPaymentIsA404ApiError(): void
    {
        try {
            (new Client(S::get()->config()))->merchantPayment('MP-DOES-NOT-EXIST');
            $this->fail('expected 404');
        } catch (Storefront\ApiException $e) {
            $this->assertSame(404, $e->httpStatus());
            $this->assertSame('payment_not_found', $e->errorCode());
        }
    }

    /** Contract (limits): description at most 500 bytes, checked before sending. */
    public function testClientSideValidationNamesTheField(): void
    {
        $client = new Client(S::get()->config());
        try {
            $client->createMerchantPayment(['external_reference' => 'php-long', 'amount_minor' => 100, 'currency' => 'USD', 'description' => str_repeat('x', 501)]);
            $this->fail('expected a validation error');
        } catch (Storefront\ValidationException $e) {
            $this->assertSame('description', $e->field());
            $this->assertNull($e->httpStatus());
        }
        try {
            $client->createMerchantPayment(['external_reference' => 'php-float', 'amount_minor' => 12.5, 'currency' => 'USD']);
            $this->fail('a float amount must be refused, not cast');
        } catch (Storefront\ValidationException $e) {
            $this->assertSame('amount_minor', $e->field());
        }
    }

    /** Contract: 429 rate_limited carries Retry-After; a longer wait than the SDK's cap is
     * handed to the caller with the value kept. */
    public function testRateLimitKeepsRetryAfter(): void
    {
        $client = new Client(S::get()->config(['retry' => ['max_attempts' => 2, 'max_retry_after_ms' => 1000]]));
        S::get()->fault('GET', '/openapi/v1/merchant', ['status' => 429, 'body' => ['error' => 'rate_limited'], 'headers' => ['Retry-After' => '7'], 'times' => 5]);
        try {
            $client->merchantProfile();
            $this->fail('expected 429');
        } catch (Storefront\ApiException $e) {
            $this->assertSame(429, $e->httpStatus());
            $this->assertSame('rate_limited', $e->errorCode());
            $this->assertSame(7000, $e->retryAfterMs());
        }
        S::get()->clearFaults();
        $this->assertSame(S::MERCHANT_NO, $client->merchantProfile()['merchant_no']);
    }

    /** Contract: an order POST answered 5xx may have been processed: reported, not re-sent. */
    public function testCatalogOrderWithUnclearOutcomeIsNotResent(): void
    {
        $alice = (new Client(S::get()->config()))->user(S::get()->userToken('alice'));
        S::get()->fault('POST', '/openapi/v1/orders', ['status' => 500, 'body' => ['error' => 'server_error'], 'times' => 3]);
        try {
            $alice->createOrder(S::PRODUCT_BEANS, 1, S::CHANNEL_PLATFORM_COIN);
            $this->fail('no exception');
        } catch (Storefront\OutcomeUnknownException $e) {
            // Issue 12 item 3: no order number exists; the request and the advice are carried.
            $this->assertEquals(
                ['gd_no' => S::PRODUCT_BEANS, 'quantity' => 1, 'payment_no' => S::CHANNEL_PLATFORM_COIN],
                $e->lookup()
            );
            $this->assertNotEmpty($e->advice());
        }
    }

    /** Issue 12 item 3: a 202 on payment start names the order to check the payment with. */
    public function testProviderResultPendingOnPaymentStartCarriesTheOrderNumber(): void
    {
        $alice = (new Client(S::get()->config()))->user(S::get()->userToken('alice'));
        $orderNo = $alice->createOrder(S::PRODUCT_BEANS, 1, S::CHANNEL_CARD_USD);
        S::get()->fault('POST', "/openapi/v1/orders/{$orderNo}/payment", ['status' => 202, 'body' => ['error' => 'provider_result_pending']]);
        try {
            $alice->startPayment($orderNo, S::CHANNEL_CARD_USD);
            $this->fail('no exception');
        } catch (Storefront\ProviderResultPendingException $e) {
            $this->assertSame(['order_no' => $orderNo, 'payment_no' => S::CHANNEL_CARD_USD], $e->lookup());
            $this->assertNotEmpty($e->advice());
            $this->assertSame(0, $alice->paymentStatus($e->lookup()['order_no']));
        }
    }

    /** Contract: HTTP 202 provider_result_pending is not success. */
    public function testProviderResultPendingIsItsOwnOutcome(): void
    {
        S::get()->fault('POST', '/openapi/v1/merchant-payments', ['status' => 202, 'body' => ['error' => 'provider_result_pending']]);
        $this->expectException(Storefront\ProviderResultPendingException::class);
        (new Client(S::get()->config()))->createMerchantPayment(['external_reference' => 'php-202-' . bin2hex(random_bytes(6)), 'amount_minor' => 100, 'currency' => 'USD']);
    }

    /** C would see only the text before a NUL byte: such an argument is refused, not truncated
     * (a Storefront\InvalidArgumentException, like every failure a StorefrontException). */
    public function testNulBytesAreRefusedBeforeReachingC(): void
    {
        $this->expectException(Storefront\InvalidArgumentException::class);
        (new Client(S::get()->config()))->merchantPayment("MP-1\0MP-2");
    }

    /** Contract: HTTPS only; plain HTTP only for loopback, explicitly enabled. */
    public function testPlainHttpToARemoteHostIsRefused(): void
    {
        $this->expectException(Storefront\ConfigException::class);
        new Client(S::get()->config(['base_url' => 'http://api.example.com/api']));
    }

    /** ABI rule: NULL, invalid UTF-8, invalid JSON and oversized input each give their own
     * result and the client still works. */
    public function testBoundaryErrorsHaveTheirOwnClassesAndTheClientSurvives(): void
    {
        $client = new Client(S::get()->config());
        $handle = (new ReflectionProperty(Client::class, 'handle'));
        $handle->setAccessible(true);
        $pointer = $handle->getValue($client);
        $cases = [
            [null, Storefront\NullArgumentException::class],
            ["\xff\xfe", Storefront\InvalidUtf8Exception::class],
            ['{"external_reference": ', Storefront\InvalidJsonException::class],
            ['42', Storefront\InvalidArgumentException::class],
            [str_repeat(' ', Library::maxInputBytes() + 1), Storefront\InputTooLargeException::class],
        ];
        foreach ($cases as [$argument, $class]) {
            try {
                Library::callJson('sf_merchant_payment_create', $pointer, $argument);
                $this->fail("expected $class");
            } catch (Storefront\StorefrontException $e) {
                $this->assertSame($class, get_class($e));
                $this->assertSame('request_json', $e->field());
            }
        }
        $this->assertSame(S::MERCHANT_NO, $client->merchantProfile()['merchant_no']);
    }
}
