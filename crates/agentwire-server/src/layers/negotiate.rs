//! Version and extension negotiation: what the client asked for, from the `A2A-Version` and
//! `A2A-Extensions` headers (or their `OPVS-` spellings, or the same-named query parameters).

use agentwire_types::A2AError;
use axum::extract::Request;
use http::{HeaderMap, HeaderName};
use tower::util::MapRequestLayer;

use crate::ProtocolVersion;

/// The version and extensions a request asked for. An unsupported version is kept as the error
/// the binding reports, with the code of the generation its method or route belongs to; absent
/// means the method's or route's own version.
#[derive(Debug, Clone)]
pub(crate) struct Negotiated {
    pub(crate) version: Result<Option<ProtocolVersion>, A2AError>,
    pub(crate) extensions: Vec<String>,
}

const VERSION: [HeaderName; 2] = [HeaderName::from_static("a2a-version"), HeaderName::from_static("opvs-version")];
const EXTENSIONS: [HeaderName; 2] =
    [HeaderName::from_static("a2a-extensions"), HeaderName::from_static("opvs-extensions")];

impl Negotiated {
    fn read(request: &Request) -> Self {
        let query = || query_pairs(request.uri().query());
        let asked = |names: &[HeaderName; 2]| header(request.headers(), names).or_else(|| query_param(query(), names));
        let version = ProtocolVersion::negotiate(asked(&VERSION).as_deref());
        let extensions = asked(&EXTENSIONS)
            .map(|list| list.split(',').map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned).collect())
            .unwrap_or_default();
        Self { version, extensions }
    }
}

fn header(headers: &HeaderMap, names: &[HeaderName; 2]) -> Option<String> {
    names.iter().find_map(|name| headers.get(name)).and_then(|value| value.to_str().ok()).map(str::to_owned)
}

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    query.and_then(|q| serde_urlencoded::from_str(q).ok()).unwrap_or_default()
}

fn query_param(pairs: Vec<(String, String)>, names: &[HeaderName; 2]) -> Option<String> {
    let wanted = |key: &str| names.iter().any(|name| name.as_str().eq_ignore_ascii_case(key));
    pairs.into_iter().find(|(key, _)| wanted(key)).map(|(_, value)| value)
}

/// Records the [`Negotiated`] version and extensions of every request.
pub(crate) fn negotiate() -> MapRequestLayer<fn(Request) -> Request> {
    MapRequestLayer::new(|mut request: Request| {
        let negotiated = Negotiated::read(&request);
        request.extensions_mut().insert(negotiated);
        request
    })
}
