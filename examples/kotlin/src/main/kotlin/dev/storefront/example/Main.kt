// Walks both flows of the storefront SDK against the standalone sandbox, printing each step.
// Run: see pom.xml. The sandbox's control endpoints (/_sandbox) stand in for the buyer.
package dev.storefront.example

import dev.storefront.*
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import kotlinx.coroutines.runBlocking

// Seeded sandbox values (sandbox/src/seed.rs); sandbox-only secrets that protect nothing.
private const val CLIENT_ID = "sbx_merchant_client"
private const val CLIENT_SECRET = "sbx_merchant_secret_9f2c41d7a8e64b0c"
private const val CARD_CHANNEL = "ch_card_usd"
private const val COIN_CHANNEL = "ch_platform_coin"
private const val PRODUCT = "G1001"

private val http = HttpClient.newHttpClient()

/** POSTs JSON to a sandbox control endpoint (the buyer's side, not part of the service). */
private fun control(origin: String, path: String, json: String): String {
    val request = HttpRequest.newBuilder(URI.create("$origin/_sandbox$path"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json))
        .build()
    val response = http.send(request, HttpResponse.BodyHandlers.ofString())
    check(response.statusCode() in 200..299) { "sandbox control $path: ${response.statusCode()} ${response.body()}" }
    return response.body()
}

fun main(args: Array<String>) = runBlocking {
    val origin = (args.firstOrNull() ?: "http://127.0.0.1:8080").trimEnd('/')
    println("storefront ${sdkVersion()} against the sandbox at $origin")

    val client = Storefront.client(ClientConfig(
        baseUrl = "$origin/api",
        tokenEndpoint = "$origin/oauth/token",
        clientId = CLIENT_ID,
        clientSecret = Secret(CLIENT_SECRET),
        userinfoEndpoint = "$origin/oauth/userinfo",
        allowInsecureLoopback = true, // plain HTTP only because the sandbox runs on loopback
    ))

    val granted = client.authenticate()
    println("1. client token granted for ${granted.expiresIn} s: ${granted.scope.joinToString(" ")}")
    val profile = client.merchantProfile()
    println("2. merchant ${profile.merchantNo} \"${profile.name}\"")
    val products = client.listAllProducts(ProductQuery())
    val beans = products.first { it.gdNo == PRODUCT }
    println("3. ${products.size} products; ${beans.gdName} costs ${formatFixedPoint8(beans.actualPrice, beans.currencyDecimals)} ${beans.currency}")

    // Merchant collection: create, buyer pays at the checkout, reconcile by query.
    val reference = "example-${System.currentTimeMillis()}"
    val created = client.createMerchantPayment(CreateMerchantPaymentRequest(
        externalReference = reference,
        amountMinor = parseAmountMinor("12.50", 2),
        currency = "USD",
    ))
    val payment = created.payment
    println("4. merchant payment ${payment.orderNo} ${payment.status}, idempotency key ${created.idempotencyKey} (persist it)")
    println("   checkout URL handed to the buyer (printed redacted): ${payment.checkoutUrl}")
    control(origin, "/merchant-payments/${payment.orderNo}/checkout/pay", """{"payment_no":"$CARD_CHANNEL"}""")
    val paid = client.getMerchantPayment(payment.orderNo)
    checkPayment(PaymentExpectation(reference, payment.amountMinor, "USD", testMode = false), paid)
    println("5. queried: ${paid.status}, event ${paid.eventId}, ${formatAmountMinor(paid.amountMinor, paid.currencyDecimals)} ${paid.currency} matches the order")

    // Catalog order by a user: token from the app's own authorization (minted by the sandbox here).
    val tokenJson = control(origin, "/users/alice/tokens", """{"client_id":"$CLIENT_ID"}""")
    val userToken = Regex("\"access_token\"\\s*:\\s*\"([^\"]+)\"").find(tokenJson)!!.groupValues[1]
    val session = client.userSession(Secret(userToken))
    val orderNo = session.createOrder(CreateOrderRequest(gdNo = PRODUCT, quantity = 1, paymentNo = COIN_CHANNEL))
    println("6. catalog order $orderNo created (not paid yet)")
    val start = session.startPayment(orderNo, COIN_CHANNEL)
    println("7. payment started: trade ${start.tradeNo}, expires ${start.expireTime}")
    if (session.paymentStatus(orderNo) == PaymentStatus.AwaitingPayment) {
        control(origin, "/catalog/trades/${start.tradeNo}/pay", "{}")
    }
    val outcome = session.waitForPayment(orderNo, intervalMs = 200, timeoutMs = 30_000)
    when (outcome) {
        is PaymentWaitOutcome.Final -> println("8. payment ${outcome.paymentStatus}; order status ${outcome.order.status}")
        is PaymentWaitOutcome.StillPending -> println("8. payment still pending after ${outcome.waitedMs} ms; check again later")
    }
    println("example finished: both flows done")
}
