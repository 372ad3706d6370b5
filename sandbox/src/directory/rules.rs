//! Rules over the directory that several domains share. Each function takes only the part of
//! the directory it touches.

use std::collections::BTreeMap;

use super::store::User;

/// Why a wallet could not be debited. Each caller maps it to its own contract-visible error
/// (catalog payments and the merchant-payment checkout answer differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebitError {
    /// No buyer with this user id (so no wallet).
    NoWallet,
    /// The wallet holds less than the amount; nothing was debited.
    Insufficient {
        /// The wallet's balance (eight-decimal fixed point).
        balance: i64,
        /// The amount that was to be debited.
        amount: i64,
    },
}

/// Debits `amount` (eight-decimal platform coin) from the wallet of `user_id`, all or nothing.
/// Returns the new balance.
pub fn debit_wallet(
    users: &mut BTreeMap<String, User>,
    user_id: &str,
    amount: i64,
) -> Result<i64, DebitError> {
    let user = users.get_mut(user_id).ok_or(DebitError::NoWallet)?;
    if user.wallet < amount {
        return Err(DebitError::Insufficient {
            balance: user.wallet,
            amount,
        });
    }
    user.wallet -= amount;
    Ok(user.wallet)
}

/// The platform-coin rate of a currency now (seeded from [`crate::seed::COIN_RATES`], changed
/// by `PUT /_sandbox/rates/{currency}`); a merchant payment saves it at creation.
pub fn coin_rate(rates: &BTreeMap<String, i64>, currency: &str) -> Option<i64> {
    rates.get(currency).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(wallet: i64) -> BTreeMap<String, User> {
        BTreeMap::from([(
            "alice".to_owned(),
            User {
                user_id: "alice".into(),
                wallet,
            },
        )])
    }

    /// A debit is all or nothing: too little leaves the balance as it was.
    #[test]
    fn debit_is_all_or_nothing() {
        let mut users = users(100);
        assert_eq!(debit_wallet(&mut users, "alice", 40), Ok(60));
        assert_eq!(
            debit_wallet(&mut users, "alice", 61),
            Err(DebitError::Insufficient {
                balance: 60,
                amount: 61
            })
        );
        assert_eq!(users["alice"].wallet, 60);
        assert_eq!(
            debit_wallet(&mut users, "nobody", 1),
            Err(DebitError::NoWallet)
        );
    }
}
