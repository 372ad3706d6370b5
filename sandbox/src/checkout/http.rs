//! HTTP side of the hosted checkout: the page and its form posts (see [`super`]), and their
//! routes. The only checkout file that sees the application state.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, MutexGuard};

use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Router};

use super::{CHECKOUT_PATH, page, rules};
use crate::db::Db;
use crate::error::ApiError;
use crate::limits::Bucket;
use crate::merchant_payments::store::Status;
use crate::state::AppState;

/// Checkout routes (outside the API prefix).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/checkout/{token}", get(show))
        .route("/checkout/{token}/login", post(login))
        .route("/checkout/{token}/logout", post(logout))
        .route("/checkout/{token}/pay", post(pay))
        .route("/checkout/{token}/card/complete", post(card_complete))
        .route("/checkout/{token}/card/cancel", post(card_cancel))
        .route("/checkout/{token}/cancel", post(cancel))
}

/// An HTML answer; checkout pages are never cached and never leak their URL as a referrer.
fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

fn see_other(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(value) => {
            let mut response = StatusCode::SEE_OTHER.into_response();
            response.headers_mut().insert(header::LOCATION, value);
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(_) => html(
            StatusCode::OK,
            page::message_page("Return", "Payment complete."),
        ),
    }
}

fn error_page(error: &ApiError) -> Response {
    html(
        error.status,
        page::message_page("Checkout", &describe(error)),
    )
}

fn not_found() -> Response {
    html(
        StatusCode::NOT_FOUND,
        page::message_page("Checkout", "This checkout does not exist."),
    )
}

/// Why a checkout request stops before its handler's work: over the peer's rate limit, or an
/// unknown checkout token.
#[derive(Debug)]
enum Refusal {
    /// 429 `rate_limited` (JSON, like every limit).
    Limited(ApiError),
    /// The 404 checkout page.
    UnknownToken,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Limited(error) => error.into_response(),
            Refusal::UnknownToken => not_found(),
        }
    }
}

/// What a checkout handler answers.
type Answer = Result<Response, Refusal>;

/// Counts one request of the peer's IP in `bucket`.
fn check_peer(shared: &AppState, peer: SocketAddr, bucket: Bucket) -> Result<(), Refusal> {
    shared
        .check_limit(bucket, &peer.ip().to_string())
        .map_err(Refusal::Limited)
}

/// The database, locked, and the payment number behind a checkout token.
fn lock_checkout<'s>(
    shared: &'s AppState,
    token: &str,
) -> Result<(MutexGuard<'s, Db>, String), Refusal> {
    let db = shared.db();
    let order_no = db.payments.order_for_token(token);
    let order_no = order_no.ok_or(Refusal::UnknownToken)?;
    Ok((db, order_no))
}

/// Renders the page for a token, with an optional notice. A paid payment with a saved return
/// address moves the buyer there (303), with nothing appended.
fn render(shared: &AppState, token: &str, notice: Option<&str>, status: StatusCode) -> Response {
    let now = shared.clock.now();
    let (mut db, order_no) = match lock_checkout(shared, token) {
        Ok(found) => found,
        Err(refusal) => return refusal.into_response(),
    };
    let db = &mut *db;
    let payment = match rules::read(&mut db.payments, &mut db.notifications, &order_no, now) {
        Ok(p) => p.clone(),
        Err(e) => return error_page(&e),
    };
    if payment.status == Status::Paid
        && let Some(url) = &payment.return_url
    {
        return see_other(url);
    }
    let body = page::checkout_page(&db.directory, &payment, token, now, notice);
    html(status, body)
}

/// GET /checkout/{token}: the checkout page.
async fn show(
    State(shared): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(token): Path<String>,
) -> Answer {
    check_peer(&shared, peer, Bucket::CheckoutRead)?;
    Ok(render(&shared, &token, None, StatusCode::OK))
}

fn page_url(shared: &AppState, token: &str) -> String {
    format!("{}{CHECKOUT_PATH}/{token}", shared.origin)
}

