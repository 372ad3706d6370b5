//! The directory domain: merchants, OAuth clients, buyers and their platform-coin wallets,
//! payment channels, access tokens, currencies and platform-coin rates.
//!
//! [`store`] holds the data (no web framework types, no application state); [`rules`] holds
//! the functions over it that other domains share, above all the one wallet debit
//! ([`rules::debit_wallet`]) used by catalog payments and by the merchant-payment checkout. The
//! HTTP side of the directory is the OAuth surface ([`crate::auth`]) and the user and token
//! controls ([`crate::control`]).

pub mod rules;
pub mod store;

pub use store::DirectoryStore;
