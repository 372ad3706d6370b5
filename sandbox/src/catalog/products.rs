//! The seeded catalogue and GET /openapi/v1/products (contract: "GET {base_url}/openapi/v1/products").
//!
//! Only enabled products of the bound merchant are listed; `page` below 1 or invalid gives 1,
//! `limit` outside 1..=100 or invalid gives 20; `gd_no` filters exactly, `search_value` matches
//! the product name or a keyword (case-insensitive); `total` counts every match and `page` and
//! `limit` echo the effective values.

use serde_json::{Map, Value, json};

use crate::seed;

/// Eight-decimal fixed point: one whole unit.
pub const UNIT: i64 = 1_0000_0000;

/// Default and bounds of the product list's `limit`.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest accepted `limit`.
pub const MAX_LIMIT: usize = 100;

/// How a product decides which channels may pay it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Any channel available to the merchant.
    Automatic,
    /// Only the channels in `payment_methods`.
    Allowlist,
}

impl Policy {
    fn as_str(self) -> &'static str {
        match self {
            Policy::Automatic => "automatic",
            Policy::Allowlist => "allowlist",
        }
    }
}

/// A catalogue product. Prices are eight-decimal fixed point in `currency`.
#[derive(Debug, Clone)]
pub struct Product {
    /// Owning merchant.
    pub merchant_no: String,
    /// Product number.
    pub gd_no: String,
    /// Product name.
    pub gd_name: String,
    /// Description.
    pub gd_description: String,
    /// Search keywords (matched by `search_value` besides the name; not returned).
    pub keywords: Vec<String>,
    /// Selling price per unit.
    pub actual_price: i64,
    /// Reference (list) price per unit.
    pub retail_price: i64,
    /// Pricing currency.
    pub currency: String,
    /// Display precision of the pricing currency.
    pub currency_decimals: u32,
    /// Units in stock (orders reserve stock; cancelled orders give it back).
    pub in_stock: i64,
    /// Most units per order; 0 means unlimited.
    pub buy_limit_num: i64,
    /// Channel policy.
    pub payment_policy: Policy,
    /// Channel identifiers: the allowlist, or (for some automatic products) a hint.
    pub payment_methods: Option<Vec<String>>,
    /// Additional inputs, `key=label=flag` (flag 1 = required).
    pub other_ipu_cnf: Option<Vec<String>>,
    /// Wholesale tiers, `min_quantity=unit_price` (unit price eight-decimal fixed point).
    pub wholesale_price_cnf: Option<Vec<String>>,
    /// Purchase hint.
    pub buy_prompt: Option<String>,
    /// Display and management fields that clients must ignore.
    pub extra: Map<String, Value>,
    /// Disabled products are never listed and cannot be ordered.
    pub enabled: bool,
}

/// One additional-input entry of `other_ipu_cnf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputField {
    /// The JSON key used in `other_ipu`.
    pub key: String,
    /// Display text.
    pub label: String,
    /// Whether a non-empty value must be given.
    pub required: bool,
}

