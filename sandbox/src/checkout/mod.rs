//! The hosted checkout at `checkout_url`: a plain HTML page on which a buyer picks a method,
//! logs in (as a seeded sandbox user) when the method requires it, and pays; plus the rules it
//! shares with the JSON controls ([`rules`]) and the page markup ([`page`]).
//!
//! Routes (outside the API prefix, per-order token in the path, limited per IP):
//! `GET /checkout/{token}` (read, 180 per IP per minute), and the form posts
//! `POST /checkout/{token}/login`, `/logout`, `/pay`, `/card/complete`, `/card/cancel`,
//! `/cancel` (the payment-start ones count against 30 per IP per minute).
//!
//! Layout: [`rules`] (what a buyer does: start a session, pay; shared with the JSON controls of
//! [`crate::merchant_payments::control`]), [`page`] (the markup) and [`http`] (handlers and
//! routes, the only file that sees the application state).

pub mod http;
pub mod page;
pub mod rules;

/// Path of checkout pages under the sandbox origin; `checkout_url` = origin + this + `/{token}`.
pub const CHECKOUT_PATH: &str = "/checkout";
