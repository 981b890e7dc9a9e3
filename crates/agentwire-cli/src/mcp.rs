//! `agentwire mcp URL…`: A2A agents as MCP tools over stdio, reached with the A2A client.

use std::sync::Arc;

use agentwire_mcp::{AgentList, McpAgent, McpServer};
use anyhow::Context as _;
use tower::util::BoxCloneSyncService;

use crate::call::ClientArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct McpOpt {
    /// An agent's base URL or card URL, or a gateway's base URL (repeatable).
    #[arg(value_name = "URL", required = true)]
    urls: Vec<String>,

    #[command(flatten)]
    client: ClientArgs,
}

/// Serves the agents at `opt.urls` over stdio until the client closes it.
pub(crate) async fn run(opt: McpOpt) -> anyhow::Result<()> {
    let mut agents: Vec<McpAgent> = Vec::new();
    let mut prefixed = opt.urls.len() > 1;
    for url in &opt.urls {
        let found = match gateway_agents(url, opt.client.token.as_deref()).await {
            Some(listed) => {
                prefixed = true;
                listed
            }
            None => vec![(None, url.clone())],
        };
        for (name, url) in found {
            match opt.client.connect_for(&url, true).await {
                Ok(client) => {
                    let card = Arc::new(client.card().clone());
                    let operations = BoxCloneSyncService::new(client);
                    let mut agent = McpAgent::named_by_card(card, operations);
                    if let Some(name) = name {
                        agent.name = name;
                    }
                    tracing::info!(agent = %agent.name, %url, "offering the agent's skills as tools");
                    agents.push(agent);
                }
                Err(failure) => {
                    tracing::warn!(%url, error = %failure.message, "the agent could not be reached; its tools are not offered")
                }
            }
        }
    }
    anyhow::ensure!(!agents.is_empty(), "none of the agents could be reached");
    agentwire_mcp::serve_stdio(McpServer::new(AgentList::new(agents, prefixed))).await.context("serving MCP over stdio")
}

/// The agents a gateway at `url` lists at `/agents` (name, URL), or `None` if `url` is no gateway.
async fn gateway_agents(url: &str, token: Option<&str>) -> Option<Vec<(Option<String>, String)>> {
    let listing = format!("{}/agents", url.trim_end_matches('/'));
    let mut request = reqwest::Client::new().get(listing).timeout(std::time::Duration::from_secs(10));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.ok().filter(|response| response.status().is_success())?;
    let body: serde_json::Value = response.json().await.ok()?;
    let listed = body.get("agents")?.as_array()?;
    let agents = listed.iter().filter_map(|agent| {
        let name = agent.get("name")?.as_str()?.to_owned();
        let url = agent.get("url")?.as_str()?.to_owned();
        Some((Some(name), url))
    });
    Some(agents.collect())
}
