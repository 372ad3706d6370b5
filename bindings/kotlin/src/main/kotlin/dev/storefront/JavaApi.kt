// The SDK for Java callers (issue 18 item 4): the generated Kotlin API is `suspend` functions,
// which javac cannot call. These classes put a `CompletableFuture` form (`...Async`) and a
// blocking form of every operation over the same generated Kotlin `Client`, `UserSession` and
// `Inbox` (no rule of the SDK is implemented here: each method is one call into the core), plus
// builders for the configuration and the requests.
//
//   StorefrontClient client = StorefrontClient.builder()
//       .baseUrl("https://api.example.com").tokenEndpoint("https://auth.example.com/oauth/token")
//       .clientId("...").clientSecret(System.getenv("STOREFRONT_CLIENT_SECRET")).build();
//   CreatedMerchantPayment created = client.createMerchantPayment(request);          // blocking
//   CompletableFuture<MerchantPayment> f = client.getMerchantPaymentAsync(orderNo);  // async
//
// Errors: a blocking method throws the SDK's checked `StorefrontException` (its subclasses
// `StorefrontException.Validation`, `.Api`, `.OutcomeUnknown`, ...; `InboxException` for the
// inbox), declared with `throws`. A future completes exceptionally with the same exception
// (`join()` wraps it in `CompletionException`, `get()` in `ExecutionException`: take
// `getCause()`). Cancelling a future (`cancel(true)` or `cancel(false)`) cancels the call: the
// Rust future is dropped, polling stops, a token provider call in progress is cancelled.
// Interrupting a thread blocked in a blocking method also cancels the call; the method then
// throws `java.util.concurrent.CancellationException` and the thread's interrupt flag stays set.
package dev.storefront

import java.time.Duration
import java.util.Spliterator
import java.util.Spliterators
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.Executor
import java.util.function.Consumer
import java.util.stream.Stream
import java.util.stream.StreamSupport
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.future.await
import kotlinx.coroutines.future.future
import kotlinx.coroutines.runBlocking

/**
 * Where the futures of one [StorefrontClient] (and of its sessions) run: a supervisor scope, so
 * that one failed call never cancels another, on [Dispatchers.Default] or the builder's
 * executor. The calls suspend while the native library works; they never hold a thread.
 */
internal class JavaCalls(dispatcher: CoroutineDispatcher) {
    val scope = CoroutineScope(SupervisorJob() + dispatcher)

    /** The call as a future; cancelling the future cancels the coroutine and so the call. */
    fun <T> async(block: suspend CoroutineScope.() -> T): CompletableFuture<T> = scope.future(block = block)

    /** The call on the calling thread; an interrupt cancels it. */
    fun <T> blocking(block: suspend CoroutineScope.() -> T): T = blockingCall(block)

    fun close() = scope.cancel("StorefrontClient closed")
}

/** `runBlocking`, whose `InterruptedException` (Java would need to catch it) becomes a cancellation. */
internal fun <T> blockingCall(block: suspend CoroutineScope.() -> T): T = try {
    runBlocking(block = block)
} catch (e: InterruptedException) {
    Thread.currentThread().interrupt()
    throw CancellationException("interrupted: the call was cancelled").also { it.initCause(e) }
}

/** A lazy, closeable stream over a native cursor's `next()` (blocking, on the consuming thread). */
internal fun <T : Any> cursorStream(cursor: AutoCloseable, next: suspend () -> T?): Stream<T> {
    val spliterator = object : Spliterators.AbstractSpliterator<T>(Long.MAX_VALUE, Spliterator.ORDERED or Spliterator.NONNULL) {
        private var done = false

        override fun tryAdvance(action: Consumer<in T>): Boolean {
            if (done) return false
            val item = blockingCall { next() }
            if (item == null) {
                done = true
                return false
            }
            action.accept(item)
            return true
        }
    }
    return StreamSupport.stream(spliterator, false).onClose { cursor.close() }
}

