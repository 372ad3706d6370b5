package dev.storefront;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java API (StorefrontClient, StorefrontUserSession, the builders) called from Java, as Java
 * users write it, against the standalone sandbox: blocking forms and CompletableFuture forms.
 */
class JavaClientTest {
    private StorefrontClient client;

    @BeforeEach
    void open() throws StorefrontException {
        client = StorefrontClient.builder()
            .baseUrl(Sandbox.getBaseUrl())
            .tokenEndpoint(Sandbox.getTokenEndpoint())
            .userinfoEndpoint(Sandbox.getUserinfoEndpoint())
            .clientId(Sandbox.MERCHANT_CLIENT_ID)
            .clientSecret(Sandbox.MERCHANT_CLIENT_SECRET)
            .allowInsecureLoopback(true) // the sandbox: plain HTTP on loopback
            .build();
    }

    @AfterEach
    void close() {
        client.close();
    }

    private static String reference(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @Test
    void createQueryAndListBlocking() throws StorefrontException, WebhookException {
        GrantedToken granted = client.authenticate();
        assertTrue(granted.getExpiresIn() > 0);
        assertEquals(Sandbox.MERCHANT_NO, client.merchantProfile().getMerchantNo());
        assertFalse(client.listChannels().isEmpty());

        String ref = reference("java-blocking");
        CreateMerchantPaymentRequest request = Storefront.merchantPaymentRequest()
            .externalReference(ref)
            .amountMinor(Storefront.parseAmountMinor("12.50", 2))
            .currency("USD")
            .description("Java blocking")
            .build();
        CreatedMerchantPayment created = client.createMerchantPayment(request);
        MerchantPayment payment = created.getPayment();
        assertEquals(1250L, payment.getAmountMinor());
        assertEquals(MerchantPaymentStatus.Pending.INSTANCE, payment.getStatus());
        assertFalse(created.getIdempotencyKey().isEmpty());

        Sandbox.payCheckout(payment.getOrderNo(), Sandbox.CHANNEL_CARD_USD);
        MerchantPayment paid = client.getMerchantPayment(payment.getOrderNo());
        assertTrue(Storefront.isPaid(paid.getStatus()), paid.getStatus().toString());
        Storefront.checkPayment(new PaymentExpectation(ref, 1250L, "USD", false), paid);
        assertEquals("12.50 USD", Storefront.formatMoney(paid.getAmountMinor(), paid.getCurrency(), paid.getCurrencyDecimals()));

        List<MerchantPayment> listed = client.listMerchantPaymentsByReference(ref);
        assertEquals(1, listed.size());
        assertEquals(payment.getOrderNo(), listed.get(0).getOrderNo());
        List<MerchantPayment> byOrderNo = client.listMerchantPayments(new ListMerchantPaymentsQuery(null, payment.getOrderNo(), 10));
        assertEquals(List.of(ref), byOrderNo.stream().map(MerchantPayment::getExternalReference).collect(Collectors.toList()));
        assertNotNull(client.listNotificationRecords(payment.getOrderNo()));
        assertNotNull(client.sharedState().getBackend());
    }

    @Test
    void createQueryAndListWithFutures() throws Exception {
        String ref = reference("java-async");
        CompletableFuture<MerchantPayment> queried = client
            .createMerchantPaymentAsync(Storefront.merchantPaymentRequest().externalReference(ref).amountMinor(999).currency("USD").build())
            .thenCompose(created -> client.getMerchantPaymentAsync(created.getPayment().getOrderNo()));
        MerchantPayment payment = queried.get(60, TimeUnit.SECONDS);
        assertEquals(ref, payment.getExternalReference());
        assertEquals(999L, payment.getAmountMinor());

        List<MerchantPayment> listed = client.listMerchantPaymentsByReferenceAsync(ref).get(60, TimeUnit.SECONDS);
        assertEquals(List.of(payment.getOrderNo()), listed.stream().map(MerchantPayment::getOrderNo).collect(Collectors.toList()));
        // Several calls at once on one client.
        CompletableFuture<List<PaymentChannel>> channels = client.listChannelsAsync();
        CompletableFuture<MerchantProfile> profile = client.merchantProfileAsync();
        CompletableFuture<GrantedToken> token = client.authenticateAsync();
        CompletableFuture.allOf(channels, profile, token).get(60, TimeUnit.SECONDS);
        assertFalse(channels.join().isEmpty());
        assertEquals(Sandbox.MERCHANT_NO, profile.join().getMerchantNo());
        assertNotNull(client.sharedStateAsync().get(60, TimeUnit.SECONDS));
        assertNotNull(client.listNotificationRecordsAsync(payment.getOrderNo(), 5).get(60, TimeUnit.SECONDS));
    }

    @Test
    void catalogOrderWithWaitBlocking() throws StorefrontException {
        List<Product> products = client.listAllProducts();
        Product beans = products.stream().filter(p -> p.getGdNo().equals(Sandbox.PRODUCT_BEANS)).findFirst().orElseThrow();
        try (Stream<Product> stream = client.products()) {
            assertEquals(products.size(), stream.count());
        }
        assertFalse(client.listProducts().getList().isEmpty());

        try (StorefrontUserSession session = client.userSession(Sandbox.userToken())) {
            assertFalse(session.userinfo().isEmpty());
            CreateOrderRequest request = Storefront.orderRequest()
                .gdNo(beans.getGdNo()).quantity(1).paymentNo(Sandbox.CHANNEL_CARD_USD).build();
            String orderNo = session.createOrder(request);
            assertEquals(OrderStatus.AwaitingPayment.INSTANCE, session.getOrder(orderNo).getStatus());
            PaymentStart start = session.startPayment(orderNo, Sandbox.CHANNEL_CARD_USD);
            assertEquals(PaymentStatus.AwaitingPayment.INSTANCE, session.paymentStatus(orderNo));
            // Not paid yet: the wait ends as an outcome, not an error.
            PaymentWaitOutcome pending = session.waitForPayment(orderNo, Duration.ofMillis(20), Duration.ofMillis(300));
            assertInstanceOf(PaymentWaitOutcome.StillPending.class, pending);

            int status = Sandbox.control("POST", "/catalog/trades/" + start.getTradeNo() + "/pay").getFirst();
            assertTrue(status >= 200 && status < 300);
            PaymentWaitOutcome outcome = session.waitForPayment(orderNo, Duration.ofMillis(50), Duration.ofSeconds(60));
            PaymentWaitOutcome.Final done = assertInstanceOf(PaymentWaitOutcome.Final.class, outcome);
            assertEquals(PaymentStatus.Paid.INSTANCE, done.getPaymentStatus());
            assertEquals(orderNo, done.getOrder().getOrderNo());
        }
    }

    @Test
    void catalogOrderWithWaitFutures() throws Exception {
        StorefrontUserSession session = client.userSession(new Secret(Sandbox.userToken()));
        String orderNo = session
            .createOrderAsync(Storefront.orderRequest().gdNo(Sandbox.PRODUCT_BEANS).quantity(1).paymentNo(Sandbox.CHANNEL_CARD_USD).build())
            .get(60, TimeUnit.SECONDS);
        PaymentStart start = session.startPaymentAsync(orderNo, Sandbox.CHANNEL_CARD_USD).get(60, TimeUnit.SECONDS);
        CompletableFuture<PaymentWaitOutcome> waiting = session.waitForPaymentAsync(orderNo, Duration.ofMillis(50), Duration.ofSeconds(60));
        Sandbox.control("POST", "/catalog/trades/" + start.getTradeNo() + "/pay");
        PaymentWaitOutcome.Final done = assertInstanceOf(PaymentWaitOutcome.Final.class, waiting.get(60, TimeUnit.SECONDS));
        assertEquals(PaymentStatus.Paid.INSTANCE, done.getPaymentStatus());
        CatalogOrder order = session.getOrderAsync(orderNo).get(60, TimeUnit.SECONDS);
        assertTrue(order.getStatus() == OrderStatus.PaidProcessing.INSTANCE || order.getStatus() == OrderStatus.Completed.INSTANCE,
            order.getStatus().toString());
        assertFalse(session.listAllProductsAsync().get(60, TimeUnit.SECONDS).isEmpty());
    }

    @Test
    void webhookFromTheSandboxVerifies() throws Exception {
        String secret = "whsec_java_test_0123456789abcdef0123456789ab";
        LinkedBlockingQueue<String[]> headers = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<byte[]> bodies = new LinkedBlockingQueue<>();
        HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/hook", exchange -> {
            var h = exchange.getRequestHeaders();
            byte[] body = exchange.getRequestBody().readAllBytes();
            headers.add(new String[] {
                h.getFirst("X-Service-Event-ID"), h.getFirst("X-Service-Timestamp"), h.getFirst("X-Service-Signature"),
            });
            bodies.add(body);
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        receiver.start();
        try {
            String ref = reference("java-hook");
            CreatedMerchantPayment created = client.createMerchantPayment(Storefront.merchantPaymentRequest()
                .externalReference(ref).amountMinor(777).currency("USD")
                .notifyUrl("http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook")
                .notifySecret(secret)
                .build());
            String[] h = headers.poll(60, TimeUnit.SECONDS);
            assertNotNull(h, "no notification delivered within 60 s");
            byte[] body = bodies.take();

            WebhookVerifier verifier = Storefront.webhookVerifier("an-older-secret-that-is-still-kept-0001", secret);
            StatusNotification n = verifier.verify(h[0], h[1], h[2], body);
            assertEquals(h[0], n.getId());
            assertEquals(created.getPayment().getOrderNo(), n.getData().getOrderNo());
            Storefront.checkNotification(new PaymentExpectation(ref, 777L, "USD", false), n.getData());

            byte[] tampered = Arrays.copyOf(body, body.length + 1);
            tampered[body.length] = ' ';
            assertThrows(WebhookException.SignatureMismatch.class, () -> verifier.verify(h[0], h[1], h[2], tampered));
            try {
                verifier.verify(h[0], h[1], null, body);
            } catch (WebhookException.MissingHeader expected) {
                // typed: the signature header is missing
            }
            assertThrows(WebhookException.MissingHeader.class, () -> verifier.verify(h[0], h[1], null, body));
            assertEquals(List.of(n.getId()), client.listNotificationRecords(created.getPayment().getOrderNo(), 10)
                .stream().map(DeliveryRecord::getEventId).collect(Collectors.toList()));
        } finally {
            receiver.stop(0);
        }
    }

    @Test
    void reconcileBlockingFutureAndStream() throws Exception {
        String paidRef = reference("java-rec-paid");
        String pendingRef = reference("java-rec-pending");
        MerchantPayment paid = client.createMerchantPayment(Storefront.merchantPaymentRequest()
            .externalReference(paidRef).amountMinor(1500).currency("USD").build()).getPayment();
        client.createMerchantPayment(Storefront.merchantPaymentRequest()
            .externalReference(pendingRef).amountMinor(800).currency("USD").build());
        Sandbox.payCheckout(paid.getOrderNo(), Sandbox.CHANNEL_CARD_USD);

        List<LocalRecord> records = List.of(
            new LocalRecord(paidRef, 1500L, "USD", paid.getOrderNo(), null, null, null),
            new LocalRecord(pendingRef, 800L, "USD", null, null, null, null));
        List<ReconcileReport> reports = client.reconcile(records);
        assertEquals(2, reports.size());
        ReconcileFinding.PaidNotBooked lost = assertInstanceOf(ReconcileFinding.PaidNotBooked.class, reports.get(0).getFinding());
        assertEquals(paid.getOrderNo(), lost.getPayment().getOrderNo());
        assertEquals(ReconcileFinding.InAgreement.INSTANCE, reports.get(1).getFinding());

        // Booked now: the same records agree, through the future form.
        List<LocalRecord> booked = List.of(
            new LocalRecord(paidRef, 1500L, "USD", paid.getOrderNo(), null, lost.getStatusVersion(), lost.getEventId()),
            records.get(1));
        List<ReconcileReport> again = client.reconcileAsync(booked, new ReconcileOptions()).get(60, TimeUnit.SECONDS);
        assertEquals(ReconcileFinding.InAgreement.INSTANCE, again.get(0).getFinding());

        // Lazily, stopping after the first record, then resuming from its cursor.
        ReconcileReport first;
        try (Stream<ReconcileReport> stream = client.reconcileStream(booked)) {
            first = stream.findFirst().orElseThrow();
        }
        ReconcileOptions resume = new ReconcileOptions(false, null, 100, first.getCursor());
        List<ReconcileReport> rest = client.reconcile(booked, resume);
        assertEquals(1, rest.size());
        assertEquals(pendingRef, rest.get(0).getRecord());
    }

    @Test
    void badInputIsTyped() throws Exception {
        CreateMerchantPaymentRequest negative = Storefront.merchantPaymentRequest()
            .externalReference(reference("java-bad")).amountMinor(-1).currency("USD").build();
        StorefrontException.Validation blocking = assertThrows(StorefrontException.Validation.class,
            () -> client.createMerchantPayment(negative));
        assertEquals("amount_minor", blocking.getField());

        // A checked exception, caught by its type.
        try {
            client.createMerchantPayment(negative);
        } catch (StorefrontException.Validation e) {
            assertFalse(e.getDetail().isEmpty());
        }

        // The future form: completes exceptionally with the same type.
        CompletableFuture<CreatedMerchantPayment> future = client.createMerchantPaymentAsync(negative);
        ExecutionException failed = assertThrows(ExecutionException.class, () -> future.get(60, TimeUnit.SECONDS));
        assertInstanceOf(StorefrontException.Validation.class, failed.getCause());
        CompletionException joined = assertThrows(CompletionException.class, future::join);
        assertInstanceOf(StorefrontException.Validation.class, joined.getCause());

        // A bad configuration: plain HTTP off loopback is refused when the client is built.
        assertThrows(StorefrontException.Config.class, () -> StorefrontClient.builder()
            .baseUrl("http://example.com/api").tokenEndpoint("http://example.com/oauth/token")
            .clientId("x").clientSecret("y").build());
        // A missing required value is the builder's own error.
        IllegalStateException missing = assertThrows(IllegalStateException.class,
            () -> Storefront.configBuilder().baseUrl(Sandbox.getBaseUrl()).tokenEndpoint(Sandbox.getTokenEndpoint()).build());
        assertTrue(missing.getMessage().contains("clientId"));
        // A bad amount text.
        assertThrows(StorefrontException.Validation.class, () -> Storefront.parseAmountMinor("12.505", 2));
    }

    /**
     * Cancelling the future cancels the call: the Rust future is dropped, and with it the host's
     * token provider call it is waiting for (the provider's future is cancelled).
     */
    @Test
    void cancellingTheFutureCancelsTheCall() throws Exception {
        AtomicReference<CompletableFuture<String>> asked = new AtomicReference<>();
        CountDownLatch entered = new CountDownLatch(1);
        StorefrontUserSession session = client.userSession(rejected -> {
            CompletableFuture<String> never = new CompletableFuture<>();
            asked.set(never);
            entered.countDown();
            return never;
        });
        CompletableFuture<CatalogOrder> call = session.getOrderAsync("ORDER-NEVER-READ");
        assertTrue(entered.await(60, TimeUnit.SECONDS), "the provider was not asked");
        assertTrue(call.cancel(true));
        assertThrows(CancellationException.class, call::join);
        waitUntil(() -> asked.get().isCancelled(), "the provider's future was not cancelled");
    }

    /** Interrupting a thread blocked in a blocking method cancels the call as well. */
    @Test
    void interruptingABlockingCallCancelsIt() throws Exception {
        AtomicReference<CompletableFuture<String>> asked = new AtomicReference<>();
        CountDownLatch entered = new CountDownLatch(1);
        StorefrontUserSession session = client.userSession(rejected -> {
            CompletableFuture<String> never = new CompletableFuture<>();
            asked.set(never);
            entered.countDown();
            return never;
        });
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                session.getOrder("ORDER-NEVER-READ");
            } catch (Throwable t) {
                thrown.set(t);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        caller.start();
        assertTrue(entered.await(60, TimeUnit.SECONDS), "the provider was not asked");
        caller.interrupt();
        caller.join(60_000);
        assertFalse(caller.isAlive());
        assertInstanceOf(CancellationException.class, thrown.get());
        assertEquals(Boolean.TRUE, stillInterrupted.get());
        waitUntil(() -> asked.get().isCancelled(), "the provider's future was not cancelled");
    }

    private static void waitUntil(java.util.function.BooleanSupplier condition, String message) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, message);
            Thread.sleep(10);
        }
    }

    @Test
    void staticsAndSecretsFromJava() {
        Secret secret = new Secret("not-for-logs");
        assertEquals(12L, secret.byteLen());
        assertFalse(secret.toString().contains("not-for-logs"));
        assertEquals("not-for-logs", secret.expose());
        assertFalse(Storefront.sdkVersion().isEmpty());
        assertTrue(Storefront.sdkDefaults().getWaitTimeoutMs() > 0);
        assertFalse(Storefront.generateIdempotencyKey().isEmpty());
        ClientConfig config = Storefront.configBuilder()
            .baseUrl("https://api.example.com").tokenEndpoint("https://auth.example.com/oauth/token")
            .clientId("id").clientSecret("s3cret").scopes("openid").attemptTimeout(Duration.ofSeconds(5)).build();
        assertEquals(5000L, config.getAttemptTimeoutMs());
        assertFalse(config.toString().contains("s3cret"));
        Map<String, String> none = Map.of();
        assertEquals(none, Storefront.orderRequest().gdNo("G").quantity(1).paymentNo("p").otherIpu(none).build().getOtherIpu());
    }
}
