//! Sandbox controls of merchant payments (not part of the contract): a buyer starting a channel
//! session or paying, an unclear channel response, platform-side transitions, the merchant
//! default notification setting, and the sweep.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::PLATFORM_COIN_TRADE_MARKER;
use super::http::payment_not_found;
use super::machine::{self, Trigger};
use super::rules::sweep;
use super::store::{ChannelSession, Status};
use super::views::query_view;
use crate::checkout::rules::{self, MethodChoice};
use crate::db::Db;
use crate::directory::store::NotifyDefault;
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::ids::random_hex;
use crate::notifications::config::{validate_notify_url, validate_secret};
use crate::state::AppState;

/// Body of the checkout controls.
#[derive(Debug, Default, Deserialize)]
pub struct BuyerAction {
    /// Channel to use (a real channel identifier offered for this payment).
    pub payment_no: Option<String>,
    /// Seeded buyer who is logged in, if any.
    pub user: Option<String>,
}

/// An optional JSON body: an empty body means the default; otherwise the rules of
/// [`JsonBody`] apply (JSON content type, size, UTF-8, well-formed).
#[derive(Debug)]
pub struct OptionalJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Default> axum::extract::FromRequest<S>
    for OptionalJson<T>
{
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let (parts, body) = request.into_parts();
        let bytes =
            crate::extract::read_body(axum::extract::Request::from_parts(parts.clone(), body))
                .await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        let request = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
        JsonBody::<T>::from_request(request, state)
            .await
            .map(|JsonBody(value)| OptionalJson(value))
    }
}

fn known_user(db: &Db, user: Option<&str>) -> ApiResult<()> {
    match user {
        Some(u) if !db.directory.users.contains_key(u) => {
            Err(ApiError::invalid_request("no such sandbox user").field("user"))
        }
        _ => Ok(()),
    }
}

fn view(shared: &AppState, db: &Db, order_no: &str) -> ApiResult<Json<Value>> {
    let payment = db
        .payments
        .payments
        .get(order_no)
        .ok_or_else(payment_not_found)?;
    Ok(Json(query_view(&shared.origin, payment)))
}

/// [`rules::start_session`] over the stores it touches.
fn start_session(
    db: &mut Db,
    order_no: &str,
    choice: MethodChoice<'_>,
    user: Option<&str>,
    now: OffsetDateTime,
) -> ApiResult<()> {
    rules::start_session(
        &mut db.payments,
        &db.directory,
        &mut db.notifications,
        order_no,
        choice,
        user,
        now,
    )
    .map(drop)
}

/// [`rules::confirm_payment`] over the stores it touches.
fn confirm_payment(
    db: &mut Db,
    order_no: &str,
    debit_buyer: bool,
    now: OffsetDateTime,
) -> ApiResult<()> {
    rules::confirm_payment(
        &mut db.payments,
        &mut db.directory,
        &mut db.notifications,
        order_no,
        debit_buyer,
        now,
    )
}

/// POST /_sandbox/merchant-payments/{order_no}/checkout/pay: the buyer starts the channel
/// session (unless one is open) and the channel confirms payment. The platform coin debits the
/// logged-in buyer's wallet. An open session (also under review) is paid as it is.
pub async fn pay(
    State(shared): State<Arc<AppState>>,
    Path(order_no): Path<String>,
    OptionalJson(action): OptionalJson<BuyerAction>,
) -> ApiResult<Json<Value>> {
    let now = shared.clock.now();
    let mut db = shared.db();
    known_user(&db, action.user.as_deref())?;
    let open = db
        .payments
        .payments
        .get(&order_no)
        .ok_or_else(payment_not_found)?
        .session
        .clone();
    let continues = open.as_ref().is_some_and(|s| {
        action
            .payment_no
            .as_deref()
            .is_none_or(|p| p == s.payment_no)
    });
    if !continues {
        let choice = match action.payment_no.as_deref() {
            Some(p) => MethodChoice::Channel(p),
            None => MethodChoice::Implicit,
        };
        start_session(&mut db, &order_no, choice, action.user.as_deref(), now)?;
    }
    confirm_payment(&mut db, &order_no, true, now)?;
    view(&shared, &db, &order_no)
}

/// POST /_sandbox/merchant-payments/{order_no}/checkout/session: the buyer starts a channel
/// session without paying (the method is then locked).
pub async fn session(
    State(shared): State<Arc<AppState>>,
    Path(order_no): Path<String>,
    OptionalJson(action): OptionalJson<BuyerAction>,
) -> ApiResult<Json<Value>> {
    let now = shared.clock.now();
    let mut db = shared.db();
    known_user(&db, action.user.as_deref())?;
    let choice = match action.payment_no.as_deref() {
        Some(p) => MethodChoice::Channel(p),
        None => MethodChoice::Implicit,
    };
    start_session(&mut db, &order_no, choice, action.user.as_deref(), now)?;
    view(&shared, &db, &order_no)
}

