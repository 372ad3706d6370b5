//! The Host allow-list (DNS-rebinding rule): a page on another site whose name was re-pointed at
//! 127.0.0.1 reaches the sandbox with its own name in `Host`; the sandbox answers only the
//! names it serves.

use std::str::FromStr;

use axum::http::uri::Authority;

/// One extra served host: a name (or IP literal) and, optionally, the one port it is reached on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Extra {
    host: String,
    port: Option<u16>,
}

/// The hosts the sandbox answers (rule: every request's `Host` must be one of them).
///
/// Always served: `127.0.0.1`, `localhost`, `[::1]` and the host of the sandbox's own origin, on
/// any port: a rebinding page names its own host, never these, and a port mapping (Docker's
/// `-p 9000:8080`, an SSH tunnel) presents another port than the one the sandbox listens on.
/// Extra entries (`SandboxOptions::allowed_hosts`, `--allow-host`) are `NAME`
/// (any port, for tunnels and proxies that present their own) or `NAME:PORT` (that port only).
#[derive(Debug, Clone)]
pub struct ServedHosts {
    own: Vec<String>,
    extra: Vec<Extra>,
}

impl ServedHosts {
    /// The allow-list of a sandbox whose origin is `origin` (e.g. `http://127.0.0.1:8080`),
    /// plus `extra` entries. Refuses an extra entry that is not `NAME` or `NAME:PORT`.
    pub fn new(origin: &str, extra: &[String]) -> Result<ServedHosts, String> {
        let url = url::Url::parse(origin).map_err(|e| format!("bad origin {origin:?}: {e}"))?;
        let mut own: Vec<String> = ["127.0.0.1", "localhost", "[::1]"]
            .map(str::to_owned)
            .to_vec();
        if let Some(host) = url.host_str() {
            own.push(host.to_ascii_lowercase());
        }
        let extra = extra
            .iter()
            .map(|entry| parse_extra(entry))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ServedHosts { own, extra })
    }

    /// Whether a request whose `Host` (or HTTP/2 authority) is `value` is served.
    pub fn serves(&self, value: &str) -> bool {
        let Ok(authority) = Authority::from_str(value.trim()) else {
            return false;
        };
        if authority.as_str().contains('@') {
            return false;
        }
        let host = authority.host().to_ascii_lowercase();
        let port = authority.port_u16();
        self.own.contains(&host)
            || self
                .extra
                .iter()
                .any(|e| e.host == host && e.port.is_none_or(|p| Some(p) == port))
    }
}

fn parse_extra(entry: &str) -> Result<Extra, String> {
    let refuse = || format!("allowed host {entry:?} is not NAME or NAME:PORT");
    let authority = Authority::from_str(entry.trim()).map_err(|_| refuse())?;
    if authority.as_str().contains('@') || authority.host().is_empty() {
        return Err(refuse());
    }
    Ok(Extra {
        host: authority.host().to_ascii_lowercase(),
        port: authority.port_u16(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_on_any_port_and_extra_hosts_are_served() {
        let hosts = ServedHosts::new(
            "http://127.0.0.1:8080",
            &["sandbox.test".into(), "Box.Lan:9000".into()],
        )
        .unwrap();
        for served in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
            "sandbox.test",
            "sandbox.test:443",
            "box.lan:9000",
            "127.0.0.1:8081",
            "localhost",
        ] {
            assert!(hosts.serves(served), "{served}");
        }
        for refused in [
            "evil.example",
            "evil.example:8080",
            "box.lan:9001",
            "user@localhost:8080",
            "",
            "localhost.:8080",
        ] {
            assert!(!hosts.serves(refused), "{refused}");
        }
        assert!(ServedHosts::new("http://127.0.0.1:1", &["a/b".into()]).is_err());
    }

    #[test]
    fn a_default_port_may_be_left_out() {
        let hosts = ServedHosts::new("http://127.0.0.1:80", &[]).unwrap();
        assert!(hosts.serves("localhost"));
        assert!(hosts.serves("localhost:80"));
    }
}
