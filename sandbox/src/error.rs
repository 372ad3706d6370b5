//! The service's error body: `{"error", "error_description"?, "field"?}` with its HTTP status.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// An error answer of the service, in the contract's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiError {
    /// HTTP status of the answer.
    #[serde(skip)]
    pub status: StatusCode,
    /// The machine-readable `error` code clients branch on.
    pub error: String,
    /// Human-readable detail; never contains secrets or tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_description: Option<String>,
    /// The request field at fault, where the contract names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Seconds to wait before retrying (sent as the `Retry-After` header).
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with a status and code and no detail.
    pub fn new(status: StatusCode, error: &str) -> Self {
        ApiError {
            status,
            error: error.to_owned(),
            error_description: None,
            field: None,
            retry_after: None,
        }
    }

    /// Adds a human-readable description.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.error_description = Some(description.into());
        self
    }

    /// Names the request field at fault.
    pub fn field(mut self, field: &str) -> Self {
        self.field = Some(field.to_owned());
        self
    }

    /// 400 `invalid_request` with a description.
    pub fn invalid_request(description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request").describe(description)
    }

    /// 401 `invalid_token`.
    pub fn invalid_token() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_token")
    }

    /// 403 `insufficient_scope` naming the missing scope.
    pub fn insufficient_scope(scope: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, "insufficient_scope")
            .describe(format!("scope {scope} is required"))
    }

    /// 404 with the given code (resources of other users or merchants look missing).
    pub fn not_found(error: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, error)
    }

    /// 403 `cross_origin_request`: a state-changing request sent by a page of another origin
    /// (the origin rule of [`crate::guard`]).
    pub fn cross_origin_request(description: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "cross_origin_request").describe(description)
    }

    /// 421 `host_not_served`: the request names a `Host` the sandbox does not serve (the
    /// DNS-rebinding rule of [`crate::guard`]).
    pub fn host_not_served(description: impl Into<String>) -> Self {
        Self::new(StatusCode::MISDIRECTED_REQUEST, "host_not_served").describe(description)
    }

    /// 403 `dashboard_token_invalid`: a form submission to a control route without the
    /// dashboard's token, or any control request with a wrong `X-Sandbox-Token` (the form rule
    /// of [`crate::guard`]).
    pub fn dashboard_token_invalid(description: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "dashboard_token_invalid").describe(description)
    }

    /// 422 with the given code and description.
    pub fn unprocessable(error: &str, description: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, error).describe(description)
    }
}

/// A refused clock advance answers 400 with `field` `seconds`: `invalid_request` for a
/// negative value (time never runs back), `clock_out_of_range` for an advance the clock cannot
/// hold (rule of [`crate::clock::Clock::advance`]).
impl From<crate::clock::AdvanceError> for ApiError {
    fn from(error: crate::clock::AdvanceError) -> Self {
        let code = match error {
            crate::clock::AdvanceError::Backwards => "invalid_request",
            crate::clock::AdvanceError::TooFar { .. } => "clock_out_of_range",
        };
        Self::new(StatusCode::BAD_REQUEST, code)
            .describe(error.to_string())
            .field("seconds")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status;
        let retry_after = self.retry_after;
        let mut response = (status, axum::Json(self)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer error=\"invalid_token\""),
            );
        }
        response
    }
}

/// Result of a handler step.
pub type ApiResult<T> = Result<T, ApiError>;