/**
 * The configuration setters, shared by [ClientConfigBuilder] and [StorefrontClient.Builder].
 * Required: [baseUrl], [tokenEndpoint], [clientId]; everything else has the SDK's default
 * (README "Defaults"). The contract requires HTTPS; the sandbox (plain HTTP on loopback) needs
 * [allowInsecureLoopback]. Checked by the core when the client is built
 * (`StorefrontException.Config`).
 */
abstract class ClientConfigSetters<B : ClientConfigSetters<B>> internal constructor() {
    private var baseUrl: String? = null
    private var tokenEndpoint: String? = null
    private var clientId: String? = null
    private var clientSecret: Secret? = null
    private var userinfoEndpoint: String? = null
    private var scopes: List<String>? = null
    private var connectTimeoutMs: Long? = null
    private var attemptTimeoutMs: Long? = null
    private var overallDeadlineMs: Long? = null
    private var retry: RetryPolicy? = null
    private var userAgent: String? = null
    private var rootCaPem: String? = null
    private var allowInsecureLoopback: Boolean = false
    private var rateLimits: RateLimits? = null
    private var maxInFlight: Int? = null
    private var sharedState: Secret? = null

    @Suppress("UNCHECKED_CAST")
    private fun self(set: () -> Unit): B {
        set()
        return this as B
    }

    /** The service's API base URL (`https://…/api`). Required. */
    fun baseUrl(value: String): B = self { baseUrl = value }

    /** The OAuth token endpoint. Required. */
    fun tokenEndpoint(value: String): B = self { tokenEndpoint = value }

    /** The OAuth client id. Required. */
    fun clientId(value: String): B = self { clientId = value }

    /** The OAuth client secret (kept in a [Secret]: never printed). */
    fun clientSecret(value: Secret?): B = self { clientSecret = value }

    /** The OAuth client secret as text. */
    fun clientSecret(value: String): B = clientSecret(Secret(value))

    /** The OpenID userinfo endpoint (needed for `userinfo`). */
    fun userinfoEndpoint(value: String?): B = self { userinfoEndpoint = value }

    /** Scopes asked for with the client-credentials grant. */
    fun scopes(value: List<String>?): B = self { scopes = value }

    /** Scopes asked for with the client-credentials grant. */
    fun scopes(vararg value: String): B = scopes(value.toList())

    fun connectTimeout(value: Duration): B = self { connectTimeoutMs = value.toMillis() }

    /** Timeout of one HTTP attempt. */
    fun attemptTimeout(value: Duration): B = self { attemptTimeoutMs = value.toMillis() }

    /** Deadline of one call over all its attempts. */
    fun overallDeadline(value: Duration): B = self { overallDeadlineMs = value.toMillis() }

    fun retry(value: RetryPolicy?): B = self { retry = value }

    fun userAgent(value: String?): B = self { userAgent = value }

    /** Trust only these PEM roots (instead of the platform's). */
    fun rootCaPem(value: String?): B = self { rootCaPem = value }

    /** Allow plain `http://` to a loopback address (the sandbox, tests). */
    fun allowInsecureLoopback(value: Boolean): B = self { allowInsecureLoopback = value }

    fun rateLimits(value: RateLimits?): B = self { rateLimits = value }

    fun maxInFlight(value: Int?): B = self { maxInFlight = value }

    /** Shared rate budgets and token across processes (`sqlite:///…`, `redis://…`, `postgres://…`). */
    fun sharedState(value: Secret?): B = self { sharedState = value }

    /** Shared rate budgets and token across processes, as text. */
    fun sharedState(value: String): B = sharedState(Secret(value))

    /** The configuration; throws [IllegalStateException] when a required value is missing. */
    fun buildConfig(): ClientConfig = ClientConfig(
        baseUrl = checkNotNull(baseUrl) { "baseUrl is required" },
        tokenEndpoint = checkNotNull(tokenEndpoint) { "tokenEndpoint is required" },
        clientId = checkNotNull(clientId) { "clientId is required" },
        clientSecret = clientSecret,
        userinfoEndpoint = userinfoEndpoint,
        scopes = scopes,
        connectTimeoutMs = connectTimeoutMs,
        attemptTimeoutMs = attemptTimeoutMs,
        overallDeadlineMs = overallDeadlineMs,
        retry = retry,
        userAgent = userAgent,
        rootCaPem = rootCaPem,
        allowInsecureLoopback = allowInsecureLoopback,
        rateLimits = rateLimits,
        maxInFlight = maxInFlight,
        sharedState = sharedState,
    )
}

