package dev.storefront

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** A notification the sandbox signed and delivered to a local receiver is verified from Kotlin. */
class WebhookTest {
    private class Delivery(val eventId: String?, val timestamp: String?, val signature: String?, val body: ByteArray)

    private val secret = "whsec_kotlin_test_0123456789abcdef0123456789"
    private val deliveries = LinkedBlockingQueue<Delivery>()
    private lateinit var receiver: HttpServer

    @BeforeEach
    fun startReceiver() {
        receiver = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        receiver.createContext("/hook") { exchange ->
            val h = exchange.requestHeaders
            deliveries.add(Delivery(h.getFirst("X-Service-Event-ID"), h.getFirst("X-Service-Timestamp"), h.getFirst("X-Service-Signature"), exchange.requestBody.readAllBytes()))
            exchange.sendResponseHeaders(204, -1)
            exchange.close()
        }
        receiver.start()
    }

    @AfterEach
    fun stopReceiver() = receiver.stop(0)

    private fun nextDelivery(): Delivery =
        deliveries.poll(60, TimeUnit.SECONDS) ?: error("no notification delivered within 60 s")

    @Test
    fun `the pending notification of a new payment verifies and the snapshot matches the payment`(): Unit = runBlocking {
        val client = Client(sandboxConfig())
        val reference = uniqueReference("hook")
        val created = client.createMerchantPayment(
            CreateMerchantPaymentRequest(
                externalReference = reference, amountMinor = 999, currency = "USD",
                notifyUrl = "http://127.0.0.1:${receiver.address.port}/hook", notifySecret = Secret(secret),
            ),
        )
        val d = nextDelivery()
        val now = nowUnix()
        // Rotation: the old secret and the current one are both accepted.
        val verifier = WebhookVerifier(listOf(Secret("an-older-secret-that-is-still-kept-0001"), Secret(secret)))
        val n = verifier.verifyAt(d.eventId, d.timestamp, d.signature, d.body, now)
        assertEquals(d.eventId, n.id)
        assertEquals("merchant_payment.status_changed", n.eventType)
        assertEquals(1, n.apiVersion)
        assertEquals(created.payment.orderNo, n.data.orderNo)
        assertEquals(MerchantPaymentStatus.Pending, n.data.status)
        assertNotNull(n.data.expiresAt)
        checkNotification(PaymentExpectation(reference, 999, "USD", false), n.data)
        assertEquals(VersionDecision.STALE, statusVersionDecision(n.data.statusVersion + 1L, n.data.statusVersion))
        assertEquals(VersionDecision.DUPLICATE, statusVersionDecision(n.data.statusVersion, n.data.statusVersion))
        // The delivery record of this notification is readable by payment number.
        val records = client.listNotificationRecords(created.payment.orderNo, null)
        assertEquals(listOf(n.id), records.map { it.eventId })
        assertEquals(n.data.statusVersion, records.single().statusVersion)

        // Each malformed input gets its own error.
        assertThrows<WebhookException.SignatureMismatch> {
            verifier.verifyAt(d.eventId, d.timestamp, d.signature, d.body + ' '.code.toByte(), now)
        }
        assertThrows<WebhookException.SignatureMismatch> {
            WebhookVerifier(listOf(Secret("another-secret-entirely-0000000000000"))).verifyAt(d.eventId, d.timestamp, d.signature, d.body, now)
        }
        assertThrows<WebhookException.TimestampTooOld> { verifier.verifyAt(d.eventId, d.timestamp, d.signature, d.body, now + 301) }
        assertThrows<WebhookException.TimestampInFuture> { verifier.verifyAt(d.eventId, d.timestamp, d.signature, d.body, now - 301) }
        assertThrows<WebhookException.EventIdMismatch> { verifier.verifyAt("evt_other", d.timestamp, d.signature, d.body, now) }
        assertThrows<WebhookException.MissingHeader> { verifier.verifyAt(d.eventId, d.timestamp, null, d.body, now) }
        assertThrows<WebhookException.MalformedSignature> { verifier.verifyAt(d.eventId, d.timestamp, "sha1=abc", d.body, now) }
    }

    @Test
    fun `the test signer produces signatures the verifier accepts`() {
        val body = """{"id":"evt_1","type":"merchant_payment.status_changed","api_version":1,"created_at":"2026-11-22T13:00:00Z","data":{"order_no":"MP1","external_reference":"r","payment_no":"","amount_minor":5,"currency":"USD","currency_decimals":2,"status":"pending","status_version":1,"test_mode":false,"expires_at":"2026-11-22T14:00:00+08:00","event_id":null,"provider_trade_no":null,"occurred_at":null}}""".toByteArray()
        val signature = TestSigner(Secret(secret)).signature(1_800_000_000, body)
        val n = WebhookVerifier(listOf(Secret(secret))).verifyAt("evt_1", "1800000000", signature, body, 1_800_000_100)
        assertEquals(8 * 3600, n.data.expiresAt.offset.totalSeconds)
        assertThrows<WebhookException.NoSecrets> { WebhookVerifier(emptyList()) }
    }
}