/// POST /_sandbox/merchant-payments/{order_no}/checkout/unclear: the channel's response to the
/// open session becomes unclear.
pub async fn unclear(
    State(shared): State<Arc<AppState>>,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let mut db = shared.db();
    rules::mark_unclear(&mut db.payments, &order_no)?;
    view(&shared, &db, &order_no)
}

/// Body of the force control.
#[derive(Debug, Deserialize)]
pub struct Force {
    /// `review`, `paid`, `refunded` or `chargeback`.
    pub status: String,
}

/// POST /_sandbox/merchant-payments/{order_no}/force: a platform-side transition. `review`
/// (from pending), `paid` (a verified payment, also late after review or expiry; no wallet is
/// debited), `refunded` and `chargeback` (from paid, keeping `event_id`). Transitions the
/// contract does not have give 409 `payment_conflict`.
pub async fn force(
    State(shared): State<Arc<AppState>>,
    Path(order_no): Path<String>,
    JsonBody(body): JsonBody<Force>,
) -> ApiResult<Json<Value>> {
    let target = Status::parse(&body.status)
        .filter(|s| {
            matches!(
                s,
                Status::Review | Status::Paid | Status::Refunded | Status::Chargeback
            )
        })
        .ok_or_else(|| {
            ApiError::invalid_request("status must be review, paid, refunded or chargeback")
                .field("status")
        })?;
    let now = shared.clock.now();
    let mut db = shared.db();
    let refused = || {
        ApiError::new(StatusCode::CONFLICT, "payment_conflict")
            .describe("the contract has no such transition from the payment's status")
    };
    if target == Status::Paid {
        let db = &mut *db;
        let payments = &mut db.payments;
        let channels = &db.directory.channels;
        let payment = payments
            .payments
            .get_mut(&order_no)
            .ok_or_else(payment_not_found)?;
        if payment.session.is_none() && payment.status != Status::Paid {
            let payment_no = payment
                .fixed_payment_no
                .clone()
                .or_else(|| payment.methods.first().map(|m| m.payment_no.clone()))
                .ok_or_else(refused)?;
            let channel = channels.get(&payment_no);
            let platform_coin = channel.is_some_and(|c| c.provider == "platform-coin");
            payment.session = Some(ChannelSession {
                trade_no: if platform_coin {
                    format!("{PLATFORM_COIN_TRADE_MARKER}:{}", payment.order_no)
                } else {
                    random_hex("ctr_", 12)
                },
                test_mode: channel.is_some_and(|c| c.test_mode),
                payment_no,
                user: None,
                started_at: now,
                unclear: false,
                channel_expired: false,
            });
        }
        if payment.status == Status::Paid {
            return Err(refused());
        }
        confirm_payment(db, &order_no, false, now)?;
    } else {
        let trigger = match target {
            Status::Review => Trigger::Review,
            Status::Refunded => Trigger::Refund,
            _ => Trigger::Chargeback,
        };
        let Db {
            payments,
            notifications,
            ..
        } = &mut *db;
        let payment = payments
            .payments
            .get_mut(&order_no)
            .ok_or_else(payment_not_found)?;
        let event = machine::fire(payment, trigger, now).ok_or_else(refused)?;
        notifications.record_event(event);
    }
    view(&shared, &db, &order_no)
}

