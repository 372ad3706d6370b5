//! Fault matrix (issue 10): every operation of the SDK × every fault class, one table, one loop.
//!
//! Each cell starts its own in-process sandbox, prepares what the operation needs (a user token,
//! an order, a merchant payment with a notification record), injects one fault on the
//! operation's route, calls the SDK once and records three things:
//!
//! - the typed outcome (`Ok`, `RetriedThenOk`, `Api(429)`, `OutcomeUnknown`, ...);
//! - how many requests the sandbox received on the operation's route (the request log), which
//!   proves the re-send rules: reads, token requests and merchant-payment create are retried,
//!   catalog order creation and payment start never are;
//! - for the writes, what the sandbox holds afterwards: catalog orders, wallet debits, merchant
//!   payments for the reference, notification events (no duplicate, no lost create).
//!
//! The expectations are written as data in [`MATRIX`], derived from the contract and the SDK's
//! documented rules (src/operation.rs, src/transport.rs). The observed table is rendered as
//! Markdown and compared with the checked-in `docs/fault-matrix.md`, so the docs always show what
//! was run; `STOREFRONT_BLESS=1` regenerates that file.

mod common;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Harness, s};
use serde_json::{Value, json};
use storefront::{
    CreateMerchantPayment, CreateOrderRequest, Error, ListMerchantPaymentsQuery, MinorAmount,
    Operation, ProductQuery, Resend, TransportKind, UserSession,
};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

// ---------------------------------------------------------------------------------------------
// Faults (the columns)
// ---------------------------------------------------------------------------------------------

/// The attempt timeout of the latency column (every other column keeps the default).
/// 1 s rather than 300 ms: the re-sent attempt must finish within it while a dozen sandboxes run
/// at once on a loaded 2-core machine (300 ms gave a third attempt now and then).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(1);
/// The injected latency of the latency column: well past [`ATTEMPT_TIMEOUT`].
const LATENCY_MS: u64 = 3000;
/// `times` of a fault that must hit every attempt (far more than the retry policy allows).
const EVERY_ATTEMPT: u64 = 100;
/// The Harness's retry policy (tests/common/mod.rs): attempts of a retried request.
const MAX_ATTEMPTS: usize = 4;

/// One fault class, injected on the operation's own method and path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// The handler runs, its answer comes 3 s later; the attempt timeout is 1 s.
    Latency,
    /// The connection is closed before the handler runs (nothing processed).
    DropBefore,
    /// The handler runs (effects stored), then the connection is closed without an answer.
    DropAfter,
    /// The handler runs, then its 2xx answer is replaced by truncated JSON.
    Malformed,
    /// The handler runs, then its 2xx answer is replaced by `{}`.
    Empty,
    /// The handler runs, then its 2xx answer is replaced by valid JSON over the size cap.
    Oversized,
    /// 401 `invalid_token` instead of the handler, once.
    Unauthorized,
    /// 429 `rate_limited` with `Retry-After: 1` instead of the handler, once.
    RateLimitedRetryAfter,
    /// 429 `rate_limited` without `Retry-After` on every attempt.
    RateLimited,
    /// The handler runs, then its answer is replaced by 500 `server_error`, on every attempt.
    ServerError,
    /// 503 (`rate_limit_unavailable`, or `notification_unavailable` on merchant-payment create
    /// and re-queue) instead of the handler, once.
    Unavailable,
    /// The handler runs, then its answer is replaced by 202 `provider_result_pending`.
    Pending,
}

const FAULT_COUNT: usize = 12;

const FAULTS: [Fault; FAULT_COUNT] = [
    Fault::Latency,
    Fault::DropBefore,
    Fault::DropAfter,
    Fault::Malformed,
    Fault::Empty,
    Fault::Oversized,
    Fault::Unauthorized,
    Fault::RateLimitedRetryAfter,
    Fault::RateLimited,
    Fault::ServerError,
    Fault::Unavailable,
    Fault::Pending,
];

