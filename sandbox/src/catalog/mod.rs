//! Merchant profile, products, userinfo, catalog orders and catalog payments (contract:
//! "GET /openapi/v1/merchant", "GET /openapi/v1/products", "POST /openapi/v1/orders" and the
//! order and payment endpoints after it, and "GET /oauth/userinfo").
//!
//! Every handler authorizes first (token subject, scope, active merchant; see
//! [`crate::auth::Caller::authorize`]) and then reads the body, so a caller without rights
//! learns nothing from validation errors. Orders are visible only to the user who placed them
//! through a client of the same merchant; any other order answers exactly like a missing one.
//!
//! Modules: [`store`] (the data), [`products`] (the seeded catalogue and the list rules),
//! [`orders`] (the order model, amounts and checks), [`rules`] (placing an order, starting its
//! payment, paying and cancelling a payment session; each takes only the stores it touches),
//! and [`http`] (every handler and the routes, including the pay page and the trade controls:
//! the only catalog file that sees the application state).

pub mod http;
pub mod orders;
pub mod products;
pub mod rules;
pub mod store;

pub use store::CatalogStore;

/// Path (under the origin) of the page a catalog payment `redirect` points to; the redirect is
/// relative, as the contract allows, and resolves against the sandbox origin.
pub const PAY_PAGE_PREFIX: &str = "/catalog-pay";
