//! Merchant collection: channel directory, create (idempotent), get, list, notification
//! delivery records and re-queue. Client-credentials token only.
//!
//! Contract rules: "On a timeout, retry with the original key and parameters; do not use a new
//! key"; "After creation, verify the returned amount, currency and precision"; list needs at
//! least one of `external_reference` and `order_no`; limits 1 to 100.

pub mod create;
pub mod model;
mod public_address;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::operation::Operation;
use crate::params::{limit_query, require_id};
use crate::transport::{Body, Request};

use create::CreateMerchantPayment;
use model::*;

/// Checks the created payment against the request: amount, currency, reference and (if given)
/// precision; and that `checkout_url` is an absolute HTTPS address (its token must not travel in
/// clear; plain HTTP only to loopback when the configuration allows it).
fn verify_created(
    req: &CreateMerchantPayment,
    p: &MerchantPayment,
    allow_loopback: bool,
) -> Result<()> {
    if let Some(checkout) = &p.checkout_url {
        let ok = checkout.to_url().is_some_and(|u| {
            u.scheme() == "https"
                || (u.scheme() == "http" && allow_loopback && crate::config::is_loopback(&u))
        });
        if !ok {
            return Err(Error::ResponseMismatch {
                field: "checkout_url".into(),
                expected: "an absolute HTTPS address".into(),
                actual: checkout.to_string(),
            });
        }
    }
    let mismatch = |field: &str, expected: String, actual: String| Error::ResponseMismatch {
        field: field.into(),
        expected,
        actual,
    };
    if p.amount_minor != req.amount_minor {
        return Err(mismatch(
            "amount_minor",
            req.amount_minor.to_string(),
            p.amount_minor.to_string(),
        ));
    }
    if p.currency != req.currency {
        return Err(mismatch(
            "currency",
            req.currency.clone(),
            p.currency.clone(),
        ));
    }
    if let Some(d) = req.expected_currency_decimals
        && d != p.currency_decimals
    {
        return Err(mismatch(
            "currency_decimals",
            d.to_string(),
            p.currency_decimals.to_string(),
        ));
    }
    if p.external_reference != req.external_reference {
        return Err(mismatch(
            "external_reference",
            req.external_reference.clone(),
            p.external_reference.clone(),
        ));
    }
    Ok(())
}

impl Client {
    /// `GET /openapi/v1/merchant-payment-channels`: channels usable for creating a merchant
    /// payment (empty when none). Not a quote for catalog checkout.
    pub async fn list_channels(&self) -> Result<Vec<PaymentChannel>> {
        let inner = &self.inner;
        let r: Items<PaymentChannel> = inner
            .execute(Request {
                op: Operation::ListChannels,
                url: inner.api_url(&["openapi", "v1", "merchant-payment-channels"], &[])?,
                query: Vec::new(),
                body: Body::Empty,
                auth: self.auth(),
            })
            .await?
            .json()?;
        Ok(r.items)
    }

    /// `POST /openapi/v1/merchant-payments`. Validates every parameter first; retries (same
    /// key, same body) on timeouts, connection errors, 5xx, the retryable 503 codes and 429;
    /// then checks the returned amount, currency, reference and precision.
    pub async fn create_merchant_payment(
        &self,
        request: &CreateMerchantPayment,
    ) -> Result<CreatedMerchantPayment> {
        request.validate(self.inner.config.allow_insecure_loopback)?;
        let inner = &self.inner;
        // Serialized once: every retry sends byte-identical parameters with the same key.
        let body = Body::json(request)?;
        let payment: MerchantPayment = inner
            .execute(Request {
                op: Operation::CreateMerchantPayment,
                url: inner.api_url(&["openapi", "v1", "merchant-payments"], &[])?,
                query: Vec::new(),
                body,
                auth: self.auth(),
            })
            .await
            .map_err(|e| {
                // A 202 `provider_result_pending` names the payment by the request's keys.
                e.with_lookup(crate::error::LookupKeys {
                    external_reference: Some(request.external_reference.clone()),
                    idempotency_key: Some(request.idempotency_key.clone()),
                    payment_no: request.payment_no.clone(),
                    ..Default::default()
                })
            })?
            .json()?;
        verify_created(request, &payment, self.inner.config.allow_insecure_loopback)?;
        Ok(CreatedMerchantPayment {
            idempotency_key: request.idempotency_key.clone(),
            payment,
        })
    }

