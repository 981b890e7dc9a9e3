//! The interfaces a client can call: a card's interfaces whose binding and protocol version this
//! client speaks, in the order it tries them.

use agentwire_types::dialect::WireForm;
use agentwire_types::{AgentInterface, Binding, Dialect};
use http::HeaderMap;

/// Whether this build of the client can call `binding`.
fn is_spoken(binding: Binding) -> bool {
    binding != Binding::Grpc || cfg!(feature = "grpc")
}

/// A protocol version this client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// 1.0.
    V1,
    /// 0.3.
    V03,
}

impl Version {
    /// The version a card's `protocolVersion` names (compared by major and minor), if spoken.
    pub fn from_card(version: &str) -> Option<Self> {
        let mut numbers = version.trim().trim_start_matches(['v', 'V']).split('.');
        match (numbers.next(), numbers.next()) {
            (Some("1"), Some("0") | None) => Some(Version::V1),
            (Some("0"), Some("3")) => Some(Version::V03),
            _ => None,
        }
    }

    /// The value of the `A2A-Version` header for this version.
    pub fn header(self) -> &'static str {
        match self {
            Version::V1 => "1.0",
            Version::V03 => "0.3",
        }
    }

    /// The protocol generation, as the shared codecs name it.
    pub fn dialect(self) -> Dialect {
        match self {
            Version::V1 => Dialect::V1,
            Version::V03 => Dialect::V03,
        }
    }
}

/// An interface this client can call: the binding, the protocol version, the URL, the tenant it
/// puts in requests, and the credentials it sends there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The binding spoken there.
    pub binding: Binding,
    /// The protocol version spoken there.
    pub version: Version,
    /// The interface's URL.
    pub url: String,
    /// The tenant the card names for the interface; empty for none.
    pub tenant: String,
    /// The headers (gRPC metadata) sent with every call: credentials and custom headers.
    pub(crate) headers: HeaderMap,
    /// Whether the interface is on the agent's host (or one allowed), where the client's
    /// credentials go.
    pub(crate) trusted: bool,
}

impl Endpoint {
    /// The endpoint of a card's interface, if this client speaks its binding and version.
    pub(crate) fn of(interface: &AgentInterface) -> Option<Self> {
        let binding = Binding::from_name(&interface.protocol_binding).filter(|b| is_spoken(*b))?;
        Some(Endpoint {
            binding,
            version: Version::from_card(&interface.protocol_version)?,
            url: interface.url.trim_end_matches('/').to_owned(),
            tenant: interface.tenant.clone(),
            headers: HeaderMap::new(),
            trusted: false,
        })
    }

    /// How answers from this endpoint are written.
    pub(crate) fn form(&self) -> WireForm {
        match (self.version, self.binding) {
            (Version::V1, _) => WireForm::V1,
            (Version::V03, Binding::HttpJson) => WireForm::V03Proto,
            (Version::V03, _) => WireForm::V03,
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.binding.name(), self.version.header(), self.url)
    }
}

/// Whether `url` is at or below `base`: the same origin (scheme, host, port, the default port
/// spelled or not) and a path on or below `base`'s, compared segment by segment (`/a` is not
/// under `/ab`), as the URLs stand once parsed, with their dot segments resolved.
pub(crate) fn is_within(url: &reqwest::Url, base: &reqwest::Url) -> bool {
    let base_path = base.path().trim_end_matches('/');
    let below = url.path().strip_prefix(base_path).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    url.origin() == base.origin() && below
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interface(binding: &str, version: &str) -> AgentInterface {
        AgentInterface {
            url: "http://a/".into(),
            protocol_binding: binding.into(),
            tenant: String::new(),
            protocol_version: version.into(),
        }
    }

    #[test]
    fn interfaces_of_a_spoken_binding_and_version_are_endpoints() {
        let endpoint = Endpoint::of(&interface("JSONRPC", "1.0")).unwrap();
        assert_eq!((endpoint.url.as_str(), endpoint.version), ("http://a", Version::V1));
        assert_eq!(Endpoint::of(&interface("HTTP+JSON", "0.3.0")).map(|e| e.version), Some(Version::V03));
        assert_eq!(Endpoint::of(&interface("JSONRPC", "1.0.2")).map(|e| e.version), Some(Version::V1));
        assert!(Endpoint::of(&interface("JSONRPC", "0.2.5")).is_none());
        assert!(Endpoint::of(&interface("JSONRPC", "2.0")).is_none());
        assert!(Endpoint::of(&interface("KAFKA", "1.0")).is_none());
        assert_eq!(Endpoint::of(&interface("GRPC", "1.0")).is_some(), cfg!(feature = "grpc"));
    }
}
