package dev.storefront

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * Issue 18 item 3: the configuration the sandbox prints (its ready file's `"env"`), read by
 * `Storefront.configFromEnv` (the core's `Config::from_env`), makes a client that creates and
 * reads a merchant payment over real HTTP.
 */
class FromEnvTest {
    @Test
    fun `the sandbox's variables configure a working client`(): Unit = runBlocking {
        val config = Storefront.configFromEnv(Sandbox.env)
        assertTrue(config.allowInsecureLoopback)
        assertEquals(Sandbox.MERCHANT_CLIENT_ID, config.clientId)
        assertFalse(config.toString().contains(Sandbox.MERCHANT_CLIENT_SECRET))
        Storefront.client(config).use { client ->
            val reference = uniqueReference("from-env")
            val created = client.createMerchantPayment(
                CreateMerchantPaymentRequest(externalReference = reference, amountMinor = 1250, currency = "USD"),
            )
            val read = client.getMerchantPayment(created.payment.orderNo)
            assertEquals(reference, read.externalReference)
            assertEquals(1250L, read.amountMinor)
        }
    }

    @Test
    fun `a missing or bad variable names it and never shows the secret`() {
        val missing = assertThrows<StorefrontException.Config> {
            Storefront.configFromEnv(Sandbox.env - "STOREFRONT_CLIENT_ID")
        }
        assertTrue(missing.message!!.contains("STOREFRONT_CLIENT_ID"), missing.message)
        val plainHttp = assertThrows<StorefrontException.Config> {
            Storefront.configFromEnv(Sandbox.env - "STOREFRONT_ALLOW_INSECURE_LOOPBACK")
        }
        assertTrue(plainHttp.message!!.contains("STOREFRONT_ALLOW_INSECURE_LOOPBACK=1"), plainHttp.message)
        assertFalse(plainHttp.message!!.contains(Sandbox.MERCHANT_CLIENT_SECRET))
    }
}
