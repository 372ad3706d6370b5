//! Read handlers: userinfo, the merchant profile and the product list (contract: "GET
//! /oauth/userinfo", "GET /openapi/v1/merchant", "GET /openapi/v1/products").

use std::sync::Arc;

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::products::{self, ProductQuery};
use super::user_of;
use crate::auth::{Accepts, Caller};
use crate::error::{ApiError, ApiResult};
use crate::state::Shared;

/// GET {userinfo_endpoint}: user token with `openid`. Returns `sub` (the user id), `name`,
/// `preferred_username` and `merchant_no` (the fields are not shown by the contract).
pub async fn userinfo(State(shared): State<Arc<Shared>>, caller: Caller) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::User, "openid")?;
    let user = user_of(&caller)?;
    let mut name = user.to_owned();
    if let Some(first) = name.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    Ok(Json(json!({
        "sub": user,
        "name": name,
        "preferred_username": user,
        "merchant_no": merchant_no,
    })))
}

/// GET /openapi/v1/merchant: the bound merchant's profile (user or client token).
pub async fn merchant_profile(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::UserOrClient, "merchant.profile.read")?;
    let world = shared.world();
    let merchant = world
        .merchants
        .get(&merchant_no)
        .ok_or_else(|| ApiError::new(StatusCode::FORBIDDEN, "merchant_inactive"))?;
    Ok(Json(merchant.profile.clone()))
}

/// GET /openapi/v1/products: enabled products of the bound merchant, with the contract's
/// fallbacks for `page` and `limit` (see [`ProductQuery::parse`]).
pub async fn list_products(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    let merchant_no = caller.authorize(&shared, Accepts::UserOrClient, "products.read")?;
    let query = ProductQuery::parse(raw.as_deref());
    let now = shared.clock.now();
    let mut world = shared.world();
    // Stock of orders that lapsed unpaid is back on the shelf.
    world.catalog.advance_all(now);
    let (page, total) = products::list(&world.catalog.products, &merchant_no, &query);
    Ok(Json(json!({
        "list": page.iter().map(|p| p.to_json()).collect::<Vec<_>>(),
        "total": total,
        "page": query.page,
        "limit": query.limit,
    })))
}
