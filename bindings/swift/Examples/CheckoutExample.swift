// Usage example of the Storefront Swift package (not compiled here: no Swift toolchain on the
// project's machines). A buyer app creates a catalog order with the user's token, starts the
// payment, opens the payment page and waits for the result.
import Foundation
import Storefront

final class AppTokenProvider: UserTokenProvider {
    func userToken(rejected: Secret?) async throws -> String {
        // Ask the app's own sign-in layer; `rejected` is the token the service refused.
        try await SignIn.shared.freshAccessToken(replacing: rejected?.expose())
    }
}

func buyBeans() async {
    do {
        let client = try Client(config: ClientConfig(
            baseUrl: "https://api.example.com/api",
            tokenEndpoint: "https://api.example.com/oauth/token",
            clientId: "ios-app",
            clientSecret: nil,
            userinfoEndpoint: "https://api.example.com/oauth/userinfo",
            scopes: nil, attemptTimeoutMs: nil, overallDeadlineMs: nil, retry: nil,
            userAgent: "BeansApp/1.0", rootCaPem: nil, allowInsecureLoopback: false
        ))
        let session = client.userSessionWithProvider(provider: AppTokenProvider())
        let orderNo = try await session.createOrder(request: CreateOrderRequest(
            gdNo: "G1001", quantity: 1, paymentNo: "ch_platform_coin", otherIpu: nil))
        let start = try await session.startPayment(orderNo: orderNo, paymentNo: "ch_platform_coin")
        await openPaymentPage(URL(string: start.redirect)!)   // the app's own web view
        // Polls every 2 s for up to 5 min; cancelling this Task stops the polling.
        let outcome = try await session.waitForPayment(orderNo: orderNo, intervalMs: 2_000, timeoutMs: 300_000)
        switch outcome {
        case let .final(paymentStatus, order):
            print("payment \(paymentStatus), order \(order.status)")
        case let .stillPending(_, waitedMs, _):
            print("still pending after \(waitedMs) ms: show 'confirming payment' and check again later")
        }
    } catch let StorefrontError.Api(status, code, description, field, retryAfter) {
        print("service refused: HTTP \(status) \(code) \(description ?? "") \(field ?? "") retry after \(retryAfter ?? 0) s")
    } catch StorefrontError.OutcomeUnknown(_, _, let advice, _, _, let lookup) {
        print("order may exist: \(advice) (\(lookup))")   // never re-send the order blindly
    } catch {
        print("failed: \(error)")
    }
}