/// POST /checkout/{token}/login: the buyer logs in as a seeded sandbox user (standing in for
/// the platform's real login).
async fn login(
    State(shared): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(token): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Answer {
    check_peer(&shared, peer, Bucket::CheckoutRead)?;
    let user = form.get("user").cloned().unwrap_or_default();
    {
        let (mut db, order_no) = lock_checkout(&shared, &token)?;
        if !db.directory.users.contains_key(&user) {
            drop(db);
            return Ok(render(
                &shared,
                &token,
                Some("No such sandbox user."),
                StatusCode::BAD_REQUEST,
            ));
        }
        if let Some(payment) = db.payments.payments.get_mut(&order_no) {
            payment.checkout_user = Some(user);
        }
    }
    Ok(see_other(&page_url(&shared, &token)))
}

/// POST /checkout/{token}/logout.
async fn logout(State(shared): State<Arc<AppState>>, Path(token): Path<String>) -> Answer {
    {
        let (mut db, order_no) = lock_checkout(&shared, &token)?;
        if let Some(payment) = db.payments.payments.get_mut(&order_no) {
            payment.checkout_user = None;
        }
    }
    Ok(see_other(&page_url(&shared, &token)))
}

/// POST /checkout/{token}/pay (form field `method`: the per-order method identifier): starts
/// or continues the channel payment. The platform coin is confirmed here, in the checkout,
/// from the logged-in buyer's wallet; a card payment opens the (simulated) card provider step.
async fn pay(
    State(shared): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(token): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Answer {
    check_peer(&shared, peer, Bucket::CheckoutStart)?;
    let now = shared.clock.now();
    let outcome = {
        let (mut db, order_no) = lock_checkout(&shared, &token)?;
        let user = db
            .payments
            .payments
            .get(&order_no)
            .and_then(|p| p.checkout_user.clone());
        let choice = match form.get("method").filter(|m| !m.is_empty()) {
            Some(id) => rules::MethodChoice::MethodId(id),
            None => rules::MethodChoice::Implicit,
        };
        let db = &mut *db;
        rules::start_session(
            &mut db.payments,
            &db.directory,
            &mut db.notifications,
            &order_no,
            choice,
            user.as_deref(),
            now,
        )
        .and_then(|started| {
            let platform_coin = db
                .directory
                .channels
                .get(&started.payment_no)
                .is_some_and(|c| c.provider == "platform-coin");
            if platform_coin {
                rules::confirm_payment(
                    &mut db.payments,
                    &mut db.directory,
                    &mut db.notifications,
                    &order_no,
                    true,
                    now,
                )
                .map(|()| true)
            } else {
                Ok(false)
            }
        })
    };
    Ok(match outcome {
        Ok(true) => after_payment(&shared, &token),
        Ok(false) => see_other(&page_url(&shared, &token)),
        Err(e) => render(&shared, &token, Some(&describe(&e)), e.status),
    })
}

/// POST /checkout/{token}/card/complete: the simulated card provider confirms the payment of
/// the open card session; the buyer returns to the checkout, which moves on when paid.
async fn card_complete(
    State(shared): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(token): Path<String>,
) -> Answer {
    check_peer(&shared, peer, Bucket::CheckoutStart)?;
    let now = shared.clock.now();
    let outcome = {
        let (mut db, order_no) = lock_checkout(&shared, &token)?;
        let is_card_session = db
            .payments
            .payments
            .get(&order_no)
            .and_then(|p| p.session.as_ref())
            .and_then(|s| db.directory.channels.get(&s.payment_no))
            .is_some_and(|c| c.provider == "card-provider");
        if is_card_session {
            let db = &mut *db;
            rules::confirm_payment(
                &mut db.payments,
                &mut db.directory,
                &mut db.notifications,
                &order_no,
                false,
                now,
            )
        } else {
            Err(ApiError::new(StatusCode::CONFLICT, "payment_conflict")
                .describe("no card payment is open"))
        }
    };
    Ok(match outcome {
        Ok(()) => after_payment(&shared, &token),
        Err(e) => render(&shared, &token, Some(&describe(&e)), e.status),
    })
}

/// POST /checkout/{token}/card/cancel: the buyer cancels at the card provider and returns to
/// the checkout. Nothing is decided: the session stays open and the method stays locked.
async fn card_cancel(State(shared): State<Arc<AppState>>, Path(token): Path<String>) -> Response {
    render(
        &shared,
        &token,
        Some("Card payment cancelled at the provider. The payment is still open."),
        StatusCode::OK,
    )
}

/// POST /checkout/{token}/cancel: browser-side cancellation. It does not make the payment
/// terminal and never triggers the return to the merchant.
async fn cancel(State(shared): State<Arc<AppState>>, Path(token): Path<String>) -> Response {
    render(
        &shared,
        &token,
        Some("You left the checkout. The payment stays open until it expires."),
        StatusCode::OK,
    )
}

/// After a confirmed payment: 303 to the saved return address, exactly as saved (nothing
/// appended); without one, back to the checkout page, which shows the payment as paid.
fn after_payment(shared: &AppState, token: &str) -> Response {
    let return_url = {
        let db = shared.db();
        db.payments
            .order_for_token(token)
            .and_then(|order_no| db.payments.payments.get(&order_no))
            .filter(|p| p.status == Status::Paid)
            .and_then(|p| p.return_url.clone())
    };
    match return_url {
        Some(url) => see_other(&url),
        None => see_other(&page_url(shared, token)),
    }
}

fn describe(error: &ApiError) -> String {
    error
        .error_description
        .clone()
        .unwrap_or_else(|| error.error.clone())
}
