package dev.storefront.testing;

import dev.storefront.ClientConfig;
import dev.storefront.StorefrontClient;
import dev.storefront.StorefrontException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension: starts the shipped {@code storefront-sandbox} program once per test class
 * (its outermost class, shared by {@code @Nested} classes), on first use, and stops it after the
 * class. It injects into test methods, lifecycle methods and constructors:
 * <ul>
 *   <li>{@link StorefrontSandbox}: the running sandbox ({@code config()}, {@code trigger(...)},
 *       {@code advanceClock(...)}, {@code control(...)}, {@code userToken(...)});</li>
 *   <li>{@link ClientConfig}: the seeded merchant client's configuration (a new object each time);</li>
 *   <li>{@link StorefrontClient}: a client of that configuration, closed after the test or
 *       class it was injected into.</li>
 * </ul>
 *
 * <pre>{@code
 * @ExtendWith(StorefrontSandboxExtension.class)
 * class CheckoutTest {
 *     @Test
 *     void paid(StorefrontClient client, StorefrontSandbox sandbox) throws Exception {
 *         String orderNo = client.createMerchantPayment(request).getPayment().getOrderNo();
 *         sandbox.trigger("pay", orderNo, "--channel", "ch_card_usd");
 *         assertTrue(Storefront.isPaid(client.getMerchantPayment(orderNo).getStatus()));
 *     }
 * }
 * }</pre>
 *
 * The program: {@code -Dstorefront.sandbox.bin}, else {@code $STOREFRONT_SANDBOX_BIN}, else
 * {@code storefront-sandbox} on PATH (see {@link StorefrontSandbox#binaryPath()}). For TLS or
 * more options register an instance:
 * {@code @RegisterExtension static StorefrontSandboxExtension sandbox = new StorefrontSandboxExtension().tls(true).args("--token-lifetime", "2");}
 */
public class StorefrontSandboxExtension implements ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(StorefrontSandboxExtension.class);

    private boolean tls;
    private final List<String> args = new ArrayList<>();

    /** Plain HTTP on 127.0.0.1, no more options (what {@code @ExtendWith} uses). */
    public StorefrontSandboxExtension() {
    }

    /** HTTPS with a generated CA (the injected configuration trusts it). */
    public StorefrontSandboxExtension tls(boolean value) {
        tls = value;
        return this;
    }

    /** More command-line options of the sandbox ({@code --token-lifetime 2}, {@code --notify-to URL}...). */
    public StorefrontSandboxExtension args(String... more) {
        Collections.addAll(args, more);
        return this;
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == StorefrontSandbox.class || type == ClientConfig.class || type == StorefrontClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        StorefrontSandbox sandbox = sandbox(context);
        if (type == StorefrontSandbox.class) {
            return sandbox;
        }
        if (type == ClientConfig.class) {
            return sandbox.config();
        }
        try {
            StorefrontClient client = sandbox.client();
            context.getStore(NAMESPACE).put(new Object(), new Closing(client));
            return client;
        } catch (StorefrontException e) {
            throw new ParameterResolutionException("the sandbox's client was refused: " + e.getMessage(), e);
        }
    }

    /** The sandbox of the test class {@code context} belongs to, started on first use. */
    public StorefrontSandbox sandbox(ExtensionContext context) {
        ExtensionContext owner = context;
        while (owner.getParent().isPresent() && owner.getParent().get() != owner.getRoot()) {
            owner = owner.getParent().get();
        }
        return owner.getStore(NAMESPACE)
            .getOrComputeIfAbsent("sandbox", key -> new Closing(StorefrontSandbox.start(tls, args.toArray(new String[0]))), Closing.class)
            .sandbox();
    }

    /**
     * Closes what it holds when its store's context ends (the test class for the sandbox, the test
     * or class for a client). Implements JUnit's CloseableResource for every JUnit 5 release and
     * AutoCloseable for 5.13 and later; closing twice does nothing.
     */
    @SuppressWarnings("deprecation")
    private static final class Closing implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        private final AutoCloseable resource;
        private boolean closed;

        Closing(AutoCloseable resource) {
            this.resource = resource;
        }

        StorefrontSandbox sandbox() {
            return (StorefrontSandbox) resource;
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                try {
                    resource.close();
                } catch (Exception e) {
                    throw new StorefrontSandboxException("closing " + resource + ": " + e.getMessage(), e);
                }
            }
        }
    }
}