/** Builds a [ClientConfig] (Java: `Storefront.configBuilder()...build()`). */
class ClientConfigBuilder : ClientConfigSetters<ClientConfigBuilder>() {
    fun build(): ClientConfig = buildConfig()
}

/** Builds a [CreateMerchantPaymentRequest] (Java: `Storefront.merchantPaymentRequest()`). */
class CreateMerchantPaymentRequestBuilder {
    private var externalReference: String? = null
    private var amountMinor: Long? = null
    private var currency: String? = null
    private var request = CreateMerchantPaymentRequest("", 0, "")

    /** The merchant's business reference. Required. */
    fun externalReference(value: String) = apply { externalReference = value }

    /** The amount in minor units (`Storefront.parseAmountMinor("12.50", 2)` = 1250). Required. */
    fun amountMinor(value: Long) = apply { amountMinor = value }

    /** ISO currency code. Required. */
    fun currency(value: String) = apply { currency = value }

    /** Reuse the key of an earlier attempt (persisted with the order); default: a new one. */
    fun idempotencyKey(value: String?) = apply { request.idempotencyKey = value }

    /** A channel to pay with (skips the checkout's choice). */
    fun paymentNo(value: String?) = apply { request.paymentNo = value }

    fun description(value: String?) = apply { request.description = value }

    /** Seconds until the payment expires. */
    fun expiresIn(value: Int?) = apply { request.expiresIn = value }

    fun notifyEnabled(value: Boolean?) = apply { request.notifyEnabled = value }

    /** Where this payment's notifications go. */
    fun notifyUrl(value: String?) = apply { request.notifyUrl = value }

    /** The secret this payment's notifications are signed with. */
    fun notifySecret(value: Secret?) = apply { request.notifySecret = value }

    /** The secret this payment's notifications are signed with, as text. */
    fun notifySecret(value: String) = notifySecret(Secret(value))

    fun returnUrl(value: String?) = apply { request.returnUrl = value }

    fun expectedCurrencyDecimals(value: Int?) = apply { request.expectedCurrencyDecimals = value }

    /** The request (the core checks its limits when it is sent); throws [IllegalStateException] when a required value is missing. */
    fun build(): CreateMerchantPaymentRequest = request.copy(
        externalReference = checkNotNull(externalReference) { "externalReference is required" },
        amountMinor = checkNotNull(amountMinor) { "amountMinor is required" },
        currency = checkNotNull(currency) { "currency is required" },
    )
}

/** Builds a [CreateOrderRequest] (Java: `Storefront.orderRequest()`). */
class CreateOrderRequestBuilder {
    private var gdNo: String? = null
    private var quantity: Int? = null
    private var paymentNo: String? = null
    private var otherIpu: Map<String, String>? = null

    /** The product number. Required. */
    fun gdNo(value: String) = apply { gdNo = value }

    /** Required. */
    fun quantity(value: Int) = apply { quantity = value }

    /** The channel the order will be paid with. Required. */
    fun paymentNo(value: String) = apply { paymentNo = value }

    /** The product's extra fields (`Storefront.buildOtherIpu(product, values)` checks them). */
    fun otherIpu(value: Map<String, String>?) = apply { otherIpu = value }

    fun build(): CreateOrderRequest = CreateOrderRequest(
        gdNo = checkNotNull(gdNo) { "gdNo is required" },
        quantity = checkNotNull(quantity) { "quantity is required" },
        paymentNo = checkNotNull(paymentNo) { "paymentNo is required" },
        otherIpu = otherIpu,
    )
}

