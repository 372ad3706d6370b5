package dev.storefront.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.storefront.ClientConfig;
import dev.storefront.CreatedMerchantPayment;
import dev.storefront.MerchantPayment;
import dev.storefront.Storefront;
import dev.storefront.StorefrontClient;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The extension as a shop uses it from Java: one sandbox for the class (injected into the
 * constructor and the tests), a client of the seeded merchant, and the buyer paying through
 * {@code trigger}. The program is -Dstorefront.sandbox.bin (set by the pom).
 */
@ExtendWith(StorefrontSandboxExtension.class)
class StorefrontSandboxExtensionTest {
    private final StorefrontSandbox sandbox;

    StorefrontSandboxExtensionTest(StorefrontSandbox sandbox) {
        this.sandbox = sandbox;
    }

    @Test
    void aShopCreatesAPaymentTheBuyerPaysAndTheShopSeesPaid(StorefrontClient client) throws Exception {
        CreatedMerchantPayment created = client.createMerchantPayment(Storefront.merchantPaymentRequest()
            .externalReference("shop-order-" + UUID.randomUUID())
            .amountMinor(1250)
            .currency("USD")
            .build());
        String orderNo = created.getPayment().getOrderNo();
        assertFalse(Storefront.isPaid(client.getMerchantPayment(orderNo).getStatus()));

        Map<?, ?> answer = (Map<?, ?>) sandbox.trigger("pay", orderNo, "--channel", "ch_card_usd");
        assertEquals("paid", answer.get("status"));

        MerchantPayment paid = client.getMerchantPayment(orderNo);
        assertTrue(Storefront.isPaid(paid.getStatus()), paid.getStatus().toString());
        assertEquals(1250L, paid.getAmountMinor());
    }

    @Test
    void oneSandboxPerClassAndTheMerchantClientsConfiguration(StorefrontSandbox again, ClientConfig config) throws Exception {
        assertSame(sandbox, again);
        assertTrue(sandbox.isRunning());
        assertEquals(sandbox.baseUrl(), config.getBaseUrl());
        assertEquals(sandbox.merchantClientId(), config.getClientId());
        assertNotNull(config.getClientSecret());
        assertTrue(config.getAllowInsecureLoopback());
        assertTrue(sandbox.baseUrl().startsWith("http://127.0.0.1:"), sandbox.baseUrl());
        try (StorefrontClient client = StorefrontClient.create(config)) {
            assertEquals(sandbox.merchantNo(), client.merchantProfile().getMerchantNo());
        }
    }

    @Test
    void clockControlAndARefusedTrigger() {
        long before = ((Number) ((Map<?, ?>) sandbox.control("GET", "/clock")).get("offset_seconds")).longValue();
        sandbox.advanceClock(Duration.ofSeconds(90));
        long after = ((Number) ((Map<?, ?>) sandbox.control("GET", "/clock")).get("offset_seconds")).longValue();
        assertEquals(before + 90, after);
        assertFalse(sandbox.userToken(null).isEmpty());

        StorefrontSandboxException refused = assertThrows(StorefrontSandboxException.class,
            () -> sandbox.trigger("pay", "999999999999999999999"));
        assertTrue(refused.getMessage().contains("payment_not_found"), refused.getMessage());
    }

    @Nested
    class NestedTests {
        @Test
        void shareTheOuterClassSandbox(StorefrontSandbox nested) {
            assertSame(sandbox, nested);
        }
    }
}
