//! Is a `notify_url` host a public internet address? (contract, Events: "`notify_url`: public
//! HTTPS only ... no private-network address"; Errors: `invalid_notify_url`.) The SDK refuses
//! locally every host the service refuses, so the request is never sent.
//!
//! A pre-check only: a public-looking name may still resolve to a private address; the
//! service checks the resolved address at delivery. Written independently of the sandbox's
//! classifier (ARCHITECTURE.md: the two share no code).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Host;

/// What a host is, for a notification target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostKind {
    /// A public address or name.
    Public,
    /// `127.0.0.0/8`, `::1`, `localhost`, `*.localhost` (accepted only with
    /// `Config::allow_insecure_loopback`).
    Loopback,
    /// Not public, and why.
    Private(&'static str),
}

/// IPv4 networks that are not public, as (network, prefix length, name). Loopback is separate.
const V4: [(u32, u32, &str); 14] = [
    (0x0000_0000, 8, "0.0.0.0/8"),
    (0x0a00_0000, 8, "private 10.0.0.0/8"),
    (0x6440_0000, 10, "CGNAT 100.64.0.0/10"),
    (0xa9fe_0000, 16, "link-local 169.254.0.0/16"),
    (0xac10_0000, 12, "private 172.16.0.0/12"),
    (0xc000_0000, 24, "IETF 192.0.0.0/24"),
    (0xc000_0200, 24, "documentation 192.0.2.0/24"),
    (0xc058_6300, 24, "6to4 relay 192.88.99.0/24"),
    (0xc0a8_0000, 16, "private 192.168.0.0/16"),
    (0xc612_0000, 15, "benchmarking 198.18.0.0/15"),
    (0xc633_6400, 24, "documentation 198.51.100.0/24"),
    (0xcb00_7100, 24, "documentation 203.0.113.0/24"),
    (0xe000_0000, 4, "multicast 224.0.0.0/4"),
    (0xf000_0000, 4, "reserved 240.0.0.0/4"),
];

/// IPv6 networks inside or beside global unicast that are not public (checked after the forms
/// embedding an IPv4 address; everything outside `2000::/3` is not public either).
const V6: [(u128, u32, &str); 11] = [
    (0x0064_ff9b_0001 << 80, 48, "local NAT64 64:ff9b:1::/48"),
    (0x0100 << 112, 64, "discard 100::/64"),
    (0x2001_0000 << 96, 32, "Teredo 2001::/32"),
    (0x2001_0002_0000 << 80, 48, "benchmarking 2001:2::/48"),
    (0x2001_0010 << 96, 28, "ORCHID 2001:10::/28"),
    (0x2001_0db8 << 96, 32, "documentation 2001:db8::/32"),
    (0x3fff << 112, 20, "documentation 3fff::/20"),
    (0xfc00 << 112, 7, "unique local fc00::/7"),
    (0xfe80 << 112, 10, "link-local fe80::/10"),
    (0xfec0 << 112, 10, "site-local fec0::/10"),
    (0xff00 << 112, 8, "multicast ff00::/8"),
];

/// Name suffixes of private networks.
const PRIVATE_SUFFIXES: [&str; 8] = [
    "local",
    "localdomain",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "home.arpa",
];

fn v4_kind(ip: Ipv4Addr) -> HostKind {
    let bits = u32::from(ip);
    if bits >> 24 == 127 {
        return HostKind::Loopback;
    }
    for (net, len, name) in V4 {
        if bits >> (32 - len) == net >> (32 - len) {
            return HostKind::Private(name);
        }
    }
    HostKind::Public
}

/// The IPv4 address carried by IPv4-mapped (`::ffff:0:0/96`), IPv4-translated
/// (`::ffff:0:0:0/96`), IPv4-compatible (`::/96`), NAT64 (`64:ff9b::/96`) and 6to4
/// (`2002::/16`) addresses.
fn carried_v4(bits: u128) -> Option<Ipv4Addr> {
    let low = Ipv4Addr::from(bits as u32);
    match bits >> 32 {
        0 | 0xffff | 0xffff_0000 => return Some(low),
        0x0064_ff9b_0000_0000_0000_0000 => return Some(low),
        _ => {}
    }
    (bits >> 112 == 0x2002).then(|| Ipv4Addr::from((bits >> 80) as u32))
}

fn v6_kind(ip: Ipv6Addr) -> HostKind {
    let bits = u128::from(ip);
    match bits {
        1 => return HostKind::Loopback,
        0 => return HostKind::Private("unspecified ::"),
        _ => {}
    }
    if let Some(v4) = carried_v4(bits) {
        return match v4_kind(v4) {
            HostKind::Loopback => HostKind::Private("IPv4 loopback inside IPv6"),
            kind => kind,
        };
    }
    for (net, len, name) in V6 {
        if bits >> (128 - len) == net >> (128 - len) {
            return HostKind::Private(name);
        }
    }
    if bits >> 125 != 1 {
        return HostKind::Private("not global unicast 2000::/3");
    }
    HostKind::Public
}

