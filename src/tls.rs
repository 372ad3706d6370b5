//! The client's own rustls configuration, built on the ring provider without installing a
//! process-wide default (the host app may have its own).
//!
//! Trust: the platform verifier by default; only the given roots when the caller supplies a CA.

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::error::{Error, Result};

/// Builds the TLS configuration: ring provider, TLS 1.2/1.3, ALPN h2 + http/1.1.
pub(crate) fn client_config(root_ca_pem: Option<&str>) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS setup failed: {e}")))?;
    let mut config = match root_ca_pem {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            let mut count = 0;
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                let cert = cert.map_err(|e| Error::Config(format!("root_ca_pem: {e}")))?;
                roots
                    .add(cert)
                    .map_err(|e| Error::Config(format!("root_ca_pem: {e}")))?;
                count += 1;
            }
            if count == 0 {
                return Err(Error::Config(
                    "root_ca_pem holds no CERTIFICATE block".into(),
                ));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => {
            let verifier = rustls_platform_verifier::Verifier::new(provider)
                .map_err(|e| Error::Config(format!("platform verifier unavailable: {e}")))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth()
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_pem_without_certificates() {
        assert!(matches!(
            client_config(Some("nothing here")),
            Err(Error::Config(_))
        ));
    }

    #[test]
    fn platform_verifier_builds_with_ring() {
        assert!(client_config(None).is_ok());
    }
}
