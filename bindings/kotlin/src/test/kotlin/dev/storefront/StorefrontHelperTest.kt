package dev.storefront

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Client construction: the JVM needs no platform setup; the Android path insists on a Context. */
class StorefrontHelperTest {
    @Test
    fun `on the JVM a client without a custom CA works with no Android initialisation`(): Unit = runBlocking {
        assertEquals(Sandbox.MERCHANT_NO, Storefront.client(sandboxConfig()).merchantProfile().merchantNo)
    }

    @Test
    fun `the Android path refuses an object that is not a Context before touching native code`() {
        assertThrows<IllegalArgumentException> { AndroidPlatformVerifier.init(Any()) }
    }

    @Test
    fun `an invalid configuration is a Config error, not a crash`() {
        val e = assertThrows<StorefrontException.Config> {
            Client(sandboxConfig().copy(allowInsecureLoopback = false))
        }
        assertEquals(true, e.detail.contains("https"), e.detail)
    }
}