/**
 * The host app's user token source, for Java: returns the current user access token as a
 * [CompletionStage] (`CompletableFuture.completedFuture(token)`, or `supplyAsync(...)` for a
 * refresh). `rejected` is the token the service just refused (refresh or re-authorize), null on
 * the first call. When the SDK call is cancelled, the returned future is cancelled.
 */
fun interface JavaUserTokenProvider {
    fun userToken(rejected: Secret?): CompletionStage<String>
}

/**
 * The SDK client for Java: every operation of the Kotlin [Client] as a blocking method that
 * throws [StorefrontException] and as an `...Async` method returning a [CompletableFuture].
 * Thread-safe; build one per configuration and share it. [close] cancels the futures still
 * running and frees the native client.
 */
class StorefrontClient private constructor(
    private val client: Client,
    private val calls: JavaCalls,
) : AutoCloseable {

    /** [ClientConfigSetters] plus where the futures complete; [build] makes the client. */
    class Builder internal constructor() : ClientConfigSetters<Builder>() {
        private var executor: Executor? = null

        /** The executor futures run and complete on (default: the coroutines' shared pool). */
        fun executor(value: Executor?) = apply { executor = value }

        /** The client; throws [StorefrontException.Config] on a bad configuration. */
        @Throws(StorefrontException::class)
        fun build(): StorefrontClient = StorefrontClient(Client(buildConfig()), JavaCalls(dispatcher(executor)))
    }

    companion object {
        /** A builder of the configuration and the client. */
        @JvmStatic
        fun builder(): Builder = Builder()

        /** The client for [config]; throws [StorefrontException.Config] on a bad configuration. */
        @JvmStatic
        @Throws(StorefrontException::class)
        fun create(config: ClientConfig): StorefrontClient = StorefrontClient(Client(config), JavaCalls(Dispatchers.Default))

        /**
         * The client configured by the `STOREFRONT_*` environment variables
         * ([Storefront.configFromEnv]: the same code for production and for `storefront-sandbox`,
         * which prints the lines to set). Throws [StorefrontException.Config] naming a missing
         * or bad variable.
         */
        @JvmStatic
        @Throws(StorefrontException::class)
        fun fromEnv(): StorefrontClient = create(Storefront.configFromEnv())

        /** [fromEnv] over [env] (a map of `STOREFRONT_*` names to values) instead of the process environment. */
        @JvmStatic
        @Throws(StorefrontException::class)
        fun fromEnv(env: Map<String, String>): StorefrontClient = create(Storefront.configFromEnv(env))

        /** Java forms over an existing Kotlin [Client] (closing this closes [client]). */
        @JvmStatic
        @JvmOverloads
        fun wrap(client: Client, executor: Executor? = null): StorefrontClient = StorefrontClient(client, JavaCalls(dispatcher(executor)))

        private fun dispatcher(executor: Executor?): CoroutineDispatcher = executor?.asCoroutineDispatcher() ?: Dispatchers.Default
    }

    /** The Kotlin client underneath (for Kotlin code and the `Flow` helpers). */
    fun kotlinClient(): Client = client

    /** Cancels the futures still running and frees the native client. */
    override fun close() {
        calls.close()
        client.close()
    }

    /** Obtains (or reuses) the client-credentials token; reports what was granted. */
    @Throws(StorefrontException::class)
    fun authenticate(): GrantedToken = calls.blocking { client.authenticate() }

    fun authenticateAsync(): CompletableFuture<GrantedToken> = calls.async { client.authenticate() }

    /** `POST /openapi/v1/merchant-payments` (checked against the contract's limits first; retries reuse the idempotency key). */
    @Throws(StorefrontException::class)
    fun createMerchantPayment(request: CreateMerchantPaymentRequest): CreatedMerchantPayment =
        calls.blocking { client.createMerchantPayment(request) }

    fun createMerchantPaymentAsync(request: CreateMerchantPaymentRequest): CompletableFuture<CreatedMerchantPayment> =
        calls.async { client.createMerchantPayment(request) }

    /** `GET /openapi/v1/merchant-payments/{order_no}`. */
    @Throws(StorefrontException::class)
    fun getMerchantPayment(orderNo: String): MerchantPayment = calls.blocking { client.getMerchantPayment(orderNo) }

    fun getMerchantPaymentAsync(orderNo: String): CompletableFuture<MerchantPayment> =
        calls.async { client.getMerchantPayment(orderNo) }

    /** `GET /openapi/v1/merchant-payments` filtered by external reference and/or order number. */
    @Throws(StorefrontException::class)
    fun listMerchantPayments(query: ListMerchantPaymentsQuery): List<MerchantPayment> =
        calls.blocking { client.listMerchantPayments(query) }

    fun listMerchantPaymentsAsync(query: ListMerchantPaymentsQuery): CompletableFuture<List<MerchantPayment>> =
        calls.async { client.listMerchantPayments(query) }

    /** The merchant payments with this external reference. */
    @Throws(StorefrontException::class)
    fun listMerchantPaymentsByReference(externalReference: String): List<MerchantPayment> =
        listMerchantPayments(ListMerchantPaymentsQuery(externalReference = externalReference))

    fun listMerchantPaymentsByReferenceAsync(externalReference: String): CompletableFuture<List<MerchantPayment>> =
        listMerchantPaymentsAsync(ListMerchantPaymentsQuery(externalReference = externalReference))

    /** `GET /openapi/v1/merchant-payment-channels`. */
    @Throws(StorefrontException::class)
    fun listChannels(): List<PaymentChannel> = calls.blocking { client.listChannels() }

    fun listChannelsAsync(): CompletableFuture<List<PaymentChannel>> = calls.async { client.listChannels() }

    /** A payment's notification delivery records (`limit` 1 to 100, null: 20). */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun listNotificationRecords(orderNo: String, limit: Int? = null): List<DeliveryRecord> =
        calls.blocking { client.listNotificationRecords(orderNo, limit) }

    @JvmOverloads
    fun listNotificationRecordsAsync(orderNo: String, limit: Int? = null): CompletableFuture<List<DeliveryRecord>> =
        calls.async { client.listNotificationRecords(orderNo, limit) }

    /** Re-queues a notification whose automatic attempts are exhausted; returns `accepted`. */
    @Throws(StorefrontException::class)
    fun retryNotification(orderNo: String, eventId: String): Boolean =
        calls.blocking { client.retryNotification(orderNo, eventId) }

    fun retryNotificationAsync(orderNo: String, eventId: String): CompletableFuture<Boolean> =
        calls.async { client.retryNotification(orderNo, eventId) }

    /** One page of products (client token). */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun listProducts(query: ProductQuery = ProductQuery()): ProductPage = calls.blocking { client.listProducts(query) }

    @JvmOverloads
    fun listProductsAsync(query: ProductQuery = ProductQuery()): CompletableFuture<ProductPage> =
        calls.async { client.listProducts(query) }

    /** Every product over all pages (client token). */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun listAllProducts(query: ProductQuery = ProductQuery()): List<Product> = calls.blocking { client.listAllProducts(query) }

    @JvmOverloads
    fun listAllProductsAsync(query: ProductQuery = ProductQuery()): CompletableFuture<List<Product>> =
        calls.async { client.listAllProducts(query) }

    /**
     * Every product as a lazy [Stream], pages read as it is consumed (on the consuming thread);
     * close it (try-with-resources) to free the cursor. A failed page read throws
     * [StorefrontException] out of the terminal operation (unchecked there: Kotlin declares none).
     */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun products(query: ProductQuery = ProductQuery()): Stream<Product> {
        val cursor = client.productCursor(query)
        return cursorStream(cursor) { cursor.next() }
    }

    /** `GET /openapi/v1/merchant` with the client token. */
    @Throws(StorefrontException::class)
    fun merchantProfile(): MerchantProfile = calls.blocking { client.merchantProfile() }

    fun merchantProfileAsync(): CompletableFuture<MerchantProfile> = calls.async { client.merchantProfile() }

    /** Where the rate budgets and the token live and what the shared store holds. */
    @Throws(StorefrontException::class)
    fun sharedState(): SharedStateStatus = calls.blocking { client.sharedState() }

    fun sharedStateAsync(): CompletableFuture<SharedStateStatus> = calls.async { client.sharedState() }

    /**
     * The reconciler ([reconcile] in Kotlin): one report per record, in order. Resume a run
     * stopped early with `options.copy(cursor = lastReport.cursor)` (Java: a new
     * `ReconcileOptions` with that cursor). Validation errors throw before any request.
     */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun reconcile(records: List<LocalRecord>, options: ReconcileOptions = ReconcileOptions()): List<ReconcileReport> =
        calls.blocking { reconcileAll(records, options) }

    @JvmOverloads
    fun reconcileAsync(records: List<LocalRecord>, options: ReconcileOptions = ReconcileOptions()): CompletableFuture<List<ReconcileReport>> =
        calls.async { reconcileAll(records, options) }

    /** The reports as a lazy [Stream]: each record is looked up as it is consumed; close it to stop. */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun reconcileStream(records: List<LocalRecord>, options: ReconcileOptions = ReconcileOptions()): Stream<ReconcileReport> {
        val run = client.reconcileRun(records, options)
        return cursorStream(run) { run.next() }
    }

    private suspend fun reconcileAll(records: List<LocalRecord>, options: ReconcileOptions): List<ReconcileReport> =
        client.reconcileRun(records, options).use { run -> buildList { while (true) add(run.next() ?: break) } }

    /** Calls on behalf of a user with a fixed token. */
    fun userSession(token: Secret): StorefrontUserSession = StorefrontUserSession(client.userSession(token), calls)

    /** Calls on behalf of a user with a fixed token, as text. */
    fun userSession(token: String): StorefrontUserSession = userSession(Secret(token))

    /** Calls on behalf of a user whose token comes from [provider] (asked again once after a 401 `invalid_token`). */
    fun userSession(provider: JavaUserTokenProvider): StorefrontUserSession {
        val adapter = object : UserTokenProvider {
            override suspend fun userToken(rejected: Secret?): String = provider.userToken(rejected).await()
        }
        return StorefrontUserSession(client.userSessionWithProvider(adapter), calls)
    }
}

