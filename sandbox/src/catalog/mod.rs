//! Merchant profile, products, userinfo, catalog orders and catalog payments (contract:
//! "GET /openapi/v1/merchant", "GET /openapi/v1/products", "POST /openapi/v1/orders" and the
//! order and payment endpoints after it, and "GET /oauth/userinfo").
//!
//! Every handler authorizes first (token subject, scope, active merchant; see
//! [`crate::auth::Caller::authorize`]) and then reads the body, so a caller without rights
//! learns nothing from validation errors. Orders are visible only to the user who placed them
//! through a client of the same merchant; any other order answers exactly like a missing one.
//!
//! Modules: [`products`] (the seeded catalogue and the list rules), [`orders`] (the order model,
//! amounts and checks), [`reads`] (userinfo, profile, product list handlers), [`ordering`]
//! (order and payment handlers), [`trades`] (the pay page and the trade controls).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use time::OffsetDateTime;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::seed;
use crate::state::Shared;

pub mod ordering;
pub mod orders;
pub mod products;
pub mod reads;
pub mod trades;

use orders::Order;
use products::Product;

/// Path (under the origin) of the page a catalog payment `redirect` points to; the redirect is
/// relative, as the contract allows, and resolves against the sandbox origin.
pub const PAY_PAGE_PREFIX: &str = "/catalog-pay";

/// Catalogue products, catalog orders and catalog payment sessions.
#[derive(Debug, Default)]
pub struct CatalogStore {
    /// Products of every merchant, in catalogue order.
    pub products: Vec<Product>,
    /// Orders by order number.
    pub orders: BTreeMap<String, Order>,
    /// Order number of each payment session.
    pub trades: BTreeMap<String, String>,
    next_order: u64,
}

impl CatalogStore {
    /// The seeded catalogue (see [`products::seeded`]) and no orders.
    pub fn seeded() -> Self {
        CatalogStore {
            products: products::seeded(),
            ..CatalogStore::default()
        }
    }

    /// The order, brought up to date with the clock (cancelled after its payment window,
    /// completed after fulfilment). Stock of a cancelled order goes back to the product.
    pub fn order_mut(&mut self, order_no: &str, now: OffsetDateTime) -> Option<&mut Order> {
        let order = self.orders.get_mut(order_no)?;
        if let Some(units) = order.advance(now)
            && let Some(product) = self.products.iter_mut().find(|p| p.gd_no == order.gd_no)
        {
            product.in_stock += units;
        }
        self.orders.get_mut(order_no)
    }

    /// Brings every order up to date with the clock.
    pub fn advance_all(&mut self, now: OffsetDateTime) {
        let numbers: Vec<String> = self.orders.keys().cloned().collect();
        for number in numbers {
            self.order_mut(&number, now);
        }
    }

    fn next_order_no(&mut self, now: OffsetDateTime) -> String {
        self.next_order += 1;
        format!(
            "CO{:04}{:02}{:02}{:06}",
            now.year(),
            u8::from(now.month()),
            now.day(),
            self.next_order
        )
    }
}

/// Routes under the API prefix.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/openapi/v1/merchant", get(reads::merchant_profile))
        .route("/openapi/v1/products", get(reads::list_products))
        .route("/openapi/v1/orders", post(ordering::create_order))
        .route("/openapi/v1/orders/{order_no}", get(ordering::read_order))
        .route(
            "/openapi/v1/orders/{order_no}/payment",
            post(ordering::start_payment).get(ordering::payment_status),
        )
}

/// Routes outside the API prefix: userinfo and the catalog payment page.
pub fn root_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(seed::USERINFO_PATH, get(reads::userinfo))
        .route(
            &format!("{PAY_PAGE_PREFIX}/{{trade_no}}"),
            get(trades::pay_page),
        )
        .route(
            &format!("{PAY_PAGE_PREFIX}/{{trade_no}}/pay"),
            post(trades::page_pay),
        )
        .route(
            &format!("{PAY_PAGE_PREFIX}/{{trade_no}}/cancel"),
            post(trades::page_cancel),
        )
}

/// Sandbox control routes for catalog payments (mounted under the control prefix).
pub fn control_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/catalog/trades/{trade_no}/pay", post(trades::control_pay))
        .route(
            "/catalog/trades/{trade_no}/cancel",
            post(trades::control_cancel),
        )
}

/// The user of a user-endpoint caller (client tokens never carry user-only scopes, so this is
/// reached only defensively).
fn user_of(caller: &Caller) -> ApiResult<&str> {
    caller.user().ok_or_else(|| {
        ApiError::new(StatusCode::FORBIDDEN, "insufficient_scope")
            .describe("a user-authorized token is required")
    })
}