/// POST /_sandbox/merchant-payments/{order_no}/expire: moves the sandbox clock forward to the
/// payment's `expires_at` (not at all when it is already reached; the clock never runs back)
/// and, unless the sweep is paused, runs the sweep, so the payment turns `expired` (no channel
/// session) or `review` (one was started) at once. Answers `{"advanced_seconds", "now",
/// "status", "status_version"}`.
pub async fn expire(
    State(shared): State<Arc<AppState>>,
    Path(order_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let expires_at = shared
        .db()
        .payments
        .payments
        .get(&order_no)
        .ok_or_else(payment_not_found)?
        .expires_at;
    let left = (expires_at - shared.clock.now()).as_seconds_f64().ceil() as i64;
    let advanced = left.max(0);
    shared.clock.advance(advanced)?;
    let now = shared.clock.now();
    let mut db = shared.db();
    let db = &mut *db;
    if !db.payments.sweep.paused {
        let swept = sweep(&mut db.payments, &db.directory.channels, now);
        db.notifications.record_events(swept.events);
    }
    let payment = db
        .payments
        .payments
        .get(&order_no)
        .ok_or_else(payment_not_found)?;
    Ok(Json(json!({
        "advanced_seconds": advanced,
        "now": super::views::rfc3339(now),
        "status": payment.status.as_str(),
        "status_version": payment.status_version,
    })))
}

/// Body of the notification-default control.
#[derive(Debug, Deserialize)]
pub struct DefaultSetting {
    /// Default notification address.
    pub url: String,
    /// Signing secret; generated (and returned once) when omitted.
    pub secret: Option<String>,
    /// Whether the default is enabled.
    pub enabled: bool,
}

/// PUT /_sandbox/merchants/{merchant_no}/notification-default: the merchant-center default
/// notification address, secret and enabled flag. Affects payments created afterwards only.
pub async fn notification_default(
    State(shared): State<Arc<AppState>>,
    Path(merchant_no): Path<String>,
    JsonBody(body): JsonBody<DefaultSetting>,
) -> ApiResult<Json<Value>> {
    let generated = body.secret.is_none();
    let secret =
        set_notification_default(&shared, &merchant_no, &body.url, body.secret, body.enabled)?;
    let mut answer = json!({ "url": body.url, "enabled": body.enabled });
    if generated {
        answer["secret"] = json!(secret);
    }
    Ok(Json(answer))
}

/// Sets a merchant's default notification address (the merchant-center setting; payments
/// created afterwards without `notify_url` use it). The address is checked as `notify_url` is;
/// the secret is generated when `None`. Returns the secret in force.
pub fn set_notification_default(
    shared: &AppState,
    merchant_no: &str,
    url: &str,
    secret: Option<String>,
    enabled: bool,
) -> ApiResult<String> {
    validate_notify_url(url, shared.allow_loopback_notify)?;
    let secret = secret.unwrap_or_else(|| random_hex("whsec_", 32));
    validate_secret(&secret)?;
    let mut db = shared.db();
    let merchant = db
        .directory
        .merchants
        .get_mut(merchant_no)
        .ok_or_else(|| ApiError::not_found("unknown_merchant").describe("no such merchant"))?;
    merchant.notify_default = Some(NotifyDefault {
        url: url.to_owned(),
        secret: secret.clone(),
        enabled,
    });
    Ok(secret)
}

/// POST /_sandbox/sweep: runs the background sweep now. Answers how many payments changed.
pub async fn run_sweep(State(shared): State<Arc<AppState>>) -> Json<Value> {
    let now = shared.clock.now();
    let mut db = shared.db();
    let db = &mut *db;
    let swept = sweep(&mut db.payments, &db.directory.channels, now);
    db.notifications.record_events(swept.events);
    Json(json!({ "changed": swept.changed }))
}

/// Body of PUT /_sandbox/sweep.
#[derive(Debug, Deserialize)]
pub struct SweepSetting {
    /// False pauses the automatic sweep (reads still expire payments).
    pub enabled: bool,
}

/// PUT /_sandbox/sweep: pauses or resumes the automatic sweep.
pub async fn set_sweep(
    State(shared): State<Arc<AppState>>,
    JsonBody(body): JsonBody<SweepSetting>,
) -> Json<Value> {
    shared.db().payments.sweep.paused = !body.enabled;
    Json(json!({ "enabled": body.enabled }))
}

/// Body of PUT /_sandbox/channels/{payment_no}: the fields to change.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelSetting {
    /// Whether the channel is enabled.
    pub enabled: Option<bool>,
    /// Debug assignment: merchants (empty list = not set).
    pub debug_merchants: Option<Vec<String>>,
    /// Debug assignment: payer users (empty list = not set).
    pub debug_payers: Option<Vec<String>>,
}

/// PUT /_sandbox/channels/{payment_no}: an administrator enables or disables a channel or
/// changes a test channel's debug assignment (merchants and payer users). Affects the directory,
/// creation and checkout from then on; sessions already issued may still be paid.
pub async fn update_channel(
    State(shared): State<Arc<AppState>>,
    Path(payment_no): Path<String>,
    JsonBody(body): JsonBody<ChannelSetting>,
) -> ApiResult<Json<Value>> {
    let mut db = shared.db();
    let channel = db
        .directory
        .channels
        .get_mut(&payment_no)
        .ok_or_else(|| ApiError::not_found("unknown_channel").describe("no such channel"))?;
    if let Some(enabled) = body.enabled {
        channel.enabled = enabled;
    }
    if let Some(merchants) = body.debug_merchants {
        channel.debug_merchants = merchants;
    }
    if let Some(payers) = body.debug_payers {
        channel.debug_payers = payers;
    }
    Ok(Json(json!({
        "payment_no": channel.payment_no,
        "enabled": channel.enabled,
        "test_mode": channel.test_mode,
        "debug_merchants": channel.debug_merchants,
        "debug_payers": channel.debug_payers,
    })))
}

