//! OAuth: the token endpoint (client credentials), user-token minting for the sandbox, and the
//! caller check every business endpoint runs (token, subject, scope, merchant binding).

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::IntoResponse;
use axum::{Form, Json};
use serde::Deserialize;
use serde_json::json;
use time::Duration;

use crate::directory::store::{AccessToken, Subject};
use crate::error::{ApiError, ApiResult};
use crate::ids::random_hex;
use crate::limits::Bucket;
use crate::state::AppState;

pub use crate::directory::store::{
    MAX_TOKEN_LIFETIME_SECONDS, TOKEN_LIFETIME_SECONDS, valid_token_lifetime,
};

/// Scopes only a user-authorized token can carry; client-credentials grants never include them,
/// so a client token on a user endpoint is refused with 403 `insufficient_scope`.
const USER_ONLY_SCOPES: &[&str] = &[
    "openid",
    "orders.create",
    "orders.read",
    "payments.create",
    "payments.read",
];

/// Form fields of the token request.
#[derive(Debug, Deserialize)]
pub struct TokenRequest {
    grant_type: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    scope: Option<String>,
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> ApiError {
    ApiError::new(status, error).describe(description)
}

/// POST {token_endpoint}: form-encoded client-credentials grant. Returns `access_token`, the
/// granted `scope` (space-separated) and `expires_in`: the configured token lifetime, which is
/// also how long after the grant (on the sandbox clock) the token stops being accepted.
pub async fn token_endpoint(
    State(shared): State<Arc<AppState>>,
    form: Result<Form<TokenRequest>, axum::extract::rejection::FormRejection>,
) -> ApiResult<impl IntoResponse> {
    let Form(request) = form.map_err(|_| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the token request must be application/x-www-form-urlencoded",
        )
    })?;
    if request.grant_type.as_deref() != Some("client_credentials") {
        return Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "only grant_type=client_credentials is supported",
        ));
    }
    let client_id = request.client_id.unwrap_or_default();
    let mut db = shared.db();
    let client = db
        .directory
        .clients
        .get(&client_id)
        .cloned()
        .ok_or_else(|| oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "unknown client"))?;
    let Some(secret) = &client.secret else {
        return Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "a public client cannot use the client-credentials grant",
        ));
    };
    let given = request.client_secret.unwrap_or_default();
    if !secrets_match(&given, secret) {
        return Err(oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "client authentication failed",
        ));
    }
    let grantable: Vec<String> = client
        .approved_scopes
        .iter()
        .filter(|s| !USER_ONLY_SCOPES.contains(&s.as_str()))
        .cloned()
        .collect();
    let scopes = grant(&grantable, request.scope.as_deref())?;
    let lifetime = db.directory.token_lifetime_seconds;
    let now = shared.clock.now();
    let token = random_hex("sbx_at_", 24);
    db.directory.tokens.insert(
        token.clone(),
        AccessToken {
            client_id,
            subject: Subject::Client,
            scopes: scopes.clone(),
            expires_at: now + Duration::seconds(lifetime),
        },
    );
    // RFC 6749 section 5.1: token responses are never cached.
    Ok((
        [(axum::http::header::CACHE_CONTROL, "no-store")],
        Json(json!({
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": lifetime,
            "scope": scopes.join(" "),
        })),
    ))
}

/// Compares two secrets without leaking where they differ: digests are compared, so the time
/// taken says nothing about the stored secret.
fn secrets_match(given: &str, stored: &str) -> bool {
    let digest = |s: &str| ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
    digest(given).as_ref() == digest(stored).as_ref()
}

/// Grants the requested scopes that are approved (all approved ones when none is requested).
/// A request naming only unapproved scopes is refused with `invalid_scope`.
fn grant(approved: &[String], requested: Option<&str>) -> ApiResult<Vec<String>> {
    let requested: Vec<&str> = requested.unwrap_or("").split_whitespace().collect();
    if requested.is_empty() {
        return Ok(approved.to_vec());
    }
    let granted: Vec<String> = requested
        .iter()
        .filter(|s| approved.iter().any(|a| a == *s))
        .map(|s| s.to_string())
        .collect();
    if granted.is_empty() {
        return Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "none of the requested scopes is approved for this client",
        ));
    }
    Ok(granted)
}

/// Body of the sandbox-only user-token minting endpoint.
#[derive(Debug, Deserialize)]
pub struct MintUserToken {
    client_id: String,
    scope: Option<String>,
    expires_in: Option<i64>,
}

