//! What the HTTP layer knows about a request: version, extensions, caller.

use agentwire_types::Result;
use axum::http::request::Parts;
use http::{HeaderMap, HeaderName};

use crate::{Principal, ProtocolVersion, RequestContext};

/// Request metadata, read once by each binding. Version errors surface when the context is built,
/// so each binding reports them in its own format.
#[derive(Debug, Clone)]
pub(crate) struct RequestMeta {
    /// Negotiated at once, while the header can still be borrowed.
    version: Result<ProtocolVersion>,
    extensions: Vec<String>,
    principal: Option<Principal>,
}

// Prebuilt names: looking a header up by `&str` parses the name on every request.
const VERSION_HEADERS: [HeaderName; 2] =
    [HeaderName::from_static("a2a-version"), HeaderName::from_static("opvs-version")];
const EXTENSIONS_HEADERS: [HeaderName; 2] =
    [HeaderName::from_static("a2a-extensions"), HeaderName::from_static("opvs-extensions")];

fn header<'a>(headers: &'a HeaderMap, names: &[HeaderName]) -> Option<&'a str> {
    names.iter().find_map(|n| headers.get(n)).and_then(|v| v.to_str().ok())
}

fn query_param(query: Option<&str>, names: &[&str]) -> Option<String> {
    let query = query?;
    url_pairs(query).find(|(k, _)| names.iter().any(|n| n.eq_ignore_ascii_case(k))).map(|(_, v)| v)
}

/// Decoded `key=value` pairs of a query string.
pub(crate) fn url_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    reqwest::Url::parse(&format!("http://q/?{query}"))
        .map(|u| u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
}

impl RequestMeta {
    pub(crate) fn from_parts(parts: &Parts) -> Self {
        let version = match header(&parts.headers, &VERSION_HEADERS) {
            Some(value) => ProtocolVersion::negotiate(Some(value)),
            None => {
                ProtocolVersion::negotiate(query_param(parts.uri.query(), &["A2A-Version", "OPVS-Version"]).as_deref())
            }
        };
        let extensions = header(&parts.headers, &EXTENSIONS_HEADERS)
            .map(str::to_owned)
            .or_else(|| query_param(parts.uri.query(), &["A2A-Extensions", "OPVS-Extensions"]))
            .map(|v| v.split(',').map(|e| e.trim().to_owned()).filter(|e| !e.is_empty()).collect())
            .unwrap_or_default();
        let principal = parts.extensions.get::<Principal>().cloned();
        Self { version, extensions, principal }
    }

    /// The request context for `tenant`, or VersionNotSupported.
    pub(crate) fn context(self, tenant: &str) -> Result<RequestContext> {
        Ok(RequestContext {
            tenant: tenant.to_owned(),
            principal: self.principal,
            version: self.version?,
            extensions: self.extensions,
        })
    }
}
