package dev.storefront

import java.util.Collections
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** User tokens come from the host app; a rejected token (401 invalid_token) makes the SDK ask again once. */
class TokenProviderTest {
    private val client = Client(sandboxConfig())

    @Test
    fun `after 401 invalid_token the provider is asked again with the rejected token`(): Unit = runBlocking {
        val rejectedSeen = Collections.synchronizedList(mutableListOf<String?>())
        val provider = object : UserTokenProvider {
            override suspend fun userToken(rejected: Secret?): String {
                rejectedSeen.add(rejected?.expose())
                return if (rejected == null) "not-a-valid-token" else Sandbox.userToken()
            }
        }
        val profile = client.userSessionWithProvider(provider).merchantProfile()
        assertEquals(Sandbox.MERCHANT_NO, profile.merchantNo)
        assertEquals(2, rejectedSeen.size)
        assertNull(rejectedSeen[0])
        assertEquals("not-a-valid-token", rejectedSeen[1])
    }

    @Test
    fun `a fixed token that is rejected is reported as 401 invalid_token`() {
        val e = assertThrows<StorefrontException.Api> {
            runBlocking { client.userSession(Secret("not-a-valid-token")).merchantProfile() }
        }
        assertEquals(401, e.status)
        assertEquals(ErrorCode.InvalidToken, e.code)
    }

    @Test
    fun `a provider that throws TokenProvider fails the call with TokenProvider`() {
        val provider = object : UserTokenProvider {
            override suspend fun userToken(rejected: Secret?): String = throw StorefrontException.TokenProvider("signed out")
        }
        val e = assertThrows<StorefrontException.TokenProvider> {
            runBlocking { client.userSessionWithProvider(provider).getOrder("X1") }
        }
        assertEquals("signed out", e.detail)
    }
}
