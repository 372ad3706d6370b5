package dev.storefront

import kotlinx.coroutines.runBlocking
import org.json.JSONObject
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** HTTP status and the `error` code map to typed exceptions; Retry-After and details are kept. */
class ErrorMappingTest {
    private val client = Client(sandboxConfig())

    @AfterEach
    fun clearFaults() = Sandbox.clearFaults()

    @Test
    fun `404 payment_not_found is Api with status and code`() {
        val e = assertThrows<StorefrontException.Api> { runBlocking { client.getMerchantPayment("MP-NO-SUCH-PAYMENT") } }
        assertEquals(404, e.status)
        assertEquals(ErrorCode.PaymentNotFound, e.code)
    }

    @Test
    fun `409 payment_conflict when the same idempotency key comes with changed parameters`(): Unit = runBlocking {
        val key = uniqueReference("conflict")
        val reference = uniqueReference("conflict-ref")
        client.createMerchantPayment(CreateMerchantPaymentRequest(reference, 100, "USD", idempotencyKey = key))
        val e = assertThrows<StorefrontException.Api> {
            runBlocking { client.createMerchantPayment(CreateMerchantPaymentRequest(reference, 200, "USD", idempotencyKey = key)) }
        }
        assertEquals(409, e.status)
        assertEquals(ErrorCode.PaymentConflict, e.code)
    }

    @Test
    fun `422 for a catalog order beyond the stock`(): Unit = runBlocking {
        val session = client.userSession(Secret(Sandbox.userToken()))
        val e = assertThrows<StorefrontException.Api> {
            runBlocking { session.createOrder(CreateOrderRequest("G1003", 2, Sandbox.CHANNEL_PLATFORM_COIN)) }
        }
        assertEquals(422, e.status)
    }

    @Test
    fun `429 keeps Retry-After when it is longer than the SDK waits`(): Unit = runBlocking {
        val created = client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("rl"), 100, "USD"))
        val path = "${Sandbox.apiPrefix}/openapi/v1/merchant-payments/${created.payment.orderNo}"
        Sandbox.fault("GET", path, 429, JSONObject().put("error", "rate_limited").put("error_description", "slow down"),
            headers = mapOf("Retry-After" to "120"), times = 10)
        val e = assertThrows<StorefrontException.Api> { runBlocking { client.getMerchantPayment(created.payment.orderNo) } }
        assertEquals(429, e.status)
        assertEquals(ErrorCode.RateLimited, e.code)
        assertEquals(120L, e.retryAfterSeconds)
        assertEquals("slow down", e.errorDescription)
    }

    @Test
    fun `202 provider_result_pending is its own exception, not success`(): Unit = runBlocking {
        val created = client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("pending"), 100, "USD"))
        val path = "${Sandbox.apiPrefix}/openapi/v1/merchant-payments/${created.payment.orderNo}"
        Sandbox.fault("GET", path, 202, JSONObject().put("error", "provider_result_pending"))
        assertThrows<StorefrontException.ProviderResultPending> { runBlocking { client.getMerchantPayment(created.payment.orderNo) } }
        Unit
    }

    @Test
    fun `a catalog order POST answered with 500 is OutcomeUnknown and is not re-sent`(): Unit = runBlocking {
        val session = client.userSession(Secret(Sandbox.userToken()))
        Sandbox.control("DELETE", "/requests")
        Sandbox.fault("POST", "${Sandbox.apiPrefix}/openapi/v1/orders", 500, JSONObject().put("error", "server_error"), times = 5)
        val e = assertThrows<StorefrontException.OutcomeUnknown> {
            runBlocking { session.createOrder(CreateOrderRequest(Sandbox.PRODUCT_BEANS, 1, Sandbox.CHANNEL_PLATFORM_COIN)) }
        }
        assertEquals(500, e.status)
        // Issue 12 item 3: the request is carried (no order number exists) with advice to follow.
        assertEquals(Sandbox.PRODUCT_BEANS, e.lookup.gdNo)
        assertEquals(1L, e.lookup.quantity)
        assertEquals(Sandbox.CHANNEL_PLATFORM_COIN, e.lookup.paymentNo)
        assertEquals(null, e.lookup.orderNo)
        assertTrue(e.advice.isNotEmpty())
        val posts = Sandbox.requests().let { all ->
            (0 until all.length()).map { all.getJSONObject(it) }
                .count { it.getString("method") == "POST" && it.getString("path") == "${Sandbox.apiPrefix}/openapi/v1/orders" }
        }
        assertEquals(1, posts)
    }

    @Test
    fun `a wrong client secret is an Api error from the token endpoint, with no retry loop`() {
        val bad = Client(sandboxConfig(clientSecret = "wrong-secret"))
        val e = assertThrows<StorefrontException.Api> { runBlocking { bad.merchantProfile() } }
        assertEquals(401, e.status)
    }
}
