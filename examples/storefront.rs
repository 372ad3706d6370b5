//! The main job: starts the sandbox in-process and walks both flows of the service with the SDK.
//!
//! ```sh
//! cargo run --example storefront
//! ```
//!
//! Catalog flow: client token, merchant profile, products, a user's catalog order paid with the
//! platform coin and waited for. Merchant collection: a payment created with a per-payment
//! notification address, paid at the (simulated) checkout, its signed notification received by a
//! local HTTP receiver and verified by the SDK, then reconciled by query. Exits non-zero if any
//! step fails.

use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use futures_util::TryStreamExt;
use storefront::{
    Client, Config, CreateMerchantPayment, CreateOrderRequest, MinorAmount, PaymentExpectation,
    PaymentStatus, PaymentWaitOutcome, ProductQuery, StatusNotification, VersionDecision,
    WebhookVerifier, status_version_decision,
};
use storefront_sandbox::{Sandbox, SandboxOptions, seed};
use tokio::sync::mpsc;

type AnyResult<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// Posts JSON to a sandbox control endpoint (not part of the service contract: it stands in for
/// what a buyer or the platform does).
pub async fn control(
    sandbox: &Sandbox,
    path: &str,
    body: serde_json::Value,
) -> AnyResult<serde_json::Value> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = sandbox.ca_pem() {
        use rustls::pki_types::{CertificateDer, pem::PemObject};
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(cert?)?;
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()?;
    let resp = http
        .post(format!("{}{path}", sandbox.control_url()))
        .json(&body)
        .send()
        .await?;
    let status = resp.status();
    let text = resp.text().await?;
    if !status.is_success() {
        return Err(format!("control {path} failed: HTTP {status}: {text}").into());
    }
    Ok(serde_json::from_str(&text).unwrap_or(serde_json::Value::Null))
}

