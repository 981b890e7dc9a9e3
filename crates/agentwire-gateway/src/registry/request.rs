//! A registration's body, and what makes one well formed: its URL, name, token and visibility.

use std::net::{IpAddr, SocketAddr};

use agentwire_store::registry::{CallerAuthMode, Visibility};
use agentwire_types::A2AError;
use serde::Deserialize;

use super::invalid;

/// A registration's body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RegisterRequest {
    pub(super) url: String,
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) token: Option<String>,
    #[serde(default)]
    pub(super) visibility: Option<Visibility>,
    /// Call the agent as each caller instead of with a token of its own.
    #[serde(default, rename = "callerAuth")]
    pub(super) caller_auth: Option<CallerAuthMode>,
}

/// The longest URL, token and visibility entry registered, and the most entries in each of the
/// visibility's lists.
const MAX_URL: usize = 2048;
const MAX_TOKEN: usize = 4096;
pub(super) const MAX_ENTRY: usize = 256;
const MAX_ENTRIES: usize = 64;

impl RegisterRequest {
    pub(super) fn validate(&self) -> Result<(), A2AError> {
        let url = &self.url;
        if url.len() > MAX_URL || !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(format!("url must be an http:// or https:// URL of at most {MAX_URL} bytes")));
        }
        if url.parse::<http::Uri>().ok().and_then(|uri| uri.host().map(str::to_owned)).is_none() {
            return Err(invalid("url is not a URL with a host"));
        }
        if let Some(token) = &self.token
            && (token.is_empty() || token.len() > MAX_TOKEN || !token.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(invalid(format!("token must be 1 to {MAX_TOKEN} visible ASCII characters")));
        }
        if self.caller_auth.is_some() && self.token.is_some() {
            return Err(invalid(
                "token and callerAuth exclude each other: an agent called as its callers is sent their tokens, \
                 never one of its own",
            ));
        }
        if let Some(visibility) = &self.visibility {
            for list in [&visibility.principals, &visibility.tenants, &visibility.scopes] {
                let too_long = list.iter().any(|entry| entry.is_empty() || entry.len() > MAX_ENTRY);
                if list.len() > MAX_ENTRIES || too_long {
                    return Err(invalid(format!(
                        "visibility lists hold at most {MAX_ENTRIES} names of 1 to {MAX_ENTRY} bytes"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The longest agent name.
const MAX_NAME: usize = 64;

pub(super) fn validate_name(name: &str) -> Result<(), A2AError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(invalid(format!("{name:?} cannot name an agent: use 1 to {MAX_NAME} letters, digits, - and _")))
    }
}

/// Whether `url` names the gateway itself: the host and port of its `public_url`, or of the
/// address it listens on (under `localhost` too, for a loopback address; under any loopback
/// address, for every address). An agent registered there would call the gateway back, in a
/// loop.
pub(super) fn calls_gateway(url: &str, public_url: &str, listen: Option<SocketAddr>) -> bool {
    let Some((host, port)) = host_and_port(url) else { return false };
    if host_and_port(public_url).is_some_and(|public| public == (host.clone(), port)) {
        return true;
    }
    let Some(listen) = listen.filter(|listen| listen.port() == port) else { return false };
    let (everywhere, loopback) = (listen.ip().is_unspecified(), listen.ip().is_loopback());
    match host.parse::<IpAddr>() {
        // A connection to the unspecified address reaches the host itself.
        Ok(ip) => ip == listen.ip() || ip.is_unspecified() || (everywhere && ip.is_loopback()),
        Err(_) => (everywhere || loopback) && host == "localhost",
    }
}

/// The host of `url` (lower-case, without an IPv6 address's brackets) and its port, the
/// scheme's default if it names none.
pub(super) fn host_and_port(url: &str) -> Option<(String, u16)> {
    let uri = url.parse::<http::Uri>().ok()?;
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    let port = uri.port_u16().or(match uri.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    })?;
    Some((host.trim_end_matches('.').to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_path_segments() {
        assert!(validate_name(&agentwire_types::text::slug("Currency Desk (EU)")).is_ok());
        assert!(validate_name("fx_2-b").is_ok());
        for bad in ["", "a/b", "a b", "é", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_registration_is_bounded() {
        let ok = RegisterRequest {
            url: "http://127.0.0.1:9001".into(),
            name: None,
            token: None,
            visibility: None,
            caller_auth: None,
        };
        assert!(ok.validate().is_ok());
        let long = RegisterRequest { url: format!("http://{}", "a".repeat(MAX_URL)), ..ok };
        assert!(long.validate().is_err());
        let ok = RegisterRequest { url: "http://127.0.0.1:9001".into(), ..long };
        let both = RegisterRequest { token: Some("t".into()), caller_auth: Some(CallerAuthMode::Passthrough), ..ok };
        assert!(both.validate().is_err(), "a token and the callers' tokens");
        let file = RegisterRequest { url: "file:///etc/passwd".into(), token: None, caller_auth: None, ..both };
        assert!(file.validate().is_err());
        let many = Visibility { principals: vec!["p".into(); MAX_ENTRIES + 1], ..Visibility::default() };
        let crowded = RegisterRequest { visibility: Some(many), ..file };
        assert!(RegisterRequest { url: "http://a".into(), ..crowded }.validate().is_err());
    }

    #[test]
    fn the_gateways_own_addresses_are_not_agents() {
        let listen = Some(SocketAddr::from(([127, 0, 0, 1], 8080)));
        let public = "https://gw.example";
        for own in [
            "http://127.0.0.1:8080/agents/fx",
            "http://localhost:8080",
            "http://0.0.0.0:8080/x",
            "https://GW.example/agents/fx",
            "https://gw.example:443",
        ] {
            assert!(calls_gateway(own, public, listen), "{own}");
        }
        for other in [
            "http://127.0.0.1:8081",
            "http://127.0.0.2:8080",
            "http://gw.example/agents/fx",
            "https://fx.example",
            "http://10.0.0.1:8080",
        ] {
            assert!(!calls_gateway(other, public, listen), "{other}");
        }
        let everywhere = Some(SocketAddr::from(([0, 0, 0, 0], 8080)));
        assert!(calls_gateway("http://[::1]:8080", public, everywhere));
        assert!(calls_gateway("http://127.0.0.2:8080", public, everywhere));
        assert!(!calls_gateway("http://10.0.0.1:8080", public, everywhere));
    }
}