impl Fault {
    /// Column header.
    fn label(self) -> &'static str {
        match self {
            Fault::Latency => "latency > timeout",
            Fault::DropBefore => "drop before",
            Fault::DropAfter => "drop after",
            Fault::Malformed => "2xx malformed",
            Fault::Empty => "2xx `{}`",
            Fault::Oversized => "2xx oversized",
            Fault::Unauthorized => "401",
            Fault::RateLimitedRetryAfter => "429 + Retry-After",
            Fault::RateLimited => "429",
            Fault::ServerError => "500",
            Fault::Unavailable => "503",
            Fault::Pending => "202 pending",
        }
    }

    /// Whether the sandbox's real handler runs before the fault (`after_handler`).
    fn processed(self) -> bool {
        matches!(
            self,
            Fault::Latency
                | Fault::DropAfter
                | Fault::Malformed
                | Fault::Empty
                | Fault::Oversized
                | Fault::ServerError
                | Fault::Pending
        )
    }

    /// How many matching requests the fault hits.
    fn times(self) -> u64 {
        match self {
            Fault::RateLimited | Fault::ServerError => EVERY_ATTEMPT,
            _ => 1,
        }
    }

    /// The fault's fields besides `method`, `path`, `after_handler` and `times`.
    fn spec(self, op: Operation, max_response_bytes: usize) -> Value {
        let ok = success_status(op);
        match self {
            Fault::Latency => json!({ "latency_ms": LATENCY_MS }),
            Fault::DropBefore | Fault::DropAfter => json!({ "drop_connection": true }),
            Fault::Malformed => json!({ "status": ok, "malformed_body": true }),
            Fault::Empty => json!({ "status": ok, "body": {} }),
            Fault::Oversized => {
                json!({ "status": ok, "oversized_body": max_response_bytes + 1024 })
            }
            Fault::Unauthorized => json!({ "status": 401, "body": { "error": "invalid_token" } }),
            Fault::RateLimitedRetryAfter => json!({
                "status": 429, "headers": { "Retry-After": "1" }, "body": { "error": "rate_limited" }
            }),
            Fault::RateLimited => json!({ "status": 429, "body": { "error": "rate_limited" } }),
            Fault::ServerError => json!({ "status": 500, "body": { "error": "server_error" } }),
            Fault::Unavailable => {
                json!({ "status": 503, "body": { "error": unavailable_code(op) } })
            }
            Fault::Pending => {
                json!({ "status": 202, "body": { "error": "provider_result_pending" } })
            }
        }
    }

    /// What the legend says about the fault.
    fn describe(self) -> &'static str {
        match self {
            Fault::Latency => {
                "`after_handler`, `latency_ms` 3000: processed, the answer comes 3 s later; the \
                 client's attempt timeout is 1 s in this column"
            }
            Fault::DropBefore => {
                "`drop_connection`: the connection is closed before the handler runs (nothing \
                 processed)"
            }
            Fault::DropAfter => {
                "`after_handler`, `drop_connection`: processed, then the connection is closed \
                 without an answer"
            }
            Fault::Malformed => {
                "`after_handler`, the operation's 2xx status, `malformed_body`: processed, the \
                 answer is truncated JSON"
            }
            Fault::Empty => {
                "`after_handler`, the operation's 2xx status, body `{}`: processed, the answer is \
                 an empty object"
            }
            Fault::Oversized => {
                "`after_handler`, the operation's 2xx status, `oversized_body` of the SDK's size \
                 cap (`max_response_bytes`, 4 MiB) + 1 KiB: processed, the answer is too large"
            }
            Fault::Unauthorized => "401 `invalid_token` instead of the handler",
            Fault::RateLimitedRetryAfter => {
                "429 `rate_limited` with `Retry-After: 1` instead of the handler"
            }
            Fault::RateLimited => "429 `rate_limited` without `Retry-After` instead of the handler",
            Fault::ServerError => "`after_handler`, 500 `server_error`: processed, then a 500",
            Fault::Unavailable => {
                "503 `notification_unavailable` (merchant-payment create, re-queue) or \
                 `rate_limit_unavailable` (every other route) instead of the handler"
            }
            Fault::Pending => {
                "`after_handler`, 202 `provider_result_pending`: processed, then the channel \
                 result is unclear"
            }
        }
    }
}

/// The status of the operation's success answer (kept by the 2xx body faults).
fn success_status(op: Operation) -> u16 {
    match op {
        Operation::CreateOrder | Operation::CreateMerchantPayment => 201,
        Operation::RetryNotification => 202,
        _ => 200,
    }
}

/// The 503 code the contract gives for the route.
fn unavailable_code(op: Operation) -> &'static str {
    match op {
        Operation::CreateMerchantPayment | Operation::RetryNotification => {
            "notification_unavailable"
        }
        _ => "rate_limit_unavailable",
    }
}

// ---------------------------------------------------------------------------------------------
// Expectations (the table)
// ---------------------------------------------------------------------------------------------

/// The typed outcome of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallOutcome {
    /// Success on the first request.
    Ok,
    /// Success after the SDK re-sent the request.
    RetriedThenOk,
    /// `Error::Api` with this HTTP status.
    Api(u16),
    /// `Error::OutcomeUnknown` for the operation itself.
    OutcomeUnknown,
    /// `Error::Transport { kind: BodyTooLarge }`.
    BodyTooLarge,
    /// `Error::Decode`.
    Decode,
    /// `Error::ProviderResultPending`.
    Pending,
}

impl CallOutcome {
    fn label(self) -> String {
        match self {
            CallOutcome::Ok => "Ok".into(),
            CallOutcome::RetriedThenOk => "RetriedThenOk".into(),
            CallOutcome::Api(status) => format!("Api({status})"),
            CallOutcome::OutcomeUnknown => "OutcomeUnknown".into(),
            CallOutcome::BodyTooLarge => "Transport(BodyTooLarge)".into(),
            CallOutcome::Decode => "Decode".into(),
            CallOutcome::Pending => "ProviderResultPending".into(),
        }
    }
}

/// What a cell must show: the outcome, the requests the sandbox received on the route, and for a
/// write what the sandbox holds afterwards (orders, debits, payments, events).
#[derive(Clone, Copy, Debug)]
struct Expect {
    outcome: CallOutcome,
    requests: usize,
    stored: Option<usize>,
}

impl Expect {
    const fn with_stored(self, stored: usize) -> Expect {
        Expect {
            stored: Some(stored),
            ..self
        }
    }
}

