//! The local sandbox's defences against web pages (see "Security of the local sandbox" in the
//! crate's README). One middleware ([`http::middleware`]) applies three rules, in this order:
//!
//! 1. Host rule ([`hosts`]): every request, on every route, must name a served `Host`, else 421
//!    `host_not_served` (a DNS-rebinding page names its own host).
//! 2. Origin rule ([`origin`]): a state-changing request (not GET, HEAD or OPTIONS) to anything
//!    but the service API and OAuth endpoints (the control API, the dashboard, the hosted
//!    checkout and pay pages) that a browser sent for another origin gets 403
//!    `cross_origin_request`.
//! 3. Form rule ([`form_token`]): a state-changing form submission to a control route must carry
//!    the dashboard token, else 403 `dashboard_token_invalid`; a wrong `X-Sandbox-Token` header is
//!    refused on any control request.
//!
//! Clients that are not browsers send no `Origin` and no form bodies to the control API, so they
//! are unaffected.

pub mod form_token;
pub mod hosts;
pub mod http;
pub mod origin;

use form_token::DashboardToken;
use hosts::ServedHosts;

/// What the guard checks requests against: the served hosts and the dashboard token.
#[derive(Debug, Clone)]
pub struct Guard {
    /// The Host allow-list (host rule).
    pub hosts: ServedHosts,
    /// The dashboard's per-sandbox form token (form rule).
    pub token: DashboardToken,
}

impl Guard {
    /// The guard of a sandbox at `origin` that also serves the `extra` hosts, with a fresh
    /// random dashboard token.
    pub fn new(origin: &str, extra: &[String]) -> Result<Guard, String> {
        Ok(Guard {
            hosts: ServedHosts::new(origin, extra)?,
            token: DashboardToken::default(),
        })
    }
}
