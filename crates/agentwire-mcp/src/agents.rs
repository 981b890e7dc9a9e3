//! The agents an MCP server offers, as a caller may see them.

use std::sync::Arc;

use agentwire_server::{Operations, Principal, RequestContext};
use agentwire_types::{A2AError, A2aRequest, A2aResponse, AgentCard, Binding, Dialect, Front};
use futures_util::future::BoxFuture;
use tower::ServiceExt;

/// An agent offered as MCP tools: its name on this server, its card, and the operation service
/// that runs its calls (with the [`App`](agentwire_server::App)'s layers in front, so that a
/// tool call is authenticated, metered and scoped as any other call).
#[derive(Clone)]
pub struct McpAgent {
    /// The agent's name: the `agent` argument of the generic tools and its skills' prefix.
    pub name: String,
    /// Its card, as its callers are served it.
    pub card: Arc<AgentCard>,
    /// What runs its operations.
    pub operations: Operations,
}

impl McpAgent {
    /// The agent `operations` serve, named after its `card` as a gateway's registry names it
    /// (`Weather Bot` is `weather-bot`).
    pub fn named_by_card(card: Arc<AgentCard>, operations: Operations) -> Self {
        Self { name: agent_name(&card.name), card, operations }
    }
}

impl std::fmt::Debug for McpAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpAgent").field("name", &self.name).field("card", &self.card.name).finish()
    }
}

/// Where an MCP server finds the agents a caller may use: one agent (`agentwire serve --mcp`),
/// a gateway's agents and registry (`agentwire gateway --mcp`), or remote agents reached with a
/// client (`agentwire mcp URL`).
///
/// ```
/// use agentwire_mcp::{AgentDirectory, OneAgent};
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{App, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let operations = App::new().service(RequestHandler::builder(EchoAgent).build());
/// let agents = OneAgent::new(operations).agents(None).await;
/// assert_eq!(agents.len(), 1);
/// # });
/// ```
pub trait AgentDirectory: Send + Sync + 'static {
    /// The agents `caller` may see, in the order they are listed.
    fn agents<'a>(&'a self, caller: Option<&'a Principal>) -> BoxFuture<'a, Vec<McpAgent>>;

    /// The agents that match `query` for `caller`, best first. By default, those whose card
    /// names one of the query's words in its name, description or skills.
    fn search<'a>(
        &'a self,
        caller: Option<&'a Principal>,
        query: &'a str,
    ) -> BoxFuture<'a, Result<Vec<McpAgent>, A2AError>> {
        Box::pin(async move { Ok(matching(self.agents(caller).await, query)) })
    }

    /// Whether skill tools carry their agent's name (`NAME_SKILL`): true where several agents
    /// may be offered.
    fn prefixed(&self) -> bool {
        true
    }
}

/// The `agents` whose cards name one of `query`'s words (all of them for an empty query): the
/// search of a directory without an index of its own.
pub fn matching(agents: Vec<McpAgent>, query: &str) -> Vec<McpAgent> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    agents.into_iter().filter(|agent| words.is_empty() || mentions(&agent.card, &words)).collect()
}

/// Whether any of `words` (lowercase) is in the card's name, description or skills.
fn mentions(card: &AgentCard, words: &[String]) -> bool {
    let mut text = format!("{} {}", card.name, card.description);
    for skill in &card.skills {
        text.push(' ');
        text.push_str(&skill.name);
        text.push(' ');
        text.push_str(&skill.description);
        text.push(' ');
        text.push_str(&skill.tags.join(" "));
    }
    let text = text.to_lowercase();
    words.iter().any(|word| text.contains(word.as_str()))
}

/// The one agent an `agentwire serve --mcp` offers: the operations behind its routes, its card
/// read from them on every listing (it follows the card the server serves).
#[derive(Clone)]
pub struct OneAgent {
    operations: Operations,
}

impl OneAgent {
    /// The agent served by `operations`.
    pub fn new(operations: Operations) -> Self {
        Self { operations }
    }
}

impl AgentDirectory for OneAgent {
    fn agents<'a>(&'a self, _caller: Option<&'a Principal>) -> BoxFuture<'a, Vec<McpAgent>> {
        Box::pin(async move {
            match card_of(&self.operations).await {
                Ok(card) => vec![McpAgent::named_by_card(Arc::new(card), self.operations.clone())],
                Err(error) => {
                    tracing::warn!(%error, "the agent's card could not be read; no tools are offered");
                    Vec::new()
                }
            }
        })
    }

    fn prefixed(&self) -> bool {
        false
    }
}

/// A fixed list of agents (`agentwire mcp URL…`: agents reached with clients).
#[derive(Clone, Debug)]
pub struct AgentList {
    agents: Vec<McpAgent>,
    prefixed: bool,
}

impl AgentList {
    /// The `agents`, offered to every caller; their skill tools carry their names when
    /// `prefixed` (several agents, or a gateway's, which may gain more).
    pub fn new(agents: Vec<McpAgent>, prefixed: bool) -> Self {
        Self { agents, prefixed }
    }
}

impl AgentDirectory for AgentList {
    fn agents<'a>(&'a self, _caller: Option<&'a Principal>) -> BoxFuture<'a, Vec<McpAgent>> {
        Box::pin(std::future::ready(self.agents.clone()))
    }

    fn prefixed(&self) -> bool {
        self.prefixed
    }
}

/// The public card `operations` serves.
pub async fn card_of(operations: &Operations) -> Result<AgentCard, A2AError> {
    let ctx = RequestContext::new(Dialect::V1, Binding::HttpJson).with_front(Front::Mcp);
    match operations.clone().oneshot((ctx, A2aRequest::GetAgentCard)).await? {
        A2aResponse::Card(card) => Ok(*card),
        _ => Err(A2AError::internal("the agent answered its card with something else")),
    }
}

/// An agent's name for its card's `name`: the name a gateway's registry gives it
/// ([`slug`](agentwire_types::text::slug)), or `agent` when that has no letter or digit.
fn agent_name(card_name: &str) -> String {
    match agentwire_types::text::slug(card_name) {
        name if name.is_empty() => "agent".to_owned(),
        name => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_is_named_as_a_registry_names_it() {
        assert_eq!(agent_name("Currency Agent"), "currency-agent");
        assert_eq!(agent_name("<script>"), "script");
        assert_eq!(agent_name("日本"), "agent");
    }
}