impl Product {
    /// The product object of the contract, with the display-only extra fields.
    pub fn to_json(&self) -> Value {
        let mut object = self.extra.clone();
        let fields = json!({
            "gd_no": self.gd_no,
            "gd_name": self.gd_name,
            "gd_description": self.gd_description,
            "actual_price": self.actual_price,
            "retail_price": self.retail_price,
            "currency": self.currency,
            "currency_decimals": self.currency_decimals,
            "in_stock": self.in_stock,
            "buy_limit_num": self.buy_limit_num,
            "payment_policy": self.payment_policy.as_str(),
        });
        if let Value::Object(fields) = fields {
            object.extend(fields);
        }
        let optional = [
            (
                "payment_methods",
                self.payment_methods.clone().map(Value::from),
            ),
            ("other_ipu_cnf", self.other_ipu_cnf.clone().map(Value::from)),
            (
                "wholesale_price_cnf",
                self.wholesale_price_cnf.clone().map(Value::from),
            ),
            ("buy_prompt", self.buy_prompt.clone().map(Value::from)),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                object.insert(name.to_owned(), value);
            }
        }
        Value::Object(object)
    }

    /// The parsed `other_ipu_cnf` entries (malformed entries are skipped).
    pub fn input_fields(&self) -> Vec<InputField> {
        self.other_ipu_cnf
            .iter()
            .flatten()
            .filter_map(|entry| {
                let mut parts = entry.splitn(3, '=');
                let key = parts.next()?.to_owned();
                let label = parts.next()?.to_owned();
                let required = parts.next()? == "1";
                Some(InputField {
                    key,
                    label,
                    required,
                })
            })
            .collect()
    }

    /// Unit price for `quantity` units after the best wholesale tier reached.
    pub fn unit_price_for(&self, quantity: i64) -> i64 {
        self.wholesale_price_cnf
            .iter()
            .flatten()
            .filter_map(|tier| {
                let (min, price) = tier.split_once('=')?;
                Some((min.parse::<i64>().ok()?, price.parse::<i64>().ok()?))
            })
            .filter(|(min, _)| quantity >= *min)
            .map(|(_, price)| price)
            .fold(self.actual_price, i64::min)
    }

    /// Whether the search text matches the name or a keyword (case-insensitive).
    fn matches(&self, search: &str) -> bool {
        let search = search.to_lowercase();
        self.gd_name.to_lowercase().contains(&search)
            || self
                .keywords
                .iter()
                .any(|k| k.to_lowercase().contains(&search))
    }
}

/// The effective query of a product list request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductQuery {
    /// Effective page (1-based).
    pub page: usize,
    /// Effective page size.
    pub limit: usize,
    /// Exact product number filter.
    pub gd_no: Option<String>,
    /// Name or keyword search.
    pub search_value: Option<String>,
}

impl ProductQuery {
    /// Reads the raw query string with the contract's fallbacks: an invalid or below-1 `page`
    /// gives 1, an invalid or out-of-range `limit` gives 20; empty filters are ignored.
    pub fn parse(raw: Option<&str>) -> Self {
        let mut query = ProductQuery {
            page: 1,
            limit: DEFAULT_LIMIT,
            gd_no: None,
            search_value: None,
        };
        for (name, value) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            match name.as_ref() {
                "page" => {
                    query.page = value
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|p| *p >= 1)
                        .unwrap_or(1)
                }
                "limit" => {
                    query.limit = value
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|l| (1..=MAX_LIMIT).contains(l))
                        .unwrap_or(DEFAULT_LIMIT)
                }
                "gd_no" if !value.is_empty() => query.gd_no = Some(value.into_owned()),
                "search_value" if !value.trim().is_empty() => {
                    query.search_value = Some(value.trim().to_owned())
                }
                _ => {}
            }
        }
        query
    }
}

/// Lists the merchant's enabled products matching the query: the page's products and the total.
pub fn list<'a>(
    products: &'a [Product],
    merchant_no: &str,
    query: &ProductQuery,
) -> (Vec<&'a Product>, usize) {
    let matching: Vec<&Product> = products
        .iter()
        .filter(|p| p.enabled && p.merchant_no == merchant_no)
        .filter(|p| query.gd_no.as_deref().is_none_or(|g| p.gd_no == g))
        .filter(|p| query.search_value.as_deref().is_none_or(|s| p.matches(s)))
        .collect();
    let total = matching.len();
    let page = matching
        .into_iter()
        .skip((query.page - 1).saturating_mul(query.limit))
        .take(query.limit)
        .collect();
    (page, total)
}

struct Spec<'a> {
    merchant: &'a str,
    gd_no: &'a str,
    name: &'a str,
    keywords: &'a [&'a str],
    price: i64,
    retail: i64,
    currency: &'a str,
    stock: i64,
    limit: i64,
}

