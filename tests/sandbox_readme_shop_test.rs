//! `sandbox/README.md`'s "A shop's own test" block, run as written: the part of this file between
//! the two marker lines is that block, and `the_sandbox_readme_shows_this_test` fails when the
//! README's block differs from it by one character.

// ---- the block ----
use storefront::{Client, Config, CreateMerchantPayment, MinorAmount};
use storefront_sandbox::{Sandbox, seed};

#[tokio::test]
async fn creates_and_queries_a_payment() -> Result<(), Box<dyn std::error::Error>> {
    let sandbox = Sandbox::start().await?;
    let config = Config::new(
        sandbox.base_url(),
        sandbox.token_endpoint(),
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
    )
    .with_insecure_loopback(true); // plain HTTP on loopback
    let client = Client::new(config)?;
    let request =
        CreateMerchantPayment::new("order-42", MinorAmount::parse_decimal("12.50", 2)?, "USD");
    let created = client.create_merchant_payment(&request).await?;
    assert!(
        !client
            .get_merchant_payment(&created.payment.order_no)
            .await?
            .status
            .is_paid()
    );
    // The buyer pays: POST {control_url}/merchant-payments/{order_no}/checkout/pay {"payment_no": "ch_card_usd"}
    Ok(())
}
// ---- end of the block ----

#[test]
fn the_sandbox_readme_shows_this_test() {
    let this = include_str!("sandbox_readme_shop_test.rs");
    let block = this
        .split_once("// ---- the block ----\n")
        .and_then(|(_, rest)| rest.split_once("// ---- end of the block ----\n"))
        .map(|(block, _)| block)
        .expect("the markers");
    let readme = include_str!("../sandbox/README.md");
    let fenced = format!("```rust\n{block}```\n");
    assert!(
        readme.contains(&fenced),
        "sandbox/README.md's shop test differs from tests/sandbox_readme_shop_test.rs; copy the block:\n{fenced}"
    );
}
