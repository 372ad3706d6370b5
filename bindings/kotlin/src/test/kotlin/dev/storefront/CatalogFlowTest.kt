package dev.storefront

import kotlinx.coroutines.async
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.json.JSONObject

/** Catalog flow over real HTTP against the sandbox: products, order, payment start, wait for paid. */
class CatalogFlowTest {
    private val client = Client(sandboxConfig())

    @Test
    fun `products are read over all pages and amounts are eight-decimal fixed point integers`(): Unit = runBlocking {
        val all = client.listAllProducts(ProductQuery())
        // 25 enabled products span two pages at the default limit of 20.
        assertEquals(25, all.size)
        assertEquals(all.size, all.map { it.gdNo }.toSet().size)
        val beans = all.single { it.gdNo == Sandbox.PRODUCT_BEANS }
        assertEquals("USD", beans.currency)
        assertEquals(12_5000_0000L, beans.actualPrice)
        assertEquals("12.50", formatFixedPoint8(beans.actualPrice, 2))
        // The Flow reads the same products page by page, and stops reading when the collector stops.
        assertEquals(all.map { it.gdNo }, client.products().toList().map { it.gdNo })
        assertEquals(all.take(3).map { it.gdNo }, client.products().take(3).toList().map { it.gdNo })
        val page = client.listProducts(ProductQuery(page = 2))
        assertEquals(25L, page.total)
        assertEquals(5, page.list.size)
    }

    @Test
    fun `an order is created, its payment started, and waitForPayment returns once it is paid`(): Unit = runBlocking {
        val session = client.userSession(Secret(Sandbox.userToken()))
        val orderNo = session.createOrder(CreateOrderRequest(gdNo = Sandbox.PRODUCT_BEANS, quantity = 1, paymentNo = Sandbox.CHANNEL_CARD_USD))
        val order = session.getOrder(orderNo)
        assertEquals(OrderStatus.AwaitingPayment, order.status)
        assertEquals(1, order.quantity)

        val start = session.startPayment(orderNo, Sandbox.CHANNEL_CARD_USD)
        // A relative redirect is resolved against the service's origin, never the app's.
        assertTrue(start.redirect.startsWith(Sandbox.origin + "/"), start.redirect)
        assertEquals(PaymentStatus.AwaitingPayment, session.paymentStatus(orderNo))

        val waiting = async { session.waitForPayment(orderNo, 50, 60_000) }
        // The buyer completes the card payment of this trade.
        val (status, body) = Sandbox.control("POST", "/catalog/trades/${start.tradeNo}/pay")
        assertTrue(status in 200..299, body)
        val outcome = waiting.await()
        assertTrue(outcome is PaymentWaitOutcome.Final, "$outcome")
        outcome as PaymentWaitOutcome.Final
        assertEquals(PaymentStatus.Paid, outcome.paymentStatus)
        assertEquals(orderNo, outcome.order.orderNo)
        assertTrue(outcome.order.status == OrderStatus.PaidProcessing || outcome.order.status == OrderStatus.Completed, "${outcome.order.status}")
        assertNotNull(outcome.order.createdAt)
        // Issue 12 item 3: the expiry prints as RFC 3339 in UTC.
        assertTrue(start.expireTime.toString().matches(Regex("""\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?Z""")), start.expireTime.toString())
    }

    @Test
    fun `waitForPayment reports StillPending as an outcome when the payment stays unpaid`(): Unit = runBlocking {
        val session = client.userSession(Secret(Sandbox.userToken()))
        val orderNo = session.createOrder(CreateOrderRequest(gdNo = Sandbox.PRODUCT_BEANS, quantity = 1, paymentNo = Sandbox.CHANNEL_CARD_USD))
        session.startPayment(orderNo, Sandbox.CHANNEL_CARD_USD)
        val outcome = session.waitForPayment(orderNo, 20, 300)
        assertTrue(outcome is PaymentWaitOutcome.StillPending, "$outcome")
        outcome as PaymentWaitOutcome.StillPending
        assertEquals(PaymentStatus.AwaitingPayment, outcome.lastStatus)
        assertEquals(false, outcome.lastPollFailed)
        assertTrue(outcome.waitedMs > 0, "$outcome")
    }

    @Test
    fun `202 on payment start carries the order number to look the payment up`(): Unit = runBlocking {
        val session = client.userSession(Secret(Sandbox.userToken()))
        val orderNo = session.createOrder(CreateOrderRequest(gdNo = Sandbox.PRODUCT_BEANS, quantity = 1, paymentNo = Sandbox.CHANNEL_CARD_USD))
        Sandbox.fault("POST", "${Sandbox.apiPrefix}/openapi/v1/orders/$orderNo/payment", 202, JSONObject().put("error", "provider_result_pending"))
        val e = assertThrows<StorefrontException.ProviderResultPending> {
            runBlocking { session.startPayment(orderNo, Sandbox.CHANNEL_CARD_USD) }
        }
        assertEquals(orderNo, e.lookup.orderNo)
        assertEquals(Sandbox.CHANNEL_CARD_USD, e.lookup.paymentNo)
        assertTrue(e.advice.isNotEmpty())
        // The number really finds the payment.
        assertEquals(PaymentStatus.AwaitingPayment, session.paymentStatus(e.lookup.orderNo!!))
    }

    @Test
    fun `other_ipu uses the keys of other_ipu_cnf and refuses a missing required field before sending`(): Unit = runBlocking {
        val gift = client.listProducts(ProductQuery(gdNo = Sandbox.PRODUCT_GIFT_CARD)).list.single()
        val fields = otherIpuFields(gift)
        assertEquals(listOf("recipient_email", "gift_message"), fields.map { it.key })
        assertEquals(listOf(true, false), fields.map { it.required })
        assertThrows<StorefrontException.Validation> { buildOtherIpu(gift, mapOf("gift_message" to "hi")) }
        val otherIpu = buildOtherIpu(gift, mapOf("recipient_email" to "a@example.com"))
        val session = client.userSession(Secret(Sandbox.userToken()))
        val orderNo = session.createOrder(CreateOrderRequest(gdNo = gift.gdNo, quantity = 1, paymentNo = Sandbox.CHANNEL_PLATFORM_COIN, otherIpu = otherIpu))
        assertEquals(gift.gdNo, session.getOrder(orderNo).gdNo)
    }

    @Test
    fun `userinfo is a map of JSON values for the authorized user`(): Unit = runBlocking {
        val info = client.userSession(Secret(Sandbox.userToken())).userinfo()
        assertTrue(info.isNotEmpty())
        assertTrue(info.values.any { it == JsonValue.Text(Sandbox.USER_ALICE) }, "$info")
    }
}

/** Counts from Kotlin are plain Ints; a negative one is refused before anything is sent. */
class CatalogValidationTest {
    @Test
    fun `a negative quantity or page is a Validation error naming the field`() {
        val client = Client(sandboxConfig())
        val session = client.userSession(Secret(Sandbox.userToken()))
        val quantity = assertThrows<StorefrontException.Validation> {
            runBlocking { session.createOrder(CreateOrderRequest(Sandbox.PRODUCT_BEANS, -1, Sandbox.CHANNEL_PLATFORM_COIN)) }
        }
        assertEquals("quantity", quantity.field)
        val page = assertThrows<StorefrontException.Validation> { runBlocking { client.listProducts(ProductQuery(page = -2)) } }
        assertEquals("page", page.field)
    }
}
