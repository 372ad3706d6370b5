//! The endpoint index of the contract as data: method, path template, scope, token subject and
//! whether a request may be re-sent.
//!
//! Contract rule: "Merchant-collection endpoints accept only client-credentials tokens, never user
//! tokens"; "Catalog orders and payments require user-authorized tokens". The SDK checks the
//! subject before sending anything, and logs only the path template (never ids or tokens).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which kind of access token an operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSubject {
    /// A user-authorized token only.
    User,
    /// A client-credentials token only.
    Client,
    /// Either a user or a client-credentials token.
    UserOrClient,
}

impl TokenSubject {
    /// Whether a token of subject `held` (User or Client) is acceptable.
    pub fn accepts(self, held: TokenSubject) -> bool {
        matches!(
            (self, held),
            (TokenSubject::UserOrClient, _)
                | (TokenSubject::User, TokenSubject::User)
                | (TokenSubject::Client, TokenSubject::Client)
        )
    }
}

impl fmt::Display for TokenSubject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenSubject::User => "user",
            TokenSubject::Client => "client-credentials",
            TokenSubject::UserOrClient => "user or client-credentials",
        })
    }
}

/// How a request may be repeated after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resend {
    /// Reads, token requests and merchant-payment create with the same idempotency key:
    /// retried on connection errors, timeouts, 5xx, the retryable 503 codes and 429.
    Safe,
    /// Catalog order creation and payment start: never re-sent, not even after a 429 (catalog
    /// rate limits are not shown by the contract, and a 429 given after processing looks the
    /// same). Only 400/403/404/409/410/422 are plain errors; any other answer once the request
    /// may have been processed is [`crate::Error::OutcomeUnknown`].
    Never,
}

/// Every operation of the contract (the endpoint index plus the token request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// POST {token_endpoint} (client credentials).
    Token,
    /// GET {userinfo_endpoint}.
    UserInfo,
    /// GET /openapi/v1/merchant.
    MerchantProfile,
    /// GET /openapi/v1/products.
    ListProducts,
    /// POST /openapi/v1/orders.
    CreateOrder,
    /// GET /openapi/v1/orders/{order_no}.
    GetOrder,
    /// POST /openapi/v1/orders/{order_no}/payment.
    StartPayment,
    /// GET /openapi/v1/orders/{order_no}/payment.
    PaymentStatus,
    /// GET /openapi/v1/merchant-payment-channels.
    ListChannels,
    /// POST /openapi/v1/merchant-payments.
    CreateMerchantPayment,
    /// GET /openapi/v1/merchant-payments/{order_no}.
    GetMerchantPayment,
    /// GET /openapi/v1/merchant-payments.
    ListMerchantPayments,
    /// GET /openapi/v1/merchant-payments/{order_no}/notifications.
    ListNotifications,
    /// POST /openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry.
    RetryNotification,
}

