package dev.storefront

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * Cancelling the Kotlin coroutine drops the Rust future. Observable proof: the Rust future is
 * suspended inside the host's (Kotlin) token provider; when the Rust future is dropped, uniffi
 * drops the foreign future it awaits, which cancels the provider's coroutine.
 */
class CancellationTest {
    @Test
    fun `cancelling the calling coroutine stops the Rust future`(): Unit = runBlocking {
        val entered = CompletableDeferred<Unit>()
        val providerCancelled = CompletableDeferred<Unit>()
        val provider = object : UserTokenProvider {
            override suspend fun userToken(rejected: Secret?): String {
                entered.complete(Unit)
                try {
                    awaitCancellation()
                } catch (e: CancellationException) {
                    providerCancelled.complete(Unit)
                    throw e
                }
            }
        }
        val session = Client(sandboxConfig()).userSessionWithProvider(provider)
        val call = launch(Dispatchers.Default) { session.getOrder("ORDER-NEVER-READ") }
        withTimeout(60_000) { entered.await() }
        call.cancelAndJoin()
        // Completes only if the Rust side dropped its future (and with it the provider call).
        withTimeout(60_000) { providerCancelled.await() }
        assertTrue(call.isCancelled)
    }
}
