//! `ProductCursor`: every product over all pages, one at a time (Kotlin wraps it as a `Flow`,
//! see `StorefrontExtensions.kt`). The paging itself is the core's product stream.
//!
//! Contract rules: product pages start at 1 (`page` below 1 gives 1); the list ends when a page
//! is empty or `total` products were seen.

use std::pin::Pin;

use futures_util::{Stream, StreamExt, TryStreamExt};
use tokio::sync::Mutex;

use crate::catalog::model::Product as CoreProduct;

use super::catalog::Product;
use super::error::Result;

type CoreStream = Pin<Box<dyn Stream<Item = crate::error::Result<CoreProduct>> + Send>>;

/// Every product of the core's product stream, read to the end (`listAllProducts`).
pub(crate) async fn collect_all(
    stream: impl Stream<Item = crate::error::Result<CoreProduct>>,
) -> Result<Vec<Product>> {
    Ok(stream.map_ok(Product::from).try_collect().await?)
}

/// Reads products page by page as they are consumed.
#[derive(uniffi::Object)]
pub struct ProductCursor {
    stream: Mutex<CoreStream>,
}

impl ProductCursor {
    pub(crate) fn new(
        stream: impl Stream<Item = crate::error::Result<CoreProduct>> + Send + 'static,
    ) -> Self {
        ProductCursor {
            stream: Mutex::new(Box::pin(stream)),
        }
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl ProductCursor {
    /// The next product, fetching the next page when needed; null after the last one. A failed
    /// page read is returned as the error (reads are retried by the SDK first).
    pub async fn next(&self) -> Result<Option<Product>> {
        let mut stream = self.stream.lock().await;
        match stream.next().await {
            None => Ok(None),
            Some(item) => Ok(Some(item?.into())),
        }
    }
}
