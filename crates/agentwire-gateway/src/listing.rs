//! `GET /agents`: the agents mounted at the gateway, with the cards it serves for them.

use agentwire_types::AgentCard;
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, MethodRouter};
use http::{header, HeaderValue};

/// A mounted agent as the listing shows it.
pub(crate) struct Listed {
    pub(crate) name: String,
    pub(crate) url: String,
    pub(crate) card: AgentCard,
}

/// The listing, encoded once: `{"agents": [{"name", "url", "card"}]}`, the card in its v1.0
/// form (each agent's own card URL serves the form a client asks for).
pub(crate) fn route<S: Clone + Send + Sync + 'static>(agents: Vec<Listed>) -> MethodRouter<S> {
    let agents: Vec<serde_json::Value> = agents
        .into_iter()
        .map(|agent| serde_json::json!({ "name": agent.name, "url": agent.url, "card": agent.card }))
        .collect();
    let body = Bytes::from(serde_json::to_vec(&serde_json::json!({ "agents": agents })).unwrap_or_default());
    get(move || std::future::ready(respond(body.clone())))
}

fn respond(body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}
