package dev.storefront

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/**
 * Builds [Client]s with the platform setup they need, so that setup cannot be forgotten.
 *
 * - JVM (servers, desktop) and any platform with a custom CA: `Storefront.client(config)`.
 * - Android without a custom CA: `Storefront.client(config, context)`. It first hands the
 *   application `Context` to the rustls platform certificate verifier (see
 *   [AndroidPlatformVerifier]); building a `Client` on Android without it fails with
 *   [StorefrontException.Config] instead of crashing.
 *
 * Every member is a Java static (`Storefront.client(config)`, no `INSTANCE`). Java code uses
 * [StorefrontClient] (blocking and `CompletableFuture` forms) and the builders below; the
 * top-level functions of the generated API are here too as statics (Java would otherwise call
 * them through `StorefrontKt`).
 */
object Storefront {
    /** A client for the JVM, or for any platform when [ClientConfig.rootCaPem] is set. */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun client(config: ClientConfig): Client = Client(config)

    /**
     * A client on Android: initialises the platform verifier with the application context of
     * [androidContext] (an `android.content.Context`; typed `Any` so this jar also runs on the
     * JVM) once per process, then builds the client. With [ClientConfig.rootCaPem] set, only
     * those roots are trusted and no initialisation is needed.
     */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun client(config: ClientConfig, androidContext: Any): Client {
        if (config.rootCaPem == null) {
            AndroidPlatformVerifier.init(androidContext)
        }
        return Client(config)
    }

    /**
     * The configuration from the `STOREFRONT_*` environment variables (the core's
     * `Config::from_env`, shared by every language): `STOREFRONT_BASE_URL`,
     * `STOREFRONT_TOKEN_ENDPOINT`, `STOREFRONT_CLIENT_ID`, `STOREFRONT_CLIENT_SECRET` (required),
     * `STOREFRONT_USERINFO_ENDPOINT`, `STOREFRONT_SCOPES`, `STOREFRONT_ALLOW_INSECURE_LOOPBACK`,
     * `STOREFRONT_ROOT_CA_PEM_FILE`, `STOREFRONT_SHARED_STATE`. `storefront-sandbox` prints the
     * lines that set them. Throws [StorefrontException.Config] naming a missing or bad variable
     * (never showing a secret). Other fields stay null (the defaults): `copy(...)` to change them.
     */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun configFromEnv(): ClientConfig = dev.storefront.configFromEnv(null)

    /**
     * [configFromEnv] over [env] instead of the process environment (the JVM cannot change its
     * own environment; an Android app has none): e.g. the sandbox ready file's `"env"`.
     */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun configFromEnv(env: Map<String, String>): ClientConfig = dev.storefront.configFromEnv(env)

    /** A builder of a [ClientConfig] (Java). */
    @JvmStatic
    fun configBuilder(): ClientConfigBuilder = ClientConfigBuilder()

    /** A builder of a [CreateMerchantPaymentRequest] (Java). */
    @JvmStatic
    fun merchantPaymentRequest(): CreateMerchantPaymentRequestBuilder = CreateMerchantPaymentRequestBuilder()

    /** A builder of a [CreateOrderRequest] (Java). */
    @JvmStatic
    fun orderRequest(): CreateOrderRequestBuilder = CreateOrderRequestBuilder()

    /** A webhook verifier accepting any of [secrets] (several during a rotation), 5-minute tolerance. */
    @JvmStatic
    @Throws(WebhookException::class)
    fun webhookVerifier(vararg secrets: String): WebhookVerifier = WebhookVerifier(secrets.map { Secret(it) }, null)

    /** The native library's version. */
    @JvmStatic
    fun sdkVersion(): String = dev.storefront.sdkVersion()

    /** The SDK's defaults (timeouts, retry, rate limits, wait interval and timeout). */
    @JvmStatic
    fun sdkDefaults(): SdkDefaults = dev.storefront.sdkDefaults()

    /** A new idempotency key (persist it with the order before the create call). */
    @JvmStatic
    fun generateIdempotencyKey(): String = dev.storefront.generateIdempotencyKey()

