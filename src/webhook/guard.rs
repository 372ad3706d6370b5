//! Helpers applied after verification: status-version ordering and the merchant's expectation.

use serde::{Deserialize, Serialize};

use super::{NotificationData, WebhookError};
use crate::collection::model::MerchantPayment;
use crate::money::MinorAmount;

/// What to do with an incoming snapshot given the stored `status_version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionDecision {
    /// Newer than what is stored: apply it.
    Apply,
    /// Same version as stored: a repeat; acknowledge, change nothing.
    Duplicate,
    /// Lower than what is stored: it must not overwrite the newer state.
    Stale,
}

/// Compares an incoming `status_version` with the stored one (`None` when nothing is stored):
/// "a lower version must not overwrite a higher one".
pub fn status_version_decision(stored: Option<u64>, incoming: u64) -> VersionDecision {
    match stored {
        None => VersionDecision::Apply,
        Some(s) if incoming > s => VersionDecision::Apply,
        Some(s) if incoming == s => VersionDecision::Duplicate,
        Some(_) => VersionDecision::Stale,
    }
}

/// What the merchant's own order says the payment must be: checked after verifying a
/// notification or querying a payment ("check reference, amount, currency and `test_mode`").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentExpectation {
    /// The merchant's business order reference.
    pub external_reference: String,
    /// The amount the merchant asked for.
    pub amount_minor: MinorAmount,
    /// The currency the merchant asked for.
    pub currency: String,
    /// Whether a test channel is acceptable (`false` for live orders).
    pub test_mode: bool,
}

impl PaymentExpectation {
    /// Checks a payment's own fields against the expectation, in the contract's order
    /// (reference, amount, currency, `test_mode`); the first difference is an
    /// [`WebhookError::ExpectationMismatch`] naming the field. For callers that hold the fields
    /// without a [`NotificationData`] or [`MerchantPayment`] (the bindings).
    pub fn check_fields(
        &self,
        reference: &str,
        amount: MinorAmount,
        currency: &str,
        test_mode: bool,
    ) -> Result<(), WebhookError> {
        let mismatch =
            |field, expected: String, actual: String| WebhookError::ExpectationMismatch {
                field,
                expected,
                actual,
            };
        if reference != self.external_reference {
            return Err(mismatch(
                "external_reference",
                self.external_reference.clone(),
                reference.into(),
            ));
        }
        if amount != self.amount_minor {
            return Err(mismatch(
                "amount_minor",
                self.amount_minor.get().to_string(),
                amount.get().to_string(),
            ));
        }
        if currency != self.currency {
            return Err(mismatch("currency", self.currency.clone(), currency.into()));
        }
        if test_mode != self.test_mode {
            return Err(mismatch(
                "test_mode",
                self.test_mode.to_string(),
                test_mode.to_string(),
            ));
        }
        Ok(())
    }

    /// Checks a verified notification's snapshot.
    pub fn check_notification(&self, data: &NotificationData) -> Result<(), WebhookError> {
        self.check_fields(
            &data.external_reference,
            data.amount_minor,
            &data.currency,
            data.test_mode,
        )
    }

    /// Checks a queried payment (reconciliation by query).
    pub fn check_payment(&self, payment: &MerchantPayment) -> Result<(), WebhookError> {
        self.check_fields(
            &payment.external_reference,
            payment.amount_minor,
            &payment.currency,
            payment.test_mode,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_version_never_overwrites_higher() {
        assert_eq!(status_version_decision(None, 0), VersionDecision::Apply);
        assert_eq!(status_version_decision(Some(2), 3), VersionDecision::Apply);
        assert_eq!(
            status_version_decision(Some(3), 3),
            VersionDecision::Duplicate
        );
        assert_eq!(status_version_decision(Some(3), 2), VersionDecision::Stale);
    }
}
