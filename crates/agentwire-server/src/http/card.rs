//! The public agent card over HTTP, with validators for caching: the combined card every client
//! generation reads, or the v1.0 card alone when the client asks for version 1.0 (or the server
//! is configured to serve only that). The card is the operation service's answer to
//! `GetAgentCard`, so a layer sees card fetches too, and a service may change its card.

use std::sync::Mutex;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};

use agentwire_types::dialect::CardForm;
use agentwire_types::{A2aRequest, AgentCard, Binding, Dialect};

use super::errors::{http_status, with_error_headers, RestError};
use super::{json_response, AppState};
use crate::layers::Negotiated;
use crate::{ProtocolVersion, RequestContext};

/// How long clients may reuse the card without asking again.
const CACHE_CONTROL: &str = "public, max-age=300";

/// Which form of the card each client gets, and since when each form has been what it is.
pub(crate) struct CardForms {
    strict: bool,
    /// Per form (v1.0, combined): the ETag last served and when that content was first served.
    since: [Mutex<Option<(HeaderValue, HeaderValue)>>; 2],
}

impl CardForms {
    pub(crate) fn new(strict: bool) -> Self {
        Self { strict, since: Default::default() }
    }

    /// The form of the card the client reads: v1.0's for a client that asks for 1.0 (or for
    /// everyone when strict), else the combined card every generation reads.
    fn form(&self, asks: Option<ProtocolVersion>) -> CardForm {
        if self.strict || matches!(asks, Some(ProtocolVersion::V1_0 | ProtocolVersion::V1_1)) {
            CardForm::V1
        } else {
            CardForm::Combined
        }
    }

    /// The card in `form`, with its validators.
    fn document(&self, card: &AgentCard, form: CardForm) -> CardDocument {
        let json = serde_json::to_vec(&crate::core::card_json(card, form)).unwrap_or_default();
        // The ETag is a hash of the content, so it changes exactly when the card does; not when
        // only its signatures do (a signer may sign again, ECDSA differently each time).
        let unsigned = (!card.signatures.is_empty()).then(|| {
            let unsigned = AgentCard { signatures: Vec::new(), ..card.clone() };
            serde_json::to_vec(&crate::core::card_json(&unsigned, form)).unwrap_or_default()
        });
        let hash = unsigned
            .as_deref()
            .unwrap_or(&json)
            .iter()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
        let etag = HeaderValue::from_str(&format!("\"{hash:016x}\"")).unwrap_or(HeaderValue::from_static("\"0\""));
        let slot = &self.since[match form {
            CardForm::V1 => 0,
            CardForm::Combined => 1,
        }];
        // A short section: compare and maybe replace two header values.
        let mut since = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let last_modified = match since.as_ref() {
            Some((seen, at)) if *seen == etag => at.clone(),
            _ => {
                let now = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
                let now =
                    HeaderValue::from_str(&now).unwrap_or(HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"));
                *since = Some((etag.clone(), now.clone()));
                now
            }
        };
        CardDocument { json: Bytes::from(json), etag, last_modified }
    }
}

/// The card, encoded, with its cache validators.
struct CardDocument {
    json: Bytes,
    etag: HeaderValue,
    last_modified: HeaderValue,
}

impl CardDocument {
    fn matches(&self, if_none_match: Option<&HeaderValue>) -> bool {
        let Some(tags) = if_none_match.and_then(|v| v.to_str().ok()) else { return false };
        let ours = self.etag.to_str().unwrap_or_default();
        tags.split(',').map(str::trim).any(|t| t == "*" || t.trim_start_matches("W/") == ours)
    }
}

pub(crate) async fn serve(State(state): State<AppState>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let asks = parts.extensions.get::<Negotiated>().and_then(|n| n.version.as_ref().ok().copied().flatten());
    let form = state.card.form(asks);
    // The fetch is an operation of the generation asked for; of the card's own when none is.
    let dialect = match (asks, form) {
        (Some(ProtocolVersion::V1_0 | ProtocolVersion::V1_1), _) | (None, CardForm::V1) => Dialect::V1,
        (Some(ProtocolVersion::V0_3), _) | (None, CardForm::Combined) => Dialect::V03,
    };
    let if_none_match = parts.headers.get(header::IF_NONE_MATCH).cloned();
    let mut ctx = RequestContext::new(dialect, Binding::HttpJson);
    ctx.peer = parts.extensions.get::<agentwire_types::Peer>().cloned();
    ctx.metadata = std::mem::take(&mut parts.headers);
    let card = match crate::service::start(&state.operations, ctx, A2aRequest::GetAgentCard).await {
        Ok(response) => AgentCard::try_from(response),
        Err(error) => Err(error),
    };
    let card = match card {
        Ok(card) => state.card.document(&card, form),
        Err(error) => {
            let response = json_response(http_status(error.kind()), JSON, &RestError::from(&error));
            return with_error_headers(response, &error);
        }
    };
    let validators = [
        (header::ETAG, card.etag.clone()),
        (header::LAST_MODIFIED, card.last_modified.clone()),
        (header::CACHE_CONTROL, HeaderValue::from_static(CACHE_CONTROL)),
        // Browsers get CORS headers and other clients do not: a cache keeps one copy of each.
        (header::VARY, HeaderValue::from_static("origin, a2a-version, opvs-version")),
    ];
    if card.matches(if_none_match.as_ref()) {
        return (StatusCode::NOT_MODIFIED, validators).into_response();
    }
    (validators, [(header::CONTENT_TYPE, JSON)], card.json).into_response()
}

/// Serves the agent's public signing keys as a JWK Set (RFC 7517 §5), encoded once.
pub(crate) fn keys(keys: &agentwire_jose::JwkSet) -> impl Fn() -> std::future::Ready<Response> + Clone + use<> {
    let document = Bytes::from(serde_json::to_vec(keys).unwrap_or_default());
    move || {
        let headers = [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/jwk-set+json")),
            (header::CACHE_CONTROL, HeaderValue::from_static(CACHE_CONTROL)),
        ];
        std::future::ready((headers, document.clone()).into_response())
    }
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");
