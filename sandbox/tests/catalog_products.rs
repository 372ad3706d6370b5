//! Merchant profile, product list and userinfo, over real HTTP (contract: "GET
//! /openapi/v1/merchant", "GET /openapi/v1/products", "Product object", "GET /oauth/userinfo").

mod harness;

use harness::Env;
use reqwest::StatusCode;
use storefront_sandbox::seed;

#[tokio::test]
async fn merchant_profile_has_every_string_field_for_client_and_user_tokens() {
    let env = Env::start().await;
    let client = env.merchant_token().await;
    let user = env.user_token(seed::USER_ALICE).await;
    for token in [client, user] {
        let answer = env
            .get(&env.api("/openapi/v1/merchant"), Some(&token))
            .await;
        assert_eq!(answer.status, StatusCode::OK);
        for field in [
            "merchant_no",
            "name",
            "logo_url",
            "short_description",
            "description",
            "business_scope",
            "website_url",
            "contact",
        ] {
            assert!(
                answer.body[field].is_string(),
                "{field} in {:?}",
                answer.body
            );
        }
        assert_eq!(answer.body["merchant_no"], seed::MERCHANT_NO);
    }
}

#[tokio::test]
async fn merchant_identity_comes_from_the_token_binding() {
    let env = Env::start().await;
    let other = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let answer = env
        .get(&env.api("/openapi/v1/merchant"), Some(&other))
        .await;
    assert_eq!(answer.body["merchant_no"], seed::OTHER_MERCHANT_NO);
}

#[tokio::test]
async fn products_list_only_enabled_products_of_the_bound_merchant() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let answer = env
        .get(&env.api("/openapi/v1/products?limit=100"), Some(&token))
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["total"], seed::ENABLED_PRODUCT_COUNT);
    let list = answer.body["list"].as_array().unwrap();
    assert_eq!(list.len(), seed::ENABLED_PRODUCT_COUNT);
    assert!(list.iter().all(|p| p["gd_no"] != seed::PRODUCT_DISABLED));
    assert!(list.iter().all(|p| p["gd_no"] != "G2001"));

    let other = env
        .client_token(seed::OTHER_CLIENT_ID, seed::OTHER_CLIENT_SECRET, "")
        .await;
    let answer = env
        .get(&env.api("/openapi/v1/products"), Some(&other))
        .await;
    assert_eq!(answer.body["total"], 2);
    assert!(
        answer.body["list"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["gd_no"].as_str().unwrap().starts_with("G2"))
    );
}

#[tokio::test]
async fn product_page_invalid_or_below_one_falls_back_to_one() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for (query, page) in [
        ("", 1),
        ("?page=0", 1),
        ("?page=-3", 1),
        ("?page=abc", 1),
        ("?page=1.5", 1),
        ("?page=", 1),
        ("?page=2", 2),
    ] {
        let answer = env
            .get(
                &env.api(&format!("/openapi/v1/products{query}")),
                Some(&token),
            )
            .await;
        assert_eq!(answer.status, StatusCode::OK, "{query}");
        assert_eq!(answer.body["page"], page, "{query}");
    }
}

#[tokio::test]
async fn product_limit_invalid_or_out_of_range_falls_back_to_twenty() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for (query, limit, len) in [
        ("", 20, 20),
        ("?limit=0", 20, 20),
        ("?limit=101", 20, 20),
        ("?limit=-1", 20, 20),
        ("?limit=ten", 20, 20),
        ("?limit=1", 1, 1),
        ("?limit=100", 100, 25),
        ("?limit=7", 7, 7),
    ] {
        let answer = env
            .get(
                &env.api(&format!("/openapi/v1/products{query}")),
                Some(&token),
            )
            .await;
        assert_eq!(answer.body["limit"], limit, "{query}");
        assert_eq!(
            answer.body["list"].as_array().unwrap().len(),
            len,
            "{query}"
        );
    }
}

#[tokio::test]
async fn product_total_counts_every_match_across_pages() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    let first = env
        .get(&env.api("/openapi/v1/products?page=1"), Some(&token))
        .await;
    let second = env
        .get(&env.api("/openapi/v1/products?page=2"), Some(&token))
        .await;
    let beyond = env
        .get(&env.api("/openapi/v1/products?page=9"), Some(&token))
        .await;
    assert_eq!(first.body["total"], 25);
    assert_eq!(second.body["total"], 25);
    assert_eq!(second.body["list"].as_array().unwrap().len(), 5);
    assert_eq!(beyond.body["total"], 25);
    assert_eq!(beyond.body["list"].as_array().unwrap().len(), 0);
    let mut numbers: Vec<String> = first.body["list"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second.body["list"].as_array().unwrap())
        .map(|p| p["gd_no"].as_str().unwrap().to_owned())
        .collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), 25, "pages do not overlap");
}

