package dev.storefront

import java.lang.System.Logger.Level
import java.util.ResourceBundle

/**
 * Forwards the native SDK's log records to the JVM's own logging, `java.lang.System.Logger`
 * (which SLF4J, Log4j and java.util.logging back-ends plug into).
 *
 * ```
 * StorefrontLogging.install()                 // debug and above, one logger per Rust module
 * StorefrontLogging.install(Level.INFO)       // span closes (one per HTTP attempt) and above
 * StorefrontLogging.uninstall()
 * ```
 *
 * Each record becomes one message, `"<message> key=value ..."`, on the logger named after its
 * Rust target (`storefront.transport`). Records carry the request method, the path template,
 * status, attempt, duration and retry delays; never a secret, a token or a checkout URL.
 * Records arrive on the SDK's own threads.
 */
object StorefrontLogging {
    /** Installs [SystemLoggerSink] for records up to [maxLevel], replacing any previous sink. */
    @JvmStatic
    @JvmOverloads
    fun install(
        maxLevel: Level = Level.DEBUG,
        loggerFor: (String) -> System.Logger = { name -> System.getLogger(name) },
    ) {
        setLogSink(SystemLoggerSink(loggerFor), levelNumber(maxLevel).toUInt())
    }

    /** Stops forwarding records. */
    @JvmStatic
    fun uninstall() {
        setLogSink(null, 0u)
    }

    /** The SDK's level number (1 error … 5 trace) for a `System.Logger` level. */
    @JvmStatic
    fun levelNumber(level: Level): Int = when (level) {
        Level.OFF -> 0
        Level.ERROR -> 1
        Level.WARNING -> 2
        Level.INFO -> 3
        Level.DEBUG -> 4
        Level.TRACE, Level.ALL -> 5
    }

    /** The `System.Logger` level of an SDK level number. */
    @JvmStatic
    fun systemLevel(level: Int): Level = when (level) {
        1 -> Level.ERROR
        2 -> Level.WARNING
        3 -> Level.INFO
        4 -> Level.DEBUG
        else -> Level.TRACE
    }
}

/** A [LogSink] writing each record to the `System.Logger` that [loggerFor] gives its target. */
class SystemLoggerSink(
    private val loggerFor: (String) -> System.Logger = { name -> System.getLogger(name) },
) : LogSink {
    override fun log(record: LogRecord) {
        try {
            val logger = loggerFor(record.target.replace("::", "."))
            val level = StorefrontLogging.systemLevel(record.level.toInt())
            if (!logger.isLoggable(level)) return
            // The (bundle, message, thrown) form: the text is never read as a MessageFormat
            // pattern (path templates contain braces).
            logger.log(level, null as ResourceBundle?, format(record), null as Throwable?)
        } catch (_: Throwable) {
            // Logging must never disturb the call that logged.
        }
    }

    companion object {
        /** `"<message> key=value ..."`, keys sorted. */
        @JvmStatic
        fun format(record: LogRecord): String {
            if (record.fields.isEmpty()) return record.message
            val fields = record.fields.toSortedMap().entries.joinToString(" ") { (k, v) -> "$k=$v" }
            return "${record.message} $fields"
        }
    }
}
