package dev.storefront

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** The jar carries the native library for linux-x86-64 and JNA loads it from the classpath. */
class NativeLibraryTest {
    @Test
    fun `the native library loads from the jar and reports the crate version`() {
        assertEquals("0.1.0", sdkVersion())
    }
}
