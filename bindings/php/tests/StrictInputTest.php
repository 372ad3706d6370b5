<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Library;
use Storefront\Tests\SandboxHarness as S;
use Storefront\ValidationException;
use Storefront\Webhook;

/**
 * Strict input (issue 9): a misspelt key in a configuration or request array, and a value an
 * integer field cannot hold (a float, a numeric string, a bool, a negative number for an
 * unsigned field), is a ValidationException naming the key; nothing is sent and nothing is cast.
 */
final class StrictInputTest extends TestCase
{
    private function assertRefused(string $field, callable $call): ValidationException
    {
        try {
            $call();
        } catch (ValidationException $e) {
            $this->assertSame($field, $e->field(), $e->getMessage());
            $this->assertNull($e->httpStatus());
            return $e;
        }
        $this->fail("expected a ValidationException naming $field");
    }

    public function testMisspeltConfigurationKeysAreRefused(): void
    {
        $e = $this->assertRefused('atempt_timeout_ms', fn () => new Client(S::get()->config(['atempt_timeout_ms' => 100])));
        $this->assertStringContainsString('atempt_timeout_ms', $e->getMessage());
        $this->assertRefused('retry.max_attempt', fn () => new Client(S::get()->config(['retry' => ['max_attempt' => 1]])));
        $this->assertRefused('clientSecret', fn () => new Client(S::get()->config(['clientSecret' => 'x'])));
        $this->assertRefused('persistant', fn () => new Client(S::get()->config(), ['persistant' => true]));
    }

    /** The library refuses unknown keys itself too, for JSON that bypasses the wrapper's check. */
    public function testRateLimitSettingsAreAcceptedAndTheirKeysChecked(): void
    {
        $client = new Client(S::get()->config([
            'rate_limits' => ['enabled' => true, 'create_per_window' => 30, 'window_ms' => 60000],
            'max_in_flight' => 16,
        ]));
        $this->assertNotEmpty($client->channels());
        $this->assertRefused('rate_limits.window', fn () => new Client(S::get()->config(['rate_limits' => ['window' => 5]])));
        $this->assertRefused('max_in_flight', fn () => new Client(S::get()->config(['max_in_flight' => -1])));
    }

    public function testTheLibraryRefusesUnknownKeysItself(): void
    {
        $config = S::get()->config(['retry' => ['max_attempt' => 1]]);
        $this->assertRefused('retry.max_attempt', fn () => Library::callHandle('sf_client_new', 'sf_client', Library::toJson($config)));
    }

    /** notifyUrl (for notify_url) must not create a payment without notifications. */
    public function testMisspeltMerchantPaymentKeyCreatesNothing(): void
    {
        $client = new Client(S::get()->config());
        $reference = 'php-strict-' . bin2hex(random_bytes(8));
        S::get()->control('DELETE', '/requests');
        $this->assertRefused('notifyUrl', fn () => $client->createMerchantPayment([
            'external_reference' => $reference, 'amount_minor' => 1250, 'currency' => 'USD',
            'notifyUrl' => 'https://merchant.example.com/hooks', 'notify_secret' => 'whsec_strict_0123456789abcdef0123456',
        ]));
        $posts = S::get()->control('GET', '/requests?method=POST');
        $this->assertSame([], array_values(array_filter($posts, fn ($r) => str_contains((string) ($r['body'] ?? ''), $reference))), 'nothing was sent');
        $this->assertSame([], $client->listMerchantPayments(['external_reference' => $reference]), 'no payment for that reference');
    }

    public function testMisspeltQueryAndExpectationKeysAreRefused(): void
    {
        $client = new Client(S::get()->config());
        $this->assertRefused('external_ref', fn () => $client->listMerchantPayments(['external_ref' => 'R1']));
        $this->assertRefused('serch_value', fn () => $client->products(['serch_value' => 'beans']));
        $this->assertRefused('pgae', fn () => iterator_to_array($client->iterProducts(['pgae' => 2])));
        $alice = $client->user(S::get()->userToken('alice'));
        $this->assertRefused('serch_value', fn () => $alice->products(['serch_value' => 'beans']));
        $expected = ['external_reference' => 'R1', 'amount' => 1250, 'currency' => 'USD', 'test_mode' => false];
        $this->assertRefused('amount', fn () => Webhook::checkExpectation(['external_reference' => 'R1'], $expected));
    }

    /** Integers are never cast: floats, numeric strings and bools are refused, and so is a
     * value outside the C type (negative for an unsigned field, beyond uint32_t). */
    public function testIntegersAreNeverCastAndStayInTheCRange(): void
    {
        $client = new Client(S::get()->config());
        $payment = ['external_reference' => 'php-int-' . bin2hex(random_bytes(6)), 'currency' => 'USD'];
        foreach (['1250', 1250.0, true, -5] as $amount) {
            $this->assertRefused('amount_minor', fn () => $client->createMerchantPayment($payment + ['amount_minor' => $amount]));
        }
        $this->assertRefused('expires_in', fn () => $client->createMerchantPayment($payment + ['amount_minor' => 100, 'expires_in' => 4294967296]));
        $this->assertRefused('retry.max_attempts', fn () => new Client(S::get()->config(['retry' => ['max_attempts' => 1.0]])));
        $this->assertRefused('attempt_timeout_ms', fn () => new Client(S::get()->config(['attempt_timeout_ms' => -1])));
        $this->assertRefused('connect_timeout_ms', fn () => new Client(S::get()->config(['connect_timeout_ms' => -1])));
        // Issue 12 item 3: the connection timeout is settable like every core setting.
        $this->assertSame(S::MERCHANT_NO, (new Client(S::get()->config(['connect_timeout_ms' => 2000])))->merchantProfile()['merchant_no']);
        $this->assertRefused('scopes[1]', fn () => new Client(S::get()->config(['scopes' => ['openid', 7]])));
        $this->assertRefused('limit', fn () => $client->products(['limit' => -1]));
        $this->assertRefused('page', fn () => $client->products(['page' => '2']));
        $this->assertRefused('limit', fn () => $client->listMerchantPayments(['order_no' => 'MP1', 'limit' => 2.5]));
        $this->assertRefused('limit', fn () => $client->notificationRecords('MP1', -1));
        $this->assertRefused('limit', fn () => $client->notificationRecords('MP1', '5'));
        $alice = $client->user(S::get()->userToken('alice'));
        foreach (['1', 1.0, -1] as $quantity) {
            $this->assertRefused('quantity', fn () => $alice->createOrder(S::PRODUCT_BEANS, $quantity, S::CHANNEL_PLATFORM_COIN));
        }
        $this->assertRefused('interval_ms', fn () => $alice->waitForPayment('O1', -1, 1000));
        $this->assertRefused('timeout_ms', fn () => $alice->waitForPayment('O1', 100, 1000.0));
        $this->assertRefused('stored', fn () => Webhook::statusVersionDecision(1.0, 2));
        $this->assertRefused('incoming', fn () => Webhook::statusVersionDecision(null, -1));
        // The client still works, and a well-formed request goes through.
        $this->assertSame(S::MERCHANT_NO, $client->merchantProfile()['merchant_no']);
    }

    /** Optional keys given as null are left out, as if absent. */
    public function testNullOptionalValuesAreLeftOut(): void
    {
        $client = new Client(S::get()->config(['user_agent' => null, 'retry' => ['max_attempts' => null]]));
        $this->assertSame(1, $client->products(['limit' => 1, 'gd_no' => null])['limit']);
    }
}
