package dev.storefront

import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import org.json.JSONArray
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files

/**
 * Shared client state (issue 15) from Kotlin: two `Client`s with one SQLite `sharedState` file,
 * as two JVM instances of one shop would have, share the contract's create budget (60 per
 * client per window) and one client-credentials token. The sandbox counts its windows over 5 s
 * (`--rate-limit-window 5`) and the clients pace with the same window, so 120 concurrent creates
 * need more than two windows and get no 429 only if the two clients really share one budget.
 */
class SharedStateTest {
    private fun requests(ready: JSONObject): List<JSONObject> {
        val request = HttpRequest.newBuilder(URI.create(ready.getString("control_url") + "/requests")).GET().build()
        val all = JSONArray(HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).body())
        return (0 until all.length()).map { all.getJSONObject(it) }
    }

    private fun config(ready: JSONObject, sharedState: String?) = ClientConfig(
        baseUrl = ready.getString("base_url"),
        tokenEndpoint = ready.getString("token_endpoint"),
        clientId = Sandbox.MERCHANT_CLIENT_ID,
        clientSecret = Secret(Sandbox.MERCHANT_CLIENT_SECRET),
        allowInsecureLoopback = true,
        overallDeadlineMs = 60_000,
        rateLimits = RateLimits(windowMs = 5_000),
        sharedState = sharedState?.let { Secret(it) },
    )

    @Test
    fun `two clients over one SQLite file make 120 creates with no 429 and one token request`(): Unit = runBlocking {
        val (process, ready) = Sandbox.start("--rate-limit-window", "5")
        val dir = Files.createTempDirectory("storefront-shared")
        val url = "sqlite://" + dir.resolve("storefront.db").toAbsolutePath()
        try {
            val clients = listOf(Client(config(ready, url)), Client(config(ready, url)))
            val created = (0 until 120).map { n ->
                async { clients[n % 2].createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("kt-shared-$n"), 100, "USD")) }
            }.awaitAll()
            assertEquals(120, created.map { it.payment.orderNo }.toSet().size, "120 payments created")

            val log = requests(ready)
            val createPath = URI.create(ready.getString("base_url")).path.trimEnd('/') + "/openapi/v1/merchant-payments"
            val tokenPath = URI.create(ready.getString("token_endpoint")).path
            val creates = log.filter { it.getString("method") == "POST" && it.getString("path") == createPath }
            assertEquals(0, log.count { !it.isNull("status") && it.getInt("status") == 429 }, "no 429")
            assertEquals(1, log.count { it.getString("method") == "POST" && it.getString("path") == tokenPath }, "one token request for both clients")
            assertEquals(120, creates.count { it.getInt("status") == 201 }, "120 creates answered 201")

            for (client in clients) {
                val state = client.sharedState()
                assertEquals("sqlite", state.backend)
                assertTrue(state.available)
                val stored = requireNotNull(state.stored) { "the store answered: $state" }
                assertTrue(stored.tokenShared, "the token is in the store")
                assertFalse(stored.tokenLeaseHeld)
                assertEquals(0, stored.tokenFailuresInARow)
                assertEquals(setOf(LimitClass.CREATE, LimitClass.READ, LimitClass.REQUEUE), stored.windows.map { it.limitClass }.toSet())
            }
            clients.forEach { it.close() }
        } finally {
            process.destroy()
            dir.toFile().deleteRecursively()
        }
    }

    @Test
    fun `without sharedState the budgets and the token are the client's own`(): Unit = runBlocking {
        val client = Client(
            ClientConfig(
                baseUrl = Sandbox.baseUrl,
                tokenEndpoint = Sandbox.tokenEndpoint,
                clientId = Sandbox.MERCHANT_CLIENT_ID,
                clientSecret = Secret(Sandbox.MERCHANT_CLIENT_SECRET),
                allowInsecureLoopback = true,
            ),
        )
        val state = client.sharedState()
        assertEquals("memory", state.backend)
        assertTrue(state.available)
        assertNull(state.stored)
        client.close()
    }
}
