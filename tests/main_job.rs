//! The main job (`cargo run --example storefront`) runs as part of the test suite: both flows
//! of the contract, end to end against an in-process sandbox.

#[path = "../examples/storefront.rs"]
#[allow(dead_code)]
mod example;

/// Both flows: token, profile, products, a catalog order paid with the platform coin and
/// waited for; a merchant payment paid at the checkout, its signed notification verified, and
/// reconciled by query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_storefront_example_walks_both_flows() {
    example::run().await.expect("example walkthrough");
}
