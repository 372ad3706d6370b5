package dev.storefront

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files
import java.sql.Connection
import java.sql.DriverManager
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * The webhook inbox (issue 16) from Kotlin, over real HTTP: the sandbox delivers a payment's
 * notifications to a JDK `HttpServer` on loopback whose handler is `inbox.receive(...)` with the
 * raw body, answering `receipt.status`. A worker claims the paid event (`book` true once) and
 * completes it inside the app's own JDBC transaction on the same SQLite file, together with the
 * app's booking row, through `completionSql()`. A completion with a stale claim changes no row
 * and the app's insert rolls back with it.
 *
 * The test runs its own sandbox: the inbox verifies timestamps against the system clock, and the
 * shared sandbox's clock may have been moved forward by other tests.
 */
class InboxTest {
    private val secret = "whsec_kotlin_inbox_0123456789abcdef0123456789"

    private class Delivery(val eventId: String?, val timestamp: String?, val signature: String?, val body: ByteArray, val receipt: Receipt)

    private fun config(ready: JSONObject) = ClientConfig(
        baseUrl = ready.getString("base_url"),
        tokenEndpoint = ready.getString("token_endpoint"),
        clientId = Sandbox.MERCHANT_CLIENT_ID,
        clientSecret = Secret(Sandbox.MERCHANT_CLIENT_SECRET),
        allowInsecureLoopback = true,
    )

