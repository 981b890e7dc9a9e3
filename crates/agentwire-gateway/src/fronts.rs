//! The fronts a gateway serves besides A2A, each behind its crate feature: the console (the
//! `console` feature) and MCP (the `mcp` feature). Each is a type whose methods do nothing when
//! its feature is off, so that the gateway's assembly reads the same either way.

use std::sync::Arc;

use agentwire_server::{App, HttpOptions, Operations, RequestHandler, Routes};

use crate::directory::Directory;
use crate::registry::Registry;
use crate::upstream::Upstream;

/// The console the HTTP options ask for: each mounted agent's under its path, and at
/// `/console` the agent at the root alone or else the list of agents.
#[derive(Clone)]
pub(crate) struct ConsoleFront {
    #[cfg(feature = "console")]
    console: Option<agentwire_server::Console>,
}

#[cfg(feature = "console")]
impl ConsoleFront {
    /// The console `http` asks for, taken out of it: following `handler`'s tasks when the
    /// gateway keeps them, and its live lists counted as their callers' streams under `app`.
    pub(crate) fn take(http: &mut HttpOptions, handler: Option<&RequestHandler>, app: &App) -> Self {
        let console = http.console.take().map(|console| match handler {
            Some(handler) => console.following(handler),
            None => console,
        });
        Self { console: console.map(|console| console.counting_streams(app).showing_usage(app)) }
    }

    /// Serves the console at `/console` in `http`, for the agent at the root.
    pub(crate) fn at_root(&self, http: &mut HttpOptions) {
        http.console.clone_from(&self.console);
    }

    /// Serves the console of the agent mounted as `name` in `http`, under its path.
    pub(crate) fn mounted(&self, http: &mut HttpOptions, name: &str) {
        http.console = self
            .console
            .clone()
            .map(|console| console.at(&format!("/agents/{name}/console")).of_agent(name, "/console"));
    }

    /// `routes` with the list of the gateway's agents at `/console`: the registry's, or, read
    /// when the page is asked for, the directory's (an agent reached since is listed by its card).
    pub(crate) fn agent_list(&self, routes: Routes, registry: Option<&Arc<Registry>>, directory: &Directory) -> Routes {
        let Some(console) = &self.console else { return routes };
        let list = match registry {
            Some(registry) => {
                let registry = Arc::clone(registry);
                console.registry_of(move |ctx, text| {
                    let registry = Arc::clone(&registry);
                    Box::pin(async move { registry.console_listing(ctx, text).await })
                })
            }
            None => {
                let directory = directory.clone();
                console.directory_of(move || {
                    let listed = directory.agents().into_iter().map(|(name, mounted)| {
                        let card = mounted.upstream.card().map_or_else(
                            |why| unreached_card(&mounted.upstream, &why),
                            |card| agentwire_types::AgentCard::clone(&card),
                        );
                        (name.clone(), format!("/agents/{name}/console"), card)
                    });
                    listed.collect()
                })
            }
        };
        routes.merge(list)
    }
}

#[cfg(not(feature = "console"))]
impl ConsoleFront {
    pub(crate) fn take(_: &mut HttpOptions, _: Option<&RequestHandler>, _: &App) -> Self {
        Self {}
    }

    pub(crate) fn at_root(&self, _: &mut HttpOptions) {}

    pub(crate) fn mounted(&self, _: &mut HttpOptions, _: &str) {}

    pub(crate) fn agent_list(&self, routes: Routes, _: Option<&Arc<Registry>>, _: &Directory) -> Routes {
        routes
    }
}

/// The card the console lists for an agent not reached yet: its name, and why.
#[cfg(feature = "console")]
fn unreached_card(agent: &Upstream, why: &agentwire_types::A2AError) -> agentwire_types::AgentCard {
    let card = agentwire_types::AgentCard::default();
    agentwire_types::AgentCard { name: agent.name().to_owned(), description: why.message().to_owned(), ..card }
}

/// MCP at `/mcp`, when asked for: the agents as tools, each caller offered those it may see.
#[derive(Default)]
pub(crate) struct McpFront {
    #[cfg(feature = "mcp")]
    asked: Option<Option<agentwire_mcp::McpHttpOptions>>,
}

#[cfg(feature = "mcp")]
impl McpFront {
    /// Serves MCP, with `options` or the defaults for the gateway's URL and body limit.
    pub(crate) fn serve(&mut self, options: Option<agentwire_mcp::McpHttpOptions>) {
        self.asked = Some(options);
    }

    /// `routes` with MCP's, if it is asked for, offering `agents` behind `app`; by default for
    /// the gateway's `public_url` and body limit.
    pub(crate) fn routes(
        self,
        routes: Routes,
        app: &App,
        agents: McpAgents<'_>,
        (public_url, max_body_bytes): (&str, usize),
    ) -> Routes {
        let Some(options) = self.asked else { return routes };
        let options = options.unwrap_or_else(|| {
            agentwire_mcp::McpHttpOptions::new(public_url.to_owned()).with_max_body_bytes(max_body_bytes)
        });
        let McpAgents { directory, root, registry } = agents;
        let agents = crate::mcp::GatewayAgents { directory: directory.clone(), root, registry };
        routes.merge(agentwire_mcp::router(agentwire_mcp::McpServer::new(agents), app.clone(), options))
    }
}

#[cfg(not(feature = "mcp"))]
impl McpFront {
    pub(crate) fn routes(self, routes: Routes, _: &App, _: McpAgents<'_>, _: (&str, usize)) -> Routes {
        routes
    }
}

/// The agents MCP offers: those of the directory, the one at the root with its operations, and
/// the registry's.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) struct McpAgents<'a> {
    pub(crate) directory: &'a Directory,
    pub(crate) root: Option<(Upstream, Operations)>,
    pub(crate) registry: Option<Arc<Registry>>,
}