impl Operation {
    /// HTTP method.
    pub fn method(self) -> &'static str {
        match self {
            Operation::Token
            | Operation::CreateOrder
            | Operation::StartPayment
            | Operation::CreateMerchantPayment
            | Operation::RetryNotification => "POST",
            _ => "GET",
        }
    }

    /// Path template as in the contract (ids are placeholders; safe to log).
    pub fn path_template(self) -> &'static str {
        match self {
            Operation::Token => "{token_endpoint}",
            Operation::UserInfo => "{userinfo_endpoint}",
            Operation::MerchantProfile => "/openapi/v1/merchant",
            Operation::ListProducts => "/openapi/v1/products",
            Operation::CreateOrder => "/openapi/v1/orders",
            Operation::GetOrder => "/openapi/v1/orders/{order_no}",
            Operation::StartPayment | Operation::PaymentStatus => {
                "/openapi/v1/orders/{order_no}/payment"
            }
            Operation::ListChannels => "/openapi/v1/merchant-payment-channels",
            Operation::CreateMerchantPayment | Operation::ListMerchantPayments => {
                "/openapi/v1/merchant-payments"
            }
            Operation::GetMerchantPayment => "/openapi/v1/merchant-payments/{order_no}",
            Operation::ListNotifications => {
                "/openapi/v1/merchant-payments/{order_no}/notifications"
            }
            Operation::RetryNotification => {
                "/openapi/v1/merchant-payments/{order_no}/notifications/{event_id}/retry"
            }
        }
    }

    /// Scope the endpoint requires.
    pub fn scope(self) -> &'static str {
        match self {
            Operation::Token => "",
            Operation::UserInfo => "openid",
            Operation::MerchantProfile => "merchant.profile.read",
            Operation::ListProducts => "products.read",
            Operation::CreateOrder => "orders.create",
            Operation::GetOrder => "orders.read",
            Operation::StartPayment => "payments.create",
            Operation::PaymentStatus => "payments.read",
            Operation::ListChannels
            | Operation::GetMerchantPayment
            | Operation::ListMerchantPayments
            | Operation::ListNotifications => "merchant_payments.read",
            Operation::CreateMerchantPayment | Operation::RetryNotification => {
                "merchant_payments.create"
            }
        }
    }

    /// Token subject the endpoint accepts.
    pub fn token_subject(self) -> TokenSubject {
        match self {
            Operation::Token => TokenSubject::Client,
            Operation::UserInfo
            | Operation::CreateOrder
            | Operation::GetOrder
            | Operation::StartPayment
            | Operation::PaymentStatus => TokenSubject::User,
            Operation::MerchantProfile | Operation::ListProducts => TokenSubject::UserOrClient,
            _ => TokenSubject::Client,
        }
    }

    /// Whether and how the SDK may re-send the request after a failure.
    pub fn resend(self) -> Resend {
        match self {
            Operation::CreateOrder | Operation::StartPayment => Resend::Never,
            // Re-queue is idempotent per the contract ("repeating ... queues nothing extra").
            _ => Resend::Safe,
        }
    }

    /// The contract's advice when the outcome of a never-resent write is unknown: what the app
    /// can actually do (the contract has no order list, so a lost order number cannot be looked
    /// up; a payment start is checked by its order number).
    pub fn outcome_unknown_advice(self) -> &'static str {
        match self {
            Operation::CreateOrder => {
                "the order may exist but no order number arrived and the service has no order \
                 list to find it: do not send the order again (a repeat may create a second \
                 order); tell the buyer the order is being confirmed and let the buyer decide \
                 before ordering again; keep the request data in `lookup` (gd_no, quantity, \
                 payment_no) for support, and read the order with get_order once its number is \
                 known"
            }
            Operation::StartPayment => {
                "payment may have started (the platform coin may already be debited): do not \
                 start payment again; poll the payment status of `lookup.order_no` \
                 (payment_status or wait_for_payment), then read the order"
            }
            _ => "query the resource before repeating the request",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method(), self.path_template())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merchant_collection_is_client_only_and_catalog_orders_user_only() {
        assert!(
            !Operation::CreateMerchantPayment
                .token_subject()
                .accepts(TokenSubject::User)
        );
        assert!(
            Operation::CreateMerchantPayment
                .token_subject()
                .accepts(TokenSubject::Client)
        );
        assert!(
            !Operation::CreateOrder
                .token_subject()
                .accepts(TokenSubject::Client)
        );
        assert!(
            Operation::ListProducts
                .token_subject()
                .accepts(TokenSubject::User)
        );
        assert!(
            Operation::ListProducts
                .token_subject()
                .accepts(TokenSubject::Client)
        );
        assert_eq!(Operation::CreateOrder.resend(), Resend::Never);
        assert_eq!(Operation::StartPayment.resend(), Resend::Never);
        assert_eq!(Operation::CreateMerchantPayment.resend(), Resend::Safe);
    }
}
