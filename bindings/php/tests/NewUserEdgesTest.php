<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\AmountException;
use Storefront\ApiException;
use Storefront\Client;
use Storefront\MerchantPaymentRequest;
use Storefront\Money;
use Storefront\OtherIpuField;
use Storefront\OtherIpuForm;
use Storefront\PaymentStatus;
use Storefront\Tests\SandboxHarness as S;
use Storefront\TransportException;
use Storefront\ValidationException;
use Storefront\Webhook;

/**
 * Issue 12 (the new-user sharp edges, in PHP): the idempotency key exists before sending and
 * survives a failed create; payment status answers isPaid / needsVerification; decimal amounts
 * convert to minor units and back through the core; a product's other_ipu fields are listed; a
 * create answer's missing status_version is null. Over real HTTP against the standalone
 * sandbox where the service is involved.
 */
final class NewUserEdgesTest extends TestCase
{
    private const CREATE = '/openapi/v1/merchant-payments';

    protected function tearDown(): void
    {
        S::get()->clearFaults();
    }

    /** A client that does not retry by itself, so the first failure reaches the caller. */
    private function oneAttempt(): Client
    {
        return new Client(S::get()->config(['retry' => ['max_attempts' => 1]]));
    }

    /**
     * Contract: "On a timeout, retry with the original key and parameters; do not use a new
     * key." The service stores the payment, then the connection drops: the key was known before
     * the call, the exception carries it, and the retry answers the same payment (one payment).
     */
    public function testTheKeyExistsBeforeSendingAndALostAnswerIsRetriedToOnePayment(): void
    {
        $reference = 'php-key-' . bin2hex(random_bytes(6));
        $request = new MerchantPaymentRequest(['external_reference' => $reference, 'amount_minor' => 1999, 'currency' => 'USD']);
        $stored = $request->idempotencyKey(); // what the app persists before calling
        $this->assertMatchesRegularExpression('/^sf-[0-9a-f]{32}$/', $stored);
        $this->assertNotSame($stored, (new MerchantPaymentRequest(['external_reference' => $reference, 'amount_minor' => 1999, 'currency' => 'USD']))->idempotencyKey());

        S::get()->fault('POST', self::CREATE, ['after_handler' => true, 'drop_connection' => true]);
        $client = $this->oneAttempt();
        try {
            $client->createMerchantPayment($request);
            $this->fail('the dropped connection must surface');
        } catch (TransportException $lost) {
            $this->assertSame($stored, $lost->idempotencyKey());
        }
        $listed = $client->listMerchantPayments(['external_reference' => $reference]);
        $this->assertCount(1, $listed); // processed although the caller saw a failure

        $again = new MerchantPaymentRequest(['external_reference' => $reference, 'amount_minor' => 1999, 'currency' => 'USD', 'idempotency_key' => $stored]);
        $retried = $client->createMerchantPayment($again);
        $this->assertSame($stored, $retried['idempotency_key']);
        $this->assertSame($listed[0]['order_no'], $retried['order_no']);
        $this->assertSame([$retried['order_no']], array_column($client->listMerchantPayments(['external_reference' => $reference]), 'order_no'));
    }

    /** An array request without a key gets one before sending; a 5xx after processing carries it. */
    public function testAnArrayRequestGetsItsKeyBeforeSendingAndThe5xxCarriesIt(): void
    {
        $reference = 'php-key-array-' . bin2hex(random_bytes(6));
        $body = ['external_reference' => $reference, 'amount_minor' => 500, 'currency' => 'USD'];
        S::get()->fault('POST', self::CREATE, ['after_handler' => true, 'status' => 500]);
        $client = $this->oneAttempt();
        try {
            $client->createMerchantPayment($body);
            $this->fail('the 500 must surface');
        } catch (ApiException $failed) {
            $this->assertSame(500, $failed->httpStatus());
            $key = $failed->idempotencyKey();
        }
        $this->assertNotNull($key);
        $retried = $client->createMerchantPayment($body + ['idempotency_key' => $key]);
        $this->assertSame([$retried['order_no']], array_column($client->listMerchantPayments(['external_reference' => $reference]), 'order_no'));
        try {
            $client->createMerchantPayment(['amount_minor' => 0] + $body);
            $this->fail('amount 0 is refused');
        } catch (ValidationException $refused) {
            $this->assertNotNull($refused->idempotencyKey());
        }
    }

