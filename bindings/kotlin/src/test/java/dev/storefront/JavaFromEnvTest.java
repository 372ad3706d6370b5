package dev.storefront;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 3 from Java: {@code StorefrontClient.fromEnv(env)} over the variables the sandbox
 * prints (its ready file's "env") creates and reads a merchant payment over real HTTP.
 */
class JavaFromEnvTest {
    @Test
    void sandboxVariablesConfigureAWorkingClient() throws StorefrontException {
        try (StorefrontClient client = StorefrontClient.fromEnv(Sandbox.getEnv())) {
            String ref = "java-from-env-" + UUID.randomUUID();
            CreatedMerchantPayment created = client.createMerchantPayment(Storefront.merchantPaymentRequest()
                .externalReference(ref)
                .amountMinor(1250L)
                .currency("USD")
                .build());
            MerchantPayment read = client.getMerchantPayment(created.getPayment().getOrderNo());
            assertEquals(ref, read.getExternalReference());
            assertEquals(1250L, read.getAmountMinor());
        }
    }

    @Test
    void missingVariableIsAConfigErrorNamingIt() {
        Map<String, String> env = new HashMap<>(Sandbox.getEnv());
        env.remove("STOREFRONT_BASE_URL");
        StorefrontException.Config error = assertThrows(StorefrontException.Config.class, () -> StorefrontClient.fromEnv(env));
        assertTrue(error.getMessage().contains("STOREFRONT_BASE_URL"), error.getMessage());
    }
}
