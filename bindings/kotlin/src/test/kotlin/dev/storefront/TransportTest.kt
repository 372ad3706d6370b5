package dev.storefront

import java.nio.file.Files
import java.nio.file.Path
import kotlinx.coroutines.runBlocking
import org.json.JSONObject
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Transport: HTTPS with only the given CA (no platform verifier), and broken connections. */
class TransportTest {
    @AfterEach
    fun clearFaults() = Sandbox.clearFaults()

    @Test
    fun `over HTTPS the client trusts only rootCaPem, with no platform setup on the JVM`(): Unit = runBlocking {
        val (process, ready) = Sandbox.start("--tls")
        try {
            val origin = ready.getString("origin")
            assertTrue(origin.startsWith("https://"), origin)
            val pem = Files.readString(Path.of(ready.getString("ca_pem_path")))
            val config = ClientConfig(
                baseUrl = ready.getString("base_url"),
                tokenEndpoint = ready.getString("token_endpoint"),
                clientId = Sandbox.MERCHANT_CLIENT_ID,
                clientSecret = Secret(Sandbox.MERCHANT_CLIENT_SECRET),
                rootCaPem = pem,
            )
            assertEquals(Sandbox.MERCHANT_NO, Storefront.client(config, androidContext = Any()).merchantProfile().merchantNo)
            // Without the sandbox CA the certificate is refused (a TLS transport failure).
            val otherCa = Sandbox.start("--tls").let { (p, r) -> p.destroy(); Files.readString(Path.of(r.getString("ca_pem_path"))) }
            val e = assertThrows<StorefrontException.Transport> {
                runBlocking { Client(config.copy(rootCaPem = otherCa, retry = RetryPolicy(maxAttempts = 1))).merchantProfile() }
            }
            assertEquals(TransportKind.TLS, e.kind)
        } finally {
            process.destroy()
        }
    }

    @Test
    fun `a read whose connection keeps dropping fails as a transport error after its retries`() {
        val client = Client(sandboxConfig().copy(retry = RetryPolicy(maxAttempts = 2, baseDelayMs = 1, maxDelayMs = 2)))
        val orderNo = runBlocking {
            client.createMerchantPayment(CreateMerchantPaymentRequest(uniqueReference("drop"), 100, "USD")).payment.orderNo
        }
        val path = "${Sandbox.apiPrefix}/openapi/v1/merchant-payments/$orderNo"
        Sandbox.control("POST", "/faults", JSONObject().put("method", "GET").put("path", path).put("drop_connection", true).put("times", 5))
        val e = assertThrows<StorefrontException.Transport> { runBlocking { client.getMerchantPayment(orderNo) } }
        assertEquals(TransportKind.CONNECTION, e.kind)
        val gets = Sandbox.requests().let { all -> (0 until all.length()).count { all.getJSONObject(it).getString("path") == path } }
        assertEquals(2, gets, "one attempt and one retry")
    }
}
