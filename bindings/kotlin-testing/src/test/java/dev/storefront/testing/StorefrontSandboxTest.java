package dev.storefront.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.storefront.ClientConfig;
import dev.storefront.StorefrontClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A registered instance with options (TLS), and StorefrontSandbox on its own. */
class StorefrontSandboxTest {
    @RegisterExtension
    static StorefrontSandboxExtension tls = new StorefrontSandboxExtension().tls(true).args("--token-lifetime", "600");

    @Test
    void withTlsTheConfigurationTrustsTheSandboxCa(StorefrontSandbox sandbox, ClientConfig config) throws Exception {
        assertTrue(sandbox.origin().startsWith("https://"), sandbox.origin());
        assertTrue(config.getRootCaPem().contains("BEGIN CERTIFICATE"));
        assertFalse(config.getAllowInsecureLoopback());
        try (StorefrontClient client = StorefrontClient.create(config)) {
            assertEquals(sandbox.merchantNo(), client.merchantProfile().getMerchantNo());
            assertEquals(600L, client.authenticate().getExpiresIn());
        }
        // Control requests trust the same CA.
        assertTrue(sandbox.control("GET", "/clock") instanceof java.util.Map);
    }

    @Test
    void closeStopsTheProcessAndRemovesItsFolder() {
        StorefrontSandbox sandbox = StorefrontSandbox.start();
        Path ready = sandbox.readyFile();
        assertTrue(Files.exists(ready));
        assertNull(sandbox.caPem());
        sandbox.close();
        assertFalse(sandbox.isRunning());
        assertFalse(Files.exists(ready));
        sandbox.close(); // again: nothing
    }

    @Test
    void aProgramThatCannotRunIsReported() {
        StorefrontSandboxException failed = assertThrows(StorefrontSandboxException.class,
            () -> StorefrontSandbox.start("/nonexistent/storefront-sandbox", false, List.of(), Duration.ofSeconds(5)));
        assertTrue(failed.getMessage().contains("could not run /nonexistent/storefront-sandbox"), failed.getMessage());
    }

    @Test
    void aMissingProgramSaysHowToInstallIt() {
        String chosen = System.getProperty(StorefrontSandbox.BINARY_PROPERTY);
        System.setProperty(StorefrontSandbox.BINARY_PROPERTY, "/nonexistent/storefront-sandbox");
        try {
            StorefrontSandboxException named = assertThrows(StorefrontSandboxException.class, StorefrontSandbox::binaryPath);
            assertTrue(named.getMessage().contains("not an executable file"), named.getMessage());
            System.clearProperty(StorefrontSandbox.BINARY_PROPERTY);
            if (System.getenv(StorefrontSandbox.BINARY_ENV) == null) {
                // (with the binary on PATH there is nothing missing to report)
                try {
                    String found = StorefrontSandbox.binaryPath();
                    assertTrue(found.endsWith("/storefront-sandbox"), found);
                } catch (StorefrontSandboxException missing) {
                    assertTrue(missing.getMessage().contains("pip install storefront-sandbox"), missing.getMessage());
                    assertTrue(missing.getMessage().contains("dev.storefront:storefront-sandbox"), missing.getMessage());
                    assertTrue(missing.getMessage().contains("STOREFRONT_SANDBOX_BIN"), missing.getMessage());
                    assertTrue(missing.getMessage().contains("release tarball"), missing.getMessage());
                }
            }
        } finally {
            if (chosen != null) {
                System.setProperty(StorefrontSandbox.BINARY_PROPERTY, chosen);
            }
        }
    }

    @Test
    void theProgramOfTheSandboxJarIsExtractedOncePrivately() throws Exception {
        // A classpath folder laid out like dev.storefront:storefront-sandbox's jar.
        Path root = Files.createTempDirectory("storefront-sandbox-jar-");
        try {
            Path resource = root.resolve(StorefrontSandbox.RESOURCE_FOLDER + StorefrontSandbox.platform() + "/storefront-sandbox");
            Files.createDirectories(resource.getParent());
            Files.copy(Path.of(StorefrontSandbox.binaryPath()), resource);
            try (java.net.URLClassLoader loader = new java.net.URLClassLoader(new java.net.URL[] {root.toUri().toURL()}, null)) {
                Path program = StorefrontSandbox.bundledProgram(loader);
                assertTrue(program != null && Files.isExecutable(program), String.valueOf(program));
                assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(program)));
                assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(program.getParent())));
                assertEquals(-1, Files.mismatch(program, resource));
                assertEquals(program, StorefrontSandbox.bundledProgram(loader)); // once per JVM
                try (StorefrontSandbox sandbox = StorefrontSandbox.start(program.toString(), false, List.of(), Duration.ofSeconds(60))) {
                    assertTrue(sandbox.isRunning());
                }
            }
        } finally {
            try (java.util.stream.Stream<Path> files = Files.walk(root)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
            }
        }
    }
}
