//! The all-pages product stream (`products_stream` on [`Client`] and [`UserSession`]).

use futures_core::Stream;

use crate::client::{Client, UserSession};
use crate::error::Result;
use crate::operation::Operation;
use crate::transport::Auth;

use super::list_products;
use super::model::{Product, ProductQuery};

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
        buffer: std::vec::IntoIter<Product>,
        seen: u64,
        done: bool,
    }
    let start = State {
        client,
        session,
        q,
        buffer: Vec::new().into_iter(),
        seen: 0,
        done: false,
    };
    futures_util::stream::try_unfold(start, |mut st| async move {
        loop {
            if let Some(p) = st.buffer.next() {
                return Ok(Some((p, st)));
            }
            if st.done {
                return Ok(None);
            }
            let page = match &st.session {
                Some(s) => {
                    let auth = s.checked_auth(Operation::ListProducts).await?;
                    list_products(&st.client.inner, auth, &st.q).await?
                }
                None => list_products(&st.client.inner, Auth::Client, &st.q).await?,
            };
            st.seen += page.list.len() as u64;
            // Stop on an empty page or once `total` products were seen.
            st.done = page.list.is_empty() || st.seen >= page.total;
            st.q.page = Some(page.page.max(st.q.page.unwrap_or(1)) + 1);
            st.buffer = page.list.into_iter();
        }
    })
}
