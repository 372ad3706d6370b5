//! Idempotency of merchant-payment creation: per merchant, on normalized parameters,
//! notification address and secret included. A repeat with identical parameters returns the
//! same payment (201); a changed parameter gives 409 `payment_conflict`.

use axum::http::StatusCode;

use super::validation::CreateParams;
use crate::error::{ApiError, ApiResult};

/// What one idempotency key of one merchant created.
#[derive(Debug, Clone)]
pub struct IdempotencyRecord {
    /// The payment the key created.
    pub order_no: String,
    /// The normalized parameters it was created with.
    pub params: CreateParams,
}

/// Outcome of looking a key up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// The key is new: create a payment.
    New,
    /// The key was used with identical parameters: answer with this payment.
    Same(String),
}

/// Compares a request with the record of its key, if any.
pub fn check(record: Option<&IdempotencyRecord>, params: &CreateParams) -> ApiResult<Replay> {
    match record {
        None => Ok(Replay::New),
        Some(record) if record.params == *params => Ok(Replay::Same(record.order_no.clone())),
        Some(record) => {
            let changed = changed_parameter(&record.params, params);
            Err(
                ApiError::new(StatusCode::CONFLICT, "payment_conflict").describe(format!(
                    "this idempotency_key was already used with a different {changed}"
                )),
            )
        }
    }
}

/// Names the first parameter that differs (never its value: it may be a secret).
fn changed_parameter(old: &CreateParams, new: &CreateParams) -> &'static str {
    if old.external_reference != new.external_reference {
        "external_reference"
    } else if old.amount_minor != new.amount_minor {
        "amount_minor"
    } else if old.currency != new.currency {
        "currency"
    } else if old.payment_no != new.payment_no {
        "payment_no"
    } else if old.description != new.description {
        "description"
    } else if old.expires_in != new.expires_in {
        "expires_in"
    } else if old.return_url != new.return_url {
        "return_url"
    } else {
        "notification configuration"
    }
}
