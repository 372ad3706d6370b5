//! The all-pages product stream (`products_stream` on [`Client`] and [`UserSession`]).
//!
//! Contract rules: `GET /openapi/v1/products` returns `{"list", "total", "page", "limit"}`;
//! "total is the matching count, page and limit are the effective values"; `limit` is 1 to 100.
//!
//! The stream trusts none of that blindly. Each answer must be the page that was asked for, with
//! the same `limit` and `total` as the first answer, at most `limit` products, a full page unless
//! it is the last one, and not the same products as the page before; an empty page is only
//! accepted once `total` is reached. Any other answer ends the stream with [`Error::Decode`]. So
//! every request but the last brings `limit` new products, the number of requests is bounded by
//! `total / limit` (and the page number's range), and a server that repeats a page or never
//! advances cannot keep the stream looping. The stream stops at `total` products.

use futures_core::Stream;

use crate::client::{Client, UserSession};
use crate::error::{Error, Result};
use crate::operation::Operation;
use crate::transport::Auth;

use super::list_products;
use super::model::{Product, ProductPage, ProductQuery};

/// HTTP status of the page answers the checks below refuse (they were 200s).
const PAGE_STATUS: u16 = 200;

/// What the stream has learned from the answers so far.
#[derive(Debug, Default)]
struct Progress {
    /// `total` and `limit` of the first answer.
    plan: Option<(u64, u32)>,
    /// Product numbers of the previous page (to refuse a repeated page).
    previous: Vec<String>,
}

/// What to do after an accepted page.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Ask for this page next.
    Page(u32),
    /// `total` is reached.
    Done,
}

fn protocol(message: String) -> Error {
    Error::decode(PAGE_STATUS, format!("product pages: {message}"))
}

impl Progress {
    /// Checks the answer to page `requested` and returns its products (cut at `total`) and what
    /// to do next.
    fn accept(&mut self, requested: u32, page: ProductPage) -> Result<(Vec<Product>, Next)> {
        let ProductPage {
            mut list,
            total,
            page: answered,
            limit,
        } = page;
        if answered != requested {
            return Err(protocol(format!(
                "asked for page {requested}, the service answered page {answered}"
            )));
        }
        if !(1..=100).contains(&limit) {
            return Err(protocol(format!("effective limit {limit} is not 1 to 100")));
        }
        match self.plan {
            None => self.plan = Some((total, limit)),
            Some((t, l)) if (t, l) != (total, limit) => {
                return Err(protocol(format!(
                    "total/limit changed from {t}/{l} to {total}/{limit} on page {answered}"
                )));
            }
            Some(_) => {}
        }
        let len = list.len() as u64;
        if len > u64::from(limit) {
            return Err(protocol(format!(
                "page {answered} has {len} products, more than its limit {limit}"
            )));
        }
        // u32 * u32 fits in u64.
        let offset = u64::from(answered - 1) * u64::from(limit);
        let remaining = total.saturating_sub(offset);
        if len == 0 {
            if remaining > 0 {
                return Err(protocol(format!(
                    "page {answered} is empty before total {total} was reached"
                )));
            }
            return Ok((list, Next::Done));
        }
        if len < remaining && len < u64::from(limit) {
            return Err(protocol(format!(
                "page {answered} has {len} of {limit} products but {remaining} remain of total {total}"
            )));
        }
        let numbers: Vec<String> = list.iter().map(|p| p.gd_no.clone()).collect();
        if numbers == self.previous {
            return Err(protocol(format!(
                "page {answered} repeats the products of the page before"
            )));
        }
        self.previous = numbers;
        if len >= remaining {
            // Stop at `total`: anything past it is not part of the answer.
            list.truncate(usize::try_from(remaining).unwrap_or(usize::MAX));
            return Ok((list, Next::Done));
        }
        match answered.checked_add(1) {
            Some(next) => Ok((list, Next::Page(next))),
            None => Err(protocol(format!(
                "page {answered} is the last page number but total {total} is not reached"
            ))),
        }
    }
}

