package dev.storefront

import kotlinx.coroutines.runBlocking
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * Issue 12 (new-user sharp edges) from Kotlin: the idempotency key made before sending survives
 * a failed create and the retry is the same payment; `needsVerification`; a create answer's
 * absent `statusVersion` is null. Over real HTTP against the standalone sandbox.
 */
class NewUserEdgesTest {
    private val client = Client(sandboxConfig().copy(retry = RetryPolicy(maxAttempts = 1)))

    @Test
    fun `a key generated before sending is retried to one payment after a 500 the service processed`(): Unit = runBlocking {
        val key = generateIdempotencyKey()
        assertNotEquals(key, generateIdempotencyKey())
        val reference = uniqueReference("kt-key")
        val request = CreateMerchantPaymentRequest(reference, 1999, "USD", idempotencyKey = key)
        Sandbox.control("POST", "/faults", JSONObject().put("method", "POST")
            .put("path", "${Sandbox.apiPrefix}/openapi/v1/merchant-payments").put("status", 500).put("after_handler", true))
        val e = assertThrows<StorefrontException.Api> { runBlocking { client.createMerchantPayment(request) } }
        assertEquals(500, e.status)
        val stored = client.listMerchantPayments(ListMerchantPaymentsQuery(externalReference = reference))
        assertEquals(1, stored.size)

        val retried = client.createMerchantPayment(request)
        assertEquals(key, retried.idempotencyKey)
        assertEquals(stored.single().orderNo, retried.payment.orderNo)
        assertEquals(listOf(retried.payment.orderNo),
            client.listMerchantPayments(ListMerchantPaymentsQuery(externalReference = reference)).map { it.orderNo })
        // Contract: status_version is "returned by query and in notifications": absent on create.
        assertNull(retried.payment.statusVersion)
        assertTrue(client.getMerchantPayment(retried.payment.orderNo).statusVersion != null)
    }

    @Test
    fun `review and unknown statuses need verification and are never paid`() {
        val review = MerchantPaymentStatus.Review
        val unknown = MerchantPaymentStatus.Unknown("settled_maybe")
        assertTrue(merchantPaymentStatusNeedsVerification(review))
        assertTrue(merchantPaymentStatusNeedsVerification(unknown))
        assertFalse(merchantPaymentStatusIsPaid(unknown))
        assertFalse(merchantPaymentStatusNeedsVerification(MerchantPaymentStatus.Paid))
        assertFalse(merchantPaymentStatusNeedsVerification(MerchantPaymentStatus.Pending))
        assertEquals(1999L, parseAmountMinor("19.99", 2))
        assertEquals("19.99", formatAmountMinor(1999L, 2))
    }
}
