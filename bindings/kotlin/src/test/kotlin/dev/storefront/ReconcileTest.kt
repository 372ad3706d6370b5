package dev.storefront

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.format.DateTimeFormatter
import java.util.Collections
import java.util.concurrent.atomic.AtomicBoolean
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.json.JSONArray
import org.json.JSONObject
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows

/**
 * The reconciler from Kotlin (issue 12 item 2), as a `Flow`, against a sandbox of its own (the
 * test moves its clock by hours): a mix of paid, expired, review, refunded and chargeback
 * payments, a lost notification, duplicate references, an unknown status, a failing lookup and
 * deliberately wrong local records. Every report is checked against what the sandbox holds (its
 * list by reference, and the faults injected here), record by record; the lost notification is
 * re-queued and delivered; a run stopped anywhere resumes from its cursor.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReconcileTest {
    private val started = Sandbox.start()
    private val process = started.first
    private val ready = started.second
    private val http = HttpClient.newHttpClient()
    private val client = Client(
        ClientConfig(
            baseUrl = ready.getString("base_url"),
            tokenEndpoint = ready.getString("token_endpoint"),
            clientId = Sandbox.MERCHANT_CLIENT_ID,
            clientSecret = Secret(Sandbox.MERCHANT_CLIENT_SECRET),
            allowInsecureLoopback = true,
        ),
    )

    @AfterAll
    fun stop() {
        client.close()
        process.destroy()
    }

    private fun control(method: String, path: String, body: JSONObject? = null): String {
        val request = HttpRequest.newBuilder(URI.create(ready.getString("control_url") + path))
            .header("Content-Type", "application/json")
            .method(method, body?.let { HttpRequest.BodyPublishers.ofString(it.toString()) } ?: HttpRequest.BodyPublishers.noBody())
            .build()
        val response = http.send(request, HttpResponse.BodyHandlers.ofString())
        check(response.statusCode() in 200..299) { "control $method $path: ${response.statusCode()} ${response.body()}" }
        return response.body()
    }

    private val apiPrefix: String get() = URI.create(ready.getString("base_url")).path.trimEnd('/')

    private fun fault(path: String, status: Int, body: JSONObject? = null) {
        val spec = JSONObject().put("method", "GET").put("path", apiPrefix + path).put("status", status).put("times", 1000)
        if (body != null) spec.put("body", body)
        control("POST", "/faults", spec)
    }

    private val prefix = uniqueReference("kt-rec").take(20)
    private fun ref(name: String) = "$prefix-$name"

    private suspend fun create(name: String, amount: Long, paymentNo: String? = null, expiresIn: Int? = null, notifyUrl: String? = null): String =
        client.createMerchantPayment(
            CreateMerchantPaymentRequest(
                externalReference = ref(name), amountMinor = amount, currency = "USD", paymentNo = paymentNo,
                expiresIn = expiresIn, notifyUrl = notifyUrl, notifySecret = notifyUrl?.let { Secret(SECRET) },
            ),
        ).payment.orderNo

    private fun pay(orderNo: String, paymentNo: String = Sandbox.CHANNEL_CARD_USD, user: String? = null) {
        val body = JSONObject().put("payment_no", paymentNo)
        if (user != null) body.put("user", user)
        control("POST", "/merchant-payments/$orderNo/checkout/pay", body)
    }

    private fun force(orderNo: String, status: String) {
        control("POST", "/merchant-payments/$orderNo/force", JSONObject().put("status", status))
    }

    /** The sandbox's payments with this reference, newest first. */
    private suspend fun truth(reference: String): List<MerchantPayment> =
        client.listMerchantPayments(ListMerchantPaymentsQuery(externalReference = reference, limit = 100))

    private suspend fun one(name: String): MerchantPayment = truth(ref(name)).single()

    private suspend fun deliveries(orderNo: String): List<DeliveryStatus> =
        client.listNotificationRecords(orderNo, 100).map { it.deliveryStatus }

    private fun record(name: String, amount: Long, orderNo: String? = null) =
        LocalRecord(externalReference = ref(name), expectedAmount = amount, currency = "USD", orderNo = orderNo)

    private fun LocalRecord.booked(t: MerchantPayment) = copy(bookedEventId = t.eventId, bookedStatusVersion = t.statusVersion)

    @Test
    fun `the report matches the sandbox record by record`(): Unit = runBlocking {
        val accept = AtomicBoolean(false)
        val received = Collections.synchronizedList(mutableListOf<JSONObject>())
        val receiver = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        receiver.createContext("/hook") { exchange ->
            val body = exchange.requestBody.readAllBytes().decodeToString()
            val ok = accept.get()
            if (ok) received.add(JSONObject(body))
            exchange.sendResponseHeaders(if (ok) 200 else 500, -1)
            exchange.close()
        }
        receiver.start()
        try {
            // A paid payment whose notifications all failed: automatic attempts exhausted on the
            // sandbox clock.
            val lost = create("lost", 500, notifyUrl = "http://127.0.0.1:${receiver.address.port}/hook")
            pay(lost)
            for (attempt in 0 until 60) {
                if (deliveries(lost) == listOf(DeliveryStatus.Failed, DeliveryStatus.Failed)) break
                control("POST", "/clock/advance", JSONObject().put("seconds", 3 * 3600))
                Thread.sleep(50)
            }
            assertEquals(listOf(DeliveryStatus.Failed, DeliveryStatus.Failed), deliveries(lost))
            accept.set(true)

            for (name in listOf("agree", "agree-ref", "refunded", "chargeback", "amount")) pay(create(name, 300))
            val refunded = one("refunded")
            val chargeback = one("chargeback")
            val agree = one("agree")
            val agreeRef = one("agree-ref")
            force(refunded.orderNo, "refunded")
            force(chargeback.orderNo, "chargeback")
            pay(create("currency", 200))
            val testChannel = create("testmode", 200, paymentNo = "ch_card_test")
            pay(testChannel, "ch_card_test", Sandbox.USER_ALICE)
            create("expired", 100, expiresIn = 60)
            create("expired-booked", 100, expiresIn = 60)
            force(create("review", 150), "review")
            create("pending", 100)
            repeat(2) { create("dup", 100) }
            val unknown = create("unknown", 100)
            val failing = create("failing", 100)
            control("POST", "/clock/advance", JSONObject().put("seconds", 120))
            control("POST", "/sweep")

            // An unknown future status (a fault answers the query with one) and a failing lookup.
            val p = one("unknown")
            val unknownBody = JSONObject()
                .put("order_no", p.orderNo).put("external_reference", p.externalReference)
                .put("payment_no", p.paymentNo).put("amount_minor", p.amountMinor).put("currency", p.currency)
                .put("currency_decimals", p.currencyDecimals).put("status", "settled_v2").put("status_version", 7)
                .put("test_mode", p.testMode).put("expires_at", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(p.expiresAt))
            fault("/openapi/v1/merchant-payments/$unknown", 200, unknownBody)
            fault("/openapi/v1/merchant-payments/$failing", 500)

            val records = listOf(
                record("agree", 300, agree.orderNo).booked(agree),
                record("agree-ref", 300).booked(agreeRef),
                record("lost", 500),
                record("expired", 100),
                record("expired-booked", 100).copy(bookedEventId = "pev_never_paid"),
                record("review", 150),
                record("refunded", 300, refunded.orderNo).booked(refunded),
                record("chargeback", 300).booked(chargeback),
                record("amount", 310),
                record("currency", 200).copy(currency = "EUR"),
                record("testmode", 200, testChannel).copy(testMode = false),
                record("missing", 999),
                record("missing-order", 999, "999999999999999999999"),
                record("pending", 100),
                record("dup", 100),
                record("unknown", 100, unknown),
                record("failing", 100, failing),
            )

            val reports = client.reconcile(records, ReconcileOptions(requeueFailed = true)).toList()
            assertEquals(records.size, reports.size)
            reports.zip(records).forEachIndexed { i, (report, rec) ->
                assertEquals(rec.externalReference, report.record)
                assertEquals(i.toLong(), report.index)
                assertEquals(ReconcileCursor(i + 1L, rec.externalReference), report.cursor)
                checkReport(report, rec, truth(rec.externalReference))
                if (rec.externalReference != ref("lost")) assertEquals(0, report.requeued, report.toString())
                assertNull(report.requeueError, report.toString())
            }
            val names = reports.associate { it.record.removePrefix("$prefix-") to it.finding::class.simpleName }
            assertEquals(
                mapOf(
                    "agree" to "InAgreement", "agree-ref" to "InAgreement", "lost" to "PaidNotBooked",
                    "expired" to "InAgreement", "expired-booked" to "BookedNotPaid", "review" to "UnderReview",
                    "refunded" to "BookedNotPaid", "chargeback" to "BookedNotPaid", "amount" to "Mismatch",
                    "currency" to "Mismatch", "testmode" to "Mismatch", "missing" to "MissingAtService",
                    "missing-order" to "MissingAtService", "pending" to "InAgreement", "dup" to "Ambiguous",
                    "unknown" to "UnknownStatus", "failing" to "LookupFailed",
                ),
                names,
            )
            assertEquals(MerchantPaymentStatus.Expired, one("expired").status)
            assertEquals(MerchantPaymentStatus.Expired, one("expired-booked").status)
            val unknownFinding = reports[15].finding as ReconcileFinding.UnknownStatus
            assertEquals("settled_v2", unknownFinding.status)
            assertEquals(unknown, unknownFinding.payment.orderNo)
            assertEquals(7L, reports[15].serviceStatusVersion)
            val failed = (reports[16].finding as ReconcileFinding.LookupFailed).error
            assertEquals("api", failed.kind)
            assertEquals(500, failed.httpStatus)
            assertEquals(ErrorCode.ServerError, failed.code)

            // Re-queue: both failed deliveries re-queued; the receiver gets the paid notification.
            assertEquals(2, reports[2].requeued)
            val lostTruth = one("lost")
            for (attempt in 0 until 400) { // bounded wait for the asynchronous delivery; not a timing assertion
                if (synchronized(received) { received.any { it.getJSONObject("data").getString("status") == "paid" } }) break
                Thread.sleep(25)
            }
            val paid = synchronized(received) { received.first { it.getJSONObject("data").getString("status") == "paid" } }
            assertEquals(lostTruth.orderNo, paid.getJSONObject("data").getString("order_no"))
            assertEquals(lostTruth.eventId, paid.getJSONObject("data").getString("event_id"))
            for (attempt in 0 until 400) {
                if (deliveries(lost).all { it == DeliveryStatus.Delivered }) break
                Thread.sleep(25)
            }

            // Safe to run again: the same findings, nothing left to re-queue.
            val again = client.reconcile(records, ReconcileOptions(requeueFailed = true)).toList()
            assertEquals(reports.map { it.finding.toString() }, again.map { it.finding.toString() })
            assertTrue(again.all { it.requeued == 0 })
        } finally {
            receiver.stop(0)
            control("DELETE", "/faults")
        }
    }

    /** One report against the sandbox's payments for its record (faulted ones checked above). */
    private fun checkReport(report: ReconcileReport, rec: LocalRecord, all: List<MerchantPayment>) {
        val ctx = "${rec.externalReference}: $report"
        val t = if (rec.orderNo != null) all.find { it.orderNo == rec.orderNo } else all.singleOrNull()
        when (val f = report.finding) {
            is ReconcileFinding.MissingAtService -> {
                assertTrue(all.isEmpty(), ctx)
                assertNull(report.orderNo, ctx)
                return
            }
            is ReconcileFinding.Ambiguous -> {
                assertTrue(all.size > 1, ctx)
                assertEquals(all.map { it.orderNo }, f.orderNos, ctx)
                return
            }
            is ReconcileFinding.LookupFailed, is ReconcileFinding.UnknownStatus -> return
            else -> {}
        }
        assertNotNull(t, ctx)
        t!!
        assertEquals(t.orderNo, report.orderNo, ctx)
        assertEquals(t.statusVersion, report.serviceStatusVersion, ctx)
        val amountOk = rec.expectedAmount == t.amountMinor
        val currencyOk = rec.currency == t.currency
        val testModeOk = rec.testMode == null || rec.testMode == t.testMode
        val booked = rec.bookedEventId != null
        when (val f = report.finding) {
            is ReconcileFinding.Mismatch -> when (f.field) {
                MismatchField.AMOUNT -> {
                    assertTrue(!amountOk, ctx)
                    assertEquals(rec.expectedAmount.toString() to t.amountMinor.toString(), f.expected to f.actual, ctx)
                }
                MismatchField.CURRENCY -> {
                    assertTrue(amountOk && !currencyOk, ctx)
                    assertEquals(rec.currency to t.currency, f.expected to f.actual, ctx)
                }
                MismatchField.TEST_MODE -> {
                    assertTrue(amountOk && currencyOk && !testModeOk, ctx)
                    assertEquals(t.testMode.toString(), f.actual, ctx)
                }
                else -> fail("unexpected mismatch: $ctx")
            }
            is ReconcileFinding.InAgreement -> {
                assertTrue(amountOk && currencyOk && testModeOk, ctx)
                if (t.status == MerchantPaymentStatus.Paid) {
                    assertEquals(t.eventId, rec.bookedEventId, ctx)
                } else {
                    assertTrue(!booked && t.status in listOf(MerchantPaymentStatus.Pending, MerchantPaymentStatus.Expired, MerchantPaymentStatus.Refunded, MerchantPaymentStatus.Chargeback), ctx)
                }
            }
            is ReconcileFinding.PaidNotBooked -> {
                assertTrue(amountOk && currencyOk && testModeOk && !booked, ctx)
                assertEquals(MerchantPaymentStatus.Paid, t.status, ctx)
                assertEquals(t.eventId, f.eventId, ctx)
                assertEquals(t.statusVersion, f.statusVersion, ctx)
                assertEquals(t.occurredAt, f.occurredAt, ctx)
            }
            is ReconcileFinding.BookedNotPaid -> {
                assertTrue(amountOk && currencyOk && testModeOk && booked, ctx)
                assertTrue(t.status != MerchantPaymentStatus.Paid, ctx)
                assertEquals(t.status, f.status, ctx)
                assertEquals(t.eventId, f.payment.eventId, ctx)
            }
            is ReconcileFinding.UnderReview -> {
                assertTrue(amountOk && currencyOk && testModeOk && !booked, ctx)
                assertEquals(MerchantPaymentStatus.Review, t.status, ctx)
            }
            else -> fail("unexpected finding: $ctx")
        }
    }

    @Test
    fun `a run resumes from its cursor`(): Unit = runBlocking {
        val paid = create("c-paid", 200)
        pay(paid)
        create("c-pending", 100)
        force(create("c-review", 100), "review")
        repeat(2) { create("c-dup", 100) }
        val records = listOf(
            record("c-paid", 200), record("c-pending", 100), record("c-missing", 100),
            record("c-review", 100), record("c-dup", 100), record("c-paid", 200, paid),
        )
        val full = client.reconcile(records).toList()
        assertEquals(
            listOf("PaidNotBooked", "InAgreement", "MissingAtService", "UnderReview", "Ambiguous", "PaidNotBooked"),
            full.map { it.finding::class.simpleName },
        )
        for (stop in 0..records.size) {
            val first = if (stop == 0) emptyList() else client.reconcile(records).take(stop).toList()
            val rest = client.reconcile(records, ReconcileOptions(cursor = first.lastOrNull()?.cursor)).toList()
            // Compared as text: a payment's checkoutUrl is a Secret object (identity equality),
            // whose text is redacted; every other field is compared by value.
            assertEquals(full.map { it.toString() }, (first + rest).map { it.toString() }, "stopped after $stop")
        }
        val wrong = assertThrows<StorefrontException.Validation> {
            runBlocking { client.reconcile(records, ReconcileOptions(cursor = ReconcileCursor(2, ref("c-review")))).toList() }
        }
        assertEquals("cursor", wrong.field)
        assertThrows<StorefrontException.Validation> {
            runBlocking { client.reconcile(records, ReconcileOptions(limit = 0)).toList() }
        }
    }

    /**
     * Cancellation-safe: cancelling a `next()` whose lookup is in flight (the sandbox holds that
     * answer back) drops the call, not the lookup; the next `next()` finishes the same record,
     * so no report is lost or skipped.
     */
    @Test
    fun `a cancelled next() loses no report`(): Unit = runBlocking {
        val first = create("x-first", 100)
        val held = create("x-held", 100)
        val getPath = "$apiPrefix/openapi/v1/merchant-payments/$held"
        control("POST", "/faults", JSONObject().put("method", "GET").put("path", getPath).put("latency_ms", 1500).put("times", 1))
        val records = listOf(record("x-first", 100, first), record("x-held", 100, held), record("x-missing", 100))
        client.reconcileRun(records, ReconcileOptions()).use { run ->
            assertEquals(0L, run.next()!!.index)
            val pending = launch(Dispatchers.IO) { run.next() }
            // Bounded wait until the held lookup reached the sandbox; not a timing assertion.
            for (attempt in 0 until 400) {
                val seen = JSONArray(control("GET", "/requests?method=GET&path=$getPath"))
                if (seen.length() > 0) break
                Thread.sleep(10)
            }
            pending.cancelAndJoin()
            val resumed = run.next()!!
            assertEquals(1L, resumed.index)
            assertEquals(ref("x-held"), resumed.record)
            assertEquals(held, resumed.orderNo)
            assertTrue(resumed.finding is ReconcileFinding.InAgreement, resumed.toString())
            assertEquals(2L, run.next()!!.index)
            assertNull(run.next())
        }
    }

    private companion object {
        const val SECRET = "reconcile-notify-secret-kt-0123456789abcdef"
    }
}
