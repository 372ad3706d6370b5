//! The data every sandbox starts with: merchants, OAuth clients, users, channels and currencies.
//!
//! These names are part of the sandbox's public interface: the SDK's tests, the examples and
//! every language binding's suite refer to them, and the standalone binary prints them.
//! Secrets here are sandbox-only values; they protect nothing.

/// Path prefix of the service's business API under the sandbox origin.
/// `{base_url}` = origin + this prefix; business paths (`/openapi/v1/...`) are appended to it.
pub const API_PREFIX: &str = "/api";
/// Path of the token endpoint under the sandbox origin (`{token_endpoint}`).
pub const TOKEN_PATH: &str = "/oauth/token";
/// Path of the userinfo endpoint under the sandbox origin (`{userinfo_endpoint}`).
pub const USERINFO_PATH: &str = "/oauth/userinfo";
/// Path prefix of the sandbox-only control endpoints (not part of the service contract).
pub const CONTROL_PREFIX: &str = "/_sandbox";

/// Active merchant that owns the main catalogue and the main merchant-collection client.
pub const MERCHANT_NO: &str = "M10001";
/// Second active merchant, used to prove that merchants are isolated from each other.
pub const OTHER_MERCHANT_NO: &str = "M20002";
/// Inactive merchant: its client obtains tokens but every business call gives 403 `merchant_inactive`.
pub const INACTIVE_MERCHANT_NO: &str = "M30003";

/// Every scope the contract defines.
pub const ALL_SCOPES: &[&str] = &[
    "openid",
    "merchant.profile.read",
    "products.read",
    "orders.create",
    "orders.read",
    "payments.create",
    "payments.read",
    "merchant_payments.read",
    "merchant_payments.create",
];

/// Confidential client bound to [`MERCHANT_NO`], approved for every scope.
pub const MERCHANT_CLIENT_ID: &str = "sbx_merchant_client";
/// Secret of [`MERCHANT_CLIENT_ID`].
pub const MERCHANT_CLIENT_SECRET: &str = "sbx_merchant_secret_9f2c41d7a8e64b0c";

/// Confidential client bound to [`MERCHANT_NO`] without the `merchant_payments.*` scopes
/// (an existing application that did not gain them automatically).
pub const CATALOG_CLIENT_ID: &str = "sbx_catalog_client";
/// Secret of [`CATALOG_CLIENT_ID`].
pub const CATALOG_CLIENT_SECRET: &str = "sbx_catalog_secret_3b7e9a01c5d24f68";

/// Public client (no secret, no client-credentials grant): cannot use merchant collection.
pub const PUBLIC_CLIENT_ID: &str = "sbx_public_client";

/// Confidential client bound to [`INACTIVE_MERCHANT_NO`], approved for every scope.
pub const INACTIVE_CLIENT_ID: &str = "sbx_inactive_client";
/// Secret of [`INACTIVE_CLIENT_ID`].
pub const INACTIVE_CLIENT_SECRET: &str = "sbx_inactive_secret_6d1f0e8b2a9c4735";

/// Confidential client bound to [`OTHER_MERCHANT_NO`], approved for every scope.
pub const OTHER_CLIENT_ID: &str = "sbx_other_client";
/// Secret of [`OTHER_CLIENT_ID`].
pub const OTHER_CLIENT_SECRET: &str = "sbx_other_secret_c4a8f2e61b3d9075";

/// Confidential client bound to no merchant: cannot use merchant collection or catalog calls.
pub const UNBOUND_CLIENT_ID: &str = "sbx_unbound_client";
/// Secret of [`UNBOUND_CLIENT_ID`].
pub const UNBOUND_CLIENT_SECRET: &str = "sbx_unbound_secret_82e5b0d9f7a1c364";

/// Seeded buyer with a platform-coin wallet of 1000 coin; a payer allowed on the test channel.
pub const USER_ALICE: &str = "alice";
/// Seeded buyer with a wallet of 0.5 coin (too little for most orders).
pub const USER_BOB: &str = "bob";
/// Seeded buyer with 1000 coin who is not a payer allowed on the test channel.
pub const USER_CAROL: &str = "carol";

/// Platform-coin wallet of [`USER_ALICE`] at start, eight-decimal fixed point (1000 coin).
pub const ALICE_WALLET: i64 = 1000_0000_0000;
/// Platform-coin wallet of [`USER_BOB`] at start, eight-decimal fixed point (0.5 coin).
pub const BOB_WALLET: i64 = 5000_0000;
/// Platform-coin wallet of [`USER_CAROL`] at start, eight-decimal fixed point (1000 coin).
pub const CAROL_WALLET: i64 = 1000_0000_0000;

/// Currency code of the platform coin (eight decimals).
pub const PLATFORM_COIN: &str = "PLC";

/// Platform-coin channel (provider `platform-coin`, owner `platform`, currency [`PLATFORM_COIN`],
/// always `login_required`). Usable by every active merchant, for merchant payments and catalog orders.
pub const CHANNEL_PLATFORM_COIN: &str = "ch_platform_coin";
/// Card-provider channel (owner `platform`, currency `USD`, anonymous purchase allowed).
/// Usable by every active merchant, for merchant payments and catalog orders.
pub const CHANNEL_CARD_USD: &str = "ch_card_usd";
/// Administrator-assigned card-provider test channel of [`MERCHANT_NO`] (`test_mode` true,
/// currency `USD`), restricted to the payer [`USER_ALICE`], hence listed with `login_required` true.
pub const CHANNEL_CARD_TEST: &str = "ch_card_test";
/// Merchant-owned card-provider channel of [`OTHER_MERCHANT_NO`] only (currency `EUR`).
pub const CHANNEL_CARD_EUR_OTHER: &str = "ch_card_eur_m2";

/// Enabled currencies and their precision (`currency_decimals`).
pub const CURRENCIES: &[(&str, u32)] = &[("USD", 2), ("EUR", 2), ("JPY", 0), (PLATFORM_COIN, 8)];

/// Rate saved at creation for paying one unit of a currency with platform coin,
/// as eight-decimal fixed point coin per one whole unit of the currency.
pub const COIN_RATES: &[(&str, i64)] = &[
    ("USD", 1_0000_0000),
    ("EUR", 1_1000_0000),
    ("JPY", 67_0000),
    (PLATFORM_COIN, 1_0000_0000),
];

/// Catalogue product, price 12.50 USD, `automatic` policy, stock 50, at most 5 per order.
pub const PRODUCT_BEANS: &str = "G1001";
/// Catalogue product with `allowlist` policy (platform coin only) and `other_ipu_cnf`
/// `["recipient_email=Recipient email=1", "gift_message=Gift message=0"]` (flag 1 = required).
pub const PRODUCT_GIFT_CARD: &str = "G1002";
/// Catalogue product with a stock of 1.
pub const PRODUCT_LIMITED_MUG: &str = "G1003";
/// Disabled product: never returned by the product list and refused for orders.
pub const PRODUCT_DISABLED: &str = "G1004";
/// Catalogue product with `wholesale_price_cnf` and display-only extra fields.
pub const PRODUCT_WHOLESALE_TEA: &str = "G1005";
/// Number of enabled products of [`MERCHANT_NO`] (enough for two pages at the default limit 20).
pub const ENABLED_PRODUCT_COUNT: usize = 25;
