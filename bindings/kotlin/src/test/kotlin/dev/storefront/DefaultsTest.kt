package dev.storefront

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

/**
 * Issue 12 item 3: the Kotlin records carry no defaults of their own. A `ClientConfig` field
 * left null takes the core's value, and the default values of `RetryPolicy()` and
 * `RateLimits()` are exactly the core's (README "Defaults").
 */
class DefaultsTest {
    @Test
    fun `record defaults are the core's defaults`() {
        val core = sdkDefaults()
        assertEquals(core.retry, RetryPolicy())
        assertEquals(core.rateLimits, RateLimits())
        assertEquals(3_000L, core.connectTimeoutMs)
        assertEquals(8_000L, core.attemptTimeoutMs)
        assertEquals(20_000L, core.overallDeadlineMs)
        assertEquals(2_000L, core.waitIntervalMs)
        assertEquals(60_000L, core.waitTimeoutMs)
        val config = ClientConfig(baseUrl = "https://a.example/api", tokenEndpoint = "https://a.example/t", clientId = "c")
        assertNull(config.connectTimeoutMs)
        assertNull(config.attemptTimeoutMs)
        assertNull(config.overallDeadlineMs)
        assertNull(config.retry)
        assertNull(config.rateLimits)
        assertNull(config.maxInFlight)
    }
}