/**
 * Calls on behalf of a user (catalog orders), for Java: blocking and `...Async` forms of the
 * Kotlin [UserSession]. Its futures run on its [StorefrontClient]'s executor.
 */
class StorefrontUserSession internal constructor(
    private val session: UserSession,
    private val calls: JavaCalls,
) : AutoCloseable {
    /** The Kotlin session underneath. */
    fun kotlinSession(): UserSession = session

    override fun close() = session.close()

    /** `POST /openapi/v1/orders`; the new order number. Never re-sent (`OutcomeUnknown` when unsure). */
    @Throws(StorefrontException::class)
    fun createOrder(request: CreateOrderRequest): String = calls.blocking { session.createOrder(request) }

    fun createOrderAsync(request: CreateOrderRequest): CompletableFuture<String> = calls.async { session.createOrder(request) }

    /** `GET /openapi/v1/orders/{order_no}`. */
    @Throws(StorefrontException::class)
    fun getOrder(orderNo: String): CatalogOrder = calls.blocking { session.getOrder(orderNo) }

    fun getOrderAsync(orderNo: String): CompletableFuture<CatalogOrder> = calls.async { session.getOrder(orderNo) }

    /** `POST /openapi/v1/orders/{order_no}/payment`: starts payment (never re-sent). */
    @Throws(StorefrontException::class)
    fun startPayment(orderNo: String, paymentNo: String): PaymentStart = calls.blocking { session.startPayment(orderNo, paymentNo) }

    fun startPaymentAsync(orderNo: String, paymentNo: String): CompletableFuture<PaymentStart> =
        calls.async { session.startPayment(orderNo, paymentNo) }

    /** `GET /openapi/v1/orders/{order_no}/payment`. */
    @Throws(StorefrontException::class)
    fun paymentStatus(orderNo: String): PaymentStatus = calls.blocking { session.paymentStatus(orderNo) }

    fun paymentStatusAsync(orderNo: String): CompletableFuture<PaymentStatus> = calls.async { session.paymentStatus(orderNo) }

    /**
     * Polls until paid or cancelled, then reads the order (`PaymentWaitOutcome.Final`), or
     * `PaymentWaitOutcome.StillPending` after [timeout]. Defaults: the SDK's (2 s, 60 s).
     */
    @Throws(StorefrontException::class)
    fun waitForPayment(orderNo: String, interval: Duration, timeout: Duration): PaymentWaitOutcome =
        calls.blocking { session.waitForPayment(orderNo, interval.toMillis(), timeout.toMillis()) }

    @Throws(StorefrontException::class)
    fun waitForPayment(orderNo: String): PaymentWaitOutcome = sdkDefaults().let { d ->
        calls.blocking { session.waitForPayment(orderNo, d.waitIntervalMs, d.waitTimeoutMs) }
    }

    fun waitForPaymentAsync(orderNo: String, interval: Duration, timeout: Duration): CompletableFuture<PaymentWaitOutcome> =
        calls.async { session.waitForPayment(orderNo, interval.toMillis(), timeout.toMillis()) }

    fun waitForPaymentAsync(orderNo: String): CompletableFuture<PaymentWaitOutcome> = sdkDefaults().let { d ->
        calls.async { session.waitForPayment(orderNo, d.waitIntervalMs, d.waitTimeoutMs) }
    }

    /** The OpenID userinfo (a map of JSON values). */
    @Throws(StorefrontException::class)
    fun userinfo(): Map<String, JsonValue> = calls.blocking { session.userinfo() }

    fun userinfoAsync(): CompletableFuture<Map<String, JsonValue>> = calls.async { session.userinfo() }

    /** `GET /openapi/v1/merchant` with the user's token. */
    @Throws(StorefrontException::class)
    fun merchantProfile(): MerchantProfile = calls.blocking { session.merchantProfile() }

    fun merchantProfileAsync(): CompletableFuture<MerchantProfile> = calls.async { session.merchantProfile() }

    /** One page of products (user's token). */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun listProducts(query: ProductQuery = ProductQuery()): ProductPage = calls.blocking { session.listProducts(query) }

    @JvmOverloads
    fun listProductsAsync(query: ProductQuery = ProductQuery()): CompletableFuture<ProductPage> =
        calls.async { session.listProducts(query) }

    /** Every product over all pages (user's token). */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun listAllProducts(query: ProductQuery = ProductQuery()): List<Product> = calls.blocking { session.listAllProducts(query) }

    @JvmOverloads
    fun listAllProductsAsync(query: ProductQuery = ProductQuery()): CompletableFuture<List<Product>> =
        calls.async { session.listAllProducts(query) }

    /** Every product as a lazy, closeable [Stream] (user's token). */
    @JvmOverloads
    @Throws(StorefrontException::class)
    fun products(query: ProductQuery = ProductQuery()): Stream<Product> {
        val cursor = session.productCursor(query)
        return cursorStream(cursor) { cursor.next() }
    }
}