    /** Contract: only `paid` confirms payment; review and unknown statuses need verification. */
    public function testPaymentStatusAnswersTheContractQuestions(): void
    {
        $expected = [
            'pending' => [false, false], 'paid' => [true, false], 'review' => [false, true],
            'expired' => [false, false], 'refunded' => [false, false], 'chargeback' => [false, false],
            'settled_maybe' => [false, true], 'PAID' => [false, true], '' => [false, true],
        ];
        foreach ($expected as $text => [$paid, $verify]) {
            $status = PaymentStatus::of((string) $text);
            $this->assertSame([$paid, $verify], [$status->isPaid(), $status->needsVerification()], (string) $text);
            $this->assertSame((string) $text, (string) $status);
            $this->assertSame(json_encode((string) $text), json_encode($status));
        }
        $this->expectException(ValidationException::class);
        PaymentStatus::of(['no_status' => 1]);
    }

    /**
     * Payments read typed over HTTP: paid is paid; an unclear session at expiry is review (the
     * shared sandbox's clock moves by two minutes, well inside every token and payment the other
     * tests hold).
     */
    public function testPaymentsReadTypedOverHttp(): void
    {
        $sandbox = S::get();
        $client = new Client($sandbox->config());
        $reference = 'php-status-' . bin2hex(random_bytes(6));
        $created = $client->createMerchantPayment(new MerchantPaymentRequest(['external_reference' => $reference, 'amount_minor' => 1250, 'currency' => 'USD']));
        $this->assertSame('pending', $created['status']);
        $this->assertFalse(PaymentStatus::of($created)->isPaid());
        $sandbox->control('POST', "/merchant-payments/{$created['order_no']}/checkout/pay", ['payment_no' => S::CHANNEL_CARD_USD]);
        $this->assertTrue(PaymentStatus::of($client->merchantPayment($created['order_no']))->isPaid());

        $unclear = $client->createMerchantPayment(['external_reference' => "$reference-review", 'amount_minor' => 900, 'currency' => 'USD', 'expires_in' => 60]);
        $sandbox->control('POST', "/merchant-payments/{$unclear['order_no']}/checkout/session", ['payment_no' => S::CHANNEL_CARD_USD]);
        $sandbox->control('POST', '/clock/advance', ['seconds' => 120]);
        $review = PaymentStatus::of($client->listMerchantPayments(['order_no' => $unclear['order_no']])[0]);
        $this->assertSame(PaymentStatus::REVIEW, $review->value());
        $this->assertTrue($review->needsVerification());
        $this->assertFalse($review->isPaid());
    }

    /** Contract: amount_minor = amount x 10^currency_decimals, exact; the core's cases. */
    public function testDecimalTextConvertsToMinorUnitsAndBackExactly(): void
    {
        $this->assertSame(1999, Money::toMinor('19.99', 2));
        $this->assertSame(1250, Money::toMinor('12.5', 2));
        $this->assertSame(1250, Money::toMinor('12.500', 2));
        $this->assertSame(1200, Money::toMinor('1200', 0));
        $this->assertSame(1, Money::toMinor('0.00000001', 8));
        $this->assertSame(9007199254740991, Money::toMinor('9007199254740991', 0));
        $this->assertSame('19.99', Money::fromMinor(1999, 2));
        $this->assertSame('1250', Money::fromMinor(1250, 0));
        $this->assertSame('0.005', Money::fromMinor(5, 3));
        $this->assertSame('0.000000000000001250', Money::fromMinor(1250, 18));
        foreach ([[1, 2], [1999, 2], [9007199254740991, 2], [7, 8]] as [$minor, $decimals]) {
            $this->assertSame($minor, Money::toMinor(Money::fromMinor($minor, $decimals), $decimals));
        }
        $cases = [
            ['12.505', 2, 'too_many_decimals'], ['19.999', 2, 'too_many_decimals'], ['0', 2, 'not_positive'],
            ['-1', 2, 'not_positive'], ['9007199254740992', 0, 'out_of_range'],
            ['999999999999999999999999', 2, 'out_of_range'], ['1', 19, 'unsupported_scale'],
        ];
        foreach (['', '.', '1.', '.5', '1e3', '1,5', 'NaN', ' 1', '1 ', '--1'] as $bad) {
            $cases[] = [$bad, 2, 'syntax'];
        }
        foreach ($cases as [$text, $decimals, $reason]) {
            try {
                Money::toMinor($text, $decimals);
                $this->fail("accepted \"$text\"");
            } catch (AmountException $e) {
                $this->assertSame([$reason, 'amount'], [$e->reason(), $e->field()], "\"$text\"");
            }
        }
        foreach ([[0, 2, 'not_positive'], [-5, 2, 'not_positive'], [9007199254740992, 2, 'out_of_range'], [1250, 19, 'unsupported_scale']] as [$minor, $decimals, $reason]) {
            try {
                Money::fromMinor($minor, $decimals);
                $this->fail("formatted $minor");
            } catch (AmountException $e) {
                $this->assertSame([$reason, 'amount_minor'], [$e->reason(), $e->field()], (string) $minor);
            }
        }
        $client = new Client(S::get()->config());
        $created = $client->createMerchantPayment(['external_reference' => 'php-money-' . bin2hex(random_bytes(6)), 'amount_minor' => Money::toMinor('19.99', 2), 'currency' => 'USD']);
        $this->assertSame('19.99', Money::fromMinor($created['amount_minor'], $created['currency_decimals']));
    }

