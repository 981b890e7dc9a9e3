//! `GET /agents` of a gateway without a registry: the agents mounted at it, with the cards it
//! serves for them.

use axum::routing::{get, MethodRouter};

use crate::directory::{json_response, Directory};

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
        std::future::ready(json_response(http::StatusCode::OK, &serde_json::json!({ "agents": listed })))
    })
}
