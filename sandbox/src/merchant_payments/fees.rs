//! A simple model of the platform fee of merchant-own channels (contract: "Settlement, fees and
//! test channels" rule 2; 422 `merchant_fee_funding_unavailable`): the fee is checked at
//! creation, checked again and reserved when the channel payment starts, and charged when the
//! payment is confirmed. Available coin is used first, then approved credit. A payment that
//! went to `review` at expiry gets its reservation released once, only after the channel
//! confirmed the session expired (contract, "States and transitions", pending → review; see
//! [`super::rules::verify_channel_expiry`]).
//!
//! Platform channels credit the merchant and take no separate fee in this model.

use std::collections::HashMap;

use crate::error::{ApiError, ApiResult};

/// Fee of merchant-own channels, in basis points of the settlement amount (1 %).
pub const FEE_BASIS_POINTS: i64 = 100;
/// Available coin of every merchant at start (100 coin, eight-decimal fixed point).
pub const DEFAULT_AVAILABLE: i64 = 100_0000_0000;

/// A merchant's coin for fees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Funds {
    /// Available wallet coin (eight-decimal fixed point).
    pub available: i64,
    /// Approved credit (eight-decimal fixed point).
    pub credit: i64,
    /// Fees reserved by started channel payments.
    pub reserved: i64,
}

impl Default for Funds {
    fn default() -> Self {
        Funds {
            available: DEFAULT_AVAILABLE,
            credit: 0,
            reserved: 0,
        }
    }
}

impl Funds {
    /// What is left for new reservations.
    pub fn free(&self) -> i64 {
        self.available + self.credit - self.reserved
    }
}

/// Fee funds per merchant.
#[derive(Debug, Default)]
pub struct FeeBook {
    funds: HashMap<String, Funds>,
}

/// The fee of a settlement amount (rounded up to the smallest coin unit).
pub fn fee_of(settlement: i64) -> i64 {
    let fee = (i128::from(settlement) * i128::from(FEE_BASIS_POINTS) + 9_999) / 10_000;
    i64::try_from(fee).unwrap_or(i64::MAX)
}

fn unavailable() -> ApiError {
    ApiError::unprocessable(
        "merchant_fee_funding_unavailable",
        "the platform fee cannot be funded from the merchant's available coin and approved credit",
    )
}

impl FeeBook {
    /// A merchant's funds.
    pub fn funds(&self, merchant_no: &str) -> Funds {
        self.funds.get(merchant_no).copied().unwrap_or_default()
    }

    /// Sets a merchant's available coin and credit (reservations are kept).
    pub fn set(&mut self, merchant_no: &str, available: i64, credit: i64) -> Funds {
        let funds = self.funds.entry(merchant_no.to_owned()).or_default();
        funds.available = available;
        funds.credit = credit;
        *funds
    }

    /// The check at creation: the fee could be funded now.
    pub fn check(&self, merchant_no: &str, fee: i64) -> ApiResult<()> {
        if self.funds(merchant_no).free() >= fee {
            Ok(())
        } else {
            Err(unavailable())
        }
    }

    /// The check again, with reservation, when the channel payment starts.
    pub fn reserve(&mut self, merchant_no: &str, fee: i64) -> ApiResult<()> {
        self.check(merchant_no, fee)?;
        self.funds
            .entry(merchant_no.to_owned())
            .or_default()
            .reserved += fee;
        Ok(())
    }

    /// Releases a reserved fee that will not be charged (the channel confirmed the session
    /// expired unpaid): it is free again for new reservations; nothing is charged.
    pub fn release(&mut self, merchant_no: &str, fee: i64) {
        let funds = self.funds.entry(merchant_no.to_owned()).or_default();
        funds.reserved = (funds.reserved - fee).max(0);
    }

    /// Charges a reserved fee when the payment is confirmed: available coin first, then credit.
    pub fn charge(&mut self, merchant_no: &str, fee: i64) {
        let funds = self.funds.entry(merchant_no.to_owned()).or_default();
        funds.reserved = (funds.reserved - fee).max(0);
        let from_available = fee.min(funds.available.max(0));
        funds.available -= from_available;
        funds.credit -= fee - from_available;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fee is 1 % of the settlement, rounded up; it is charged from available coin first,
    /// then from approved credit.
    #[test]
    fn fee_is_reserved_then_charged_from_available_coin_first() {
        assert_eq!(fee_of(1_375_000_000), 13_750_000);
        assert_eq!(fee_of(1), 1);
        let mut book = FeeBook::default();
        book.set("M", 10, 20);
        assert!(book.reserve("M", 31).is_err());
        book.reserve("M", 25).unwrap();
        assert!(book.check("M", 6).is_err());
        book.charge("M", 25);
        assert_eq!(
            book.funds("M"),
            Funds {
                available: 0,
                credit: 5,
                reserved: 0
            }
        );
    }
}
