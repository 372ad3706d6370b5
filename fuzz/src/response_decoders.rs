//! `response_decoders`: every answer the SDK decodes from the service, from arbitrary bytes via
//! serde_json, as the SDK does (`serde_json::from_slice` of the whole body). Decoding never
//! panics; what decodes re-encodes (the C ABI and the bindings hand results out as JSON) and,
//! for the types with exact equality, decodes back to the same value.
//!
//! The list wrapper (`Items<T>`), the payment start wire shape, the token response and the error
//! body are crate-private in the SDK; they are plain `#[derive(Deserialize)]` structs whose
//! mirrors below have the same fields and field types, so serde runs the same decoding. The
//! post-decoding steps that are private too (`resolve_redirect`, `verify_created`) are reached
//! only over HTTP; docs/fuzzing.md lists the accessor that would let this target call them.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;
use storefront::catalog::model::PaymentStatusResponse;
use storefront::{
    CatalogOrder, CreatedOrder, DeliveryRecord, ErrorCode, MerchantPayment, MerchantProfile,
    PaymentChannel, ProductPage, RetryAccepted, Secret, StatusNotification,
};

/// `{"items": [...]}` (`collection::model::Items`).
#[derive(Debug, serde::Deserialize)]
struct Items<T> {
    items: Vec<T>,
}

/// The payment start before `redirect` is resolved (`catalog::model::PaymentStartWire`).
#[derive(serde::Deserialize)]
struct PaymentStartWire {
    trade_no: String,
    redirect: String,
    expire_time: i64,
}

/// The token endpoint's answer (`auth::TokenResponse`).
#[derive(serde::Deserialize)]
struct TokenResponse {
    access_token: Secret,
    #[serde(default)]
    scope: Option<String>,
    expires_in: u64,
}

/// An error answer's body (`transport::ErrorBody`).
#[derive(serde::Deserialize)]
struct ErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
    #[serde(default)]
    field: Option<String>,
}

/// Input: the body bytes; every decoder sees the same body.
pub fn run(data: &[u8]) {
    // Merchant collection.
    exact::<MerchantPayment>(data);
    if let Some(list) = decode::<Items<MerchantPayment>>(data) {
        list.items.iter().for_each(reencode_exact);
    }
    if let Some(list) = decode::<Items<PaymentChannel>>(data) {
        list.items.iter().for_each(reencode_exact);
    }
    if let Some(list) = decode::<Items<DeliveryRecord>>(data) {
        list.items.iter().for_each(|r| drop(reencode(r)));
    }
    exact::<RetryAccepted>(data);

    // Catalog.
    exact::<MerchantProfile>(data);
    exact::<ProductPage>(data);
    exact::<CatalogOrder>(data);
    exact::<CreatedOrder>(data);
    exact::<PaymentStatusResponse>(data);
    if let Some(wire) = decode::<PaymentStartWire>(data) {
        let _ = (wire.trade_no.len(), wire.redirect.trim());
        // What start_payment does with `expire_time`.
        let _ = time::OffsetDateTime::from_unix_timestamp(wire.expire_time);
    }
    if let Some(claims) = decode::<serde_json::Map<String, serde_json::Value>>(data) {
        reencode(&claims);
    }

    // Tokens and errors.
    if let Some(token) = decode::<TokenResponse>(data) {
        let scopes: Vec<&str> = token.scope.as_deref().unwrap_or("").split(' ').collect();
        let _ = (token.access_token.is_empty(), scopes, token.expires_in);
    }
    if let Some(body) = decode::<ErrorBody>(data) {
        let code = ErrorCode::parse(&body.error);
        assert_eq!(ErrorCode::parse(code.as_str()), code);
        let _ = (body.error_description, body.field);
    }

    // Notifications (the body the verifier decodes after the signature check).
    exact::<StatusNotification>(data);
}

fn decode<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    serde_json::from_slice(data).ok()
}

/// Decodes `T`; a decoded value re-encodes and decodes back to itself.
fn exact<T: DeserializeOwned + Serialize + PartialEq + Debug>(data: &[u8]) {
    if let Some(value) = decode::<T>(data) {
        reencode_exact(&value);
    }
}

/// The value encodes as JSON (what the C ABI writes out).
fn reencode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|e| {
        panic!(
            "a decoded {} does not encode: {e}",
            std::any::type_name::<T>()
        )
    })
}

/// The value encodes, and its JSON decodes back to an equal value.
fn reencode_exact<T: DeserializeOwned + Serialize + PartialEq + Debug>(value: &T) {
    let json = reencode(value);
    match serde_json::from_slice::<T>(&json) {
        Ok(back) => assert_eq!(
            &back,
            value,
            "{} changed in a JSON round trip: {}",
            std::any::type_name::<T>(),
            String::from_utf8_lossy(&json)
        ),
        Err(e) => panic!(
            "the JSON of a decoded {} does not decode: {e}: {}",
            std::any::type_name::<T>(),
            String::from_utf8_lossy(&json)
        ),
    }
}
