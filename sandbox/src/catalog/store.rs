//! The catalog domain's data: the catalogue, catalog orders and catalog payment sessions.
//! Data only: no web framework types and no application state.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::orders::Order;
use super::products::{self, Product};

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

    /// The next catalog order number (`CO`, the date, a sequence number).
    pub fn next_order_no(&mut self, now: OffsetDateTime) -> String {
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
