//! What the HTTP layer knows about a request: version, extensions, caller.

use agentwire_types::Result;
use axum::http::request::Parts;
use http::HeaderMap;

use crate::{Principal, ProtocolVersion, RequestContext};

/// Request metadata, read once by each binding. Version errors surface when the context is built,
/// so each binding reports them in its own format.
#[derive(Debug, Clone)]
pub(crate) struct RequestMeta {
    version: Option<String>,
    extensions: Vec<String>,
    principal: Option<Principal>,
}

fn header<'a>(headers: &'a HeaderMap, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| headers.get(*n)).and_then(|v| v.to_str().ok())
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
        let names = ["a2a-version", "opvs-version"];
        let version = header(&parts.headers, &names)
            .map(str::to_owned)
            .or_else(|| query_param(parts.uri.query(), &["A2A-Version", "OPVS-Version"]));
        let extensions = header(&parts.headers, &["a2a-extensions", "opvs-extensions"])
            .map(str::to_owned)
            .or_else(|| query_param(parts.uri.query(), &["A2A-Extensions", "OPVS-Extensions"]))
            .map(|v| v.split(',').map(|e| e.trim().to_owned()).filter(|e| !e.is_empty()).collect())
            .unwrap_or_default();
        let principal = parts.extensions.get::<Principal>().cloned();
        Self { version, extensions, principal }
    }

    /// The request context for `tenant`, or VersionNotSupported.
    pub(crate) fn context(&self, tenant: &str) -> Result<RequestContext> {
        Ok(RequestContext {
            tenant: tenant.to_owned(),
            principal: self.principal.clone(),
            version: ProtocolVersion::negotiate(self.version.as_deref())?,
            extensions: self.extensions.clone(),
        })
    }
}