    private fun control(ready: JSONObject, method: String, path: String, body: JSONObject) {
        val request = HttpRequest.newBuilder(URI.create(ready.getString("control_url") + path))
            .header("Content-Type", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofString(body.toString()))
            .build()
        val response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString())
        check(response.statusCode() in 200..299) { "sandbox control $method $path gave ${response.statusCode()}: ${response.body()}" }
    }

    /**
     * The app's transaction: its own booking row, then the inbox's completion statements with
     * `:id`/`:claim` bound positionally. Commits only when the first statement changed exactly one
     * row (the claim still holds); otherwise rolls back, the booking row included.
     */
    private fun bookInOwnTransaction(conn: Connection, completionSql: String, event: InboxEvent): Boolean {
        conn.autoCommit = false
        try {
            conn.prepareStatement("INSERT INTO bookings (event_id, order_no, amount_minor) VALUES (?, ?, ?)").use {
                it.setString(1, event.eventId)
                it.setString(2, event.orderNo)
                it.setLong(3, event.amountMinor)
                it.executeUpdate()
            }
            val named = Regex(":(id|claim)\\b")
            val statements = completionSql.split(';').map { it.trim() }.filter { it.isNotEmpty() }
            for ((index, statement) in statements.withIndex()) {
                val names = named.findAll(statement).map { it.groupValues[1] }.toList()
                val changed = conn.prepareStatement(statement.replace(named, "?")).use { ps ->
                    names.forEachIndexed { i, name -> ps.setString(i + 1, if (name == "id") event.id else event.claim) }
                    ps.executeUpdate()
                }
                if (index == 0 && changed != 1) {
                    conn.rollback()
                    return false
                }
            }
            conn.commit()
            return true
        } catch (e: Exception) {
            conn.rollback()
            throw e
        } finally {
            conn.autoCommit = true
        }
    }

    private fun bookings(conn: Connection): Int =
        conn.createStatement().use { s -> s.executeQuery("SELECT COUNT(*) FROM bookings").use { it.next(); it.getInt(1) } }

    @Test
    fun `a paid notification is stored, booked once in the app's JDBC transaction, and a stale claim books nothing`(): Unit = runBlocking {
        val (process, ready) = Sandbox.start()
        val dir = Files.createTempDirectory("storefront-inbox")
        val db = dir.resolve("inbox.db").toAbsolutePath()
        val inbox = Inbox("sqlite://$db", listOf("an-older-secret-still-kept-during-rotation", secret))
        assertEquals("sqlite", inbox.backend())
        val deliveries = CopyOnWriteArrayList<Delivery>()
        val receiver = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        receiver.createContext("/hook") { exchange ->
            val h = exchange.requestHeaders
            val body = exchange.requestBody.readAllBytes()
            // The whole receiver: store before acknowledging, answer what the inbox says.
            val receipt = runBlocking {
                inbox.receive(h.getFirst("X-Service-Event-ID"), h.getFirst("X-Service-Timestamp"), h.getFirst("X-Service-Signature"), body)
            }
            deliveries.add(Delivery(h.getFirst("X-Service-Event-ID"), h.getFirst("X-Service-Timestamp"), h.getFirst("X-Service-Signature"), body, receipt))
            val answer = receipt.body.toByteArray()
            exchange.responseHeaders.add("Content-Type", "application/json")
            exchange.sendResponseHeaders(receipt.status, answer.size.toLong())
            exchange.responseBody.use { it.write(answer) }
        }
        receiver.start()
        try {
            val client = Client(config(ready))
            val reference = uniqueReference("kt-inbox")
            val created = client.createMerchantPayment(
                CreateMerchantPaymentRequest(
                    externalReference = reference, amountMinor = 1250, currency = "USD",
                    notifyUrl = "http://127.0.0.1:${receiver.address.port}/hook", notifySecret = Secret(secret),
                ),
            )
            val orderNo = created.payment.orderNo
            control(ready, "POST", "/merchant-payments/$orderNo/checkout/pay",
                JSONObject().put("payment_no", Sandbox.CHANNEL_CARD_USD).put("user", Sandbox.USER_ALICE))

            // A worker: claim until the paid event is handed out; earlier states are completed.
            var paid: InboxEvent? = null
            val deadline = System.nanoTime() + 60_000_000_000L
            while (paid == null) {
                check(System.nanoTime() < deadline) { "no paid event claimed within 60 s: ${inbox.status()}" }
                for (event in inbox.claim(10, 30_000)) {
                    assertEquals(orderNo, event.orderNo)
                    if (event.status == MerchantPaymentStatus.Paid) {
                        paid = event
                    } else {
                        assertFalse(event.book, "only a paid event is booked")
                        inbox.complete(event)
                    }
                }
                if (paid == null) delay(50)
            }
            val event = paid!!
            assertTrue(event.book, "the first paid event of a payment event is booked")
            assertNotNull(event.eventId)
            assertEquals(reference, event.externalReference)
            assertEquals(1250L, event.amountMinor)
            assertEquals("USD", event.currency)
            assertEquals(EventSource.NOTIFICATION, event.source)
            assertFalse(event.replayed)
            assertTrue(event.body.contains(orderNo), "the body exactly as received")
            assertTrue(deliveries.all { it.receipt.status == 200 }, "every delivery acknowledged after storing")
            assertTrue(deliveries.all { it.receipt.outcome == ReceiptOutcome.STORED || it.receipt.outcome == ReceiptOutcome.DUPLICATE })
            // Nothing else of this payment is handed out while its event is out.
            assertEquals(emptyList<InboxEvent>(), inbox.claim(10, 30_000))

            val sql = inbox.completionSql()
            DriverManager.getConnection("jdbc:sqlite:$db").use { conn ->
                conn.createStatement().use {
                    it.execute("PRAGMA busy_timeout = 5000")
                    it.execute("CREATE TABLE bookings (n INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, order_no TEXT NOT NULL, amount_minor INTEGER NOT NULL)")
                }
                // A worker whose claim went stale (another token) changes no row: its booking rolls back.
                assertFalse(bookInOwnTransaction(conn, sql, event.copy(claim = "0".repeat(32))))
                assertEquals(0, bookings(conn))
                // The claim holder books and completes in one commit.
                assertTrue(bookInOwnTransaction(conn, sql, event))
                assertEquals(1, bookings(conn))
                // The same claim again (already completed) changes no row: still one booking.
                assertFalse(bookInOwnTransaction(conn, sql, event))
                assertEquals(1, bookings(conn))
            }
            val status = inbox.status()
            assertEquals(1L, status.booked)
            assertEquals(0L, status.claimed)
            assertEquals(0L, status.pending)
            assertThrows<InboxException.LeaseLost> { runBlocking { inbox.complete(event) } }

            // The paid delivery again: acknowledged, stored once. A tampered body: refused, counted.
            val paidDelivery = deliveries.first { it.eventId == event.id }
            val again = inbox.receive(paidDelivery.eventId, paidDelivery.timestamp, paidDelivery.signature, paidDelivery.body)
            assertEquals(200, again.status)
            assertEquals(ReceiptOutcome.DUPLICATE, again.outcome)
            val tampered = inbox.receive(paidDelivery.eventId, paidDelivery.timestamp, paidDelivery.signature, paidDelivery.body + ' '.code.toByte())
            assertEquals(400, tampered.status)
            assertEquals(ReceiptOutcome.REJECTED, tampered.outcome)
            assertEquals("signature_mismatch", tampered.reason)
            assertEquals(1L, inbox.status().rejected["signature_mismatch"])
            assertEquals(emptyList<InboxEvent>(), inbox.claim(10, 30_000))

            // The reconciler's view: the watermark with its booking; the queried payment is stale.
            val watermark = inbox.watermarks().single { it.orderNo == orderNo }
            assertEquals(MerchantPaymentStatus.Paid, watermark.status)
            assertEquals(event.eventId, watermark.bookedEventId)
            assertEquals(ReceiptOutcome.STALE, inbox.enterReconciled(client.getMerchantPayment(orderNo)))

            // Replay hands the event out again, never to be booked twice.
            assertEquals(1L, inbox.replayEvent(event.id))
            val replayed = inbox.claim(10, 30_000).single()
            assertEquals(event.id, replayed.id)
            assertTrue(replayed.replayed)
            assertFalse(replayed.book)
            inbox.complete(replayed)
            assertThrows<InboxException.NotFound> { runBlocking { inbox.replayEvent("evt_no_such_event") } }

            // Retention: finished rows go, the booking stays.
            assertTrue(inbox.purge(0) >= 1L)
            assertEquals(1L, inbox.status().booked)
            assertThrows<InboxException.Config> { runBlocking { inbox.claim(-1, 30_000) } }
            client.close()
        } finally {
            receiver.stop(0)
            process.destroy()
            dir.toFile().deleteRecursively()
        }
    }

    @Test
    fun `a bad URL or no secret is a Config error`() {
        assertThrows<InboxException.Config> { Inbox("mysql://localhost/shop", listOf(secret)) }
        assertThrows<InboxException.Config> { Inbox("sqlite:///tmp/storefront-inbox-never.db", emptyList()) }
    }
}