    /// `GET /openapi/v1/merchant-payments/{order_no}` (with confirmation fields).
    pub async fn get_merchant_payment(&self, order_no: &str) -> Result<MerchantPayment> {
        require_id("order_no", order_no)?;
        let inner = &self.inner;
        inner
            .execute(Request {
                op: Operation::GetMerchantPayment,
                url: inner.api_url(&["openapi", "v1", "merchant-payments"], &[order_no])?,
                query: Vec::new(),
                body: Body::Empty,
                auth: self.auth(),
            })
            .await
            .map_err(|e| e.with_lookup(crate::error::LookupKeys::order(order_no)))?
            .json()
    }

    /// `GET /openapi/v1/merchant-payments` by `external_reference` and/or `order_no`, newest
    /// first.
    pub async fn list_merchant_payments(
        &self,
        query: &ListMerchantPaymentsQuery,
    ) -> Result<Vec<MerchantPayment>> {
        let mut q = Vec::new();
        if let Some(r) = &query.external_reference {
            require_id("external_reference", r)?;
            q.push(("external_reference", r.clone()));
        }
        if let Some(o) = &query.order_no {
            require_id("order_no", o)?;
            q.push(("order_no", o.clone()));
        }
        if q.is_empty() {
            return Err(Error::validation(
                "external_reference",
                "at least one of external_reference and order_no is required",
            ));
        }
        q.extend(limit_query(query.limit)?);
        let inner = &self.inner;
        let r: Items<MerchantPayment> = inner
            .execute(Request {
                op: Operation::ListMerchantPayments,
                url: inner.api_url(&["openapi", "v1", "merchant-payments"], &[])?,
                query: q,
                body: Body::Empty,
                auth: self.auth(),
            })
            .await?
            .json()?;
        Ok(r.items)
    }

    /// `GET /openapi/v1/merchant-payments/{order_no}/notifications`: delivery records, highest
    /// status version first.
    pub async fn list_notification_records(
        &self,
        order_no: &str,
        limit: Option<u32>,
    ) -> Result<Vec<DeliveryRecord>> {
        require_id("order_no", order_no)?;
        let inner = &self.inner;
        let r: Items<DeliveryRecord> = inner
            .execute(Request {
                op: Operation::ListNotifications,
                url: inner.api_url(
                    &["openapi", "v1", "merchant-payments"],
                    &[order_no, "notifications"],
                )?,
                query: limit_query(limit)?.into_iter().collect(),
                body: Body::Empty,
                auth: self.auth(),
            })
            .await?
            .json()?;
        Ok(r.items)
    }

    /// `POST .../{order_no}/notifications/{event_id}/retry`: re-queues a notification whose
    /// automatic retries are exhausted (202 `{"accepted": true}`). Creates no new event.
    pub async fn retry_notification(
        &self,
        order_no: &str,
        event_id: &str,
    ) -> Result<RetryAccepted> {
        require_id("order_no", order_no)?;
        require_id("event_id", event_id)?;
        let inner = &self.inner;
        inner
            .execute(Request {
                op: Operation::RetryNotification,
                url: inner.api_url(
                    &["openapi", "v1", "merchant-payments"],
                    &[order_no, "notifications", event_id, "retry"],
                )?,
                query: Vec::new(),
                body: Body::Empty,
                auth: self.auth(),
            })
            .await?
            .json()
    }
}