const fn cell(outcome: CallOutcome, requests: usize) -> Expect {
    Expect {
        outcome,
        requests,
        stored: None,
    }
}

/// Success on the first request.
const OK: Expect = cell(CallOutcome::Ok, 1);
/// Failed once, re-sent once, success.
const RETRIED: Expect = cell(CallOutcome::RetriedThenOk, 2);
/// A 2xx whose body cannot be decoded: not re-sent (the same request brings the same answer).
const DECODE: Expect = cell(CallOutcome::Decode, 1);
/// A 2xx over the size cap: not re-sent.
const TOO_LARGE: Expect = cell(CallOutcome::BodyTooLarge, 1);
/// 202 `provider_result_pending`: returned at once, never re-sent.
const PENDING: Expect = cell(CallOutcome::Pending, 1);
/// A never-re-sent write that may have been processed.
const UNKNOWN: Expect = cell(CallOutcome::OutcomeUnknown, 1);
/// 401 with a token that cannot be renewed (a fixed user token, or the token request itself).
const UNAUTHORIZED: Expect = cell(CallOutcome::Api(401), 1);
/// 429 on every attempt: re-sent with backoff until the attempts run out.
const RATE_LIMITED: Expect = cell(CallOutcome::Api(429), MAX_ATTEMPTS);
/// 500 on every attempt: re-sent with backoff until the attempts run out.
const SERVER_ERROR: Expect = cell(CallOutcome::Api(500), MAX_ATTEMPTS);

/// Columns: latency, drop before, drop after, 2xx malformed, 2xx `{}`, 2xx oversized, 401,
/// 429 + Retry-After, 429, 500, 503, 202 (the order of [`FAULTS`]).
///
/// Rules (contract, then src/operation.rs and src/transport.rs):
/// - reads, the token request and merchant-payment create (same idempotency key) are re-sent on
///   timeouts, lost connections, 429 (after `Retry-After`) and 5xx; a 401 `invalid_token` renews
///   a client-credentials token and re-sends once; a fixed user token cannot be renewed;
/// - catalog order create and payment start are never re-sent: every answer but a definite
///   400/403/404/409/410/422 is `OutcomeUnknown` ("a timeout does not prove failure"), and the
///   processed ones really exist (one order, one debit);
/// - a 2xx that cannot be decoded is `Decode` (`OutcomeUnknown` for the never-re-sent writes),
///   an oversized one `Transport(BodyTooLarge)`, neither re-sent;
/// - 202 `provider_result_pending` is not success: `ProviderResultPending`, never re-sent.
const MATRIX: &[(Operation, [Expect; FAULT_COUNT])] = &[
    (
        Operation::Token,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            UNAUTHORIZED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::MerchantProfile,
        [
            // `{}`: every profile field is an optional string in the SDK's model.
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            OK,
            TOO_LARGE,
            RETRIED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::ListProducts,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            RETRIED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::UserInfo,
        [
            // `{}`: userinfo's fields are "not shown", the SDK returns the JSON object as is.
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            OK,
            TOO_LARGE,
            UNAUTHORIZED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::CreateOrder,
        [
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(0),
            PENDING.with_stored(1),
        ],
    ),
    (
        Operation::GetOrder,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            UNAUTHORIZED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::StartPayment,
        [
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(0),
            UNKNOWN.with_stored(1),
            UNKNOWN.with_stored(0),
            PENDING.with_stored(1),
        ],
    ),
    (
        Operation::PaymentStatus,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            UNAUTHORIZED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::ListChannels,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            RETRIED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::CreateMerchantPayment,
        [
            RETRIED.with_stored(1),
            RETRIED.with_stored(1),
            RETRIED.with_stored(1),
            DECODE.with_stored(1),
            DECODE.with_stored(1),
            TOO_LARGE.with_stored(1),
            RETRIED.with_stored(1),
            RETRIED.with_stored(1),
            RATE_LIMITED.with_stored(0),
            SERVER_ERROR.with_stored(1),
            RETRIED.with_stored(1),
            PENDING.with_stored(1),
        ],
    ),
    (
        Operation::GetMerchantPayment,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            RETRIED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::ListMerchantPayments,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            RETRIED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::ListNotifications,
        [
            RETRIED,
            RETRIED,
            RETRIED,
            DECODE,
            DECODE,
            TOO_LARGE,
            RETRIED,
            RETRIED,
            RATE_LIMITED,
            SERVER_ERROR,
            RETRIED,
            PENDING,
        ],
    ),
    (
        Operation::RetryNotification,
        [
            // Re-queue "creates no new event": the payment keeps its one event in every cell.
            RETRIED.with_stored(1),
            RETRIED.with_stored(1),
            RETRIED.with_stored(1),
            DECODE.with_stored(1),
            DECODE.with_stored(1),
            TOO_LARGE.with_stored(1),
            RETRIED.with_stored(1),
            RETRIED.with_stored(1),
            RATE_LIMITED.with_stored(1),
            SERVER_ERROR.with_stored(1),
            RETRIED.with_stored(1),
            PENDING.with_stored(1),
        ],
    ),
];

/// The matrix's row of every [`Operation`]: a new operation does not compile until it has one.
fn row_of(op: Operation) -> usize {
    match op {
        Operation::Token => 0,
        Operation::MerchantProfile => 1,
        Operation::ListProducts => 2,
        Operation::UserInfo => 3,
        Operation::CreateOrder => 4,
        Operation::GetOrder => 5,
        Operation::StartPayment => 6,
        Operation::PaymentStatus => 7,
        Operation::ListChannels => 8,
        Operation::CreateMerchantPayment => 9,
        Operation::GetMerchantPayment => 10,
        Operation::ListMerchantPayments => 11,
        Operation::ListNotifications => 12,
        Operation::RetryNotification => 13,
    }
}

/// The SDK call a row makes.
fn call_name(op: Operation) -> &'static str {
    match op {
        Operation::Token => "Client::authenticate",
        Operation::MerchantProfile => "Client::merchant_profile",
        Operation::ListProducts => "Client::list_products",
        Operation::UserInfo => "UserSession::userinfo",
        Operation::CreateOrder => "UserSession::create_order",
        Operation::GetOrder => "UserSession::get_order",
        Operation::StartPayment => "UserSession::start_payment (platform coin)",
        Operation::PaymentStatus => "UserSession::payment_status",
        Operation::ListChannels => "Client::list_channels",
        Operation::CreateMerchantPayment => "Client::create_merchant_payment",
        Operation::GetMerchantPayment => "Client::get_merchant_payment",
        Operation::ListMerchantPayments => "Client::list_merchant_payments",
        Operation::ListNotifications => "Client::list_notification_records",
        Operation::RetryNotification => "Client::retry_notification",
    }
}

/// What the stored count of a write row counts.
fn stored_noun(op: Operation) -> &'static str {
    match op {
        Operation::CreateOrder => "order",
        Operation::StartPayment => "debit",
        Operation::CreateMerchantPayment => "payment",
        Operation::RetryNotification => "event",
        _ => "",
    }
}

