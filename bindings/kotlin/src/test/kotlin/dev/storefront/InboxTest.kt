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
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * The webhook inbox (issue 16) from Kotlin, over real HTTP: the sandbox delivers a payment's
 * notifications to a JDK `HttpServer` on loopback whose handler is `inbox.receive(...)` with the
 * raw body, answering `receipt.status`. A worker claims the paid event (`book` true once).
 *
 * On PostgreSQL the worker completes it inside the app's own JDBC transaction, together with the
 * app's booking row, through `completionSql()`; a completion with a forged claim changes no row
 * and the app's insert rolls back with it. The database is the one .ci/suites/40-kotlin.sh starts
 * (`-Dstorefront.pgUrl`); without it that test fails.
 *
 * On SQLite everything goes through the inbox's own methods: a JDBC SQLite driver would carry a
 * second copy of SQLite into this process, whose locks libstorefront's SQLite does not see
 * (sqlite.org/howtocorrupt.html), so the JDBC pattern is not one to use (nor prove) on SQLite.
 *
 * Each test runs its own sandbox: the inbox verifies timestamps against the system clock, and
 * the shared sandbox's clock may have been moved forward by other tests.
 */
class InboxTest {
    private val secret = "whsec_kotlin_inbox_0123456789abcdef0123456789"

    private class Delivery(val eventId: String?, val timestamp: String?, val signature: String?, val body: ByteArray, val receipt: Receipt)