/**
 * The webhook inbox for Java (servers): blocking and `...Async` forms of the Kotlin [Inbox].
 * Open once per JVM with [open]; errors are the checked [InboxException].
 */
class StorefrontInbox private constructor(
    private val inbox: Inbox,
    private val calls: JavaCalls,
) : AutoCloseable {
    companion object {
        /**
         * Opens the inbox at [url] (`sqlite:///…`, `postgres://…`), verifying with any of
         * [secrets] and the contract's 5-minute tolerance (or [toleranceSeconds]).
         */
        @JvmStatic
        @JvmOverloads
        @Throws(InboxException::class)
        fun open(url: String, secrets: List<String>, toleranceSeconds: Long? = null, executor: Executor? = null): StorefrontInbox =
            StorefrontInbox(Inbox(url, secrets, toleranceSeconds), JavaCalls(executor?.asCoroutineDispatcher() ?: Dispatchers.Default))

        /** Java forms over an existing Kotlin [Inbox] (closing this closes [inbox]). */
        @JvmStatic
        fun wrap(inbox: Inbox): StorefrontInbox = StorefrontInbox(inbox, JavaCalls(Dispatchers.Default))
    }

    fun kotlinInbox(): Inbox = inbox

    override fun close() {
        calls.close()
        inbox.close()
    }

    /** `sqlite` or `postgres`. */
    fun backend(): String = inbox.backend()

    /** The statements that complete an event inside the app's own transaction (README). */
    fun completionSql(): String = inbox.completionSql()

    /** Verifies and stores one delivery; answer `receipt.getStatus()` with `receipt.getBody()`. */
    @Throws(InboxException::class)
    fun receive(eventId: String?, timestamp: String?, signature: String?, body: ByteArray): Receipt =
        calls.blocking { inbox.receive(eventId, timestamp, signature, body) }

    fun receiveAsync(eventId: String?, timestamp: String?, signature: String?, body: ByteArray): CompletableFuture<Receipt> =
        calls.async { inbox.receive(eventId, timestamp, signature, body) }

    /** Claims up to [n] events for [lease]. */
    @Throws(InboxException::class)
    fun claim(n: Int, lease: Duration): List<InboxEvent> = calls.blocking { inbox.claim(n, lease.toMillis()) }

    fun claimAsync(n: Int, lease: Duration): CompletableFuture<List<InboxEvent>> = calls.async { inbox.claim(n, lease.toMillis()) }

    /** Marks [event] handled; `InboxException.LeaseLost` when another worker holds it now. */
    @Throws(InboxException::class)
    fun complete(event: InboxEvent): Unit = calls.blocking { inbox.complete(event) }

    fun completeAsync(event: InboxEvent): CompletableFuture<Void?> = calls.async { inbox.complete(event); null }

    /** Gives [event] back (the handler failed). */
    @Throws(InboxException::class)
    fun release(event: InboxEvent): Unit = calls.blocking { inbox.release(event) }

    fun releaseAsync(event: InboxEvent): CompletableFuture<Void?> = calls.async { inbox.release(event); null }

    /** Enters a payment the reconciler found into the same flow. */
    @Throws(InboxException::class)
    fun enterReconciled(payment: MerchantPayment): ReceiptOutcome = calls.blocking { inbox.enterReconciled(payment) }

    fun enterReconciledAsync(payment: MerchantPayment): CompletableFuture<ReceiptOutcome> =
        calls.async { inbox.enterReconciled(payment) }

    /** Deletes finished rows older than [retention] (null: 30 days); returns how many. */
    @Throws(InboxException::class)
    fun purge(retention: Duration?): Long = calls.blocking { inbox.purge(retention?.toMillis()) }

    fun purgeAsync(retention: Duration?): CompletableFuture<Long> = calls.async { inbox.purge(retention?.toMillis()) }

    @Throws(InboxException::class)
    fun replayEvent(id: String): Long = calls.blocking { inbox.replayEvent(id) }

    fun replayEventAsync(id: String): CompletableFuture<Long> = calls.async { inbox.replayEvent(id) }

    @Throws(InboxException::class)
    fun replayReceived(fromMs: Long, toMs: Long): Long = calls.blocking { inbox.replayReceived(fromMs, toMs) }

    fun replayReceivedAsync(fromMs: Long, toMs: Long): CompletableFuture<Long> = calls.async { inbox.replayReceived(fromMs, toMs) }

    @Throws(InboxException::class)
    fun status(): InboxStatus = calls.blocking { inbox.status() }

    fun statusAsync(): CompletableFuture<InboxStatus> = calls.async { inbox.status() }

    @Throws(InboxException::class)
    fun watermarks(): List<Watermark> = calls.blocking { inbox.watermarks() }

    fun watermarksAsync(): CompletableFuture<List<Watermark>> = calls.async { inbox.watermarks() }
}
