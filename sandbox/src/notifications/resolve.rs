//! Name resolution of notification deliveries, checked: the delivery client resolves the target
//! host through [`GuardedResolver`], which refuses the connection when any address the name
//! resolves to is not public ([`super::address`]; loopback only with the sandbox's loopback
//! switch). The check is on the very addresses the connection uses, at every attempt, so a name
//! that was public at creation and resolves to a private address later (DNS rebinding) reaches
//! nothing. IP-literal hosts never reach a resolver: [`super::delivery::deliver`] checks them.
//!
//! Tests (and people) can pin a name to addresses with [`DnsOverrides`], set through
//! `PUT /_sandbox/dns/{host}`: offline, without touching the system resolver.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::address::classify_ip;

/// Host names pinned to addresses for notification delivery (sandbox only).
#[derive(Debug, Clone, Default)]
pub struct DnsOverrides(Arc<Mutex<HashMap<String, Vec<IpAddr>>>>);

/// The lookup key of a host name: lowercase, without one trailing dot.
pub fn normalize_host(host: &str) -> String {
    let lower = host.to_ascii_lowercase();
    lower.strip_suffix('.').unwrap_or(&lower).to_owned()
}

impl DnsOverrides {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<IpAddr>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Pins `host` to `addresses`; an empty list removes the pin.
    pub fn set(&self, host: &str, addresses: Vec<IpAddr>) {
        let key = normalize_host(host);
        if addresses.is_empty() {
            self.map().remove(&key);
        } else {
            self.map().insert(key, addresses);
        }
    }

    /// The pinned addresses of `host`, if any.
    pub fn get(&self, host: &str) -> Option<Vec<IpAddr>> {
        self.map().get(&normalize_host(host)).cloned()
    }

    /// Removes every pin.
    pub fn clear(&self) {
        self.map().clear();
    }
}

/// A delivery refused because the target is not a public address. Travels through reqwest's
/// error chain, where [`super::delivery::deliver`] finds it for `last_error`.
#[derive(Debug, Clone)]
pub struct NonPublicTarget {
    /// The host of `notify_url`.
    pub host: String,
    /// The address that is not public.
    pub ip: IpAddr,
    /// Why it is not public.
    pub reason: &'static str,
}

impl fmt::Display for NonPublicTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused: {} resolves to {} ({}), not a public address",
            self.host, self.ip, self.reason
        )
    }
}

impl std::error::Error for NonPublicTarget {}

/// The resolver of the delivery client (see the module docs).
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    /// Pinned names.
    pub overrides: DnsOverrides,
    /// Whether loopback targets are accepted (`SandboxOptions::allow_loopback_notify`).
    pub allow_loopback: bool,
}

/// Checks resolved addresses: every one must be permitted, and there must be one.
pub fn check_resolved(
    host: &str,
    addresses: &[IpAddr],
    allow_loopback: bool,
) -> Result<(), NonPublicTarget> {
    for ip in addresses {
        let reach = classify_ip(*ip);
        if !reach.permitted(allow_loopback) {
            return Err(NonPublicTarget {
                host: host.to_owned(),
                ip: *ip,
                reason: reach.reason(),
            });
        }
    }
    Ok(())
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let pinned = self.overrides.get(&host);
        let allow_loopback = self.allow_loopback;
        Box::pin(async move {
            let addresses: Vec<IpAddr> = match pinned {
                Some(addresses) => addresses,
                None => tokio::net::lookup_host((host.as_str(), 0))
                    .await?
                    .map(|a| a.ip())
                    .collect(),
            };
            if addresses.is_empty() {
                return Err(format!("{host} resolves to no address").into());
            }
            check_resolved(&host, &addresses, allow_loopback)?;
            let addrs: Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One non-public address among public ones refuses the whole name; loopback only with the
    /// switch.
    #[test]
    fn every_resolved_address_must_be_permitted() {
        let public: IpAddr = "8.8.8.8".parse().unwrap();
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let private: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(check_resolved("h", &[public], false).is_ok());
        assert!(check_resolved("h", &[public, loopback], false).is_err());
        assert!(check_resolved("h", &[public, loopback], true).is_ok());
        let refused = check_resolved("h.example", &[public, private], true).unwrap_err();
        assert_eq!(refused.ip, private);
        assert!(
            refused
                .to_string()
                .contains("h.example resolves to 10.0.0.1")
        );
    }

    #[test]
    fn overrides_are_keyed_by_normalized_host() {
        let overrides = DnsOverrides::default();
        overrides.set("Rebind.Example.", vec!["127.0.0.1".parse().unwrap()]);
        assert!(overrides.get("rebind.example").is_some());
        overrides.set("rebind.example", vec![]);
        assert!(overrides.get("REBIND.example.").is_none());
    }
}
