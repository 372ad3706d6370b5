<?php

declare(strict_types=1);

use PHPUnit\Framework\TestCase;
use Storefront\Client;
use Storefront\MerchantPaymentRequest;
use Storefront\Money;
use Storefront\PaymentStatus;
use Storefront\Testing\Sandbox;
use Storefront\Testing\SandboxException;
use Storefront\Testing\SandboxTrait;

/**
 * Storefront\Testing (src/Testing) as a shop uses it in its own tests: the trait starts the
 * shipped sandbox binary ($STOREFRONT_SANDBOX_BIN, set by .ci/suites/32-php.sh) once for this
 * class and hands back the merchant client's configuration.
 */
final class SandboxTraitTest extends TestCase
{
    use SandboxTrait;

    public function testAShopCreatesAPaymentTheBuyerPaysAndTheShopSeesPaid(): void
    {
        $client = new Client(self::sandboxConfig());
        $created = $client->createMerchantPayment(new MerchantPaymentRequest([
            'external_reference' => 'shop-order-' . bin2hex(random_bytes(4)),
            'amount_minor' => Money::toMinor('12.50', 2),
            'currency' => 'USD',
        ]));
        $this->assertFalse(PaymentStatus::of($client->merchantPayment($created->order_no))->isPaid());

        $answer = self::sandbox()->trigger('pay', $created->order_no, '--channel', 'ch_card_usd');
        $this->assertSame('paid', $answer['status']);

        $payment = $client->merchantPayment($created->order_no);
        $this->assertTrue(PaymentStatus::of($payment)->isPaid());
        $this->assertSame('paid', $payment->status);
        $this->assertSame(1250, $payment->amount_minor);
    }

    public function testOneSandboxPerClassAndItsConfiguration(): void
    {
        $sandbox = self::sandbox();
        $this->assertSame($sandbox, self::sandbox());
        $config = self::sandboxConfig(['scopes' => ['merchant.profile.read']]);
        $this->assertSame($sandbox->ready()['clients'][0]['client_id'], $config['client_id']);
        $this->assertSame(['merchant.profile.read'], $config['scopes']);
        $this->assertTrue($config['allow_insecure_loopback']);
        $this->assertArrayNotHasKey('root_ca_pem', $config);
        $this->assertStringStartsWith('http://127.0.0.1:', $sandbox->baseUrl());
        $this->assertSame($sandbox->merchantNo(), (new Client($config))->merchantProfile()->merchant_no);
    }

    public function testClockControlAndARefusedTrigger(): void
    {
        $sandbox = self::sandbox();
        $before = $sandbox->control('GET', '/clock')['offset_seconds'];
        $sandbox->advanceClock(90);
        $this->assertSame($before + 90, $sandbox->control('GET', '/clock')['offset_seconds']);
        $this->assertNotSame('', $sandbox->userToken());

        try {
            $sandbox->trigger('pay', '999999999999999999999');
            $this->fail('an unknown payment was paid');
        } catch (SandboxException $refused) {
            $this->assertSame('sandbox_refused', $refused->resultName());
            $this->assertStringContainsString('payment_not_found', $refused->getMessage());
        }
    }

    public function testTlsGivesTheSandboxCaAndStopEndsTheProcess(): void
    {
        $sandbox = Sandbox::start(['tls' => true]);
        $pid = $sandbox->pid();
        $config = $sandbox->config();
        $this->assertStringContainsString('BEGIN CERTIFICATE', $config['root_ca_pem']);
        $this->assertArrayNotHasKey('allow_insecure_loopback', $config);
        $this->assertStringStartsWith('https://', $sandbox->origin());
        $this->assertSame($sandbox->merchantNo(), (new Client($config))->merchantProfile()->merchant_no);
        $this->assertIsArray($sandbox->control('GET', '/clock'));

        $readyFile = $sandbox->readyFile();
        $sandbox->stop();
        $this->assertFalse($sandbox->isRunning());
        $this->assertNull($sandbox->pid());
        $this->assertFileDoesNotExist($readyFile);
        // Terminated and reaped (proc_close): no such process any more.
        $this->assertDirectoryDoesNotExist("/proc/$pid");
    }

    public function testAMissingBinarySaysHowToInstallIt(): void
    {
        $binary = getenv('STOREFRONT_SANDBOX_BIN');
        $path = getenv('PATH');
        putenv('STOREFRONT_SANDBOX_BIN');
        putenv('PATH=' . sys_get_temp_dir() . '/no-such-folder-' . bin2hex(random_bytes(4)));
        try {
            Sandbox::start();
            $this->fail('started without a binary');
        } catch (SandboxException $missing) {
            $this->assertInstanceOf(Storefront\StorefrontException::class, $missing);
            $this->assertSame('sandbox_not_installed', $missing->resultName());
            $this->assertStringContainsString('pip install storefront-sandbox', $missing->getMessage());
            $this->assertStringContainsString('composer require --dev storefront/sandbox', $missing->getMessage());
            $this->assertStringContainsString('STOREFRONT_SANDBOX_BIN', $missing->getMessage());
            $this->assertStringContainsString('tarball', $missing->getMessage());
        } finally {
            putenv($binary === false ? 'STOREFRONT_SANDBOX_BIN' : "STOREFRONT_SANDBOX_BIN=$binary");
            putenv("PATH=$path");
        }
    }
}
