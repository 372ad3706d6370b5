// Walks both flows of the storefront SDK from Java against the standalone sandbox, printing each
// step: blocking calls for the merchant collection, CompletableFuture for the catalog order.
// Run: see pom.xml. The sandbox's control endpoints (/_sandbox) stand in for the buyer.
package dev.storefront.example;

import dev.storefront.CreatedMerchantPayment;
import dev.storefront.GrantedToken;
import dev.storefront.MerchantPayment;
import dev.storefront.MerchantProfile;
import dev.storefront.PaymentExpectation;
import dev.storefront.PaymentStart;
import dev.storefront.PaymentWaitOutcome;
import dev.storefront.Product;
import dev.storefront.Storefront;
import dev.storefront.StorefrontClient;
import dev.storefront.StorefrontException;
import dev.storefront.StorefrontUserSession;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class Main {
    // Seeded sandbox values (sandbox/src/seed.rs); sandbox-only secrets that protect nothing.
    private static final String CLIENT_ID = "sbx_merchant_client";
    private static final String CLIENT_SECRET = "sbx_merchant_secret_9f2c41d7a8e64b0c";
    private static final String CARD_CHANNEL = "ch_card_usd";
    private static final String COIN_CHANNEL = "ch_platform_coin";
    private static final String PRODUCT = "G1001";

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** POSTs JSON to a sandbox control endpoint (the buyer's side, not part of the service). */
    private static String control(String origin, String path, String json) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(origin + "/_sandbox" + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IllegalStateException("sandbox control " + path + ": " + response.statusCode() + " " + response.body());
        }
        return response.body();
    }

    public static void main(String[] args) throws Exception {
        String origin = (args.length > 0 ? args[0] : "http://127.0.0.1:8080").replaceAll("/+$", "");
        System.out.println("storefront " + Storefront.sdkVersion() + " against the sandbox at " + origin);

        try (StorefrontClient client = StorefrontClient.builder()
                .baseUrl(origin + "/api")
                .tokenEndpoint(origin + "/oauth/token")
                .userinfoEndpoint(origin + "/oauth/userinfo")
                .clientId(CLIENT_ID)
                .clientSecret(CLIENT_SECRET)
                .allowInsecureLoopback(true) // plain HTTP only because the sandbox runs on loopback
                .build()) {
            merchantCollection(client, origin);
            catalogOrder(client, origin);
        }
        System.out.println("example finished: both flows done");
    }

    /** Blocking calls: each throws the checked StorefrontException (typed subclasses). */
    private static void merchantCollection(StorefrontClient client, String origin) throws Exception {
        GrantedToken granted = client.authenticate();
        System.out.println("1. client token granted for " + granted.getExpiresIn() + " s: " + String.join(" ", granted.getScope()));
        MerchantProfile profile = client.merchantProfile();
        System.out.println("2. merchant " + profile.getMerchantNo() + " \"" + profile.getName() + "\"");
        List<Product> products = client.listAllProducts();
        Product beans = products.stream().filter(p -> p.getGdNo().equals(PRODUCT)).findFirst().orElseThrow();
        System.out.println("3. " + products.size() + " products; " + beans.getGdName() + " costs "
            + Storefront.formatFixedPoint8(beans.getActualPrice(), beans.getCurrencyDecimals()) + " " + beans.getCurrency());

        // Merchant collection: create, buyer pays at the checkout, reconcile by query.
        String reference = "java-example-" + System.currentTimeMillis();
        CreatedMerchantPayment created;
        try {
            created = client.createMerchantPayment(Storefront.merchantPaymentRequest()
                .externalReference(reference)
                .amountMinor(Storefront.parseAmountMinor("12.50", 2))
                .currency("USD")
                .build());
        } catch (StorefrontException.Validation e) {
            throw new IllegalArgumentException("refused before sending: " + e.getField() + ": " + e.getDetail(), e);
        }
        MerchantPayment payment = created.getPayment();
        System.out.println("4. merchant payment " + payment.getOrderNo() + " " + payment.getStatus()
            + ", idempotency key " + created.getIdempotencyKey() + " (persist it)");
        System.out.println("   checkout URL handed to the buyer (printed redacted): " + payment.getCheckoutUrl());
        control(origin, "/merchant-payments/" + payment.getOrderNo() + "/checkout/pay", "{\"payment_no\":\"" + CARD_CHANNEL + "\"}");
        MerchantPayment paid = client.getMerchantPayment(payment.getOrderNo());
        Storefront.checkPayment(new PaymentExpectation(reference, payment.getAmountMinor(), "USD", false), paid);
        System.out.println("5. queried: " + paid.getStatus() + ", event " + paid.getEventId() + ", "
            + Storefront.formatMoney(paid.getAmountMinor(), paid.getCurrency(), paid.getCurrencyDecimals()) + " matches the order");
    }

    /** CompletableFuture forms: a chain of calls; cancelling the future would cancel the call in flight. */
    private static void catalogOrder(StorefrontClient client, String origin) throws Exception {
        // The user's token comes from the app's own authorization (minted by the sandbox here).
        String tokenJson = control(origin, "/users/alice/tokens", "{\"client_id\":\"" + CLIENT_ID + "\"}");
        Matcher m = Pattern.compile("\"access_token\"\\s*:\\s*\"([^\"]+)\"").matcher(tokenJson);
        if (!m.find()) throw new IllegalStateException("no access_token in " + tokenJson);
        try (StorefrontUserSession session = client.userSession(m.group(1))) {
            CompletableFuture<String> created = session
                .createOrderAsync(Storefront.orderRequest().gdNo(PRODUCT).quantity(1).paymentNo(COIN_CHANNEL).build());
            CompletableFuture<PaymentStart> started = created.thenCompose(orderNo -> {
                System.out.println("6. catalog order " + orderNo + " created (not paid yet)");
                return session.startPaymentAsync(orderNo, COIN_CHANNEL);
            });
            PaymentStart start = started.get(60, TimeUnit.SECONDS);
            String orderNo = created.join();
            System.out.println("7. payment started: trade " + start.getTradeNo() + ", expires " + start.getExpireTime());
            if (session.paymentStatus(orderNo) == dev.storefront.PaymentStatus.AwaitingPayment.INSTANCE) {
                control(origin, "/catalog/trades/" + start.getTradeNo() + "/pay", "{}");
            }
            PaymentWaitOutcome outcome = session
                .waitForPaymentAsync(orderNo, Duration.ofMillis(200), Duration.ofSeconds(30))
                .get(60, TimeUnit.SECONDS);
            if (outcome instanceof PaymentWaitOutcome.Final) {
                PaymentWaitOutcome.Final done = (PaymentWaitOutcome.Final) outcome;
                System.out.println("8. payment " + done.getPaymentStatus() + "; order status " + done.getOrder().getStatus());
            } else {
                PaymentWaitOutcome.StillPending pending = (PaymentWaitOutcome.StillPending) outcome;
                System.out.println("8. payment still pending after " + pending.getWaitedMs() + " ms; check again later");
            }
        }
    }
}