/// Mints a user-authorized token for a seeded user (stands in for the authorization-code flow,
/// which the contract does not show).
pub async fn user_token(sandbox: &Sandbox, user: &str) -> AnyResult<String> {
    let minted = control(
        sandbox,
        &format!("/users/{user}/tokens"),
        serde_json::json!({ "client_id": seed::MERCHANT_CLIENT_ID }),
    )
    .await?;
    minted["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| "no access_token in minted token".into())
}

#[derive(Clone)]
struct Receiver {
    verifier: WebhookVerifier,
    tx: mpsc::UnboundedSender<StatusNotification>,
}

async fn receive(State(r): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    // Verify over the raw bytes before anything else; never re-serialize first.
    match r.verifier.verify_headers(&headers, &body) {
        Ok(n) => {
            let _ = r.tx.send(n);
            StatusCode::NO_CONTENT
        }
        Err(e) => {
            eprintln!("  receiver rejected a notification: {e}");
            StatusCode::BAD_REQUEST
        }
    }
}

/// Starts a local notification receiver; returns its URL and the verified notifications.
async fn start_receiver(
    secret: &str,
) -> AnyResult<(String, mpsc::UnboundedReceiver<StatusNotification>)> {
    let (tx, rx) = mpsc::unbounded_channel();
    let state = Receiver {
        verifier: WebhookVerifier::new([secret])?,
        tx,
    };
    let app = axum::Router::new()
        .route("/hooks/storefront", axum::routing::post(receive))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hooks/storefront", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((url, rx))
}

/// Walks both flows against a fresh in-process sandbox, printing a line per step.
pub async fn run() -> AnyResult<()> {
    // HTTPS with a CA the sandbox generates at start; the SDK trusts only that CA here.
    let sandbox = Sandbox::start_with(SandboxOptions {
        tls: true,
        ..Default::default()
    })
    .await?;
    println!(
        "sandbox      running at {} (TLS, generated CA)",
        sandbox.origin()
    );

    let config = Config::new(
        sandbox.base_url(),
        sandbox.token_endpoint(),
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
    )
    .with_userinfo_endpoint(sandbox.userinfo_endpoint())
    .with_root_ca_pem(sandbox.ca_pem().ok_or("sandbox has no CA")?)
    .with_user_agent("storefront-example/1")
    // Only so the local receiver may be plain http://127.0.0.1; the real service requires a
    // public HTTPS notification address.
    .with_insecure_loopback(true);
    let client = Client::new(config)?;

    // --- catalog flow ---------------------------------------------------------------------
    let granted = client.authenticate().await?;
    println!(
        "token        client-credentials token granted for {}s, scopes: {}",
        granted.expires_in,
        granted.scope.join(" ")
    );
    let profile = client.merchant_profile().await?;
    println!("profile      {} ({})", profile.name, profile.merchant_no);
    let products: Vec<_> = client
        .products_stream(ProductQuery::default())
        .try_collect()
        .await?;
    println!(
        "products     {} enabled products over all pages",
        products.len()
    );
    let beans = products
        .iter()
        .find(|p| p.gd_no == seed::PRODUCT_BEANS)
        .ok_or("seeded product missing")?;
    println!(
        "product      {} {} at {} {}",
        beans.gd_no,
        beans.gd_name,
        beans
            .actual_price
            .to_decimal_string(beans.currency_decimals)?,
        beans.currency
    );

    let alice = client.user(user_token(&sandbox, seed::USER_ALICE).await?);
    let me = alice.userinfo().await?;
    println!(
        "userinfo     signed in as {}",
        me.get("sub").and_then(|v| v.as_str()).unwrap_or("?")
    );
    let order = alice
        .create_order(&CreateOrderRequest::new(
            &beans.gd_no,
            1,
            seed::CHANNEL_PLATFORM_COIN,
        ))
        .await?;
    println!("order        created {} (not paid yet)", order.order_no);
    let start = alice
        .start_payment(&order.order_no, seed::CHANNEL_PLATFORM_COIN)
        .await?;
    // `PaymentStart` displays its session, address without query and expiry in RFC 3339.
    println!("payment      started {start}");
    let outcome = alice
        .wait_for_payment(
            &order.order_no,
            Duration::from_millis(100),
            storefront::DEFAULT_WAIT_TIMEOUT,
        )
        .await?;
    let order = match outcome {
        PaymentWaitOutcome::Final {
            payment_status: PaymentStatus::Paid,
            order,
        } => order,
        PaymentWaitOutcome::Final { payment_status, .. } => {
            return Err(format!("catalog payment ended {payment_status}").into());
        }
        PaymentWaitOutcome::StillPending { waited, .. } => {
            return Err(format!("catalog payment still pending after {waited:?}").into());
        }
    };
    println!(
        "payment      paid; order status {}, paid {} {}",
        order.status,
        order
            .payment_pay_amount
            .to_decimal_string(order.payment_currency_decimals)?,
        order.payment_currency
    );

    // --- merchant collection ----------------------------------------------------------------
    let channels = client.list_channels().await?;
    println!(
        "channels     {}",
        channels
            .iter()
            .map(|c| c.payment_no.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let notify_secret = "example-notify-secret-0123456789abcdef";
    let (receiver_url, mut notifications) = start_receiver(notify_secret).await?;
    let amount = MinorAmount::parse_decimal("12.50", 2)?;
    let request = CreateMerchantPayment::new("shop-order-1001", amount, "USD")
        .with_description("Example order 1001")
        .with_notification(&receiver_url, notify_secret)
        .expect_currency_decimals(2);
    println!(
        "collection   idempotency key {} (persist it before sending)",
        request.idempotency_key()
    );
    let created = client.create_merchant_payment(&request).await?;
    let payment = &created.payment;
    println!(
        "collection   created {} for {}, status {}, checkout {}",
        payment.order_no,
        payment.money()?,
        payment.status,
        payment
            .checkout_url
            .as_ref()
            .map(|u| u.to_string())
            .unwrap_or_default()
    );
    control(
        &sandbox,
        &format!("/merchant-payments/{}/checkout/pay", payment.order_no),
        serde_json::json!({ "payment_no": seed::CHANNEL_CARD_USD }),
    )
    .await?;
    println!("checkout     buyer paid with {}", seed::CHANNEL_CARD_USD);

    let expectation = PaymentExpectation {
        external_reference: "shop-order-1001".into(),
        amount_minor: amount,
        currency: "USD".into(),
        test_mode: false,
    };
    let mut stored_version = None;
    let paid = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(n) = notifications.recv().await {
            expectation.check_notification(&n.data)?;
            if status_version_decision(stored_version, n.data.status_version)
                == VersionDecision::Apply
            {
                stored_version = Some(n.data.status_version);
            }
            println!(
                "notification verified {} status {} version {}",
                n.id, n.data.status, n.data.status_version
            );
            if n.data.status.is_paid() {
                return Ok::<_, Box<dyn Error + Send + Sync>>(n);
            }
        }
        Err("receiver closed".into())
    })
    .await
    .map_err(|_| "no paid notification within 15 s")??;

    let queried = client.get_merchant_payment(&payment.order_no).await?;
    expectation.check_payment(&queried)?;
    if !queried.status.is_paid() || queried.event_id != paid.data.event_id {
        return Err(format!(
            "reconciliation mismatch: query says {} event {:?}",
            queried.status, queried.event_id
        )
        .into());
    }
    println!(
        "reconciled   query confirms {} paid, event {}, version {}",
        queried.order_no,
        queried.event_id.as_deref().unwrap_or("?"),
        queried
            .status_version
            .map_or_else(|| "?".to_owned(), |v| v.to_string())
    );
    println!("done         both flows completed");
    Ok(())
}

#[allow(dead_code)] // unused when this file is included by the test that runs the walkthrough
fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Err(e) = runtime.block_on(run()) {
        eprintln!("FAILED: {e}");
        std::process::exit(1);
    }
}
