package dev.storefront

import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files
import java.nio.file.Path
import org.json.JSONArray
import org.json.JSONObject

/**
 * The standalone sandbox (`storefront-sandbox --port 0 --ready-file PATH`), started once per test
 * JVM and stopped when it exits. Its binary comes from the system property
 * `storefront.sandbox.bin` (set by the pom). Control calls go to `/_sandbox`, which is not part of
 * the service contract: they play the buyer, the clock and failing channels.
 */
object Sandbox {
    /** Seeded credentials and names (sandbox/src/seed.rs). */
    const val MERCHANT_CLIENT_ID = "sbx_merchant_client"
    const val MERCHANT_CLIENT_SECRET = "sbx_merchant_secret_9f2c41d7a8e64b0c"
    const val MERCHANT_NO = "M10001"
    const val USER_ALICE = "alice"
    const val CHANNEL_PLATFORM_COIN = "ch_platform_coin"
    const val CHANNEL_CARD_USD = "ch_card_usd"
    const val PRODUCT_BEANS = "G1001"
    const val PRODUCT_GIFT_CARD = "G1002"
    const val PLATFORM_COIN = "PLC"

    private val process: Process
    private val http: HttpClient = HttpClient.newHttpClient()
    @JvmStatic
    val origin: String
    @JvmStatic
    val baseUrl: String
    @JvmStatic
    val tokenEndpoint: String
    @JvmStatic
    val userinfoEndpoint: String
    @JvmStatic
    val controlUrl: String
    /** The `STOREFRONT_*` variables the sandbox prints for an app (ready file `"env"`). */
    @JvmStatic
    val env: Map<String, String>

    init {
        val (started, json) = start()
        process = started
        origin = json.getString("origin")
        baseUrl = json.getString("base_url")
        tokenEndpoint = json.getString("token_endpoint")
        userinfoEndpoint = json.getString("userinfo_endpoint")
        controlUrl = json.getString("control_url")
        val envJson = json.getJSONObject("env")
        env = envJson.keySet().associateWith { envJson.getString(it) }
    }

    /**
     * Starts one standalone sandbox (`--port 0 --ready-file`, plus [extra] arguments), stopped
     * when the JVM exits; returns the process and its ready-file JSON.
     */
    fun start(vararg extra: String): Pair<Process, JSONObject> {
        val bin = System.getProperty("storefront.sandbox.bin")
            ?: error("system property storefront.sandbox.bin is not set (run through Maven)")
        check(Files.isExecutable(Path.of(bin))) { "sandbox binary $bin missing: cargo build -p storefront-sandbox" }
        val dir = Files.createTempDirectory("storefront-sandbox")
        val ready = dir.resolve("ready.json")
        val log = dir.resolve("sandbox.log").toFile()
        val started = ProcessBuilder(listOf(bin, "--port", "0", "--ready-file", ready.toString()) + extra)
            .redirectErrorStream(true)
            .redirectOutput(log)
            .start()
        Runtime.getRuntime().addShutdownHook(Thread { started.destroy() })
        // The sandbox writes the ready file atomically once it listens.
        val deadline = System.nanoTime() + 60_000_000_000L
        while (!Files.exists(ready)) {
            check(started.isAlive) { "sandbox exited early: ${log.readText()}" }
            check(System.nanoTime() < deadline) { "sandbox not ready after 60 s: ${log.readText()}" }
            Thread.sleep(20)
        }
        return started to JSONObject(Files.readString(ready))
    }

    /** Sends a control request; returns (status, body). */
    @JvmStatic
    @JvmOverloads
    fun control(method: String, path: String, body: JSONObject? = null): Pair<Int, String> {
        val request = HttpRequest.newBuilder(URI.create(controlUrl + path))
            .header("Content-Type", "application/json")
            .method(method, body?.let { HttpRequest.BodyPublishers.ofString(it.toString()) } ?: HttpRequest.BodyPublishers.noBody())
            .build()
        val response = http.send(request, HttpResponse.BodyHandlers.ofString())
        return response.statusCode() to response.body()
    }

    private fun controlOk(method: String, path: String, body: JSONObject? = null): String {
        val (status, text) = control(method, path, body)
        check(status in 200..299) { "sandbox control $method $path gave $status: $text" }
        return text
    }

    /** Mints a user-authorized token for a seeded user through the merchant client. */
    @JvmStatic
    @JvmOverloads
    fun userToken(user: String = USER_ALICE, clientId: String = MERCHANT_CLIENT_ID): String =
        JSONObject(controlOk("POST", "/users/$user/tokens", JSONObject().put("client_id", clientId)))
            .getString("access_token")

    /** Moves the sandbox clock forward. */
    fun advanceClock(seconds: Long) {
        controlOk("POST", "/clock/advance", JSONObject().put("seconds", seconds))
    }

    /** The buyer pays a merchant payment at the checkout. */
    @JvmStatic
    @JvmOverloads
    fun payCheckout(orderNo: String, paymentNo: String, user: String = USER_ALICE) {
        controlOk("POST", "/merchant-payments/$orderNo/checkout/pay", JSONObject().put("payment_no", paymentNo).put("user", user))
    }

    /** Sets the merchant-center default notification address and secret. */
    fun setNotificationDefault(url: String, secret: String, merchantNo: String = MERCHANT_NO) {
        controlOk("PUT", "/merchants/$merchantNo/notification-default",
            JSONObject().put("url", url).put("secret", secret).put("enabled", true))
    }

    /**
     * Injects a fault on the next `times` requests matching method and exact path (the path as
     * the sandbox sees it, with the API prefix).
     */
    fun fault(method: String, path: String, status: Int, body: JSONObject? = null, headers: Map<String, String> = emptyMap(), times: Int = 1) {
        val fault = JSONObject().put("method", method).put("path", path).put("status", status).put("times", times)
        if (body != null) fault.put("body", body)
        if (headers.isNotEmpty()) fault.put("headers", JSONObject(headers))
        controlOk("POST", "/faults", fault)
    }

    /** Clears every injected fault. */
    fun clearFaults() {
        controlOk("DELETE", "/faults")
    }

    /** Every notification delivery attempt the sandbox made. */
    fun notificationAttempts(): JSONArray = JSONObject(controlOk("GET", "/notifications/attempts")).getJSONArray("items")

    /** Requests the sandbox received. */
    fun requests(): JSONArray = JSONArray(controlOk("GET", "/requests"))

    /** The API path prefix under the origin (`/api`), for fault paths. */
    val apiPrefix: String get() = URI.create(baseUrl).path.trimEnd('/')
}

/** A client configuration for the sandbox (plain HTTP on loopback, explicitly allowed). */
@JvmOverloads
fun sandboxConfig(
    clientId: String = Sandbox.MERCHANT_CLIENT_ID,
    clientSecret: String = Sandbox.MERCHANT_CLIENT_SECRET,
): ClientConfig = ClientConfig(
    baseUrl = Sandbox.baseUrl,
    tokenEndpoint = Sandbox.tokenEndpoint,
    clientId = clientId,
    clientSecret = Secret(clientSecret),
    userinfoEndpoint = Sandbox.userinfoEndpoint,
    allowInsecureLoopback = true,
)

/** The real time in Unix seconds: the sandbox stamps deliveries with the real time of the attempt. */
fun nowUnix(): Long = java.time.Instant.now().epochSecond

/** A reference no other test uses. */
fun uniqueReference(prefix: String): String = "$prefix-${java.util.UUID.randomUUID()}"
