<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\Library;
use Storefront\StorefrontException;
use Storefront\Tests\SandboxHarness as S;

/**
 * The wrapper's own key check (Storefront\Input) must not drift from the library's: every key
 * the wrapper lets through is one the C library knows. Each key is sent to the library alone,
 * first in its object and followed by a value that stops the call before anything is sent (an
 * amount or quantity of 0 where there is one); the library may refuse the object for other
 * reasons, never with "unknown key".
 */
final class InputSchemaTest extends TestCase
{
    /** @return array<string, mixed> */
    private static function shapes(): array
    {
        return (new ReflectionClassConstant(Storefront\Input::class, 'SHAPES'))->getValue();
    }

    /** @param mixed $kind @return mixed */
    private static function sample($kind)
    {
        if (is_array($kind)) {
            return new stdClass();
        }
        return ['string' => 'x', 'bool' => false, 'u32' => 0, 'u64' => 0, 'amount' => 0, 'list<string>' => ['openid'], 'map<string>' => new stdClass()][$kind];
    }

    private function assertKnown(string $key, callable $call): void
    {
        try {
            $call();
        } catch (StorefrontException $e) {
            $this->assertStringNotContainsString('unknown key', $e->getMessage(), "the library does not know `$key`, the wrapper lets it through");
        }
        $this->addToAssertionCount(1);
    }

    public function testEveryKeyTheWrapperAcceptsIsKnownToTheLibrary(): void
    {
        $shapes = self::shapes();
        $client = new Client(S::get()->config());
        $handle = (new ReflectionProperty(Client::class, 'handle'));
        $handle->setAccessible(true);
        $pointer = $handle->getValue($client);
        $token = S::get()->userToken('alice');
        $payment = [
            'order_no' => 'MP1', 'external_reference' => 'R1', 'payment_no' => 'ch_card_usd', 'amount_minor' => 1250,
            'currency' => 'USD', 'currency_decimals' => 2, 'status' => 'paid', 'status_version' => 2, 'test_mode' => false,
            'expires_at' => '2026-09-21T12:30:00Z', 'event_id' => 'PE-1', 'provider_trade_no' => 'T1', 'occurred_at' => '2026-09-21T20:00:00Z',
        ];
        $calls = [
            'config' => fn (string $json) => Library::callHandle('sf_client_new', 'sf_client', $json),
            'merchant_payment' => fn (string $json) => Library::callJson('sf_merchant_payment_create', $pointer, $json),
            'merchant_payments_query' => fn (string $json) => Library::callJson('sf_merchant_payments_list', $pointer, $json),
            'products_query' => fn (string $json) => Library::callJson('sf_products_list', $pointer, null, $json),
            'order' => fn (string $json) => Library::callJson('sf_order_create', $pointer, $token, $json),
            'expectation' => fn (string $json) => Library::callUnit('sf_payment_expectation_check', Library::toJson($payment), $json),
        ];
        $stoppers = ['merchant_payment' => ['amount_minor' => 0], 'order' => ['quantity' => 0]];
        $this->assertSame(array_keys($shapes), array_keys($calls));
        foreach ($shapes as $name => $shape) {
            foreach ($shape as $key => $kind) {
                $object = [$key => self::sample($kind)] + ($stoppers[$name] ?? []);
                $this->assertKnown("$name.$key", fn () => $calls[$name](Library::toJson($object)));
                if (is_array($kind)) {
                    foreach ($kind as $inner => $innerKind) {
                        $nested = [$key => [$inner => self::sample($innerKind)]];
                        $this->assertKnown("$name.$key.$inner", fn () => $calls[$name](Library::toJson($nested)));
                    }
                }
            }
        }
        $this->assertSame([], $client->listMerchantPayments(['external_reference' => 'x']), 'nothing was created');
    }
}