    /** `"12.50 USD"`: [amountMinor] at [currencyDecimals] with the currency. */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun formatMoney(amountMinor: Long, currency: String, currencyDecimals: Int): String =
        dev.storefront.formatMoney(amountMinor, currency, currencyDecimals)

    /** `"12.50"` for 1250 at 2 decimals. */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun formatAmountMinor(amountMinor: Long, currencyDecimals: Int): String =
        dev.storefront.formatAmountMinor(amountMinor, currencyDecimals)

    /** 1250 for `"12.50"` at 2 decimals (exact; `Validation` otherwise). */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun parseAmountMinor(text: String, currencyDecimals: Int): Long = dev.storefront.parseAmountMinor(text, currencyDecimals)

    /** A catalog price (fixed point, 8 decimals) as text at [decimals]. */
    @JvmStatic
    @Throws(StorefrontException::class)
    fun formatFixedPoint8(raw: Long, decimals: Int): String = dev.storefront.formatFixedPoint8(raw, decimals)

    /** Checks a queried payment against what was asked for (reference, amount, currency, test mode). */
    @JvmStatic
    @Throws(WebhookException::class)
    fun checkPayment(expectation: PaymentExpectation, payment: MerchantPayment) = dev.storefront.checkPayment(expectation, payment)

    /** Checks a verified notification's snapshot against what was asked for. */
    @JvmStatic
    @Throws(WebhookException::class)
    fun checkNotification(expectation: PaymentExpectation, data: NotificationData) = dev.storefront.checkNotification(expectation, data)

    /** Whether a notification's status version is new, a duplicate or stale. */
    @JvmStatic
    fun statusVersionDecision(stored: Long?, incoming: Long): VersionDecision = dev.storefront.statusVersionDecision(stored, incoming)

    /** Whether a merchant payment status means paid. */
    @JvmStatic
    fun isPaid(status: MerchantPaymentStatus): Boolean = merchantPaymentStatusIsPaid(status)
}

/**
 * Android only: the rustls platform verifier checks server certificates through Android's own
 * trust store, which it reaches over JNI with the app `Context`. Call [init] (or use
 * `Storefront.client(config, context)`) before building a client without a custom CA. The
 * app must also bundle the verifier's Android component (see bindings/kotlin/README.md).
 */
object AndroidPlatformVerifier {
    @Volatile
    private var initialised = false

    @JvmStatic
    private external fun nativeInit(context: Any): Boolean

    /** Initialises the verifier once per process with the application context of [context]. */
    @Synchronized
    fun init(context: Any) {
        if (initialised) return
        val getter = runCatching { context.javaClass.getMethod("getApplicationContext") }.getOrNull()
        requireNotNull(getter) { "an android.content.Context is required, got ${context.javaClass.name}" }
        val application = getter.invoke(context) ?: context
        // JNA loads the library for the uniffi calls; JNI needs its own registration of it.
        System.loadLibrary("storefront")
        check(nativeInit(application)) { "rustls platform verifier initialisation failed" }
        initialised = true
    }
}

/**
 * Every product over all pages from [query]'s page, as a cold [Flow]: each collection starts a
 * new read, and pages are fetched as the collector consumes products (client token).
 */
fun Client.products(query: ProductQuery = ProductQuery()): Flow<Product> = flow {
    productCursor(query).use { cursor -> while (true) emit(cursor.next() ?: break) }
}

/** [Client.products] with the user's token. */
fun UserSession.products(query: ProductQuery = ProductQuery()): Flow<Product> = flow {
    productCursor(query).use { cursor -> while (true) emit(cursor.next() ?: break) }
}

/**
 * The amount for a person: `amountMinor` at `currencyDecimals` with the currency, `"12.50 USD"`
 * (the core's `Money` display, exact; `amountMinor` itself stays the wire integer).
 */
fun MerchantPayment.money(): String = formatMoney(amountMinor, currency, currencyDecimals)