/// Classifies an IP address.
pub(crate) fn ip_kind(ip: IpAddr) -> HostKind {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

/// Classifies a host name by its text, one trailing dot ignored, case-insensitive.
fn name_kind(name: &str) -> HostKind {
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name);
    if let Ok(ip) = name.parse::<IpAddr>() {
        return ip_kind(ip);
    }
    if name.split('.').any(str::is_empty) {
        return HostKind::Private("empty label");
    }
    if name == "localhost" || name.ends_with(".localhost") {
        return HostKind::Loopback;
    }
    if !name.contains('.') {
        return HostKind::Private("single-label name");
    }
    let private_suffix = PRIVATE_SUFFIXES.iter().any(|suffix| {
        name == *suffix
            || (name.len() > suffix.len()
                && name.ends_with(suffix)
                && name.as_bytes()[name.len() - suffix.len() - 1] == b'.')
    });
    if private_suffix {
        return HostKind::Private("private-use name");
    }
    HostKind::Public
}

/// Classifies a URL host (the `url` crate has already normalized decimal, octal and hex IPv4).
pub(crate) fn host_kind(host: &Host<&str>) -> HostKind {
    match host {
        Host::Domain(name) => name_kind(name),
        Host::Ipv4(ip) => v4_kind(*ip),
        Host::Ipv6(ip) => v6_kind(*ip),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(url: &str) -> HostKind {
        let url = url::Url::parse(url).unwrap();
        host_kind(&url.host().unwrap())
    }

    #[test]
    fn host_table() {
        use HostKind::{Loopback as L, Public as P};
        let rows = [
            ("https://shop.example/", P),
            ("https://Shop.Example./", P),
            ("https://8.8.8.8/", P),
            ("https://100.63.255.255/", P),
            ("https://100.128.0.0/", P),
            ("https://172.32.0.1/", P),
            ("https://198.20.0.1/", P),
            ("https://[2606:4700::1]/", P),
            ("https://[::ffff:8.8.8.8]/", P),
            ("https://[64:ff9b::808:808]/", P),
            ("https://[2002:808:808::1]/", P),
            ("https://127.0.0.1/", L),
            ("https://127.255.0.1/", L),
            ("https://[::1]/", L),
            ("https://localhost/", L),
            ("https://LOCALHOST./", L),
            ("https://a.localhost./", L),
            ("https://0x7f000001/", L),
            ("https://2130706433/", L),
            ("https://0177.0.0.1/", L),
            ("https://127.1/", L),
        ];
        for (url, expected) in rows {
            assert_eq!(kind(url), expected, "{url}");
        }
        let private = [
            "https://0.0.0.0/",
            "https://10.0.0.1/",
            "https://100.64.0.1/",
            "https://169.254.169.254/",
            "https://172.16.0.1/",
            "https://192.0.0.8/",
            "https://192.0.2.1/",
            "https://192.88.99.1/",
            "https://192.168.1.1/",
            "https://198.18.0.1/",
            "https://198.19.255.255/",
            "https://198.51.100.1/",
            "https://203.0.113.1/",
            "https://224.0.0.1/",
            "https://239.255.255.250/",
            "https://240.0.0.1/",
            "https://255.255.255.255/",
            "https://[::]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:10.0.0.1]/",
            "https://[::ffff:0:10.0.0.1]/",
            "https://[::10.0.0.1]/",
            "https://[::127.0.0.1]/",
            "https://[64:ff9b::a00:1]/",
            "https://[64:ff9b::7f00:1]/",
            "https://[64:ff9b:1::808:808]/",
            "https://[2002:7f00:1::1]/",
            "https://[2002:c0a8:101::1]/",
            "https://[2001::1]/",
            "https://[2001:db8::1]/",
            "https://[2001:2::1]/",
            "https://[3fff::1]/",
            "https://[100::1]/",
            "https://[fc00::1]/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://[fec0::1]/",
            "https://[ff02::1]/",
            "https://[4000::1]/",
            "https://intranet/",
            "https://intranet./",
            "https://printer.local/",
            "https://NAS.HOME.ARPA./",
            "https://db.internal/",
            "https://0xa000001/",
        ];
        for url in private {
            assert!(
                matches!(kind(url), HostKind::Private(_)),
                "{url}: {:?}",
                kind(url)
            );
        }
    }
}
