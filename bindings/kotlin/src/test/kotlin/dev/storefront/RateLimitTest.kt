package dev.storefront

import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import org.json.JSONArray
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse

/**
 * The client-side rate limiter from Kotlin (contract, "Limits": 60 merchant-payment creates per
 * client per minute): a burst of coroutines waits for room instead of earning 429s. The sandbox
 * keeps the contract's budgets over a 3 s window (`--rate-limit-window 3`) and the client gets
 * the same window, so the pacing of a one-minute window shows in seconds.
 */
class RateLimitTest {
    private fun createStatuses(ready: JSONObject): List<Int> {
        val request = HttpRequest.newBuilder(URI.create(ready.getString("control_url") + "/requests")).GET().build()
        val all = JSONArray(HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).body())
        val path = URI.create(ready.getString("base_url")).path.trimEnd('/') + "/openapi/v1/merchant-payments"
        return (0 until all.length()).map { all.getJSONObject(it) }
            .filter { it.getString("method") == "POST" && it.getString("path") == path }
            .map { it.getInt("status") }
    }

    private fun config(ready: JSONObject, limits: RateLimits) = ClientConfig(
        baseUrl = ready.getString("base_url"),
        tokenEndpoint = ready.getString("token_endpoint"),
        clientId = Sandbox.MERCHANT_CLIENT_ID,
        clientSecret = Secret(Sandbox.MERCHANT_CLIENT_SECRET),
        allowInsecureLoopback = true,
        overallDeadlineMs = 60_000,
        retry = RetryPolicy(maxAttempts = 1),
        rateLimits = limits,
        maxInFlight = 32,
    )

    @Test
    fun `80 concurrent creates get no 429 and take the window the budget demands`(): Unit = runBlocking {
        val (process, ready) = Sandbox.start("--rate-limit-window", "3")
        try {
            val client = Client(config(ready, RateLimits(windowMs = 3_000, marginMs = 300)))
            val started = System.nanoTime()
            (0 until 80).map { n ->
                async { client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("kt-burst-$n"), 100, "USD")) }
            }.awaitAll()
            val elapsedMs = (System.nanoTime() - started) / 1_000_000
            val statuses = createStatuses(ready)
            assertEquals(80, statuses.size, "one request per create")
            assertEquals(0, statuses.count { it == 429 }, "no 429")
            assertTrue(elapsedMs >= 3_000, "paced: $elapsedMs ms")
        } finally {
            process.destroy()
        }
    }

    @Test
    fun `without the limiter the same burst earns 429s`(): Unit = runBlocking {
        val (process, ready) = Sandbox.start("--rate-limit-window", "3")
        try {
            val client = Client(config(ready, RateLimits(enabled = false)))
            val outcomes = (0 until 80).map { n ->
                async {
                    runCatching { client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("kt-unpaced-$n"), 100, "USD")) }
                }
            }.awaitAll()
            assertEquals(20, outcomes.count { it.isFailure })
            assertEquals(20, createStatuses(ready).count { it == 429 })
        } finally {
            process.destroy()
        }
    }
}
