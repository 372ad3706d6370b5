//! JSON shapes of a merchant payment: the create response, the query object and the
//! notification snapshot (which never holds the checkout token, return address or secret).

use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::store::MerchantPayment;

/// RFC 3339 text of a sandbox time (UTC, whole seconds).
pub fn rfc3339(at: OffsetDateTime) -> String {
    at.replace_nanosecond(0)
        .unwrap_or(at)
        .format(&Rfc3339)
        .unwrap_or_default()
}

/// The absolute checkout address of a payment (sandbox origin + per-order token).
pub fn checkout_url(origin: &str, payment: &MerchantPayment) -> String {
    format!(
        "{origin}{}/{}",
        crate::checkout::CHECKOUT_PATH,
        payment.checkout_token.expose()
    )
}

/// The create response: order_no, external_reference, payment_no, amount_minor, currency,
/// currency_decimals, status, test_mode, checkout_url, return_url (omitted when not set),
/// expires_at.
pub fn create_view(origin: &str, payment: &MerchantPayment) -> Value {
    let mut object = Map::new();
    object.insert("order_no".into(), json!(payment.order_no));
    object.insert(
        "external_reference".into(),
        json!(payment.external_reference),
    );
    object.insert("payment_no".into(), json!(payment.chosen_payment_no()));
    object.insert("amount_minor".into(), json!(payment.amount_minor));
    object.insert("currency".into(), json!(payment.currency));
    object.insert("currency_decimals".into(), json!(payment.currency_decimals));
    object.insert("status".into(), json!(payment.status.as_str()));
    object.insert("test_mode".into(), json!(test_mode(payment)));
    object.insert("checkout_url".into(), json!(checkout_url(origin, payment)));
    if let Some(url) = &payment.return_url {
        object.insert("return_url".into(), json!(url));
    }
    object.insert("expires_at".into(), json!(rfc3339(payment.expires_at)));
    Value::Object(object)
}

/// The query object: the create fields plus status_version and the confirmation fields
/// (event_id and provider_trade_no omitted until known, occurred_at null until paid,
/// settlement_coin omitted when absent).
pub fn query_view(origin: &str, payment: &MerchantPayment) -> Value {
    let mut value = create_view(origin, payment);
    let Value::Object(object) = &mut value else {
        return value;
    };
    object.insert("status_version".into(), json!(payment.status_version));
    if let Some(event_id) = &payment.event_id {
        object.insert("event_id".into(), json!(event_id));
    }
    if let Some(trade) = &payment.provider_trade_no {
        object.insert("provider_trade_no".into(), json!(trade));
    }
    object.insert(
        "occurred_at".into(),
        json!(payment.occurred_at.map(rfc3339)),
    );
    if let Some(coin) = payment.settlement_coin {
        object.insert("settlement_coin".into(), json!(coin.to_string()));
    }
    value
}

/// `data` of a status notification: the snapshot at that status.
pub fn snapshot(payment: &MerchantPayment) -> Value {
    json!({
        "order_no": payment.order_no,
        "external_reference": payment.external_reference,
        "payment_no": payment.chosen_payment_no(),
        "amount_minor": payment.amount_minor,
        "currency": payment.currency,
        "currency_decimals": payment.currency_decimals,
        "status": payment.status.as_str(),
        "status_version": payment.status_version,
        "test_mode": test_mode(payment),
        "expires_at": rfc3339(payment.expires_at),
        "event_id": payment.event_id,
        "provider_trade_no": payment.provider_trade_no,
        "occurred_at": payment.occurred_at.map(rfc3339),
    })
}

/// False until a channel is chosen; afterwards the chosen channel's test mode.
fn test_mode(payment: &MerchantPayment) -> bool {
    payment.session.as_ref().is_some_and(|s| s.test_mode)
}
