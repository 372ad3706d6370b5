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
 */
object Storefront {
    /** A client for the JVM, or for any platform when [ClientConfig.rootCaPem] is set. */
    fun client(config: ClientConfig): Client = Client(config)

    /**
     * A client on Android: initialises the platform verifier with the application context of
     * [androidContext] (an `android.content.Context`; typed `Any` so this jar also runs on the
     * JVM) once per process, then builds the client. With [ClientConfig.rootCaPem] set, only
     * those roots are trusted and no initialisation is needed.
     */
    fun client(config: ClientConfig, androidContext: Any): Client {
        if (config.rootCaPem == null) {
            AndroidPlatformVerifier.init(androidContext)
        }
        return Client(config)
    }
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
