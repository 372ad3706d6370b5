//! Accepting connections: plain HTTP, or HTTPS with a CA and certificate generated at start.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::faults::DropConnection;

/// A CA and a server certificate for `127.0.0.1` and `localhost`, made fresh at start.
pub struct GeneratedTls {
    /// The CA certificate (PEM) that clients must trust.
    pub ca_pem: String,
    /// The acceptor presenting the server certificate.
    pub acceptor: TlsAcceptor,
}

/// Generates a CA and a server certificate signed by it, and a rustls acceptor using ring.
pub fn generate_tls() -> Result<GeneratedTls, Box<dyn std::error::Error + Send + Sync>> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};

    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "storefront sandbox CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);

    let server_key = KeyPair::generate()?;
    let mut server_params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])?;
    server_params
        .distinguished_name
        .push(DnType::CommonName, "storefront sandbox");
    let server_cert = server_params.signed_by(&server_key, &issuer)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(
            vec![server_cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(server_key.serialize_der().into()),
        )?;
    let mut config = config;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(GeneratedTls {
        ca_pem: ca_cert.pem(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}

/// Serves `app` on `listener` until the task is aborted. Each connection gets the peer address
/// as [`ConnectInfo`] (per-IP limits use it).
pub async fn serve(listener: TcpListener, app: Router, tls: Option<TlsAcceptor>) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of descriptors or a transient network error: back off instead of spinning.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let app = app.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(
                move |mut request: hyper::Request<hyper::body::Incoming>| {
                    request
                        .extensions_mut()
                        .insert(ConnectInfo::<SocketAddr>(peer));
                    let app = app.clone();
                    async move {
                        let response = match app.oneshot(request.map(axum::body::Body::new)).await {
                            Ok(response) => response,
                            Err(never) => match never {},
                        };
                        // An injected dropped connection: failing the service makes hyper
                        // close the connection without sending any answer.
                        if response.extensions().get::<DropConnection>().is_some() {
                            return Err(std::io::Error::other("fault: connection dropped"));
                        }
                        Ok(response)
                    }
                },
            );
            let builder = Builder::new(TokioExecutor::new());
            match tls {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        let _ = builder
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                }
                None => {
                    let _ = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
            }
        });
    }
}
