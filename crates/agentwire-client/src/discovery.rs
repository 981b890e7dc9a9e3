//! Finding an agent: its card, read in whichever generation's form the agent writes it.

use agentwire_types::dialect::card;
use agentwire_types::AgentCard;

use crate::error::{Error, Result};

/// Where a card may be, tried in this order under the agent's base URL: v1.0 and v0.3's
/// well-known path, the legacy well-known path, then the path some early agents served.
const CARD_PATHS: [&str; 3] = ["/.well-known/agent-card.json", "/.well-known/agent.json", "/agentCard"];

/// The card at `url`: the URL itself when it names a card (a path ending in `.json` or
/// `/agentCard`), else the first of [`CARD_PATHS`] under it that answers.
pub(crate) async fn fetch_card(http: &reqwest::Client, url: &str) -> Result<AgentCard> {
    let url = url.trim_end_matches('/');
    let names_a_card = url.ends_with(".json") || url.ends_with("/agentCard");
    let candidates: Vec<String> =
        if names_a_card { vec![url.to_owned()] } else { CARD_PATHS.iter().map(|p| format!("{url}{p}")).collect() };
    for candidate in &candidates {
        let response = http
            .get(candidate)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|source| Error::Connection { url: candidate.clone(), source })?;
        let status = response.status();
        if status == http::StatusCode::NOT_FOUND {
            continue;
        }
        let body = response.bytes().await.map_err(|source| Error::Connection { url: candidate.clone(), source })?;
        if !status.is_success() {
            let body = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
            return Err(Error::Http { url: candidate.clone(), status, body });
        }
        let decode = |detail: String| Error::Decode { url: candidate.clone(), detail };
        let value = serde_json::from_slice(&body).map_err(|e| decode(format!("the card is not JSON: {e}")))?;
        return card::read(value).map_err(|e| decode(format!("not an agent card: {e}")));
    }
    Err(Error::NoCard { tried: candidates.join(", ") })
}