// ---------------------------------------------------------------------------------------------
// Running one cell
// ---------------------------------------------------------------------------------------------

/// What one cell showed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Observed {
    outcome: String,
    requests: usize,
    stored: Option<usize>,
    /// Requests answered, delayed or dropped by the fault.
    fault_hits: u64,
    /// Changes in the sandbox the operation must not make.
    side_effects: Option<String>,
    /// The error, for failure messages.
    detail: String,
    /// Wall time of the cell (setup, call, checks); printed, not in the table.
    elapsed: Duration,
}

/// What the operation needs before the fault: a user session, an order, a merchant payment.
struct Prepared {
    user: Option<UserSession>,
    order_no: String,
    merchant_order_no: String,
    event_id: String,
    reference: String,
    wallet_before: i64,
}

const REFERENCE: &str = "fault-matrix-1";

fn wallet(h: &Harness, user: &str) -> i64 {
    h.sandbox.inspect().wallet(user).unwrap()
}

fn orders_of(h: &Harness, user: &str) -> usize {
    h.sandbox
        .inspect()
        .catalog_orders()
        .iter()
        .filter(|o| o.user_id == user)
        .count()
}

fn payments_for(h: &Harness, reference: &str) -> usize {
    h.sandbox
        .inspect()
        .payments()
        .iter()
        .filter(|p| p.external_reference == reference)
        .count()
}

fn events_of(h: &Harness, order_no: &str) -> usize {
    h.sandbox.inspect().deliveries(order_no).len()
}

/// Everything a call could change in the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ledger {
    /// Catalog orders of the user.
    orders: usize,
    /// The user's platform-coin wallet.
    wallet: i64,
    /// Merchant payments of every merchant.
    payments: usize,
    /// Notification events of every payment.
    events: usize,
}

fn ledger(h: &Harness) -> Ledger {
    let view = h.sandbox.inspect();
    Ledger {
        orders: view
            .catalog_orders()
            .iter()
            .filter(|o| o.user_id == s::USER_ALICE)
            .count(),
        wallet: view.wallet(s::USER_ALICE).unwrap(),
        payments: view.payments().len(),
        events: view.notification_event_count(),
    }
}

/// What changed between two ledgers besides what the operation itself may change (its row's
/// stored count); `None` when nothing else changed. Reads and the token request change nothing.
fn side_effects(op: Operation, before: Ledger, after: Ledger) -> Option<String> {
    let mut changed = Vec::new();
    if before.orders != after.orders && op != Operation::CreateOrder {
        changed.push(format!("orders {} -> {}", before.orders, after.orders));
    }
    if before.wallet != after.wallet && op != Operation::StartPayment {
        changed.push(format!("wallet {} -> {}", before.wallet, after.wallet));
    }
    let creates_payment = op == Operation::CreateMerchantPayment;
    if before.payments != after.payments && !creates_payment {
        changed.push(format!(
            "payments {} -> {}",
            before.payments, after.payments
        ));
    }
    if before.events != after.events && !creates_payment {
        changed.push(format!("events {} -> {}", before.events, after.events));
    }
    (!changed.is_empty()).then(|| changed.join(", "))
}

fn beans() -> CreateOrderRequest {
    CreateOrderRequest::new(s::PRODUCT_BEANS, 1, s::CHANNEL_PLATFORM_COIN)
}

