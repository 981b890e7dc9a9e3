//! `GET /agents` of a gateway without a registry: the agents mounted at it, with the cards it
//! serves for them.

use axum::response::{IntoResponse, Response};
use axum::routing::{get, MethodRouter};
use http::{header, HeaderValue};

use crate::directory::Directory;

/// The listing, as the agents stand when it is asked for: `{"agents": [{"name", "url", "card"}]}`,
/// each card in its v1.0 form (each agent's own card URL serves the form a client asks for); an
/// agent not reached yet has no card, and says why (`"unreachable"`).
pub(crate) fn route<S: Clone + Send + Sync + 'static>(agents: Directory, public_url: String) -> MethodRouter<S> {
    get(move || {
        let listed: Vec<serde_json::Value> = agents
            .agents()
            .into_iter()
            .map(|(name, mounted)| {
                let url = format!("{public_url}/agents/{name}");
                match mounted.upstream.card() {
                    Ok(card) => serde_json::json!({ "name": name, "url": url, "card": &*card }),
                    Err(why) => serde_json::json!({ "name": name, "url": url, "unreachable": why.message() }),
                }
            })
            .collect();
        std::future::ready(respond(serde_json::to_vec(&serde_json::json!({ "agents": listed })).unwrap_or_default()))
    })
}

fn respond(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}
