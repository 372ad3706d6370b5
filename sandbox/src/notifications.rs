//! Signed server-to-server status notifications of merchant payments: the configuration table
//! ([`config`]), events and delivery records ([`store`]), the signature ([`signing`]), one
//! delivery attempt ([`delivery`], run by the background worker), the target checks
//! ([`address`], [`resolve`]) and the HTTP side ([`http`]: the business endpoints, the controls
//! and their routes). The events themselves come from the merchant-payment state machine
//! ([`crate::merchant_payments::machine::StatusEvent`]); [`store`] records them. Only [`http`]
//! and [`delivery`] see the application state.

pub mod address;
pub mod config;
pub mod delivery;
pub mod http;
pub mod resolve;
pub mod signing;
pub mod store;

pub use store::NotificationStore;
