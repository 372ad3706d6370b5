package dev.storefront

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Merchant collection over real HTTP: channels, create, get, list, pay at checkout, reconcile. */
class MerchantPaymentTest {
    private val client = Client(sandboxConfig())

    @Test
    fun `a payment is created pending, paid at the checkout, then read and listed as paid`(): Unit = runBlocking {
        val channels = client.listChannels()
        assertTrue(channels.any { it.paymentNo == Sandbox.CHANNEL_CARD_USD && it.provider == ChannelProvider.CardProvider })

        val reference = uniqueReference("order")
        val created = client.createMerchantPayment(
            CreateMerchantPaymentRequest(externalReference = reference, amountMinor = 1250, currency = "USD"),
        )
        // The generated idempotency key is returned so the caller can persist it.
        assertTrue(created.idempotencyKey.isNotEmpty())
        val payment = created.payment
        assertEquals(MerchantPaymentStatus.Pending, payment.status)
        assertEquals(1250L, payment.amountMinor)
        assertEquals(2, payment.currencyDecimals)
        assertEquals("12.50", formatAmountMinor(payment.amountMinor, payment.currencyDecimals))
        assertTrue(payment.checkoutUrl!!.expose().startsWith("http"))
        assertNull(payment.eventId)
        assertFalse(merchantPaymentStatusIsPaid(payment.status))

        Sandbox.payCheckout(payment.orderNo, Sandbox.CHANNEL_CARD_USD)

        val paid = client.getMerchantPayment(payment.orderNo)
        assertEquals(MerchantPaymentStatus.Paid, paid.status)
        assertTrue(merchantPaymentStatusIsPaid(paid.status))
        assertNotNull(paid.eventId)
        assertNotNull(paid.occurredAt)
        assertTrue((paid.statusVersion ?: 0L) > 0L)
        assertEquals(Sandbox.CHANNEL_CARD_USD, paid.paymentNo)
        // Reconciliation: reference, amount, currency and test_mode match the merchant's order.
        checkPayment(PaymentExpectation(reference, 1250, "USD", false), paid)
        assertThrows<WebhookException.ExpectationMismatch> {
            checkPayment(PaymentExpectation(reference, 1251, "USD", false), paid)
        }

        val listed = client.listMerchantPayments(ListMerchantPaymentsQuery(externalReference = reference))
        assertEquals(listOf(payment.orderNo), listed.map { it.orderNo })
        assertEquals(MerchantPaymentStatus.Paid, listed.single().status)
    }

    @Test
    fun `creating again with the same idempotency key and parameters returns the same payment`(): Unit = runBlocking {
        val request = CreateMerchantPaymentRequest(
            externalReference = uniqueReference("idem"), amountMinor = 500, currency = "USD",
            idempotencyKey = uniqueReference("key"),
        )
        val first = client.createMerchantPayment(request)
        val second = client.createMerchantPayment(request)
        assertEquals(request.idempotencyKey, first.idempotencyKey)
        assertEquals(first.payment.orderNo, second.payment.orderNo)
    }

    @Test
    fun `parameters outside the contract's limits are refused before sending`(): Unit = runBlocking {
        val zero = assertThrows<StorefrontException.Validation> {
            runBlocking { client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("v"), 0, "USD")) }
        }
        assertEquals("amount_minor", zero.field)
        val tooLarge = assertThrows<StorefrontException.Validation> {
            runBlocking { client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("v"), 9_007_199_254_740_992, "USD")) }
        }
        assertEquals("amount_minor", tooLarge.field)
        val expires = assertThrows<StorefrontException.Validation> {
            runBlocking { client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("v"), 100, "USD", expiresIn = 59)) }
        }
        assertEquals("expires_in", expires.field)
    }
}
