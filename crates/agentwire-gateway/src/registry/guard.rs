//! What keeps a web page from changing the registry through a visitor's browser: a change is
//! JSON (which a page cannot send to another origin without a preflight, which the gateway's
//! CORS policy refuses), and one whose `Origin` is not the gateway's own is refused.

use agentwire_types::{A2AError, Peer};
use axum::extract::Request;
use http::header::{CONTENT_TYPE, HOST, ORIGIN};

use super::request::host_and_port;

/// The refusal of a body that is not declared JSON (`Content-Type: application/json`): a form or
/// `text/plain`, what a page sends without asking first.
pub(super) fn not_json(request: &Request) -> Option<A2AError> {
    let declared = request.headers().get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or_default();
    let essence = declared.split(';').next().unwrap_or_default().trim();
    if essence.eq_ignore_ascii_case("application/json") {
        return None;
    }
    let declared = if declared.is_empty() { "none".to_owned() } else { format!("{declared:?}") };
    Some(A2AError::content_type_not_supported(format!(
        "POST /agents takes a JSON body with Content-Type: application/json (this one declared {declared})"
    )))
}

/// The refusal of a change sent from a web page of another origin than the gateway's: its
/// public URL's, or, for a caller on the gateway's own host, the `Host` it was reached at. A
/// request without `Origin` (not a browser's) passes.
pub(super) fn foreign_origin(request: &Request, public_url: &str, peer: Option<&Peer>) -> Option<A2AError> {
    let origin = request.headers().get(ORIGIN)?;
    let origin_text = origin.to_str().unwrap_or_default();
    let own = |origin: &str| {
        let Some(origin_host) = host_and_port(origin) else { return false };
        let scheme = origin.split("://").next().unwrap_or_default();
        if host_and_port(public_url).is_some_and(|public| public == origin_host)
            && public_url.split("://").next().is_some_and(|public| public.eq_ignore_ascii_case(scheme))
        {
            return true;
        }
        let local = peer.is_some_and(|peer| peer.addr.ip().is_loopback());
        let host = request.headers().get(HOST).and_then(|host| host.to_str().ok());
        local && host.and_then(|host| host_and_port(&format!("{scheme}://{host}"))).is_some_and(|at| at == origin_host)
    };
    if own(origin_text) {
        return None;
    }
    Some(A2AError::permission_denied(format!(
        "the registry is changed from no other web origin than the gateway's own ({}); this request came from {:?}",
        origin_of(public_url),
        origin_text
    )))
}

/// The origin (`scheme://host[:port]`) of `url`.
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    let end = url[after_scheme..].find('/').map_or(url.len(), |at| after_scheme + at);
    &url[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut request = Request::new(axum::body::Body::empty());
        for (name, value) in headers {
            let name = http::HeaderName::from_bytes(name.as_bytes()).unwrap();
            request.headers_mut().insert(name, value.parse().unwrap());
        }
        request
    }

    #[test]
    fn only_json_is_taken() {
        assert!(not_json(&request(&[("content-type", "application/json")])).is_none());
        assert!(not_json(&request(&[("content-type", "Application/JSON; charset=utf-8")])).is_none());
        for other in ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data"] {
            assert!(not_json(&request(&[("content-type", other)])).is_some(), "{other}");
        }
        assert!(not_json(&request(&[])).is_some());
    }

    #[test]
    fn only_the_gateways_own_origin_changes_it() {
        let public = "https://gw.example/base";
        let loopback = Peer { addr: ([127, 0, 0, 1], 5000).into(), certificate: None, tls: false };
        let remote = Peer { addr: ([10, 0, 0, 1], 5000).into(), certificate: None, tls: false };
        assert!(foreign_origin(&request(&[]), public, None).is_none());
        assert!(foreign_origin(&request(&[("origin", "https://gw.example")]), public, None).is_none());
        let evil = foreign_origin(&request(&[("origin", "https://evil.example")]), public, Some(&loopback));
        assert!(evil.unwrap().message().contains("https://gw.example)"));
        assert!(foreign_origin(&request(&[("origin", "http://gw.example")]), public, None).is_some());
        assert!(foreign_origin(&request(&[("origin", "null")]), public, None).is_some());
        let reached = [("origin", "http://localhost:8080"), ("host", "localhost:8080")];
        assert!(foreign_origin(&request(&reached), public, Some(&loopback)).is_none());
        assert!(foreign_origin(&request(&reached), public, Some(&remote)).is_some());
    }
}