fn merchant_payment(reference: &str) -> CreateMerchantPayment {
    CreateMerchantPayment::new(
        reference,
        MinorAmount::parse_decimal("7.25", 2).unwrap(),
        "USD",
    )
}

async fn prepare(h: &Harness, op: Operation) -> Prepared {
    let mut p = Prepared {
        user: None,
        order_no: String::new(),
        merchant_order_no: String::new(),
        event_id: String::new(),
        reference: REFERENCE.to_owned(),
        wallet_before: 0,
    };
    if op != Operation::Token {
        h.client.authenticate().await.expect("setup: token");
    }
    if op.token_subject() == storefront::TokenSubject::User {
        let user = h.client.user(h.user_token(s::USER_ALICE).await);
        if matches!(
            op,
            Operation::GetOrder | Operation::StartPayment | Operation::PaymentStatus
        ) {
            p.order_no = user
                .create_order(&beans())
                .await
                .expect("setup: order")
                .order_no;
        }
        p.user = Some(user);
    }
    if matches!(
        op,
        Operation::GetMerchantPayment
            | Operation::ListMerchantPayments
            | Operation::ListNotifications
            | Operation::RetryNotification
    ) {
        // A payment with a per-payment notification target (never delivered: the worker is
        // stopped), so that it has a delivery record and an event id.
        h.control(
            "PUT",
            "/notifications/worker",
            Some(json!({ "enabled": false })),
        )
        .await;
        let created = h
            .client
            .create_merchant_payment(
                &merchant_payment("fault-matrix-setup")
                    .with_notification("http://127.0.0.1:9/fault-matrix-hook", "n".repeat(40)),
            )
            .await
            .expect("setup: merchant payment");
        p.merchant_order_no = created.payment.order_no;
        p.reference = "fault-matrix-setup".into();
        if op == Operation::RetryNotification {
            let records = h
                .client
                .list_notification_records(&p.merchant_order_no, None)
                .await
                .expect("setup: records");
            p.event_id = records.first().expect("setup: a record").event_id.clone();
        }
    }
    p.wallet_before = wallet(h, s::USER_ALICE);
    // Only the cell's own call counts.
    h.control("DELETE", "/requests", None).await;
    p
}

/// The operation's route as the sandbox sees it (method, exact path).
fn route(op: Operation, p: &Prepared) -> (&'static str, String) {
    let api = |rest: String| format!("{}/openapi/v1{rest}", s::API_PREFIX);
    let path = match op {
        Operation::Token => s::TOKEN_PATH.to_owned(),
        Operation::UserInfo => s::USERINFO_PATH.to_owned(),
        Operation::MerchantProfile => api("/merchant".into()),
        Operation::ListProducts => api("/products".into()),
        Operation::CreateOrder => api("/orders".into()),
        Operation::GetOrder => api(format!("/orders/{}", p.order_no)),
        Operation::StartPayment | Operation::PaymentStatus => {
            api(format!("/orders/{}/payment", p.order_no))
        }
        Operation::ListChannels => api("/merchant-payment-channels".into()),
        Operation::CreateMerchantPayment | Operation::ListMerchantPayments => {
            api("/merchant-payments".into())
        }
        Operation::GetMerchantPayment => api(format!("/merchant-payments/{}", p.merchant_order_no)),
        Operation::ListNotifications => api(format!(
            "/merchant-payments/{}/notifications",
            p.merchant_order_no
        )),
        Operation::RetryNotification => api(format!(
            "/merchant-payments/{}/notifications/{}/retry",
            p.merchant_order_no, p.event_id
        )),
    };
    (op.method(), path)
}

/// Calls the operation once through the SDK's public API.
async fn call(h: &Harness, op: Operation, p: &Prepared) -> Result<(), Error> {
    let user = || p.user.as_ref().expect("user session");
    match op {
        Operation::Token => h.client.authenticate().await.map(drop),
        Operation::MerchantProfile => h.client.merchant_profile().await.map(drop),
        Operation::ListProducts => h
            .client
            .list_products(&ProductQuery::default())
            .await
            .map(drop),
        Operation::UserInfo => user().userinfo().await.map(drop),
        Operation::CreateOrder => user().create_order(&beans()).await.map(drop),
        Operation::GetOrder => user().get_order(&p.order_no).await.map(drop),
        Operation::StartPayment => user()
            .start_payment(&p.order_no, s::CHANNEL_PLATFORM_COIN)
            .await
            .map(drop),
        Operation::PaymentStatus => user().payment_status(&p.order_no).await.map(drop),
        Operation::ListChannels => h.client.list_channels().await.map(drop),
        Operation::CreateMerchantPayment => h
            .client
            .create_merchant_payment(&merchant_payment(REFERENCE))
            .await
            .map(drop),
        Operation::GetMerchantPayment => h
            .client
            .get_merchant_payment(&p.merchant_order_no)
            .await
            .map(drop),
        Operation::ListMerchantPayments => h
            .client
            .list_merchant_payments(&ListMerchantPaymentsQuery::by_external_reference(
                &p.reference,
            ))
            .await
            .map(drop),
        Operation::ListNotifications => h
            .client
            .list_notification_records(&p.merchant_order_no, None)
            .await
            .map(drop),
        Operation::RetryNotification => h
            .client
            .retry_notification(&p.merchant_order_no, &p.event_id)
            .await
            .map(drop),
    }
}