/// POST /_sandbox/users/{user}/tokens: a user-authorized token for a seeded user, standing in
/// for the authorization-code flow (which the contract does not show).
pub async fn mint_user_token(
    State(shared): State<Arc<AppState>>,
    axum::extract::Path(user): axum::extract::Path<String>,
    body: crate::extract::JsonBody<MintUserToken>,
) -> ApiResult<impl IntoResponse> {
    let request = body.0;
    let mut db = shared.db();
    if !db.directory.users.contains_key(&user) {
        return Err(ApiError::not_found("unknown_user").describe("no such sandbox user"));
    }
    let client = db
        .directory
        .clients
        .get(&request.client_id)
        .cloned()
        .ok_or_else(|| ApiError::invalid_request("unknown client_id").field("client_id"))?;
    let scopes = grant(&client.approved_scopes, request.scope.as_deref())?;
    let lifetime = request
        .expires_in
        .unwrap_or(TOKEN_LIFETIME_SECONDS)
        .clamp(1, 86_400);
    let token = random_hex("sbx_ut_", 24);
    db.directory.tokens.insert(
        token.clone(),
        AccessToken {
            client_id: client.client_id,
            subject: Subject::User(user),
            scopes: scopes.clone(),
            expires_at: shared.clock.now() + Duration::seconds(lifetime),
        },
    );
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": lifetime,
            "scope": scopes.join(" "),
        })),
    ))
}

/// The authenticated caller of a business endpoint: a valid, unexpired bearer token.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Client the token was issued to.
    pub client_id: String,
    /// Client or user.
    pub subject: Subject,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// Merchant the client is bound to, if any.
    pub merchant_no: Option<String>,
}

/// Which token subjects an endpoint accepts (the "Token subject" column of the endpoint index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepts {
    /// User-authorized tokens only.
    User,
    /// Client-credentials tokens only (403 `client_credentials_required` otherwise).
    ClientOnly,
    /// Either.
    UserOrClient,
}

impl Caller {
    /// Runs the endpoint's checks in order: subject, scope, then an active bound merchant.
    /// Returns the bound merchant's number.
    pub fn authorize(&self, shared: &AppState, accepts: Accepts, scope: &str) -> ApiResult<String> {
        if accepts == Accepts::ClientOnly && self.subject != Subject::Client {
            return Err(
                ApiError::new(StatusCode::FORBIDDEN, "client_credentials_required")
                    .describe("this endpoint accepts client-credentials tokens only"),
            );
        }
        if !self.scopes.iter().any(|s| s == scope) {
            return Err(ApiError::insufficient_scope(scope));
        }
        let inactive = || {
            ApiError::new(StatusCode::FORBIDDEN, "merchant_inactive")
                .describe("the client is not bound to an active merchant")
        };
        let merchant_no = self.merchant_no.clone().ok_or_else(inactive)?;
        let active = shared
            .db()
            .directory
            .merchants
            .get(&merchant_no)
            .is_some_and(|m| m.active);
        if !active {
            return Err(inactive());
        }
        Ok(merchant_no)
    }

    /// The set-up of a client-credentials endpoint: [`Caller::authorize`] with
    /// [`Accepts::ClientOnly`] and `scope`, then one request of the caller's client counted in
    /// `bucket` (429 `rate_limited` when over). Returns the bound merchant's number.
    pub fn authorize_client(
        &self,
        shared: &AppState,
        scope: &str,
        bucket: Bucket,
    ) -> ApiResult<String> {
        let merchant_no = self.authorize(shared, Accepts::ClientOnly, scope)?;
        shared.check_limit(bucket, &self.client_id)?;
        Ok(merchant_no)
    }

    /// The user behind a user-authorized token.
    pub fn user(&self) -> Option<&str> {
        match &self.subject {
            Subject::User(user) => Some(user),
            Subject::Client => None,
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header value (scheme case-insensitive, as
/// in RFC 6750); `None` for any other scheme or an empty token.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl FromRequestParts<Arc<AppState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<AppState>) -> ApiResult<Self> {
        let token = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token)
            .ok_or_else(ApiError::invalid_token)?;
        let now = shared.clock.now();
        let db = shared.db();
        // A token is accepted strictly before its expiry: at `expires_at` it is expired.
        let record = db
            .directory
            .tokens
            .get(token)
            .filter(|t| now < t.expires_at)
            .ok_or_else(ApiError::invalid_token)?;
        let merchant_no = db
            .directory
            .clients
            .get(&record.client_id)
            .and_then(|c| c.merchant_no.clone());
        Ok(Caller {
            client_id: record.client_id.clone(),
            subject: record.subject.clone(),
            scopes: record.scopes.clone(),
            merchant_no,
        })
    }
}
