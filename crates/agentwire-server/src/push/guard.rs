//! Which webhook addresses may be called: only globally reachable ones, unless private targets
//! are allowed. URLs are checked when a config is created; at delivery, literal addresses are
//! checked again and names are resolved by [`GuardedResolver`], which refuses the connection
//! before it is made.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use agentwire_types::{A2AError, Result};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Refuses webhook URLs that point into private networks (SSRF protection) unless allowed.
///
/// "Private" means not globally reachable: loopback, private, link-local, shared, documentation,
/// benchmarking, multicast and reserved ranges, and the IPv6 forms that embed such an IPv4
/// address. A host name is checked when it is resolved for the connection, and the connection
/// goes only to the addresses that were checked.
///
/// ```
/// use agentwire_server::WebhookGuard;
///
/// let guard = WebhookGuard::default();
/// assert!(guard.check_url("https://hooks.example.com/a2a").is_ok());
/// assert!(guard.check_url("http://127.0.0.1:9000/hook").is_err());
/// assert!(guard.check_url("http://[::ffff:0:10.0.0.1]/hook").is_err());
/// assert!(WebhookGuard { allow_private: true }.check_url("http://localhost:9000/hook").is_ok());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct WebhookGuard {
    /// Allow loopback, private and link-local targets (for tests and closed networks).
    pub allow_private: bool,
}

impl WebhookGuard {
    /// Checks a URL's form and, for literal addresses and `localhost`, its target.
    pub fn check_url(&self, url: &str) -> Result<()> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| A2AError::invalid_params(format!("push notification url {url:?} is not valid: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(A2AError::invalid_params("push notification url must be http or https"));
        }
        let host = parsed.host_str().unwrap_or_default().to_ascii_lowercase();
        if host.is_empty() {
            return Err(A2AError::invalid_params("push notification url has no host"));
        }
        let name = host.trim_end_matches('.');
        let local_name = name == "localhost" || name.ends_with(".localhost");
        if !self.allow_private && (local_name || self.check_literal(&parsed).is_err()) {
            return Err(A2AError::invalid_params(format!(
                "push notification url {url:?} targets a private or loopback address, which this server refuses"
            )));
        }
        Ok(())
    }

    /// Refuses a URL whose host is a literal address that is not global. Such URLs never reach
    /// the resolver, so delivery checks them with this.
    pub(super) fn check_literal(&self, url: &reqwest::Url) -> std::result::Result<(), PrivateAddress> {
        let host = url.host_str().unwrap_or_default();
        let literal = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>();
        match literal {
            Ok(ip) if !self.allow_private && !is_global(ip) => Err(PrivateAddress { host: None, ip }),
            _ => Ok(()),
        }
    }

    /// The resolver webhook connections use: it applies this guard to every resolved address.
    pub(super) fn resolver(&self) -> GuardedResolver {
        GuardedResolver { allow_private: self.allow_private }
    }
}

/// A webhook target that is not globally reachable, refused because private targets are not
/// allowed.
#[derive(Debug, Clone)]
pub(super) struct PrivateAddress {
    /// The name that resolved to `ip`; `None` when the URL holds the address itself.
    host: Option<String>,
    ip: IpAddr,
}

impl fmt::Display for PrivateAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Some(host) => write!(f, "{host} resolves to {}, which is not a public address", self.ip),
            None => write!(f, "{} is not a public address", self.ip),
        }
    }
}

impl std::error::Error for PrivateAddress {}

/// Resolves webhook host names with the system resolver and fails when any address is not
/// global. The connection is made only to the addresses returned here, so a name cannot pass
/// the check with one address and then connect to another (DNS rebinding).
#[derive(Debug, Clone, Copy)]
pub(super) struct GuardedResolver {
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str();
            // Port 0: the connector puts in the URL's port.
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
            if let Some(refused) = addrs.iter().map(SocketAddr::ip).find(|ip| !allow_private && !is_global(*ip)) {
                return Err(PrivateAddress { host: Some(host.to_owned()), ip: refused }.into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// IPv4 blocks that are not globally reachable (the IANA IPv4 special-purpose registry, with
/// multicast and the reserved 240/4).
const NOT_GLOBAL_V4: &[(Ipv4Addr, u32)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8),       // "this network"
    (Ipv4Addr::new(10, 0, 0, 0), 8),      // private
    (Ipv4Addr::new(100, 64, 0, 0), 10),   // shared address space (carrier-grade NAT)
    (Ipv4Addr::new(127, 0, 0, 0), 8),     // loopback
    (Ipv4Addr::new(169, 254, 0, 0), 16),  // link-local, where cloud metadata services live
    (Ipv4Addr::new(172, 16, 0, 0), 12),   // private
    (Ipv4Addr::new(192, 0, 0, 0), 24),    // IETF protocol assignments
    (Ipv4Addr::new(192, 0, 2, 0), 24),    // documentation (TEST-NET-1)
    (Ipv4Addr::new(192, 88, 99, 0), 24),  // 6to4 relay anycast
    (Ipv4Addr::new(192, 168, 0, 0), 16),  // private
    (Ipv4Addr::new(198, 18, 0, 0), 15),   // benchmarking
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation (TEST-NET-2)
    (Ipv4Addr::new(203, 0, 113, 0), 24),  // documentation (TEST-NET-3)
    (Ipv4Addr::new(224, 0, 0, 0), 4),     // multicast
    (Ipv4Addr::new(240, 0, 0, 0), 4),     // reserved, with the broadcast 255.255.255.255
];

/// IPv6 blocks that are not globally reachable (the IANA IPv6 special-purpose registry, with
/// site-local and multicast).
///
/// The forms that carry an IPv4 address are treated two ways:
/// - IPv4-compatible (`::/96`, which also holds `::` and `::1`), IPv4-mapped and IPv4-translated
///   addresses are refused whole. No resolver answers with them, and a webhook on an IPv4 host
///   is written with its IPv4 address.
/// - NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) are judged by the IPv4 address they embed
///   (see [`embedded_v4`]). On an IPv6-only network, DNS64 answers every public name with a
///   `64:ff9b::` address, so refusing the prefix would refuse every webhook there, while the
///   embedded address is where the translator or relay really connects.
/// - Local-use NAT64 (`64:ff9b:1::/48`) is refused whole: where its IPv4 address sits depends on
///   the prefix length each network chooses.
const NOT_GLOBAL_V6: &[(Ipv6Addr, u32)] = &[
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96), // unspecified, loopback, IPv4-compatible
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96), // IPv4-mapped
    (Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0), 96), // IPv4-translated
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48), // local-use NAT64
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64), // discard-only
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23), // IETF protocol assignments, Teredo
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32), // documentation
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20), // documentation
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16), // segment routing
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7), // unique local
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10), // link-local
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10), // site-local (deprecated, still routed by some)
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8), // multicast
];

