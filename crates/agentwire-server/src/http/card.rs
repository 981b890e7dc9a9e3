//! The public agent card over HTTP, with validators for caching: the combined card every client
//! generation reads, or the v1.0 card alone when the client asks for version 1.0 (or the server
//! is configured to serve only that).

use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, StatusCode};

use agentwire_types::{AgentCard, Dialect};

use super::layers::Negotiated;
use super::AppState;
use crate::ProtocolVersion;

/// The two forms of the public card.
pub(crate) struct Cards {
    combined: CardDocument,
    v1: CardDocument,
    strict: bool,
}

impl Cards {
    pub(crate) fn new(card: &AgentCard, strict: bool) -> Self {
        let document = |dialect| CardDocument::new(&crate::core::card_json(card, dialect));
        Self { combined: document(Dialect::V03), v1: document(Dialect::V1), strict }
    }

    fn choose(&self, negotiated: Option<&Negotiated>) -> &CardDocument {
        let asks_v1 = negotiated.is_some_and(|n| matches!(n.version, Ok(Some(ProtocolVersion::V1_0))));
        if self.strict || asks_v1 {
            &self.v1
        } else {
            &self.combined
        }
    }
}

/// The card, encoded once, with its cache validators.
pub(crate) struct CardDocument {
    json: Bytes,
    etag: HeaderValue,
    last_modified: HeaderValue,
}

/// How long clients may reuse the card without asking again.
const CACHE_CONTROL: &str = "public, max-age=300";

impl CardDocument {
    fn new(card: &serde_json::Value) -> Self {
        let json = serde_json::to_vec(card).unwrap_or_default();
        // The ETag is a hash of the content, so it changes exactly when the card does.
        let hash =
            json.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
        let etag = HeaderValue::from_str(&format!("\"{hash:016x}\"")).unwrap_or(HeaderValue::from_static("\"0\""));
        let now = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        let last_modified =
            HeaderValue::from_str(&now).unwrap_or(HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"));
        Self { json: Bytes::from(json), etag, last_modified }
    }

    fn matches(&self, headers: &HeaderMap) -> bool {
        let Some(tags) = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) else { return false };
        let ours = self.etag.to_str().unwrap_or_default();
        tags.split(',').map(str::trim).any(|t| t == "*" || t.trim_start_matches("W/") == ours)
    }
}

pub(crate) async fn serve(State(state): State<AppState>, request: axum::extract::Request) -> Response {
    let card = state.card.choose(request.extensions().get::<Negotiated>());
    let headers = request.headers();
    let validators = [
        (header::ETAG, card.etag.clone()),
        (header::LAST_MODIFIED, card.last_modified.clone()),
        (header::CACHE_CONTROL, HeaderValue::from_static(CACHE_CONTROL)),
        // Browsers get CORS headers and other clients do not: a cache keeps one copy of each.
        (header::VARY, HeaderValue::from_static("origin, a2a-version, opvs-version")),
    ];
    if card.matches(headers) {
        return (StatusCode::NOT_MODIFIED, validators).into_response();
    }
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
    (validators, content_type, card.json.clone()).into_response()
}
