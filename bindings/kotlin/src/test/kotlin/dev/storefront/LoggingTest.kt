package dev.storefront

import java.lang.System.Logger
import java.lang.System.Logger.Level
import java.util.ResourceBundle
import java.util.concurrent.ConcurrentLinkedQueue
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Logs (issue 9): the native records reach a [LogSink] and `System.Logger`, without secrets. */
class LoggingTest {
    @AfterEach
    fun uninstall() = StorefrontLogging.uninstall()

    /** A `System.Logger` keeping every message it is given. */
    private class CapturingLogger(private val name: String, val lines: ConcurrentLinkedQueue<String>) : Logger {
        override fun getName() = name
        override fun isLoggable(level: Level) = true
        override fun log(level: Level, bundle: ResourceBundle?, msg: String?, thrown: Throwable?) {
            lines.add("$level $name $msg")
        }
        override fun log(level: Level, bundle: ResourceBundle?, format: String?, vararg params: Any?) {
            lines.add("$level $name $format")
        }
    }

    @Test
    fun `request records reach the sink and System Logger, and carry no secret or token`(): Unit = runBlocking {
        val records = ConcurrentLinkedQueue<LogRecord>()
        setLogSink(object : LogSink {
            override fun log(record: LogRecord) {
                records.add(record)
            }
        }, 4u)
        val client = Client(sandboxConfig())
        val userToken = Sandbox.userToken()
        assertEquals(Sandbox.MERCHANT_NO, client.merchantProfile().merchantNo)
        client.userSession(Secret(userToken)).paymentStatusOrNull()

        val close = records.firstOrNull { it.message == "storefront.request closed" && it.fields["path"] == "/openapi/v1/merchant" }
        assertTrue(close != null, "no request close among ${records.map { it.message to it.fields }}")
        close!!
        assertEquals(3u, close.level)
        assertEquals("GET", close.fields["method"])
        assertEquals("200", close.fields["status"])
        assertEquals("1", close.fields["attempt"])
        assertTrue(close.fields.containsKey("duration_ms"))
        assertTrue(close.target.startsWith("storefront"))
        assertTrue(records.any { it.message == "request finished" && it.level == 4u })

        // The JVM adapter: the same records as System.Logger messages.
        val lines = ConcurrentLinkedQueue<String>()
        StorefrontLogging.install(Level.DEBUG) { name -> CapturingLogger(name, lines) }
        client.merchantProfile()
        client.userSession(Secret(userToken)).paymentStatusOrNull()
        assertTrue(
            lines.any { it.startsWith("INFO storefront.transport storefront.request closed") && "path=/openapi/v1/merchant " in it },
            "System.Logger got $lines",
        )

        val everything = records.joinToString("\n") { "${it.target} ${it.message} ${it.fields}" } + "\n" + lines.joinToString("\n")
        for (secret in listOf(Sandbox.MERCHANT_CLIENT_SECRET, userToken, "Bearer", "access_token")) {
            assertFalse(secret in everything, "the logs carry $secret")
        }
        // The client-credentials access token itself: whatever the token endpoint granted never
        // appears either (the sandbox mints opaque tokens; their prefix is checked).
        assertFalse(Regex("\"?token\"?\\s*[:=]").containsMatchIn(everything), everything)
    }
}

/** A user-token call (its outcome does not matter here: an unknown order gives a 404). */
private suspend fun UserSession.paymentStatusOrNull() = try {
    paymentStatus("CO-none")
} catch (_: StorefrontException) {
    null
}