    /** Contract (Product): other_ipu_cnf is key=label=flag; the order uses the key part. */
    public function testAProductsOtherIpuFieldsAreListedAndBuildTheOrder(): void
    {
        $client = new Client(S::get()->config());
        $alice = $client->user(S::get()->userToken('alice'));
        $product = $client->products(['gd_no' => S::PRODUCT_GIFT_CARD])['list'][0];
        $form = new OtherIpuForm($product);
        $this->assertEquals(
            [new OtherIpuField('recipient_email', 'Recipient email', true), new OtherIpuField('gift_message', 'Gift message', false)],
            $form->fields()
        );
        $this->assertSame(['recipient_email'], array_map(fn (OtherIpuField $f) => $f->key, $form->required()));
        $extra = $form->build(['recipient_email' => 'bob@example.com', 'gift_message' => '  ']);
        $this->assertSame(['recipient_email' => 'bob@example.com'], $extra);
        try {
            $form->build(['gift_message' => 'hi']);
            $this->fail('a required input is missing');
        } catch (ValidationException $e) {
            $this->assertSame('other_ipu.recipient_email', $e->field());
        }
        $orderNo = $alice->createOrder(S::PRODUCT_GIFT_CARD, 1, S::CHANNEL_PLATFORM_COIN, $extra);
        $this->assertSame(S::PRODUCT_GIFT_CARD, $alice->order($orderNo)['gd_no']);
        $this->assertSame([], (new OtherIpuForm($client->products(['gd_no' => S::PRODUCT_BEANS])['list'][0]))->fields());
        try {
            new OtherIpuForm(['other_ipu_cnf' => ['nokey']] + $product);
            $this->fail('a malformed entry is refused');
        } catch (ValidationException $e) {
            $this->assertSame('other_ipu_cnf', $e->field());
        }
    }

    /** Contract: status_version is "returned by query and in notifications"; 0 is a real version. */
    public function testACreateAnswerHasANullStatusVersionAndAQueryHasOne(): void
    {
        $client = new Client(S::get()->config());
        $reference = 'php-version-' . bin2hex(random_bytes(6));
        $created = $client->createMerchantPayment(['external_reference' => $reference, 'amount_minor' => 300, 'currency' => 'USD']);
        $this->assertArrayHasKey('status_version', $created->toArray());
        $this->assertNull($created['status_version']);
        $queried = $client->merchantPayment($created['order_no']);
        $this->assertIsInt($queried['status_version']);
        S::get()->control('POST', "/merchant-payments/{$created['order_no']}/checkout/pay", ['payment_no' => S::CHANNEL_CARD_USD]);
        $this->assertGreaterThan($queried['status_version'], $client->merchantPayment($created['order_no'])['status_version']);
        Webhook::checkExpectation($created, ['external_reference' => $reference, 'amount_minor' => 300, 'currency' => 'USD', 'test_mode' => false]);
    }
}
