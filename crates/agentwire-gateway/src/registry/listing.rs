//! What the registry shows: a search's page, the names a text finds, and the console's list.

use agentwire_store::registry::RegisteredAgent;
use agentwire_types::{A2AError, AgentCard, Timestamp};
use serde_json::{json, Value};

use super::search::{page_token, SearchQuery};
use super::{store_failed, Registry};
use crate::directory::Caller;

impl Registry {
    /// The agents `query` finds that `caller` may see, best first, one page of them.
    pub(super) async fn search(&self, caller: &Caller, query: &SearchQuery) -> Result<Value, A2AError> {
        let (mut agent_query, page_size, offset) = query.parse()?;
        self.first_listing().await;
        // The store finds the page itself, leaving out the agents the caller may not see.
        agent_query.excluded = self.directory.hidden_from(caller);
        agent_query = agent_query.page(offset, page_size);
        let found = self.store.search(&agent_query).await.map_err(store_failed)?;
        let known = self.known();
        let page: Vec<Value> = found
            .names
            .iter()
            .filter(|name| self.directory.get(name).is_some_and(|mounted| caller.sees(&mounted.visibility)))
            .filter_map(|name| known.agents.get(name))
            .map(|agent| self.entry(agent, caller))
            .collect();
        drop(known);
        let total = found.total;
        let mut answer = json!({ "agents": page, "totalSize": total });
        if offset + page_size < total {
            answer["nextPageToken"] = json!(page_token(offset + page_size));
        }
        Ok(answer)
    }

    /// The names of the agents `text` finds that `caller` may see, best first: one page of them.
    #[cfg(any(feature = "console", feature = "mcp"))]
    pub(crate) async fn found(&self, caller: &Caller, text: &str) -> Result<Vec<String>, A2AError> {
        use super::search::{MAX_PAGE, MAX_TEXT};
        use agentwire_store::registry::AgentQuery;
        if text.len() > MAX_TEXT {
            return Err(super::invalid(format!("the query text is at most {MAX_TEXT} bytes")));
        }
        self.first_listing().await;
        let query = AgentQuery { excluded: self.directory.hidden_from(caller), ..AgentQuery::text(text) };
        Ok(self.store.search(&query.page(0, MAX_PAGE)).await.map_err(store_failed)?.names)
    }

    /// An agent as a listing shows it: its name, the gateway's URL for it, the card the gateway
    /// serves for it (v1.0 form), its health and signature; an admin also sees who registered it
    /// and why its last check failed.
    pub(super) fn entry(&self, agent: &RegisteredAgent, caller: &Caller) -> Value {
        let name = &agent.registration.name;
        let state = &agent.state;
        // An agent registered for a mode this gateway lacks is not served here, whatever card
        // another instance recorded: the listing says why.
        let unable = self.caller_auth(&agent.registration).err();
        let served = self.directory.get(name).filter(|_| unable.is_none()).and_then(|mounted| {
            let card = mounted.upstream.card().ok().map(|card| AgentCard::clone(&card));
            card.or_else(|| state.card.as_deref().map(|card| mounted.upstream.rewrite().apply(card.clone())))
        });
        let time = |t: &Option<Timestamp>| t.as_ref().map(|t| json!(t));
        let mut entry = json!({
            "name": name,
            "url": format!("{}/agents/{name}", self.public_url),
            "healthy": state.healthy,
            "signature": state.signature.as_str(),
            "lastChecked": time(&state.checked_at),
            "lastAnswered": time(&state.answered_at),
        });
        match served {
            Some(card) => entry["card"] = json!(card),
            None => {
                let why = unable.as_deref().or(state.error.as_deref()).unwrap_or("not reached yet");
                entry["unreachable"] = json!(why);
            }
        }
        if caller.admin {
            entry["cardUrl"] = json!(agent.registration.card_url);
            entry["registeredBy"] = json!(agent.registration.registered_by);
            entry["visibility"] = json!(agent.registration.visibility);
            if let Some(mode) = agent.registration.caller_auth {
                entry["callerAuth"] = json!(mode.as_str());
            }
            if let Some(error) = &state.error {
                entry["error"] = json!(error);
            }
        }
        entry
    }

    /// What the console lists for the caller of `ctx`: the agents `text` finds (every agent
    /// without it) that it may see, with their health, last check and signature.
    #[cfg(feature = "console")]
    pub(crate) async fn console_listing(
        &self,
        ctx: agentwire_types::RequestContext,
        text: Option<String>,
    ) -> Vec<agentwire_server::ListedAgent> {
        let caller = crate::directory::caller_of(&self.app, ctx).await;
        self.first_listing().await;
        let names: Vec<String> = match text {
            Some(text) => self.found(&caller, &text).await.unwrap_or_default(),
            None => self.directory.agents().into_iter().map(|(name, _)| name).collect(),
        };
        let time = |t: &Option<Timestamp>| t.as_ref().map(Timestamp::to_string);
        // Under the lock, without a copy of every agent.
        let known = self.known();
        let mut listed = Vec::new();
        for name in names {
            let Some(mounted) = self.directory.get(&name) else { continue };
            if !caller.sees(&mounted.visibility) {
                continue;
            }
            // One page: the search box finds the others.
            if listed.len() == super::search::MAX_PAGE {
                break;
            }
            let state = known.agents.get(&name).map(|agent| agent.state.clone()).unwrap_or_default();
            // An agent not reached yet is listed by name, saying why; one reached before shows
            // its last card, and why its last check failed beside it.
            let (card, error) = match mounted.upstream.card() {
                Ok(card) => (AgentCard::clone(&card), state.error.clone()),
                Err(why) => {
                    let description = why.message().to_owned();
                    (AgentCard { name: name.clone(), description, ..AgentCard::default() }, None)
                }
            };
            let facts = agentwire_server::RegistryFacts {
                healthy: state.healthy,
                last_checked: time(&state.checked_at),
                last_answered: time(&state.answered_at),
                signature: state.signature.as_str().to_owned(),
                error,
            };
            let console = format!("/agents/{name}/console");
            listed.push(agentwire_server::ListedAgent { name, console, card, registry: Some(facts) });
        }
        listed
    }
}