/// Streams every product over all pages, starting at `q.page` (default 1).
pub(super) fn product_stream(
    client: Client,
    session: Option<UserSession>,
    q: ProductQuery,
) -> impl Stream<Item = Result<Product>> + Send + 'static {
    struct State {
        client: Client,
        session: Option<UserSession>,
        q: ProductQuery,
        progress: Progress,
        buffer: std::vec::IntoIter<Product>,
        next: Next,
    }
    let first = q.page.unwrap_or(1);
    let start = State {
        client,
        session,
        q,
        progress: Progress::default(),
        buffer: Vec::new().into_iter(),
        next: Next::Page(first),
    };
    futures_util::stream::try_unfold(start, |mut st| async move {
        loop {
            if let Some(p) = st.buffer.next() {
                return Ok(Some((p, st)));
            }
            let Next::Page(requested) = st.next else {
                return Ok(None);
            };
            st.q.page = Some(requested);
            let page = match &st.session {
                Some(s) => {
                    let auth = s.checked_auth(Operation::ListProducts).await?;
                    list_products(&st.client.inner, auth, &st.q).await?
                }
                None => list_products(&st.client.inner, Auth::Client, &st.q).await?,
            };
            let (list, next) = st.progress.accept(requested, page)?;
            st.next = next;
            st.buffer = list.into_iter();
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model::PaymentPolicy;
    use crate::money::FixedPoint8;

    fn product(n: u64) -> Product {
        Product {
            gd_no: format!("G{n}"),
            gd_name: format!("Product {n}"),
            gd_description: String::new(),
            actual_price: FixedPoint8::from_raw(1),
            retail_price: FixedPoint8::from_raw(1),
            currency: "USD".into(),
            currency_decimals: 2,
            in_stock: 1,
            buy_limit_num: 0,
            payment_policy: PaymentPolicy::Automatic,
            payment_methods: None,
            other_ipu_cnf: None,
            wholesale_price_cnf: None,
            buy_prompt: None,
        }
    }

    /// Page `page` of a catalog of `total` products with `limit` per page.
    fn honest(page: u32, limit: u32, total: u64) -> ProductPage {
        let from = u64::from(page - 1) * u64::from(limit);
        let to = (from + u64::from(limit)).min(total);
        ProductPage {
            list: (from..to.max(from)).map(product).collect(),
            total,
            page,
            limit,
        }
    }

    fn run(mut answer: impl FnMut(u32) -> ProductPage, first: u32) -> (usize, u32, Result<()>) {
        let mut progress = Progress::default();
        let (mut items, mut requests, mut next) = (0, 0u32, Next::Page(first));
        while let Next::Page(p) = next {
            requests += 1;
            assert!(requests < 1000, "unbounded");
            match progress.accept(p, answer(p)) {
                Ok((list, n)) => {
                    items += list.len();
                    next = n;
                }
                Err(e) => return (items, requests, Err(e)),
            }
        }
        (items, requests, Ok(()))
    }

    #[test]
    fn honest_pages_stream_to_total() {
        assert_eq!(run(|p| honest(p, 20, 45), 1).0, 45);
        assert_eq!(run(|p| honest(p, 20, 45), 1).1, 3);
        assert_eq!(run(|p| honest(p, 20, 40), 1).1, 2);
        assert_eq!(run(|p| honest(p, 20, 0), 1).1, 1);
        assert_eq!(run(|p| honest(p, 20, 45), 2).0, 25);
        // Starting past the end: one empty page, no error.
        let (items, _, r) = run(|p| honest(p, 20, 5), 3);
        assert_eq!(items, 0);
        r.unwrap();
    }

    /// Issue 10 item 5: a server that answers page 1 whatever is asked looped forever.
    #[test]
    fn repeated_page_number_ends_with_decode_error() {
        let (_, requests, r) = run(|_| honest(1, 20, 45), 1);
        assert!(matches!(r, Err(Error::Decode { .. })), "{r:?}");
        assert_eq!(requests, 2);
    }

    /// A server that echoes the page number but repeats the products.
    #[test]
    fn repeated_products_end_with_decode_error() {
        let (_, requests, r) = run(
            |p| ProductPage {
                page: p,
                ..honest(1, 20, 1_000_000)
            },
            1,
        );
        assert!(matches!(r, Err(Error::Decode { .. })), "{r:?}");
        assert_eq!(requests, 2);
    }

    #[test]
    fn empty_or_short_page_before_total_and_changing_total_are_errors() {
        let empty = |p: u32| ProductPage {
            list: if p == 1 {
                honest(1, 20, 45).list
            } else {
                vec![]
            },
            ..honest(p, 20, 45)
        };
        assert!(run(empty, 1).2.is_err());
        let short = |p: u32| {
            let mut page = honest(p, 20, 45);
            page.list.truncate(5);
            page
        };
        assert!(run(short, 1).2.is_err());
        let growing = |p: u32| honest(p, 20, 45 + u64::from(p));
        assert!(run(growing, 1).2.is_err());
        let zero_limit = |p: u32| ProductPage {
            limit: 0,
            ..honest(p, 20, 45)
        };
        assert!(run(zero_limit, 1).2.is_err());
        let oversized = |p: u32| ProductPage {
            list: (0..30).map(product).collect(),
            ..honest(p, 20, 45)
        };
        assert!(run(oversized, 1).2.is_err());
    }

    /// Issue 10 item 3: a server `page` of `u32::MAX` overflowed `page + 1`.
    #[test]
    fn page_u32_max_ends_with_decode_error_not_overflow() {
        let mut progress = Progress::default();
        let r = progress.accept(u32::MAX, honest(u32::MAX, 1, u64::MAX));
        assert!(matches!(r, Err(Error::Decode { .. })), "{r:?}");
        let mut progress = Progress::default();
        let r = progress.accept(1, honest(u32::MAX, 20, 45));
        assert!(matches!(r, Err(Error::Decode { .. })), "{r:?}");
    }

    /// The stream stops at `total` even when the last page carries more.
    #[test]
    fn stops_at_total() {
        let page = ProductPage {
            list: (0..20).map(product).collect(),
            ..honest(1, 20, 7)
        };
        let (list, next) = Progress::default().accept(1, page).unwrap();
        assert_eq!((list.len(), next), (7, Next::Done));
    }
}
