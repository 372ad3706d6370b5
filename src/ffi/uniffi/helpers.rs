//! Helpers a new user needs before and around a call: an idempotency key made before sending,
//! and the status question "does this need verification?" answered by the core.
//!
//! Contract rules: "On a timeout, retry with the original key and parameters; do not use a new
//! key"; unknown future statuses "are treated as needing verification and never as paid".

use crate::collection::model::MerchantPaymentStatus as CoreStatus;

use super::collection::MerchantPaymentStatus;

/// A fresh idempotency key (`sf-` and 32 hex characters from the system CSPRNG), the one
/// `createMerchantPayment` would generate. Set it as the request's `idempotencyKey` and persist
/// it before sending; after a timeout, `ProviderResultPending` or an unknown outcome, send the
/// same request with the same key again (one payment at the service).
#[uniffi::export]
pub fn generate_idempotency_key() -> String {
    crate::generate_idempotency_key()
}

/// The core status for a uniffi status (same wire text).
fn to_core(status: &MerchantPaymentStatus) -> CoreStatus {
    match status {
        MerchantPaymentStatus::Pending => CoreStatus::Pending,
        MerchantPaymentStatus::Paid => CoreStatus::Paid,
        MerchantPaymentStatus::Review => CoreStatus::Review,
        MerchantPaymentStatus::Expired => CoreStatus::Expired,
        MerchantPaymentStatus::Refunded => CoreStatus::Refunded,
        MerchantPaymentStatus::Chargeback => CoreStatus::Chargeback,
        MerchantPaymentStatus::Unknown { value } => CoreStatus::Unknown(value.clone()),
    }
}

/// Whether a status needs verification before any business decision: true for `Review` and
/// for `Unknown` (a future status), false otherwise (the core's
/// `MerchantPaymentStatus::needs_verification`).
#[uniffi::export]
pub fn merchant_payment_status_needs_verification(status: &MerchantPaymentStatus) -> bool {
    to_core(status).needs_verification()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_and_unknown_needs_verification() {
        for text in [
            "pending",
            "paid",
            "review",
            "expired",
            "refunded",
            "chargeback",
            "x",
        ] {
            let core = CoreStatus::parse(text);
            let status = MerchantPaymentStatus::from(core.clone());
            assert_eq!(to_core(&status), core);
            assert_eq!(
                merchant_payment_status_needs_verification(&status),
                matches!(text, "review" | "x")
            );
        }
        assert_ne!(generate_idempotency_key(), generate_idempotency_key());
    }
}