/// The outcome in the table's vocabulary.
fn classify(op: Operation, result: &Result<(), Error>, requests: usize) -> String {
    match result {
        Ok(()) if requests <= 1 => CallOutcome::Ok.label(),
        Ok(()) => CallOutcome::RetriedThenOk.label(),
        Err(Error::Api(api)) => CallOutcome::Api(api.status).label(),
        Err(Error::OutcomeUnknown { operation, .. }) if *operation == op => {
            CallOutcome::OutcomeUnknown.label()
        }
        Err(Error::OutcomeUnknown { operation, .. }) => format!("OutcomeUnknown({operation})"),
        Err(Error::Transport {
            kind: TransportKind::BodyTooLarge,
            ..
        }) => CallOutcome::BodyTooLarge.label(),
        Err(Error::Transport { kind, .. }) => format!("Transport({kind:?})"),
        Err(Error::Decode { .. }) => CallOutcome::Decode.label(),
        Err(Error::ProviderResultPending { .. }) => CallOutcome::Pending.label(),
        Err(other) => format!("{:?}", other.kind()),
    }
}

/// What the sandbox holds for a write row afterwards.
async fn stored(h: &Harness, op: Operation, p: &Prepared) -> Option<usize> {
    match op {
        Operation::CreateOrder => Some(orders_of(h, s::USER_ALICE)),
        Operation::CreateMerchantPayment => Some(payments_for(h, REFERENCE)),
        Operation::RetryNotification => Some(events_of(h, &p.merchant_order_no)),
        Operation::StartPayment => {
            let debited = p.wallet_before - wallet(h, s::USER_ALICE);
            if debited == 0 {
                return Some(0);
            }
            // What one payment of the order costs, read through the SDK.
            let order = p
                .user
                .as_ref()
                .expect("user session")
                .get_order(&p.order_no)
                .await
                .expect("order read after the cell");
            let price = order.payment_pay_amount.raw();
            assert!(
                price > 0 && debited % price == 0,
                "wallet debited {debited}, not a multiple of the payment amount {price}"
            );
            Some((debited / price) as usize)
        }
        _ => None,
    }
}

/// Runs one cell in its own sandbox.
async fn run_cell(op: Operation, fault: Fault) -> Observed {
    let started = Instant::now();
    let h = Harness::start_with(|c| {
        if fault == Fault::Latency {
            c.with_attempt_timeout(ATTEMPT_TIMEOUT)
        } else {
            c
        }
    })
    .await;
    let cap = h.client.config().max_response_bytes;
    let p = prepare(&h, op).await;
    let (method, path) = route(op, &p);
    let mut spec = fault.spec(op, cap);
    let fields = spec.as_object_mut().expect("object");
    fields.insert("method".into(), method.into());
    fields.insert("path".into(), path.clone().into());
    fields.insert("after_handler".into(), fault.processed().into());
    fields.insert("times".into(), fault.times().into());
    h.fault(spec).await;

    let before = ledger(&h);
    let result = call(&h, op, &p).await;
    let after = ledger(&h);

    let requests = h.requests_to(method, &path).await.len();
    let left: u64 = match h.control("GET", "/faults", None).await {
        Value::Array(faults) => faults.iter().filter_map(|f| f["times"].as_u64()).sum(),
        _ => 0,
    };
    let stored = stored(&h, op, &p).await;
    Observed {
        outcome: classify(op, &result, requests),
        requests,
        stored,
        fault_hits: fault.times() - left,
        side_effects: side_effects(op, before, after),
        detail: match &result {
            Ok(()) => "ok".into(),
            Err(e) => format!("{e:?}"),
        },
        elapsed: started.elapsed(),
    }
}

// ---------------------------------------------------------------------------------------------
// The table as Markdown
// ---------------------------------------------------------------------------------------------

fn render_cell(op: Operation, outcome: &str, requests: usize, stored: Option<usize>) -> String {
    let mut text = format!("{outcome}<br>{requests} req");
    if let Some(n) = stored {
        let noun = stored_noun(op);
        let _ = write!(text, " · {n} {noun}{}", if n == 1 { "" } else { "s" });
    }
    text
}

struct Summary {
    cells: usize,
    faults_injected: usize,
    fault_hits: u64,
    duplicates: usize,
    panics: usize,
    mismatches: usize,
}