#[tokio::test]
async fn gd_no_filters_by_exact_product_number() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for (gd_no, total) in [
        (seed::PRODUCT_BEANS, 1),
        ("G100", 0),
        ("g1001", 0),
        (seed::PRODUCT_DISABLED, 0),
        ("G2001", 0),
    ] {
        let answer = env
            .get(
                &env.api(&format!("/openapi/v1/products?gd_no={gd_no}")),
                Some(&token),
            )
            .await;
        assert_eq!(answer.body["total"], total, "{gd_no}");
    }
}

#[tokio::test]
async fn search_value_matches_product_name_or_keyword() {
    let env = Env::start().await;
    let token = env.merchant_token().await;
    for (search, total) in [
        ("Kenya", 1),
        ("kenya", 1),
        ("single%20origin", 7),
        ("accessory", 14),
        ("grinder", 1),
        ("nothing-like-this", 0),
    ] {
        let answer = env
            .get(
                &env.api(&format!(
                    "/openapi/v1/products?search_value={search}&limit=100"
                )),
                Some(&token),
            )
            .await;
        assert_eq!(answer.body["total"], total, "{search}");
    }
}

#[tokio::test]
async fn product_object_carries_every_contract_field() {
    let env = Env::start().await;
    let token = env.user_token(seed::USER_ALICE).await;
    let get = |gd_no: &str| {
        let url = env.api(&format!("/openapi/v1/products?gd_no={gd_no}"));
        let token = token.clone();
        let env = &env;
        async move { env.get(&url, Some(&token)).await.body["list"][0].clone() }
    };
    let beans = get(seed::PRODUCT_BEANS).await;
    assert_eq!(beans["actual_price"], 12_5000_0000i64);
    assert_eq!(beans["retail_price"], 15_0000_0000i64);
    assert_eq!(beans["currency"], "USD");
    assert_eq!(beans["currency_decimals"], 2);
    assert_eq!(beans["in_stock"], 50);
    assert_eq!(beans["buy_limit_num"], 5);
    assert_eq!(beans["payment_policy"], "automatic");
    assert!(beans["gd_name"].is_string() && beans["gd_description"].is_string());
    assert!(beans["buy_prompt"].is_string());

    let gift = get(seed::PRODUCT_GIFT_CARD).await;
    assert_eq!(gift["payment_policy"], "allowlist");
    assert_eq!(
        gift["payment_methods"],
        serde_json::json!([seed::CHANNEL_PLATFORM_COIN])
    );
    assert_eq!(
        gift["other_ipu_cnf"],
        serde_json::json!([
            "recipient_email=Recipient email=1",
            "gift_message=Gift message=0"
        ])
    );

    let tea = get(seed::PRODUCT_WHOLESALE_TEA).await;
    assert!(tea["wholesale_price_cnf"].is_array());
    assert!(
        tea["display"].is_object(),
        "display-only extra fields are present"
    );
    assert!(tea["tags"].is_array());

    let mug = get(seed::PRODUCT_LIMITED_MUG).await;
    assert_eq!(mug["in_stock"], 1);
    assert_eq!(mug["buy_limit_num"], 0);
}

#[tokio::test]
async fn userinfo_answers_user_tokens_with_openid() {
    let env = Env::start().await;
    let user = env.user_token(seed::USER_ALICE).await;
    let answer = env.get(&env.sandbox.userinfo_endpoint(), Some(&user)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["sub"], seed::USER_ALICE);
    assert!(answer.body["name"].is_string());

    let without_openid = env
        .user_token_via(seed::USER_ALICE, seed::CATALOG_CLIENT_ID, "products.read")
        .await;
    let answer = env
        .get(&env.sandbox.userinfo_endpoint(), Some(&without_openid))
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.error(), "insufficient_scope");

    let client = env.merchant_token().await;
    let answer = env
        .get(&env.sandbox.userinfo_endpoint(), Some(&client))
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
}
