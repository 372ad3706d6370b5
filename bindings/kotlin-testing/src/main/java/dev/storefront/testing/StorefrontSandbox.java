package dev.storefront.testing;

import dev.storefront.ClientConfig;
import dev.storefront.ClientConfigBuilder;
import dev.storefront.ClientConfigSetters;
import dev.storefront.StorefrontClient;
import dev.storefront.StorefrontException;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A running {@code storefront-sandbox} (the shipped simulator of the payment and catalog
 * service), started on a free loopback port ({@code --port 0 --ready-file FILE}) and stopped by
 * {@link #close()}. JUnit 5 tests get one through {@link StorefrontSandboxExtension}; other code
 * calls {@link #start()}.
 *
 * <p>The program is not in this jar: it is the system property {@code storefront.sandbox.bin},
 * else {@code $STOREFRONT_SANDBOX_BIN}, else the one the artifact
 * {@code dev.storefront:storefront-sandbox} carries when it is on the classpath (a test
 * dependency; extracted once per JVM to a private temporary file), else
 * {@code storefront-sandbox} on PATH ({@code pip install storefront-sandbox}, or the release
 * tarball {@code storefront-sandbox-VERSION-x86_64-linux.tar.gz}).
 */
public final class StorefrontSandbox implements AutoCloseable {
    /** The system property naming the program. */
    public static final String BINARY_PROPERTY = "storefront.sandbox.bin";
    /** The environment variable naming the program. */
    public static final String BINARY_ENV = "STOREFRONT_SANDBOX_BIN";
    private static final String PROGRAM = "storefront-sandbox";
    /**
     * Where dev.storefront:storefront-sandbox carries the program: this folder, then the platform
     * ({@code linux-x86-64}, {@code linux-aarch64}, {@code darwin-aarch64}...: JNA's names).
     */
    static final String RESOURCE_FOLDER = "dev/storefront/sandbox/";
    /** The program extracted from the classpath (once per JVM), when it was. */
    private static Path extracted;

    private final String binary;
    private final Path folder;
    private final Process process;
    private final Map<String, Object> ready;
    private final HttpClient http;
    private volatile boolean closed;

    private StorefrontSandbox(String binary, Path folder, Process process, Map<String, Object> ready, HttpClient http) {
        this.binary = binary;
        this.folder = folder;
        this.process = process;
        this.ready = ready;
        this.http = http;
    }

    /**
     * Path of the sandbox program: {@code -Dstorefront.sandbox.bin}, else
     * {@code $STOREFRONT_SANDBOX_BIN}, else the program of {@code dev.storefront:storefront-sandbox}
     * when that jar is on the classpath (extracted once per JVM into a folder only this user can
     * read, mode 0700, deleted when the JVM exits), else the first {@code storefront-sandbox} on
     * PATH.
     *
     * @throws StorefrontSandboxException saying how to install it when there is none
     */
    public static String binaryPath() {
        for (String[] chosen : new String[][] {
            {"-D" + BINARY_PROPERTY, System.getProperty(BINARY_PROPERTY)},
            {"$" + BINARY_ENV, System.getenv(BINARY_ENV)},
        }) {
            String value = chosen[1];
            if (value != null && !value.isEmpty()) {
                if (!Files.isRegularFile(Path.of(value)) || !Files.isExecutable(Path.of(value))) {
                    throw new StorefrontSandboxException(chosen[0] + " is " + value + ", which is not an executable file");
                }
                return value;
            }
        }
        Path bundled = bundledProgram(StorefrontSandbox.class.getClassLoader());
        if (bundled != null) {
            return bundled.toString();
        }
        String path = System.getenv("PATH");
        for (String dir : path == null ? new String[0] : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, PROGRAM);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new StorefrontSandboxException(
            "storefront-sandbox is not installed: add the test dependency dev.storefront:storefront-sandbox "
                + "(the program for " + platform() + " in a jar), `pip install storefront-sandbox` puts it on PATH, "
                + "or unpack the release tarball storefront-sandbox-VERSION-x86_64-linux.tar.gz and set "
                + BINARY_ENV + " (or -D" + BINARY_PROPERTY + ") to the binary");
    }

    /**
     * JNA's name of this platform ({@code linux-x86-64}, {@code linux-aarch64},
     * {@code darwin-aarch64}, {@code win32-x86-64}...), the folder of the program in
     * dev.storefront:storefront-sandbox.
     */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (os.startsWith("windows")) {
            os = "win32";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "darwin";
        } else {
            os = os.replace(' ', '_');
        }
        switch (arch) {
            case "amd64": case "x86_64": arch = "x86-64"; break;
            case "arm64": arch = "aarch64"; break;
            default: break;
        }
        return os + "-" + arch;
    }

    /**
     * The program dev.storefront:storefront-sandbox carries for this platform, extracted from
     * {@code loader}'s classpath the first time (then the same file for the whole JVM), or null
     * when no such resource is on the classpath.
     */
    static synchronized Path bundledProgram(ClassLoader loader) {
        if (extracted != null && Files.isExecutable(extracted)) {
            return extracted;
        }
        String resource = RESOURCE_FOLDER + platform() + "/" + PROGRAM;
        try (InputStream in = loader == null ? ClassLoader.getSystemResourceAsStream(resource) : loader.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            extracted = extract(in);
            return extracted;
        } catch (IOException e) {
            throw new StorefrontSandboxException("could not extract " + resource + " from the classpath: " + e.getMessage(), e);
        }
    }

    /** Writes {@code program} to a new folder (0700) as an executable file (0700), deleted on exit. */
    static Path extract(InputStream program) throws IOException {
        Set<PosixFilePermission> owner = PosixFilePermissions.fromString("rwx------");
        Path folder = Files.createTempDirectory("storefront-sandbox-bin-", PosixFilePermissions.asFileAttribute(owner));
        folder.toFile().deleteOnExit(); // (registered first: deleted after the file)
        Path file = folder.resolve(PROGRAM);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(owner));
        file.toFile().deleteOnExit();
        try (OutputStream out = Files.newOutputStream(file)) {
            program.transferTo(out);
        }
        Files.setPosixFilePermissions(file, owner); // (whatever the umask took away)
        return file;
    }

    /** Starts the sandbox over plain HTTP on 127.0.0.1 and returns once it listens. */
    public static StorefrontSandbox start() {
        return start(false);
    }

    /**
     * Starts the sandbox (with {@code tls}, HTTPS with a generated CA, which {@link #config()}
     * then trusts) with more command-line options ({@code "--token-lifetime", "2"}...).
     */
    public static StorefrontSandbox start(boolean tls, String... args) {
        return start(binaryPath(), tls, List.of(args), Duration.ofSeconds(60));
    }

    /** Starts {@code binary} and waits at most {@code timeout} for its ready file. */
    public static StorefrontSandbox start(String binary, boolean tls, List<String> args, Duration timeout) {
        Path folder;
        try {
            folder = Files.createTempDirectory("storefront-sandbox-");
        } catch (IOException e) {
            throw new StorefrontSandboxException("no temporary folder for the sandbox", e);
        }
        Path readyFile = folder.resolve("ready.json");
        Path log = folder.resolve("sandbox.log");
        List<String> command = new ArrayList<>(List.of(binary, "--port", "0", "--ready-file", readyFile.toString()));
        if (tls) {
            command.add("--tls");
        }
        command.addAll(args);
        Process process;
        try {
            process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        } catch (IOException e) {
            delete(folder);
            throw new StorefrontSandboxException("could not run " + binary + ": " + e.getMessage(), e);
        }
        // Bounded wait for the ready file, which the sandbox writes atomically once it listens.
        long deadline = System.nanoTime() + timeout.toNanos();
        String failure = "not ready after " + timeout.toSeconds() + " s";
        try {
            while (System.nanoTime() < deadline) {
                if (Files.isRegularFile(readyFile)) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> ready = (Map<String, Object>) Json.parse(Files.readString(readyFile));
                    return new StorefrontSandbox(binary, folder, process, Collections.unmodifiableMap(ready), httpClient(ready));
                }
                if (!process.isAlive()) {
                    failure = "exited with status " + process.exitValue();
                    break;
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "interrupted";
        } catch (IOException | RuntimeException | GeneralSecurityException e) {
            failure = e.toString();
        }
        String output;
        try {
            output = Files.readString(log);
        } catch (IOException e) {
            output = "";
        }
        stop(process);
        delete(folder);
        throw new StorefrontSandboxException("storefront-sandbox (" + binary + ") did not start (" + failure + "):\n" + output);
    }

    private static HttpClient httpClient(Map<String, Object> ready) throws IOException, GeneralSecurityException {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10));
        Object caPath = ready.get("ca_pem_path");
        if (caPath != null) {
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            int i = 0;
            try (InputStream pem = new ByteArrayInputStream(Files.readAllBytes(Path.of(caPath.toString())))) {
                for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(pem)) {
                    trusted.setCertificateEntry("sandbox-ca-" + i++, certificate);
                }
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext tlsContext = SSLContext.getInstance("TLS");
            tlsContext.init(null, trust.getTrustManagers(), null);
            builder.sslContext(tlsContext);
        }
        return builder.build();
    }

    /** Stops the process (SIGTERM, then SIGKILL after 10 s) and removes its folder; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop(process);
        delete(folder);
    }

    private static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static void delete(Path folder) {
        try (Stream<Path> files = Files.walk(folder)) {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder; nothing else to do
        }
    }

    /** Whether the sandbox process still runs. */
    public boolean isRunning() {
        return process.isAlive();
    }

    /** Process id of the sandbox. */
    public long pid() {
        return process.pid();
    }

    /**
     * The ready file's content: origin, base_url, token_endpoint, userinfo_endpoint,
     * control_url, ca_pem_path, clients, users, merchant_no, other_merchant_no (JSON objects
     * as Map, arrays as List).
     */
    public Map<String, Object> ready() {
        return ready;
    }

    /** Path of the ready file (what {@code storefront-sandbox trigger --ready-file} reads). */
    public Path readyFile() {
        return folder.resolve("ready.json");
    }

    /** {@code http://127.0.0.1:PORT} ({@code https://} with TLS). */
    public String origin() {
        return (String) ready.get("origin");
    }

    /** The contract's {@code {base_url}}. */
    public String baseUrl() {
        return (String) ready.get("base_url");
    }

    /** The contract's {@code {token_endpoint}}. */
    public String tokenEndpoint() {
        return (String) ready.get("token_endpoint");
    }

    /** The contract's {@code {userinfo_endpoint}}. */
    public String userinfoEndpoint() {
        return (String) ready.get("userinfo_endpoint");
    }

    /** Base address of the control endpoints and the dashboard ({@code {origin}/_sandbox}). */
    public String controlUrl() {
        return (String) ready.get("control_url");
    }

    /** The seeded merchant of the merchant client ({@code M10001}). */
    public String merchantNo() {
        return (String) ready.get("merchant_no");
    }

    /** The seeded merchant client (the ready file's first client, with every scope). */
    public String merchantClientId() {
        return (String) merchantClient().get("client_id");
    }

    /** The sandbox's CA in PEM with TLS, else null. */
    public String caPem() {
        Object path = ready.get("ca_pem_path");
        if (path == null) {
            return null;
        }
        try {
            return Files.readString(Path.of(path.toString()));
        } catch (IOException e) {
            throw new StorefrontSandboxException("cannot read the sandbox CA " + path, e);
        }
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> merchantClient() {
        return (Map<String, Object>) ((List<Object>) ready.get("clients")).get(0);
    }

    /**
     * Sets the endpoints, the merchant client's credentials and the transport permission
     * (plain HTTP on loopback, or trust in the sandbox's CA) on a builder.
     */
    public <B extends ClientConfigSetters<B>> B configure(B builder) {
        builder.baseUrl(baseUrl())
            .tokenEndpoint(tokenEndpoint())
            .userinfoEndpoint(userinfoEndpoint())
            .clientId(merchantClientId())
            .clientSecret((String) merchantClient().get("client_secret"));
        String ca = caPem();
        return ca != null ? builder.rootCaPem(ca) : builder.allowInsecureLoopback(true);
    }

    /** The seeded merchant client's configuration (a new object each call). */
    public ClientConfig config() {
        return configure(new ClientConfigBuilder()).build();
    }

    /** A client builder with {@link #config()}'s settings; change any before {@code build()}. */
    public StorefrontClient.Builder clientBuilder() {
        return configure(StorefrontClient.builder());
    }

    /** A client of the merchant client; close it (try-with-resources). */
    public StorefrontClient client() throws StorefrontException {
        return clientBuilder().build();
    }

    /**
     * One control request ({@code /_sandbox} + path, e.g. {@code "POST", "/clock/advance"});
     * {@code body} (Map, List, String, Number, Boolean) is sent as JSON unless null. Returns the
     * JSON answer (null when empty); a status of 300 or more throws.
     */
    public Object control(String method, String path, Object body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(controlUrl() + path)).timeout(Duration.ofSeconds(30));
        if (body != null) {
            request.header("Content-Type", "application/json");
            request.method(method, HttpRequest.BodyPublishers.ofString(Json.write(body)));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> answer;
        try {
            answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new StorefrontSandboxException("control " + method + " " + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorefrontSandboxException("control " + method + " " + path + ": interrupted", e);
        }
        if (answer.statusCode() >= 300) {
            throw new StorefrontSandboxException("control " + method + " " + path + ": HTTP " + answer.statusCode() + " " + answer.body());
        }
        return answer.body().isEmpty() ? null : Json.parse(answer.body());
    }

    /** A control request without a body. */
    public Object control(String method, String path) {
        return control(method, path, null);
    }

    /**
     * {@code storefront-sandbox trigger ACTION ARGS... --ready-file} against this sandbox (pay,
     * session, unclear, review, paid, refund, chargeback, expire, advance, redeliver, delivery),
     * e.g. {@code trigger("pay", orderNo, "--channel", "ch_card_usd")}. Returns its JSON answer
     * (a Map for payment actions); a refused action throws with the sandbox's message.
     */
    public Object trigger(String action, String... args) {
        List<String> command = new ArrayList<>(List.of(binary, "trigger", "--ready-file", readyFile().toString(), action));
        Collections.addAll(command, args);
        try {
            Process trigger = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
            CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(trigger.getErrorStream()));
            String out = new String(trigger.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int status = trigger.waitFor();
            if (status != 0) {
                String message = new String(err.join(), StandardCharsets.UTF_8).trim();
                throw new StorefrontSandboxException("trigger " + action + ": " + (message.isEmpty() ? out.trim() : message));
            }
            return out.isBlank() ? null : Json.parse(out);
        } catch (IOException e) {
            throw new StorefrontSandboxException("could not run " + binary + " trigger: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorefrontSandboxException("trigger " + action + ": interrupted", e);
        }
    }

    private static byte[] readAll(InputStream stream) {
        try {
            return stream.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }

    /** Moves the sandbox clock forward; due expiries and notification retries run. */
    public void advanceClock(Duration by) {
        control("POST", "/clock/advance", Map.of("seconds", by.toSeconds()));
    }

    /**
     * A user-authorized token for a seeded buyer (null: the first, {@code alice}) through the
     * merchant client (the authorization-code flow is not in the contract).
     */
    public String userToken(String user) {
        String who = user != null ? user : String.valueOf(((List<?>) ready.get("users")).get(0));
        Object answer = control("POST", "/users/" + who + "/tokens", Map.of("client_id", merchantClientId()));
        return (String) ((Map<?, ?>) answer).get("access_token");
    }

    /** Everything stored goes back to the seed (payments, orders, tokens, faults...). */
    public void reset() {
        control("POST", "/reset");
    }

    @Override
    public String toString() {
        return "StorefrontSandbox(" + origin() + ", pid " + process.pid() + ")";
    }
}
