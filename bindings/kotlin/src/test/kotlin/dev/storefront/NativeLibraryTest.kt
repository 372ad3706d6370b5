package dev.storefront

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** The jar carries the native library for linux-x86-64 and JNA loads it from the classpath. */
class NativeLibraryTest {
    @Test
    fun `the native library loads from the jar and reports the crate version`() {
        // The pom's version (surefire passes it), which check-version.sh keeps equal to Cargo's.
        val expected = System.getProperty("storefront.expected.version") ?: "0.1.0"
        assertEquals(expected, sdkVersion())
    }
}
