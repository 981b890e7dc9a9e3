//! `agentwire mcp URL…`: A2A agents as MCP tools over stdio, reached with the A2A client.
//!
//! The bridge starts whether or not its agents answer: a desktop client that starts it with the
//! agents down would otherwise show a dead server until restarted. An agent not reached yet is
//! tried again as requests come, at most every [`RETRY_EVERY`], and offered once it answers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_mcp::{AgentDirectory, McpAgent, McpServer};
use agentwire_server::Principal;
use anyhow::Context as _;
use futures_util::future::BoxFuture;
use tokio::time::Instant;
use tower::util::BoxCloneSyncService;

use crate::call::ClientArgs;

/// How often the URLs not reached yet are tried again, at most.
const RETRY_EVERY: Duration = Duration::from_secs(3);
/// How long reaching one URL (its listing, its cards) may take.
const REACH_WITHIN: Duration = Duration::from_secs(10);

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
    let agents = RemoteAgents::new(opt.urls, opt.client);
    agents.reach().await;
    if agents.offered().is_empty() {
        tracing::warn!("none of the agents could be reached yet; they are tried again as requests come");
    }
    agentwire_mcp::serve_stdio(McpServer::new(agents)).await.context("serving MCP over stdio")
}

/// The agents at the command's URLs, as far as they have been reached.
struct RemoteAgents {
    urls: Vec<String>,
    client: ClientArgs,
    found: Mutex<Found>,
    /// Set while one request reaches the URLs: the others go on with the agents found so far.
    reaching: AtomicBool,
    /// Skill tools carry their agent's name: several URLs, or a gateway's.
    prefixed: AtomicBool,
}

#[derive(Default)]
struct Found {
    /// The agents of each URL reached, in the command's order.
    by_url: Vec<Option<Vec<McpAgent>>>,
    /// When the URLs not reached were last tried.
    tried_at: Option<Instant>,
}

impl RemoteAgents {
    fn new(urls: Vec<String>, client: ClientArgs) -> Self {
        let found = Found { by_url: vec![None; urls.len()], tried_at: None };
        let prefixed = AtomicBool::new(urls.len() > 1);
        Self { urls, client, found: Mutex::new(found), reaching: AtomicBool::new(false), prefixed }
    }

    /// The agents reached so far.
    fn offered(&self) -> Vec<McpAgent> {
        lock(&self.found).by_url.iter().flatten().flatten().cloned().collect()
    }

    /// Whether some URL is not reached, and was not tried within [`RETRY_EVERY`].
    fn due(&self) -> bool {
        let found = lock(&self.found);
        found.by_url.iter().any(Option::is_none) && found.tried_at.is_none_or(|at| at.elapsed() >= RETRY_EVERY)
    }

    /// Tries the URLs not reached yet, unless another request is trying them.
    async fn reach(&self) {
        if self.reaching.swap(true, Ordering::AcqRel) {
            return;
        }
        // Cleared however this ends: a request canceled while it reaches drops this future.
        let _reaching = Clear(&self.reaching);
        let unreached: Vec<usize> = (0..self.urls.len()).filter(|&i| lock(&self.found).by_url[i].is_none()).collect();
        for i in unreached {
            let reached = self.reach_url(&self.urls[i]).await;
            if !reached.is_empty() {
                lock(&self.found).by_url[i] = Some(reached);
            }
        }
        lock(&self.found).tried_at = Some(Instant::now());
    }

    /// The agents at `url`: a gateway's listed ones, or the one agent there. Those that cannot be
    /// reached are logged and left out.
    async fn reach_url(&self, url: &str) -> Vec<McpAgent> {
        let targets = match gateway_agents(url, self.client.token.as_deref()).await {
            Some(listed) => {
                self.prefixed.store(true, Ordering::Relaxed);
                listed
            }
            None => vec![(None, url.to_owned())],
        };
        // All at once, each within its own bound: a gateway of many agents is not held up by one.
        let connecting = targets.into_iter().map(|(name, url)| async move {
            let connected = tokio::time::timeout(REACH_WITHIN, self.client.connect_for(&url, true)).await;
            (name, url, connected)
        });
        let mut agents = Vec::new();
        for (name, url, connected) in futures_util::future::join_all(connecting).await {
            let Ok(connected) = connected else {
                tracing::warn!(%url, "the agent did not answer within {} s; its tools are not offered yet", REACH_WITHIN.as_secs());
                continue;
            };
            match connected {
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
                    tracing::warn!(%url, error = %failure.message, "the agent could not be reached; its tools are not offered yet")
                }
            }
        }
        agents
    }
}

impl AgentDirectory for RemoteAgents {
    fn agents<'a>(&'a self, _caller: Option<&'a Principal>) -> BoxFuture<'a, Vec<McpAgent>> {
        Box::pin(async move {
            if self.due() {
                self.reach().await;
            }
            self.offered()
        })
    }

    fn prefixed(&self) -> bool {
        self.prefixed.load(Ordering::Relaxed)
    }
}

/// Clears its flag when dropped.
struct Clear<'a>(&'a AtomicBool);

impl Drop for Clear<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The largest gateway listing read: a listing is bounded like any other peer's answer.
const MAX_LISTING: usize = 8 << 20;

/// The agents a gateway at `url` lists at `/agents` (name, URL), or `None` if `url` is no gateway
/// or lists none: a gateway whose one agent is mounted at its root lists nothing, and its root
/// card is that agent's.
async fn gateway_agents(url: &str, token: Option<&str>) -> Option<Vec<(Option<String>, String)>> {
    let listing = format!("{}/agents", url.trim_end_matches('/'));
    let mut request = reqwest::Client::new().get(listing).timeout(std::time::Duration::from_secs(10));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.ok().filter(|response| response.status().is_success())?;
    let body = agentwire_client::read_limited(response, MAX_LISTING).await.ok()?;
    let body: serde_json::Value = serde_json::from_slice(&body).ok()?;
    let listed = body.get("agents")?.as_array()?;
    let agents = listed.iter().filter_map(|agent| {
        let name = agent.get("name")?.as_str()?.to_owned();
        let url = agent.get("url")?.as_str()?.to_owned();
        Some((Some(name), url))
    });
    let agents: Vec<_> = agents.collect();
    (!agents.is_empty()).then_some(agents)
}
