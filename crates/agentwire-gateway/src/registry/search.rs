//! A search's parameters, from a query string or a JSON-RPC request's params, and its pages.

use agentwire_store::registry::{AgentQuery, Facet};
use agentwire_types::A2AError;
use base64::Engine as _;
use serde::Deserialize;

use super::invalid;
use super::request::MAX_ENTRY;

/// A search's parameters, from a query string or a JSON-RPC request's params.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SearchQuery {
    q: Option<String>,
    query: Option<String>,
    skill: Option<String>,
    tag: Option<String>,
    input_mode: Option<String>,
    output_mode: Option<String>,
    binding: Option<String>,
    version: Option<String>,
    signed: Option<String>,
    healthy: Option<String>,
    page_size: Option<usize>,
    page_token: Option<String>,
}

/// The page size when none is asked for, and the largest.
const DEFAULT_PAGE: usize = 50;
pub(super) const MAX_PAGE: usize = 100;
/// The longest query text.
pub(super) const MAX_TEXT: usize = 1024;

impl SearchQuery {
    /// The store's query, the page size and where the page starts.
    pub(super) fn parse(&self) -> Result<(AgentQuery, usize, usize), A2AError> {
        let text = self.q.as_ref().or(self.query.as_ref());
        if text.is_some_and(|text| text.len() > MAX_TEXT) {
            return Err(invalid(format!("the query text is at most {MAX_TEXT} bytes")));
        }
        let mut query = AgentQuery { text: text.cloned(), ..AgentQuery::default() };
        let filters = [
            (Facet::Skill, &self.skill),
            (Facet::Tag, &self.tag),
            (Facet::InputMode, &self.input_mode),
            (Facet::OutputMode, &self.output_mode),
            (Facet::Binding, &self.binding),
            (Facet::Version, &self.version),
            (Facet::Signed, &self.signed),
            (Facet::Healthy, &self.healthy),
        ];
        for (facet, value) in filters {
            if let Some(value) = value {
                if value.len() > MAX_ENTRY {
                    return Err(invalid(format!("a filter is at most {MAX_ENTRY} bytes")));
                }
                if matches!(facet, Facet::Signed | Facet::Healthy) && value != "true" && value != "false" {
                    return Err(invalid(format!("{} is true or false", facet.as_str())));
                }
                query = query.filter(facet, value);
            }
        }
        let page_size = self.page_size.unwrap_or(DEFAULT_PAGE);
        if page_size == 0 || page_size > MAX_PAGE {
            return Err(invalid(format!("pageSize is 1 to {MAX_PAGE}")));
        }
        let offset = match &self.page_token {
            None => 0,
            Some(token) if token.is_empty() => 0,
            Some(token) => base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(token)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .and_then(|text| text.strip_prefix("agents:").and_then(|n| n.parse().ok()))
                .ok_or_else(|| invalid("pageToken is not one this gateway gave"))?,
        };
        Ok((query, page_size, offset))
    }
}

pub(super) fn page_token(offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("agents:{offset}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_reads_its_filters_and_pages() {
        let query: SearchQuery = serde_urlencoded::from_str("q=fx&tag=Finance&healthy=true&pageSize=2").unwrap();
        let (parsed, size, offset) = query.parse().unwrap();
        assert_eq!(parsed.text.as_deref(), Some("fx"));
        assert_eq!(parsed.filters, [(Facet::Tag, "Finance".to_owned()), (Facet::Healthy, "true".to_owned())]);
        assert_eq!((size, offset), (2, 0));
        let next = SearchQuery { page_token: Some(page_token(4)), ..SearchQuery::default() };
        assert_eq!(next.parse().unwrap().2, 4);
        for bad in ["pageSize=0", "pageSize=101", "pageToken=zz", "signed=maybe"] {
            let query: SearchQuery = serde_urlencoded::from_str(bad).unwrap();
            assert!(query.parse().is_err(), "{bad}");
        }
    }
}
