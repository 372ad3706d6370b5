//! Whether a notification target is a public internet address (contract, Events: `notify_url`
//! "public HTTPS only ... no private-network address"; Errors: `invalid_notify_url` "private
//! target"). One classifier, used when the address is accepted (creation, merchant default) and
//! again at every delivery, on the addresses the host name resolves to then (so a name that
//! later resolves to a private address, DNS rebinding, reaches nothing).
//!
//! Independent of the SDK's pre-check on purpose (the sandbox shares no code with the core).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Where an address or host name leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// A public internet address.
    Public,
    /// This machine: `127.0.0.0/8`, `::1`, `localhost` and `*.localhost`. Accepted only with
    /// the sandbox's loopback switch (`SandboxOptions::allow_loopback_notify`).
    Loopback,
    /// Anything else that is not public, with the range or rule that says so.
    NonPublic(&'static str),
}

impl Reach {
    /// Whether a target of this reach may be used (loopback only when allowed).
    pub fn permitted(self, allow_loopback: bool) -> bool {
        match self {
            Reach::Public => true,
            Reach::Loopback => allow_loopback,
            Reach::NonPublic(_) => false,
        }
    }

    /// Why the target is refused (for error descriptions and `last_error`).
    pub fn reason(self) -> &'static str {
        match self {
            Reach::Public => "public",
            Reach::Loopback => "loopback",
            Reach::NonPublic(why) => why,
        }
    }
}

/// IPv4 ranges that are not public (loopback `127.0.0.0/8` is [`Reach::Loopback`]).
const V4_NON_PUBLIC: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "\"this network\" 0.0.0.0/8"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private 10.0.0.0/8"),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "shared (CGNAT) 100.64.0.0/10",
    ),
    (
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "link-local 169.254.0.0/16",
    ),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private 172.16.0.0/12"),
    (
        Ipv4Addr::new(192, 0, 0, 0),
        24,
        "IETF protocol assignments 192.0.0.0/24",
    ),
    (
        Ipv4Addr::new(192, 0, 2, 0),
        24,
        "documentation 192.0.2.0/24",
    ),
    (
        Ipv4Addr::new(192, 88, 99, 0),
        24,
        "6to4 relay anycast 192.88.99.0/24",
    ),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private 192.168.0.0/16"),
    (
        Ipv4Addr::new(198, 18, 0, 0),
        15,
        "benchmarking 198.18.0.0/15",
    ),
    (
        Ipv4Addr::new(198, 51, 100, 0),
        24,
        "documentation 198.51.100.0/24",
    ),
    (
        Ipv4Addr::new(203, 0, 113, 0),
        24,
        "documentation 203.0.113.0/24",
    ),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast 224.0.0.0/4"),
    (
        Ipv4Addr::new(240, 0, 0, 0),
        4,
        "reserved 240.0.0.0/4 and broadcast",
    ),
];

/// IPv6 ranges that are not public. Checked after loopback, unspecified and the forms that
/// embed an IPv4 address; anything outside global unicast `2000::/3` is refused as well.
const V6_NON_PUBLIC: &[(Ipv6Addr, u8, &str)] = &[
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        "local-use NAT64 64:ff9b:1::/48",
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        "discard-only 100::/64",
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        32,
        "Teredo 2001::/32",
    ),
    (
        Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0),
        48,
        "benchmarking 2001:2::/48",
    ),
    (
        Ipv6Addr::new(0x2001, 0x10, 0, 0, 0, 0, 0, 0),
        28,
        "ORCHID 2001:10::/28",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation 2001:db8::/32",
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        "documentation 3fff::/20",
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "unique local fc00::/7",
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        "link-local fe80::/10",
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        "site-local fec0::/10",
    ),
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        "multicast ff00::/8",
    ),
];

/// Suffixes of names used on private networks (RFC 6762 `.local`, RFC 8375 `.home.arpa`, and
/// the common private-use names).
const NON_PUBLIC_SUFFIXES: &[&str] = &[
    "local",
    "localdomain",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "home.arpa",
];

