package dev.storefront

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Secrets never show in toString(); money stays integer and converts to decimal text exactly. */
class SecretsAndMoneyTest {
    @Test
    fun `no secret appears in toString of configs, payments, requests or errors`(): Unit = runBlocking {
        val config = sandboxConfig()
        assertFalse(config.toString().contains(Sandbox.MERCHANT_CLIENT_SECRET), config.toString())
        assertEquals("[REDACTED]", Secret("abc").toString())

        val client = Client(config)
        val notifySecret = "notify_secret_kotlin_0123456789abcdef0123"
        val request = CreateMerchantPaymentRequest(uniqueReference("secret"), 100, "USD",
            notifyUrl = "http://127.0.0.1:9/unused", notifySecret = Secret(notifySecret))
        assertFalse(request.toString().contains(notifySecret), request.toString())
        val created = client.createMerchantPayment(request)
        val checkoutUrl = created.payment.checkoutUrl!!.expose()
        val token = checkoutUrl.substringAfterLast('/')
        assertFalse(created.toString().contains(checkoutUrl), created.toString())
        assertFalse(created.toString().contains(token), created.toString())

        val userToken = "user-token-that-is-wrong-0123456789"
        val e = assertThrows<StorefrontException.Api> { runBlocking { client.userSession(Secret(userToken)).userinfo() } }
        assertFalse(e.toString().contains(userToken), e.toString())
        assertFalse(e.message.orEmpty().contains(userToken))
    }

    @Test
    fun `amounts convert between integers and decimal text exactly, without rounding`() {
        assertEquals(1250L, parseAmountMinor("12.50", 2))
        assertEquals(1000L, parseAmountMinor("1000", 0))
        assertEquals(123456789L, parseAmountMinor("1.23456789", 8))
        assertEquals("0.05", formatAmountMinor(5, 2))
        assertEquals(9_007_199_254_740_991L, parseAmountMinor("9007199254740991", 0))
        assertThrows<StorefrontException.Validation> { parseAmountMinor("12.505", 2) }
        assertThrows<StorefrontException.Validation> { parseAmountMinor("9007199254740992", 0) }
        assertThrows<StorefrontException.Validation> { parseAmountMinor("0", 2) }
        assertThrows<StorefrontException.Validation> { parseAmountMinor("1e3", 2) }
        assertEquals(12_5000_0000L, parseFixedPoint8("12.5"))
        assertEquals("12.50", formatFixedPoint8(12_5000_0000L, 2))
        assertThrows<StorefrontException.Validation> { formatFixedPoint8(12_3456_7890L, 2) }
        // Issue 12 item 3: an amount for a person, with its currency.
        assertEquals("19.99 USD", formatMoney(1999, "USD", 2))
        assertEquals("1999 JPY", formatMoney(1999, "JPY", 0))
        assertThrows<StorefrontException.Validation> { formatMoney(1999, "USD", 19) }
    }
}

/** Statuses and codes print as what they mean, so logs stay readable without raw JSON. */
class ReadableToStringTest {
    @Test
    fun `codes and statuses print their contract values`() {
        assertEquals("rate_limited", ErrorCode.RateLimited.toString())
        assertEquals("invalid_client", ErrorCode.Other("invalid_client").toString())
        assertEquals("paid", MerchantPaymentStatus.Paid.toString())
        assertEquals("settled_later", MerchantPaymentStatus.Unknown("settled_later").toString())
        assertFalse(merchantPaymentStatusIsPaid(MerchantPaymentStatus.Unknown("paid_maybe")))
        assertEquals("Paid (1)", PaymentStatus.Paid.toString())
        assertEquals("PaidProcessing (1)", OrderStatus.PaidProcessing.toString())
    }
}
