//! The gateway's agents as MCP tools (`/mcp`): each caller is offered the agents it may see, and
//! `list_agents` searches the registry when there is one.

use std::sync::Arc;

use agentwire_mcp::{matching, AgentDirectory, McpAgent};
use agentwire_server::{Operations, Principal};
use agentwire_types::A2AError;
use futures_util::future::BoxFuture;

use crate::directory::{Caller, Directory, Mounted};
use crate::registry::Registry;
use crate::upstream::Upstream;

/// The agents of a gateway, as MCP offers them.
pub(crate) struct GatewayAgents {
    pub(crate) directory: Directory,
    /// The agent at the gateway's root, if any, with its operations.
    pub(crate) root: Option<(Upstream, Operations)>,
    pub(crate) registry: Option<Arc<Registry>>,
}

impl GatewayAgents {
    fn caller(&self, principal: Option<&Principal>) -> Caller {
        match &self.registry {
            // An admin of the registry sees every agent, as in its listing.
            Some(registry) => registry.caller(principal, None),
            None => Caller::of(principal),
        }
    }

    /// The agent mounted as `name`, if it has been reached and `caller` may see it.
    fn offered(name: &str, mounted: &Mounted, caller: &Caller) -> Option<McpAgent> {
        if !mounted.visibility.is_public() && !caller.sees(&mounted.visibility) {
            return None;
        }
        let card = mounted.upstream.card().ok()?;
        Some(McpAgent { name: name.to_owned(), card, operations: mounted.operations.clone() })
    }

    fn root(&self) -> Option<McpAgent> {
        let (upstream, operations) = self.root.as_ref()?;
        let card = upstream.card().ok()?;
        Some(McpAgent::named_by_card(card, operations.clone()))
    }
}

impl AgentDirectory for GatewayAgents {
    fn agents<'a>(&'a self, principal: Option<&'a Principal>) -> BoxFuture<'a, Vec<McpAgent>> {
        let caller = self.caller(principal);
        let mounted =
            self.directory.agents().into_iter().filter_map(|(name, mounted)| Self::offered(&name, &mounted, &caller));
        let agents = self.root().into_iter().chain(mounted).collect();
        Box::pin(std::future::ready(agents))
    }

    fn search<'a>(
        &'a self,
        principal: Option<&'a Principal>,
        query: &'a str,
    ) -> BoxFuture<'a, Result<Vec<McpAgent>, A2AError>> {
        Box::pin(async move {
            let Some(registry) = self.registry.as_ref().filter(|_| !query.trim().is_empty()) else {
                return Ok(matching(self.agents(principal).await, query));
            };
            let caller = self.caller(principal);
            let names = registry.found(&caller, query).await?;
            let found = names.iter().filter_map(|name| Some((name, self.directory.get(name)?)));
            Ok(found.filter_map(|(name, mounted)| Self::offered(name, &mounted, &caller)).collect())
        })
    }

    fn prefixed(&self) -> bool {
        self.root.is_none() || self.registry.is_some() || !self.directory.agents().is_empty()
    }
}