fn product(spec: Spec<'_>) -> Product {
    let decimals = seed::CURRENCIES
        .iter()
        .find(|(c, _)| *c == spec.currency)
        .map(|(_, d)| *d)
        .unwrap_or(2);
    let mut extra = Map::new();
    extra.insert(
        "cover_image_url".into(),
        format!("https://static.sandbox.invalid/products/{}.png", spec.gd_no).into(),
    );
    extra.insert("sort_order".into(), 0.into());
    Product {
        merchant_no: spec.merchant.to_owned(),
        gd_no: spec.gd_no.to_owned(),
        gd_name: spec.name.to_owned(),
        gd_description: format!("{} from the storefront sandbox catalogue.", spec.name),
        keywords: spec.keywords.iter().map(|k| k.to_string()).collect(),
        actual_price: spec.price,
        retail_price: spec.retail,
        currency: spec.currency.to_owned(),
        currency_decimals: decimals,
        in_stock: spec.stock,
        buy_limit_num: spec.limit,
        payment_policy: Policy::Automatic,
        payment_methods: None,
        other_ipu_cnf: None,
        wholesale_price_cnf: None,
        buy_prompt: None,
        extra,
        enabled: true,
    }
}

/// The seeded catalogue (see the product constants in [`crate::seed`]): 25 enabled products and
/// one disabled product of [`seed::MERCHANT_NO`], and two products of [`seed::OTHER_MERCHANT_NO`].
pub fn seeded() -> Vec<Product> {
    let m1 = seed::MERCHANT_NO;
    let mut products = Vec::new();

    let mut beans = product(Spec {
        merchant: m1,
        gd_no: seed::PRODUCT_BEANS,
        name: "House blend coffee beans 1 kg",
        keywords: &["coffee", "beans"],
        price: 12 * UNIT + UNIT / 2,
        retail: 15 * UNIT,
        currency: "USD",
        stock: 50,
        limit: 5,
    });
    beans.buy_prompt = Some("Roasted to order; ships within two days.".into());
    products.push(beans);

    let mut gift = product(Spec {
        merchant: m1,
        gd_no: seed::PRODUCT_GIFT_CARD,
        name: "Gift card 25 USD",
        keywords: &["gift", "voucher"],
        price: 25 * UNIT,
        retail: 25 * UNIT,
        currency: "USD",
        stock: 1000,
        limit: 3,
    });
    gift.payment_policy = Policy::Allowlist;
    gift.payment_methods = Some(vec![seed::CHANNEL_PLATFORM_COIN.into()]);
    gift.other_ipu_cnf = Some(vec![
        "recipient_email=Recipient email=1".into(),
        "gift_message=Gift message=0".into(),
    ]);
    gift.buy_prompt = Some("The card is emailed to the recipient.".into());
    products.push(gift);

    products.push(product(Spec {
        merchant: m1,
        gd_no: seed::PRODUCT_LIMITED_MUG,
        name: "Limited edition mug",
        keywords: &["mug", "ceramic"],
        price: 30 * UNIT,
        retail: 35 * UNIT,
        currency: "USD",
        stock: 1,
        limit: 0,
    }));

    let mut disabled = product(Spec {
        merchant: m1,
        gd_no: seed::PRODUCT_DISABLED,
        name: "Discontinued grinder",
        keywords: &["grinder"],
        price: 80 * UNIT,
        retail: 90 * UNIT,
        currency: "USD",
        stock: 10,
        limit: 0,
    });
    disabled.enabled = false;
    products.push(disabled);

    let mut tea = product(Spec {
        merchant: m1,
        gd_no: seed::PRODUCT_WHOLESALE_TEA,
        name: "Sencha green tea 100 g",
        keywords: &["tea", "green"],
        price: 12 * UNIT,
        retail: 14 * UNIT,
        currency: "USD",
        stock: 100,
        limit: 20,
    });
    tea.wholesale_price_cnf = Some(vec!["3=1100000000".into(), "10=1000000000".into()]);
    tea.payment_methods = Some(vec![
        seed::CHANNEL_PLATFORM_COIN.into(),
        seed::CHANNEL_CARD_USD.into(),
    ]);
    tea.extra.insert("sales_volume".into(), 1234.into());
    tea.extra.insert("tags".into(), json!(["organic", "japan"]));
    tea.extra.insert(
        "display".into(),
        json!({"badge": "bestseller", "gallery": ["a.png", "b.png"], "score": 4.5}),
    );
    tea.extra.insert("shelf_status".into(), "on_shelf".into());
    products.push(tea);

    // Twenty-one more enabled products, so the catalogue spans two pages at the default limit.
    let origins = [
        "Ethiopia",
        "Colombia",
        "Kenya",
        "Guatemala",
        "Brazil",
        "Sumatra",
        "Rwanda",
    ];
    for (i, origin) in origins.iter().enumerate() {
        products.push(product(Spec {
            merchant: m1,
            gd_no: &format!("G{}", 1006 + i),
            name: &format!("Single origin {origin} beans 250 g"),
            keywords: &["coffee", "beans", "single origin"],
            price: (9 + i as i64) * UNIT + 9 * UNIT / 10,
            retail: (11 + i as i64) * UNIT,
            currency: "USD",
            stock: 40,
            limit: 10,
        }));
    }
    let accessories = [
        ("Pour-over dripper", "USD", 18),
        ("Paper filters x100", "USD", 5),
        ("Glass server 600 ml", "USD", 22),
        ("Gooseneck kettle", "USD", 45),
        ("Digital scale", "USD", 29),
        ("Hand grinder", "USD", 65),
        ("Milk frothing pitcher", "USD", 16),
        ("Cold brew bottle", "EUR", 24),
        ("Espresso tamper", "EUR", 27),
        ("Bamboo matcha whisk", "JPY", 1500),
        ("Tea canister", "JPY", 2200),
        ("Travel tumbler", "USD", 21),
        ("Cleaning tablets", "USD", 9),
        ("Barista apron", "USD", 34),
    ];
    for (i, (name, currency, whole)) in accessories.iter().enumerate() {
        products.push(product(Spec {
            merchant: m1,
            gd_no: &format!("G{}", 1013 + i),
            name,
            keywords: &["accessory"],
            price: whole * UNIT,
            retail: whole * UNIT,
            currency,
            stock: 25,
            limit: 0,
        }));
    }

    let m2 = seed::OTHER_MERCHANT_NO;
    products.push(product(Spec {
        merchant: m2,
        gd_no: "G2001",
        name: "Oolong tea 100 g",
        keywords: &["tea"],
        price: 8 * UNIT,
        retail: 9 * UNIT,
        currency: "EUR",
        stock: 30,
        limit: 0,
    }));
    products.push(product(Spec {
        merchant: m2,
        gd_no: "G2002",
        name: "Clay tea pot",
        keywords: &["tea", "pot"],
        price: 35 * UNIT,
        retail: 40 * UNIT,
        currency: "EUR",
        stock: 5,
        limit: 1,
    }));
    products
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_catalogue_has_the_documented_counts() {
        let products = seeded();
        let enabled = products
            .iter()
            .filter(|p| p.enabled && p.merchant_no == seed::MERCHANT_NO)
            .count();
        assert_eq!(enabled, seed::ENABLED_PRODUCT_COUNT);
    }

    #[test]
    fn wholesale_tiers_lower_the_unit_price() {
        let products = seeded();
        let tea = products
            .iter()
            .find(|p| p.gd_no == seed::PRODUCT_WHOLESALE_TEA)
            .unwrap();
        assert_eq!(tea.unit_price_for(1), 12 * UNIT);
        assert_eq!(tea.unit_price_for(3), 11 * UNIT);
        assert_eq!(tea.unit_price_for(12), 10 * UNIT);
    }
}