    /** What a test gets once the sandbox's paid notification has been received and claimed. */
    private class Paid(
        val ready: JSONObject,
        val client: Client,
        val orderNo: String,
        val deliveries: List<Delivery>,
        val event: InboxEvent,
    )

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
     * Starts a sandbox and a receiver whose handler is `inbox.receive(...)`, creates and pays a
     * payment notified to it, claims until the paid event is handed out (completing the earlier
     * states through the inbox), checks it, then runs [block] with it. Stops everything after.
     */
    private fun withPaidEvent(inbox: Inbox, reference: String, block: suspend (Paid) -> Unit): Unit = runBlocking {
        val (process, ready) = Sandbox.start()
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
            try {
                val created = client.createMerchantPayment(
                    CreateMerchantPaymentRequest(
                        externalReference = reference, amountMinor = 1250, currency = "USD",
                        notifyUrl = "http://127.0.0.1:${receiver.address.port}/hook", notifySecret = Secret(secret),
                    ),
                )
                val orderNo = created.payment.orderNo
                control(ready, "POST", "/merchant-payments/$orderNo/checkout/pay",
                    JSONObject().put("payment_no", Sandbox.CHANNEL_CARD_USD).put("user", Sandbox.USER_ALICE))

                // The sandbox sends the pending (v1) and paid (v2) notifications concurrently: wait
                // until both are stored, so a late v1 cannot still be waiting when the counts are read.
                val deadline = System.nanoTime() + 60_000_000_000L
                while (deliveries.map { it.eventId }.distinct().size < 2) {
                    check(System.nanoTime() < deadline) { "the two notifications did not arrive within 60 s" }
                    delay(20)
                }
                // A worker: claim until the paid event is handed out; earlier states are completed.
                var paid: InboxEvent? = null
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

                block(Paid(ready, client, orderNo, deliveries, event))
            } finally {
                client.close()
            }
        } finally {
            receiver.stop(0)
            process.destroy()
        }
    }

    /** The database .ci/suites/40-kotlin.sh started; a failure (not a skip) when it is absent. */
    private fun pgUrl(): String {
        val url = System.getProperty("storefront.pgUrl")?.trim().orEmpty()
        if (url.isEmpty()) {
            fail<Unit>(
                "storefront.pgUrl is not set: InboxTest completes an inbox event in a JDBC transaction on " +
                    "PostgreSQL. Run .ci/suites/40-kotlin.sh (it starts PostgreSQL and passes " +
                    "-Dstorefront.pgUrl=postgres://postgres@127.0.0.1:PORT/postgres), or pass such a URL to mvn.",
            )
        }
        return url
    }

    /** postgres://USER@HOST:PORT/DB as a JDBC URL: jdbc:postgresql://HOST:PORT/DB?user=USER. */
    private fun jdbcUrl(pgUrl: String): String {
        val uri = URI.create(pgUrl)
        val user = uri.userInfo?.substringBefore(':') ?: "postgres"
        val port = if (uri.port > 0) uri.port else 5432
        return "jdbc:postgresql://${uri.host}:$port${uri.path}?user=$user"
    }

    /**
     * The app's transaction: its own booking row, then the inbox's completion statements (the
     * PostgreSQL form, `$1` = event id, `$2` = claim) with each `$n` replaced by a JDBC `?` bound
     * in order of appearance. Commits only when the first statement changed exactly one row (the
     * claim still holds); otherwise rolls back, the booking row included.
     */
    private fun bookInOwnTransaction(conn: Connection, completionSql: String, event: InboxEvent): Boolean {
        conn.autoCommit = false
        try {
            conn.prepareStatement("INSERT INTO kotlin_bookings (event_id, order_no, amount_minor) VALUES (?, ?, ?)").use {
                it.setString(1, event.eventId)
                it.setString(2, event.orderNo)
                it.setLong(3, event.amountMinor)
                it.executeUpdate()
            }
            val placeholder = Regex("\\$([12])(?![0-9])")
            val statements = completionSql.split(';').map { it.trim() }.filter { it.isNotEmpty() }
            for ((index, statement) in statements.withIndex()) {
                val order = placeholder.findAll(statement).map { it.groupValues[1] }.toList()
                val changed = conn.prepareStatement(statement.replace(placeholder, "?")).use { ps ->
                    order.forEachIndexed { i, n -> ps.setString(i + 1, if (n == "1") event.id else event.claim) }
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
        conn.createStatement().use { s -> s.executeQuery("SELECT COUNT(*) FROM kotlin_bookings").use { it.next(); it.getInt(1) } }

    @Test
    fun `on PostgreSQL a paid notification is booked once in the app's JDBC transaction, and a forged claim books nothing`() {
        val pgUrl = pgUrl()
        val inbox = Inbox(pgUrl, listOf(secret))
        assertEquals("postgres", inbox.backend())
        val bookedBefore = runBlocking { inbox.status().booked }
        withPaidEvent(inbox, uniqueReference("kt-inbox-pg")) { paid ->
            val event = paid.event
            val sql = inbox.completionSql()
            assertTrue(sql.contains("\$1") && sql.contains("\$2"), "the PostgreSQL form: $sql")
            DriverManager.getConnection(jdbcUrl(pgUrl)).use { conn ->
                conn.createStatement().use {
                    it.execute("DROP TABLE IF EXISTS kotlin_bookings")
                    it.execute("CREATE TABLE kotlin_bookings (n BIGSERIAL PRIMARY KEY, event_id TEXT NOT NULL, order_no TEXT NOT NULL, amount_minor BIGINT NOT NULL)")
                }
                // A worker with a forged claim (another token) changes no row: its booking rolls back.
                assertFalse(bookInOwnTransaction(conn, sql, event.copy(claim = "0".repeat(32))))
                assertEquals(0, bookings(conn))
                // The claim holder books and completes in one commit.
                assertTrue(bookInOwnTransaction(conn, sql, event))
                assertEquals(1, bookings(conn))
                // The same claim again (already completed) changes no row: still one booking.
                assertFalse(bookInOwnTransaction(conn, sql, event))
                assertEquals(1, bookings(conn))
                conn.createStatement().use { it.execute("DROP TABLE kotlin_bookings") }
            }
            val status = inbox.status()
            assertEquals(bookedBefore + 1L, status.booked)
            assertEquals(0L, status.claimed)
            assertEquals(0L, status.pending)
            assertThrows<InboxException.LeaseLost> { runBlocking { inbox.complete(event) } }
            assertEquals(emptyList<InboxEvent>(), inbox.claim(10, 30_000))
        }
    }

    @Test
    fun `on SQLite a paid notification is stored, booked once, and replayed without a second booking`() {
        val dir = Files.createTempDirectory("storefront-inbox")
        try {
            val db = dir.resolve("inbox.db").toAbsolutePath()
            val inbox = Inbox("sqlite://$db", listOf("an-older-secret-still-kept-during-rotation", secret))
            assertEquals("sqlite", inbox.backend())
            withPaidEvent(inbox, uniqueReference("kt-inbox")) { paid ->
                val event = paid.event
                val orderNo = paid.orderNo
                // The app books after its own commit, then completes through the inbox.
                inbox.complete(event)
                val status = inbox.status()
                assertEquals(1L, status.booked)
                assertEquals(0L, status.claimed)
                assertEquals(0L, status.pending)
                assertThrows<InboxException.LeaseLost> { runBlocking { inbox.complete(event) } }

                // The paid delivery again: acknowledged, stored once. A tampered body: refused, counted.
                val paidDelivery = paid.deliveries.first { it.eventId == event.id }
                val again = inbox.receive(paidDelivery.eventId, paidDelivery.timestamp, paidDelivery.signature, paidDelivery.body)
                assertEquals(200, again.status)
                assertEquals(ReceiptOutcome.DUPLICATE, again.outcome)
                val tampered = inbox.receive(paidDelivery.eventId, paidDelivery.timestamp, paidDelivery.signature, paidDelivery.body + ' '.code.toByte())
                assertEquals(400, tampered.status)
                assertEquals(ReceiptOutcome.REJECTED, tampered.outcome)
                assertEquals("signature_mismatch", tampered.reason)
                assertEquals(1L, inbox.status().rejected["signature_mismatch"])
                assertEquals(emptyList<InboxEvent>(), inbox.claim(10, 30_000))

                // The reconciler's view: the watermark with its booking; the queried payment is stored and
                // the claim keeps it as stale (the app has that version already).
                val watermark = inbox.watermarks().single { it.orderNo == orderNo }
                assertEquals(MerchantPaymentStatus.Paid, watermark.status)
                assertEquals(event.eventId, watermark.bookedEventId)
                assertEquals(ReceiptOutcome.STORED, inbox.enterReconciled(paid.client.getMerchantPayment(orderNo)))
                assertEquals(emptyList<InboxEvent>(), inbox.claim(10, 30_000))

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
            }
        } finally {
            dir.toFile().deleteRecursively()
        }
    }

    @Test
    fun `a bad URL or no secret is a Config error`() {
        assertThrows<InboxException.Config> { Inbox("mysql://localhost/shop", listOf(secret)) }
        assertThrows<InboxException.Config> { Inbox("sqlite:///tmp/storefront-inbox-never.db", emptyList()) }
    }
}
