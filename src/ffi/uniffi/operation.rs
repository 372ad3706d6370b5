//! The contract's endpoint index as data: which token subject and scope each operation needs,
//! and whether the SDK may re-send it.
//!
//! Contract rules: merchant-collection endpoints accept only client-credentials tokens; catalog
//! orders and payments need user tokens; profile and products take either. Catalog order
//! creation and payment start are never re-sent once they may have been processed.

use crate::operation::{Operation as CoreOperation, Resend, TokenSubject as CoreSubject};

/// Every operation of the contract (the endpoint index plus the token request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
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

impl From<Operation> for CoreOperation {
    fn from(o: Operation) -> Self {
        use Operation as O;
        match o {
            O::Token => CoreOperation::Token,
            O::UserInfo => CoreOperation::UserInfo,
            O::MerchantProfile => CoreOperation::MerchantProfile,
            O::ListProducts => CoreOperation::ListProducts,
            O::CreateOrder => CoreOperation::CreateOrder,
            O::GetOrder => CoreOperation::GetOrder,
            O::StartPayment => CoreOperation::StartPayment,
            O::PaymentStatus => CoreOperation::PaymentStatus,
            O::ListChannels => CoreOperation::ListChannels,
            O::CreateMerchantPayment => CoreOperation::CreateMerchantPayment,
            O::GetMerchantPayment => CoreOperation::GetMerchantPayment,
            O::ListMerchantPayments => CoreOperation::ListMerchantPayments,
            O::ListNotifications => CoreOperation::ListNotifications,
            O::RetryNotification => CoreOperation::RetryNotification,
        }
    }
}

/// Which kind of access token an operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum TokenSubject {
    /// A user-authorized token only.
    User,
    /// A client-credentials token only.
    Client,
    /// Either.
    UserOrClient,
}

/// What the contract says about one operation.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct OperationInfo {
    /// HTTP method.
    pub method: String,
    /// Path template (`/openapi/v1/orders/{order_no}`).
    pub path_template: String,
    /// The scope it needs.
    pub scope: String,
    /// The token subject it needs.
    pub token_subject: TokenSubject,
    /// Whether the SDK re-sends it after a failure (false for order creation and payment
    /// start, which are reported as outcome unknown instead).
    pub resent_on_failure: bool,
}

/// The contract's requirements for `operation` (token subject, scope, method, path, re-send).
#[uniffi::export]
pub fn operation_info(operation: Operation) -> OperationInfo {
    let op: CoreOperation = operation.into();
    OperationInfo {
        method: op.method().to_owned(),
        path_template: op.path_template().to_owned(),
        scope: op.scope().to_owned(),
        token_subject: match op.token_subject() {
            CoreSubject::User => TokenSubject::User,
            CoreSubject::Client => TokenSubject::Client,
            CoreSubject::UserOrClient => TokenSubject::UserOrClient,
        },
        resent_on_failure: matches!(op.resend(), Resend::Safe),
    }
}