fn in_v4(ip: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(net) & mask
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

/// Classifies an IPv4 address.
pub fn classify_v4(ip: Ipv4Addr) -> Reach {
    if ip.is_loopback() {
        return Reach::Loopback;
    }
    V4_NON_PUBLIC
        .iter()
        .find(|(net, len, _)| in_v4(ip, *net, *len))
        .map_or(Reach::Public, |(_, _, why)| Reach::NonPublic(why))
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped `::ffff:0:0/96`, IPv4-translated
/// `::ffff:0:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96` and 6to4 `2002::/16`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match s {
        [0, 0, 0, 0, 0, 0xffff | 0, _, _] => Some(last),
        [0, 0, 0, 0, 0xffff, 0, _, _] => Some(last),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(last),
        [0x2002, ..] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

/// Classifies an IPv6 address. Forms embedding an IPv4 address are as public as that address
/// (an embedded loopback is not [`Reach::Loopback`]: only `::1` is).
pub fn classify_v6(ip: Ipv6Addr) -> Reach {
    if ip.is_loopback() {
        return Reach::Loopback;
    }
    if ip.is_unspecified() {
        return Reach::NonPublic("unspecified ::");
    }
    if let Some(v4) = embedded_v4(ip) {
        return match classify_v4(v4) {
            Reach::Public => Reach::Public,
            Reach::Loopback => Reach::NonPublic("IPv4 loopback embedded in IPv6"),
            other => other,
        };
    }
    if let Some((_, _, why)) = V6_NON_PUBLIC
        .iter()
        .find(|(net, len, _)| in_v6(ip, *net, *len))
    {
        return Reach::NonPublic(why);
    }
    if !in_v6(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return Reach::NonPublic("outside global unicast 2000::/3");
    }
    Reach::Public
}

/// Classifies an IP address.
pub fn classify_ip(ip: IpAddr) -> Reach {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Classifies a host name by its text (one trailing dot is ignored, case does not matter):
/// `localhost` and `*.localhost` are loopback; single-label names and private-use suffixes are
/// not public. A public-looking name can still resolve to anything: delivery checks the
/// resolved addresses.
pub fn classify_name(name: &str) -> Reach {
    let lower = name.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if let Ok(ip) = name.trim_matches(['[', ']']).parse::<IpAddr>() {
        return classify_ip(ip);
    }
    if name.is_empty() || name.starts_with('.') || name.ends_with('.') || name.contains("..") {
        return Reach::NonPublic("empty label in host name");
    }
    if name == "localhost" || name.ends_with(".localhost") {
        return Reach::Loopback;
    }
    if !name.contains('.') {
        return Reach::NonPublic("single-label host name");
    }
    if NON_PUBLIC_SUFFIXES
        .iter()
        .any(|s| name == *s || name.strip_suffix(s).is_some_and(|r| r.ends_with('.')))
    {
        return Reach::NonPublic("private-use host name");
    }
    Reach::Public
}

/// Classifies the host of a parsed URL.
pub fn classify_host(host: &url::Host<&str>) -> Reach {
    match host {
        url::Host::Domain(name) => classify_name(name),
        url::Host::Ipv4(ip) => classify_v4(*ip),
        url::Host::Ipv6(ip) => classify_v6(*ip),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Reach = Reach::Public;
    const L: Reach = Reach::Loopback;

    fn non_public(reach: Reach) -> bool {
        matches!(reach, Reach::NonPublic(_))
    }

    /// Every range of the issue, its edges, and public neighbours.
    #[test]
    fn ip_table() {
        let public = [
            "8.8.8.8",
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.255",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:4700::1",
            "2a00:1450:4001::1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ];
        for text in public {
            assert_eq!(classify_ip(text.parse().unwrap()), P, "{text}");
        }
        for text in ["127.0.0.1", "127.255.255.254", "::1"] {
            assert_eq!(classify_ip(text.parse().unwrap()), L, "{text}");
        }
        let refused = [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.1",
            "192.0.0.170",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "feff::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "3fff::1",
            "100::1",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::808:808",
            "2002:7f00:1::1",
            "2002:a00:1::",
            "2002:c0a8:101::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::10.0.0.1",
            "::ffff:0:10.0.0.1",
            "4000::1",
        ];
        for text in refused {
            let ip: IpAddr = text.parse().unwrap();
            assert!(non_public(classify_ip(ip)), "{text}: {:?}", classify_ip(ip));
        }
    }

    #[test]
    fn name_table() {
        let rows: [(&str, Reach); 14] = [
            ("hooks.shop.example", P),
            ("HOOKS.Shop.Example.", P),
            ("localhost", L),
            ("LOCALHOST.", L),
            ("api.localhost", L),
            ("api.localhost.", L),
            ("intranet", Reach::NonPublic("single-label host name")),
            ("intranet.", Reach::NonPublic("single-label host name")),
            ("printer.local", Reach::NonPublic("private-use host name")),
            ("PRINTER.LOCAL.", Reach::NonPublic("private-use host name")),
            ("db.internal", Reach::NonPublic("private-use host name")),
            ("nas.home.arpa", Reach::NonPublic("private-use host name")),
            ("example..com", Reach::NonPublic("empty label in host name")),
            ("notlocal.example", P),
        ];
        for (name, reach) in rows {
            assert_eq!(classify_name(name), reach, "{name}");
        }
    }

    /// The url crate normalizes numeric IPv4 forms before the classifier sees them.
    #[test]
    fn numeric_ipv4_forms_are_normalized_then_classified() {
        for text in [
            "https://0x7f000001/",
            "https://2130706433/",
            "https://0177.0.0.1/",
            "https://127.1/",
            "https://127.0.0.1./",
        ] {
            let url = url::Url::parse(text).unwrap();
            assert_eq!(classify_host(&url.host().unwrap()), L, "{text}");
        }
        let url = url::Url::parse("https://0xa000001/").unwrap();
        assert!(non_public(classify_host(&url.host().unwrap())));
    }
}