fn render(results: &[Vec<Option<Observed>>], summary: &Summary) -> String {
    let mut md = String::new();
    md.push_str(
        "# Fault matrix\n\n\
         <!-- Generated by tests/fault_matrix.rs; do not edit. Regenerate with\n     \
         STOREFRONT_BLESS=1 cargo test --all-features -p storefront --test fault_matrix -->\n\n\
         Every SDK operation that makes a request, against every fault class the sandbox can\n\
         inject on that operation's route (`POST /_sandbox/faults`). Each cell runs in its own\n\
         sandbox over real HTTP: it prepares what the operation needs, injects the fault, calls\n\
         the SDK once, then reads the typed outcome, the number of requests the sandbox received\n\
         on the route (its request log) and, for writes, what the sandbox holds afterwards. The\n\
         test compares every cell with the expectation written as data in the test and this file\n\
         with the table it observed, so this page shows what was run.\n\n",
    );
    let _ = writeln!(
        md,
        "**{} operations × {} faults = {} cells; faults injected: {} ({} requests answered, \
         delayed or dropped by a fault); duplicates: {}; panics: {}; cells differing from the \
         contract's expectation: {}.**\n",
        MATRIX.len(),
        FAULT_COUNT,
        summary.cells,
        summary.faults_injected,
        summary.fault_hits,
        summary.duplicates,
        summary.panics,
        summary.mismatches,
    );
    md.push_str(
        "## Reading a cell\n\n\
         - The outcome: `Ok` (first request), `RetriedThenOk` (the SDK re-sent the request and\n  \
         it succeeded), `Api(status)` (`Error::Api`), `OutcomeUnknown` (`Error::OutcomeUnknown`:\n  \
         the write may have been processed and was not re-sent), `Transport(BodyTooLarge)`,\n  \
         `Decode`, `ProviderResultPending` (HTTP 202 `provider_result_pending`, not success).\n\
         - `n req`: requests the sandbox received on the operation's method and path.\n\
         - For writes, what the sandbox holds afterwards: catalog orders of the user\n  \
         (`order`), wallet debits of the platform-coin payment (`debit`), merchant payments for\n  \
         the request's `external_reference` (`payment`), notification events of the payment\n  \
         after a re-queue (`event`). A processed create exists exactly once; an unprocessed one\n  \
         does not exist.\n\
         - Every cell also checks that nothing else changed: the user's orders and wallet, the\n  \
         merchant payments and the notification events stay as they were, except what the\n  \
         row's own write may create (reads and the token request change nothing).\n\n",
    );
    md.push_str(
        "## Faults\n\n| Fault | Injected on the operation's route | `times` |\n|---|---|---|\n",
    );
    for fault in FAULTS {
        let times = if fault.times() == 1 {
            "1 (the first attempt; a re-send gets the real answer)".to_owned()
        } else {
            format!("{} (every attempt: proves the final error)", fault.times())
        };
        let _ = writeln!(md, "| {} | {} | {times} |", fault.label(), fault.describe());
    }
    let _ = write!(
        md,
        "\nClient: the sandbox's merchant client with the test retry policy (4 attempts, 20 ms\n\
         base backoff, 200 ms cap, `Retry-After` honoured up to 5 s), attempt timeout {} s\n\
         (the default) except 1 s in the latency column. Catalog calls use a user token of `alice` given as\n\
         a fixed value (it cannot be renewed, so a 401 ends the call); the other calls use the\n\
         client-credentials token, which a 401 `invalid_token` renews once. Profile and products\n\
         are called with the client token.\n\n",
        storefront::DEFAULT_ATTEMPT_TIMEOUT.as_secs()
    );
    md.push_str("## Matrix\n\n| Operation |");
    for fault in FAULTS {
        let _ = write!(md, " {} |", fault.label());
    }
    md.push_str("\n|---|");
    for _ in FAULTS {
        md.push_str("---|");
    }
    md.push('\n');
    for (row, (op, _)) in MATRIX.iter().enumerate() {
        let _ = write!(md, "| `{op}`<br>{} |", call_name(*op));
        for observed in &results[row] {
            match observed {
                Some(o) => {
                    let _ = write!(
                        md,
                        " {} |",
                        render_cell(*op, &o.outcome, o.requests, o.stored)
                    );
                }
                None => md.push_str(" panic |"),
            }
        }
        md.push('\n');
    }
    md.push_str(
        "\n## Why these outcomes\n\n\
         - Reads, the token request and merchant-payment create are re-sent on a timeout, a\n  \
         lost connection, 429 (after `Retry-After`) and 5xx; merchant-payment create re-sends\n  \
         byte-identical parameters with the same idempotency key (\"On a timeout, retry with\n  \
         the original key and parameters\"), so a create processed before its answer was lost\n  \
         still exists once. A 401 `invalid_token` renews the client-credentials token and\n  \
         re-sends once.\n\
         - Catalog order create and payment start are never re-sent (\"repeated POSTs may create\n  \
         different orders, and a timeout does not prove failure\"; payment start \"may debit the\n  \
         wallet during the request\"): every answer except a definite 400, 403, 404, 409, 410\n  \
         or 422 is `OutcomeUnknown`, also a 401 or 429 (catalog rate limits are \"not shown\", so\n  \
         a 429 does not prove the order was not processed) and an unusable 2xx (the order\n  \
         exists). One request each, and the processed ones are stored exactly once.\n\
         - A 2xx that cannot be decoded is `Decode`, one over the size cap\n  \
         `Transport(BodyTooLarge)`; neither is re-sent (the same request brings the same answer).\n  \
         `{}` decodes for the merchant profile (every field is an optional string) and userinfo\n  \
         (fields \"not shown\": returned as a JSON object).\n\
         - HTTP 202 `provider_result_pending` \"is not success of payment\": returned as\n  \
         `ProviderResultPending` at once, never re-sent; what was processed stays stored once.\n\
         - Merchant-payment create under 429 on every attempt was never processed: no payment.\n  \
         Re-queue \"creates no new event\": the payment keeps its one event in every cell.\n",
    );
    md
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

/// Cells running at once (each has its own sandbox); bounded so that a loaded 2-core machine
/// still answers well within the attempt timeout of the latency column.
const CONCURRENCY: usize = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_matrix() {
    // Every operation has exactly one row, in the order of `row_of`.
    for (index, (op, _)) in MATRIX.iter().enumerate() {
        assert_eq!(row_of(*op), index, "row of {op}");
    }
    assert_eq!(MATRIX.len(), 14);

    let started = Instant::now();
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    let mut cells = JoinSet::new();
    let mut cell_of = HashMap::new();
    for (row, (op, _)) in MATRIX.iter().enumerate() {
        for (column, fault) in FAULTS.iter().enumerate() {
            let (op, fault) = (*op, *fault);
            let permits = permits.clone();
            let handle = cells.spawn(async move {
                let _permit = permits.acquire_owned().await.expect("semaphore");
                run_cell(op, fault).await
            });
            cell_of.insert(handle.id(), (row, column));
        }
    }

    let mut results: Vec<Vec<Option<Observed>>> = vec![vec![None; FAULT_COUNT]; MATRIX.len()];
    let mut panics = Vec::new();
    while let Some(joined) = cells.join_next_with_id().await {
        match joined {
            Ok((id, observed)) => {
                let (row, column) = cell_of[&id];
                results[row][column] = Some(observed);
            }
            Err(e) => {
                let (row, column) = cell_of[&e.id()];
                panics.push(format!(
                    "{} × {}: {e}",
                    MATRIX[row].0,
                    FAULTS[column].label()
                ));
            }
        }
    }
    let elapsed = started.elapsed();

    let mut mismatches = Vec::new();
    let mut duplicates = Vec::new();
    let mut fault_hits = 0;
    for (row, (op, expected)) in MATRIX.iter().enumerate() {
        for (column, fault) in FAULTS.iter().enumerate() {
            let Some(observed) = &results[row][column] else {
                continue;
            };
            fault_hits += observed.fault_hits;
            let want = &expected[column];
            let name = format!("{op} × {}", fault.label());
            if observed.stored.is_some_and(|n| n > 1)
                || (op.resend() == Resend::Never && observed.requests > 1)
            {
                duplicates.push(format!(
                    "{name}: {} requests, stored {:?}",
                    observed.requests, observed.stored
                ));
            }
            if let Some(changed) = &observed.side_effects {
                mismatches.push(format!(
                    "{name}: unexpected changes in the sandbox: {changed}"
                ));
            }
            if observed.outcome != want.outcome.label()
                || observed.requests != want.requests
                || observed.stored != want.stored
            {
                mismatches.push(format!(
                    "{name}: expected {} with {} requests, stored {:?}; observed {} with {} \
                     requests, stored {:?} ({})",
                    want.outcome.label(),
                    want.requests,
                    want.stored,
                    observed.outcome,
                    observed.requests,
                    observed.stored,
                    observed.detail
                ));
            }
        }
    }

    let summary = Summary {
        cells: MATRIX.len() * FAULT_COUNT,
        faults_injected: MATRIX.len() * FAULT_COUNT,
        fault_hits,
        duplicates: duplicates.len(),
        panics: panics.len(),
        mismatches: mismatches.len(),
    };
    let markdown = render(&results, &summary);
    let doc = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fault-matrix.md");
    eprintln!(
        "fault matrix: {} cells in {:.1} s ({} duplicates, {} panics, {} mismatches)",
        summary.cells,
        elapsed.as_secs_f64(),
        summary.duplicates,
        summary.panics,
        summary.mismatches
    );
    let mut slowest: Vec<(Duration, String)> = MATRIX
        .iter()
        .enumerate()
        .flat_map(|(row, (op, _))| {
            let results = &results;
            FAULTS
                .iter()
                .enumerate()
                .filter_map(move |(column, fault)| {
                    results[row][column]
                        .as_ref()
                        .map(|o| (o.elapsed, format!("{op} × {}", fault.label())))
                })
        })
        .collect();
    slowest.sort_by_key(|(elapsed, _)| std::cmp::Reverse(*elapsed));
    for (elapsed, name) in slowest.iter().take(5) {
        eprintln!("  slow cell: {name}: {:.2} s", elapsed.as_secs_f64());
    }
    let blessed = std::env::var("STOREFRONT_BLESS").is_ok_and(|v| v == "1");
    if blessed {
        std::fs::create_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/docs")).expect("docs dir");
        std::fs::write(doc, &markdown).expect("write docs/fault-matrix.md");
    }

    assert!(panics.is_empty(), "cells panicked:\n{}", panics.join("\n"));
    assert!(
        duplicates.is_empty(),
        "duplicates (a never-re-sent write sent twice, or stored twice):\n{}",
        duplicates.join("\n")
    );
    assert!(
        mismatches.is_empty(),
        "{} cells differ from the contract's expectation:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    if !blessed {
        let checked_in = std::fs::read_to_string(doc).unwrap_or_default();
        assert!(
            checked_in == markdown,
            "docs/fault-matrix.md differs from the table this run observed; regenerate it with \
             STOREFRONT_BLESS=1 cargo test --all-features -p storefront --test fault_matrix\n\
             --- observed ---\n{markdown}"
        );
    }
}
