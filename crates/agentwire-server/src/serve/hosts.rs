//! The host names a server answers under, against DNS rebinding: a page of another site whose name
//! an attacker points at this server's address names its own host in every request, so a server
//! that authenticates nobody refuses names it was not told it has (421 Misdirected Request).

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use http::{header, Request, StatusCode};

/// The host names a server answers under: IP addresses, `localhost` (and names under
/// `.localhost`), and the names it is given. A request naming another host (in `Host`, or the
/// HTTP/2 `:authority`) is refused with 421, whatever its path: the A2A API, the console, MCP,
/// a gateway's directory and registry alike.
///
/// An address cannot be rebound (a page can only be served under a name), so every IP address
/// is served; `*` serves every name.
///
/// ```
/// use agentwire_server::ServedHosts;
///
/// let hosts = ServedHosts::default().with_host("agents.example.com");
/// assert!(hosts.serves("agents.example.com:443"));
/// assert!(hosts.serves("127.0.0.1:8080") && hosts.serves("localhost") && hosts.serves("[::1]:80"));
/// assert!(!hosts.serves("evil.example"));
/// assert!(ServedHosts::default().with_host("*").serves("evil.example"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServedHosts {
    /// Lowercase names, without a trailing dot.
    names: Arc<[String]>,
}

impl ServedHosts {
    /// These hosts and `host` too (a name, without a port; `*` for every name).
    pub fn with_host(self, host: &str) -> Self {
        let mut names = self.names.to_vec();
        names.push(normal(host));
        Self { names: Arc::from(names) }
    }

    /// Whether a request naming `host` (a `Host` header's value, with or without a port) is
    /// served.
    pub fn serves(&self, host: &str) -> bool {
        let is_port = |port: &str| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
        let name = match host.strip_prefix('[') {
            // An IPv6 address, in brackets, and nothing after it but a port.
            Some(rest) => {
                return rest.split_once(']').is_some_and(|(ip, after)| {
                    ip.parse::<std::net::Ipv6Addr>().is_ok()
                        && (after.is_empty() || after.strip_prefix(':').is_some_and(is_port))
                });
            }
            None => match host.rsplit_once(':') {
                Some((name, port)) if is_port(port) => name,
                Some(_) => return false,
                None => host,
            },
        };
        let name = normal(name);
        name.parse::<std::net::Ipv4Addr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.names.iter().any(|allowed| *allowed == name || allowed == "*")
    }

    /// The host `request` names: the URI's authority where it has one (HTTP/2's `:authority`, an
    /// absolute-form request target, which takes precedence over `Host`), else `Host`.
    pub(crate) fn named_by<B>(request: &Request<B>) -> &str {
        let authority = request.uri().authority().map(|authority| authority.as_str());
        let host = || request.headers().get(header::HOST).and_then(|v| v.to_str().ok());
        authority.or_else(host).unwrap_or("")
    }

    /// The refusal of a request under a name this server does not answer to.
    pub(crate) fn refusal(host: &str) -> Response {
        let message = format!(
            "this server does not answer under the name {host:?}: it serves its addresses, localhost and the \
             names it is configured with (--public-url, --allow-host)"
        );
        let body = serde_json::json!({"error": {"code": 421, "status": "MISDIRECTED_REQUEST", "message": message}});
        (StatusCode::MISDIRECTED_REQUEST, axum::Json(body)).into_response()
    }
}

/// A service that answers requests naming a host [`ServedHosts`] refuses with 421, and passes
/// the others (all of them, without hosts) to the service it wraps. Not boxed: on the request
/// path of every call.
#[derive(Clone)]
pub(crate) struct HostCheck<S> {
    inner: S,
    hosts: Option<ServedHosts>,
}

impl<S> HostCheck<S> {
    pub(crate) fn new(inner: S, hosts: Option<ServedHosts>) -> Self {
        Self { inner, hosts }
    }
}

impl<S, B> tower::Service<Request<B>> for HostCheck<S>
where
    S: tower::Service<Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = futures_util::future::Either<std::future::Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if let Some(hosts) = &self.hosts {
            let host = ServedHosts::named_by(&request);
            if !hosts.serves(host) {
                return futures_util::future::Either::Left(std::future::ready(Ok(ServedHosts::refusal(host))));
            }
        }
        futures_util::future::Either::Right(self.inner.call(request))
    }
}

fn normal(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_only_look_local_are_not_served() {
        let hosts = ServedHosts::default();
        for refused in [
            "evil.example",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "[evil]",
            "",
            "0x7f000001x",
            "localhost:1@evil.example",
            "[::1]evil",
            "localhost:",
        ] {
            assert!(!hosts.serves(refused), "{refused}");
        }
        for served in ["LOCALHOST:80", "localhost.", "app.localhost", "10.0.0.7:9", "[fe80::1]:8080"] {
            assert!(hosts.serves(served), "{served}");
        }
        assert!(hosts.with_host("Agents.Example.COM.").serves("agents.example.com:8443"));
    }
}