/// Whether `ip` is reachable on the public internet, so a webhook may be called there.
pub(super) fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let listed = NOT_GLOBAL_V6.iter().any(|&(net, len)| same_prefix_v6(bits, u128::from(net), len));
            !listed && embedded_v4(v6).is_none_or(is_global_v4)
        }
    }
}

fn is_global_v4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    !NOT_GLOBAL_V4.iter().any(|&(net, len)| same_prefix_v4(bits, u32::from(net), len))
}

/// The IPv4 address a NAT64 (`64:ff9b::/96`, in the last 32 bits) or 6to4 (`2002::/16`, in
/// the 32 bits after the prefix) address stands for.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let nat64 = u128::from(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0));
    let six_to_four = u128::from(Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0));
    if same_prefix_v6(bits, nat64, 96) {
        Some(Ipv4Addr::from(bits as u32))
    } else if same_prefix_v6(bits, six_to_four, 16) {
        Some(Ipv4Addr::from((bits >> 80) as u32))
    } else {
        None
    }
}

fn same_prefix_v4(a: u32, b: u32, len: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    a & mask == b & mask
}

fn same_prefix_v6(a: u128, b: u128, len: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    a & mask == b & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFUSED: &[&str] = &[
        // Refused before.
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        // The gaps the robustness review found.
        "::127.0.0.1",
        "::ffff:0:127.0.0.1",
        "64:ff9b::127.0.0.1",
        "64:ff9b::10.0.0.1",
        "2002:7f00:1::",
        "2002:a00:1::",
        "fec0::1",
        "0.0.0.1",
        "0.1.2.3",
        "192.0.0.1",
        "192.0.2.2",
        "198.18.0.1",
        "198.19.255.255",
        "198.51.100.1",
        "203.0.113.1",
        "240.0.0.1",
        // The rest of the registries.
        "192.88.99.1",
        "::8.8.8.8",
        "::ffff:8.8.8.8",
        "64:ff9b:1::8.8.8.8",
        "100::1",
        "2001::1",
        "2001:1ff::1",
        "2001:db8::1",
        "3fff::1",
        "5f00::1",
    ];

    const GLOBAL: &[&str] = &[
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700::1111",
        "2a00:1450:4001::200e",
        "64:ff9b::8.8.8.8",
        "2002:808:808::",
        "100.128.0.1",
        "172.32.0.1",
        "198.20.0.1",
        "2001:200::1",
    ];

    #[test]
    fn special_purpose_addresses_are_not_global() {
        for text in REFUSED {
            let ip: IpAddr = text.parse().unwrap();
            assert!(!is_global(ip), "{text} must be refused");
        }
        for text in GLOBAL {
            let ip: IpAddr = text.parse().unwrap();
            assert!(is_global(ip), "{text} must be allowed");
        }
    }

    #[test]
    fn urls_with_private_literals_or_local_names_are_refused_at_creation() {
        let guard = WebhookGuard::default();
        for ip in REFUSED {
            let host = if ip.contains(':') { format!("[{ip}]") } else { (*ip).to_owned() };
            let url = format!("http://{host}:8080/hook");
            assert!(guard.check_url(&url).is_err(), "{url} must be refused");
            assert!(WebhookGuard { allow_private: true }.check_url(&url).is_ok(), "{url} allowed when private is");
        }
        // The URL parser reads these as 127.0.0.1.
        for url in
            ["http://localhost/", "http://LOCALHOST./", "http://a.localhost/", "http://0x7f.1/", "http://2130706433/"]
        {
            assert!(guard.check_url(url).is_err(), "{url} must be refused");
        }
        for url in ["https://hooks.example.com/a2a", "http://8.8.8.8/", "http://[2606:4700::1111]:8443/x"] {
            assert!(guard.check_url(url).is_ok(), "{url} must be allowed");
        }
    }

    async fn resolve(allow_private: bool, name: &str) -> std::result::Result<Vec<SocketAddr>, String> {
        let resolver = WebhookGuard { allow_private }.resolver();
        match resolver.resolve(name.parse().unwrap()).await {
            Ok(addrs) => Ok(addrs.collect()),
            Err(error) => {
                assert!(error.downcast_ref::<PrivateAddress>().is_some(), "refused by type: {error}");
                Err(error.to_string())
            }
        }
    }

    #[tokio::test]
    async fn the_resolver_refuses_names_of_private_addresses_unless_allowed() {
        for name in ["localhost", "127.0.0.1"] {
            let refused = resolve(false, name).await.expect_err(name);
            assert!(refused.contains(name), "{refused}");
            let addrs = resolve(true, name).await.expect(name);
            assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        }
    }
}