/// Body of PUT /_sandbox/merchants/{merchant_no}/anonymous-purchase.
#[derive(Debug, Deserialize)]
pub struct AnonymousPurchase {
    /// False: the merchant forbids anonymous purchase, so every channel requires buyer login.
    pub allowed: bool,
}

/// PUT /_sandbox/merchants/{merchant_no}/anonymous-purchase: the merchant setting that makes
/// every channel require buyer login (`login_required` in the directory, 403 `login_required`
/// on the checkout).
pub async fn anonymous_purchase(
    State(shared): State<Arc<AppState>>,
    Path(merchant_no): Path<String>,
    JsonBody(body): JsonBody<AnonymousPurchase>,
) -> ApiResult<Json<Value>> {
    let mut db = shared.db();
    let merchant = db
        .directory
        .merchants
        .get_mut(&merchant_no)
        .ok_or_else(|| ApiError::not_found("unknown_merchant").describe("no such merchant"))?;
    merchant.forbid_anonymous = !body.allowed;
    Ok(Json(json!({ "allowed": body.allowed })))
}

/// Body of PUT /_sandbox/merchants/{merchant_no}/funds.
#[derive(Debug, Deserialize)]
pub struct FundsSetting {
    /// Available wallet coin, eight-decimal fixed point.
    pub available: i64,
    /// Approved credit, eight-decimal fixed point.
    pub credit: i64,
}

/// PUT /_sandbox/merchants/{merchant_no}/funds: the merchant's available coin and approved
/// credit that fund the platform fee of merchant-own channels.
pub async fn set_funds(
    State(shared): State<Arc<AppState>>,
    Path(merchant_no): Path<String>,
    JsonBody(body): JsonBody<FundsSetting>,
) -> ApiResult<Json<Value>> {
    if body.available < 0 {
        return Err(ApiError::invalid_request("available must not be negative").field("available"));
    }
    if body.credit < 0 {
        return Err(ApiError::invalid_request("credit must not be negative").field("credit"));
    }
    let mut db = shared.db();
    if !db.directory.merchants.contains_key(&merchant_no) {
        return Err(ApiError::not_found("unknown_merchant").describe("no such merchant"));
    }
    let funds = db
        .payments
        .fees
        .set(&merchant_no, body.available, body.credit);
    Ok(Json(json!({
        "available": funds.available,
        "credit": funds.credit,
        "reserved": funds.reserved,
    })))
}

/// GET /_sandbox/merchants/{merchant_no}/funds: available coin, approved credit and reserved fees.
pub async fn get_funds(
    State(shared): State<Arc<AppState>>,
    Path(merchant_no): Path<String>,
) -> ApiResult<Json<Value>> {
    let db = shared.db();
    if !db.directory.merchants.contains_key(&merchant_no) {
        return Err(ApiError::not_found("unknown_merchant").describe("no such merchant"));
    }
    let funds = db.payments.fees.funds(&merchant_no);
    Ok(Json(json!({
        "available": funds.available,
        "credit": funds.credit,
        "reserved": funds.reserved,
    })))
}

/// GET /_sandbox/rates: the platform-coin rates used by new merchant payments.
pub async fn get_rates(State(shared): State<Arc<AppState>>) -> Json<Value> {
    Json(json!(shared.db().directory.rates))
}

/// Body of PUT /_sandbox/rates/{currency}.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateSetting {
    /// Eight-decimal coin per whole unit of the currency; `null` removes the rate.
    pub rate: Option<i64>,
}

/// PUT /_sandbox/rates/{currency}: sets (`{"rate": n}`, positive) or removes (`{"rate": null}`)
/// the platform-coin rate of an enabled currency. New merchant payments in a currency without a
/// rate are refused with 422 `currency_rate_unavailable`; existing payments keep the rate saved
/// at creation. The platform coin's own rate is fixed.
pub async fn set_rate(
    State(shared): State<Arc<AppState>>,
    Path(currency): Path<String>,
    JsonBody(body): JsonBody<RateSetting>,
) -> ApiResult<Json<Value>> {
    if currency == crate::seed::PLATFORM_COIN {
        return Err(
            ApiError::invalid_request("the platform coin's rate is fixed").field("currency"),
        );
    }
    if body.rate.is_some_and(|r| r <= 0) {
        return Err(ApiError::invalid_request("rate must be a positive integer").field("rate"));
    }
    let mut db = shared.db();
    if !db.directory.currencies.contains_key(&currency) {
        return Err(ApiError::not_found("unknown_currency").describe("no such enabled currency"));
    }
    match body.rate {
        Some(rate) => db.directory.rates.insert(currency.clone(), rate),
        None => db.directory.rates.remove(&currency),
    };
    Ok(Json(json!({ "currency": currency, "rate": body.rate })))
}
