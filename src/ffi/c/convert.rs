//! Core errors to `Failure`: one result number per error kind, the service's details kept.

use crate::webhook::WebhookError;
use crate::{Error, TransportKind};

use super::error::Failure;
use super::result::sf_result;

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let result = match &error {
            Error::Api(_) => sf_result::Api,
            Error::ProviderResultPending { .. } => sf_result::ProviderResultPending,
            Error::OutcomeUnknown { .. } => sf_result::OutcomeUnknown,
            Error::Transport { kind, .. } => match kind {
                TransportKind::Connect => sf_result::Connect,
                TransportKind::Timeout => sf_result::Timeout,
                TransportKind::Tls => sf_result::Tls,
                TransportKind::Connection => sf_result::Connection,
                TransportKind::BodyTooLarge => sf_result::BodyTooLarge,
            },
            Error::DeadlineExceeded { .. } => sf_result::DeadlineExceeded,
            Error::Decode { .. } => sf_result::Decode,
            Error::Validation { .. } => sf_result::Validation,
            Error::WrongTokenSubject { .. } => sf_result::WrongTokenSubject,
            Error::ResponseMismatch { .. } => sf_result::ResponseMismatch,
            Error::Config(_) => sf_result::Config,
            Error::TokenProvider(_) => sf_result::TokenProvider,
        };
        Failure {
            result,
            // The core's messages never contain secrets, tokens or checkout tokens.
            message: error.to_string().into_boxed_str(),
            http_status: error.status().unwrap_or(0),
            code: error.code().map(|c| c.as_str().to_owned()),
            description: error.error_description().map(str::to_owned),
            field: error.field().map(str::to_owned),
            retry_after: error.retry_after(),
            unclear: error.advice().zip(error.lookup()).map(|(advice, lookup)| {
                Box::new(super::error::Unclear {
                    advice,
                    lookup: lookup.clone(),
                })
            }),
        }
    }
}

impl From<WebhookError> for Failure {
    fn from(error: WebhookError) -> Self {
        let (result, field) = match &error {
            WebhookError::NoSecrets => (sf_result::WebhookNoSecrets, None),
            WebhookError::MissingHeader(header) => (sf_result::WebhookMissingHeader, Some(*header)),
            WebhookError::MalformedTimestamp => (sf_result::WebhookMalformedTimestamp, None),
            WebhookError::TimestampTooOld { .. } => (sf_result::WebhookTimestampTooOld, None),
            WebhookError::TimestampInFuture { .. } => (sf_result::WebhookTimestampInFuture, None),
            WebhookError::MalformedSignature => (sf_result::WebhookMalformedSignature, None),
            WebhookError::SignatureMismatch => (sf_result::WebhookSignatureMismatch, None),
            WebhookError::InvalidBody(_) => (sf_result::WebhookInvalidBody, None),
            WebhookError::EventIdMismatch => (sf_result::WebhookEventIdMismatch, None),
            WebhookError::UnsupportedEventType(_) => (sf_result::WebhookUnsupportedEventType, None),
            WebhookError::UnsupportedApiVersion(_) => {
                (sf_result::WebhookUnsupportedApiVersion, None)
            }
            WebhookError::ExpectationMismatch { field, .. } => {
                (sf_result::ExpectationMismatch, Some(*field))
            }
        };
        let failure = Failure::new(result, error.to_string());
        match field {
            Some(field) => failure.with_field(field),
            None => failure,
        }
    }
}
