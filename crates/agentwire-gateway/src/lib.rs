//! An A2A gateway: puts agents that speak one protocol generation over one binding behind a
//! server that speaks every generation (v1.0, v0.3, the legacy `tasks/send` surface) over every
//! binding (JSON-RPC, HTTP+JSON, gRPC).
//!
//! Each agent is reached through an [`agentwire_client::Client`], which picks the agent's best
//! interface and speaks its generation; the client is an operation service, and the gateway
//! serves it with the server's [`router`](agentwire_server::router), as a server serves its own
//! agent. The gateway rewrites the agent's card to its own interfaces (in both card shapes), its
//! own security schemes and, with a key, its own signature; it authenticates callers with the
//! authenticator of its own [`App`] ([`GatewayBuilder::app`]), which also puts its quotas, metrics
//! and spans in front of every agent, and calls the agent with the client's credentials.
//!
//! With a [`Mirror`] ([`GatewayBuilder::mirror`]) the gateway keeps every task it relays, with
//! its event log, in a store of its own, and serves GetTask, ListTasks, resumable subscriptions
//! and push notifications from it, whatever the agent offers; without one it is a pure
//! translator.
//!
//! One agent may be served at the gateway's root ([`GatewayBuilder::agent`]), others mounted at
//! `/agents/NAME/` ([`GatewayBuilder::mount`]) and listed at `GET /agents`. gRPC, whose paths
//! are the same for every agent, reaches a mounted agent as the tenant named after it.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use agentwire_client::{Client, ClientBuilder};
//! use agentwire_gateway::Gateway;
//!
//! let weather = Client::builder("http://127.0.0.1:9001").extended_card(false).connect().await?;
//! let app = Gateway::builder("http://127.0.0.1:8080").mount("weather", weather).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! agentwire_server::serve(listener, app, std::future::pending(), Default::default()).await?;
//! # Ok(())
//! # }
//! ```

mod card;
mod listing;
mod mirror;
mod mount;
mod upstream;

use std::collections::BTreeMap;
use std::sync::Arc;

use agentwire_client::{Client, ClientBuilder};
use agentwire_jose::{JwkSet, SigningKey};
use agentwire_server::{router_with, App, HttpOptions, Operations, RequestHandler};
use agentwire_types::Authentication;
use axum::Router;

use card::Rewrite;
pub use mirror::{Mirror, UPSTREAM_KEY};
use upstream::Upstream;

/// The gateway's entry point; see [`Gateway::builder`].
#[derive(Debug)]
pub struct Gateway;

impl Gateway {
    /// A gateway reached by its clients at `public_url`, the base of every URL its cards
    /// advertise.
    pub fn builder(public_url: &str) -> GatewayBuilder {
        GatewayBuilder {
            public_url: public_url.trim_end_matches('/').to_owned(),
            grpc_target: None,
            root: None,
            mounts: Vec::new(),
            app: App::new(),
            signing_key: None,
            http: HttpOptions::default(),
            mirror: None,
        }
    }
}

/// How a gateway is put together: its agents, who may call them, and how it serves them.
pub struct GatewayBuilder {
    public_url: String,
    grpc_target: Option<String>,
    root: Option<Agent>,
    mounts: Vec<(String, Agent)>,
    app: App,
    signing_key: Option<Arc<SigningKey>>,
    http: HttpOptions,
    mirror: Option<Mirror>,
}

/// An agent given to the gateway: connected, or to be reached later.
enum Agent {
    Connected(Client),
    Unreached { url: String, builder: Box<ClientBuilder>, why: String },
}

impl Agent {
    /// The agent behind the gateway, with `rewrite` for its cards, under `name`.
    fn upstream(self, name: &str, rewrite: Rewrite) -> Upstream {
        match self {
            Agent::Connected(client) => {
                let url = client.endpoint().url.clone();
                Upstream::ready(name, &url, client, rewrite)
            }
            Agent::Unreached { url, builder, why } => {
                Upstream::waiting(name, &url, why, rewrite, Upstream::connector(*builder))
            }
        }
    }
}

impl std::fmt::Debug for GatewayBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mounts: Vec<&str> = self.mounts.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("GatewayBuilder")
            .field("public_url", &self.public_url)
            .field("root", &self.root.is_some())
            .field("mounts", &mounts)
            .finish_non_exhaustive()
    }
}

impl GatewayBuilder {
    /// Serves the agent of `client` at the gateway's root. Connect the client with
    /// [`extended_card(false)`](agentwire_client::ClientBuilder::extended_card), so that the card
    /// it holds is the public one.
    pub fn agent(mut self, client: Client) -> Self {
        self.root = Some(Agent::Connected(client));
        self
    }

    /// Serves the agent of `client` at `/agents/{name}/`, and to gRPC calls whose tenant is
    /// `name`.
    pub fn mount(mut self, name: &str, client: Client) -> Self {
        self.mounts.push((name.to_owned(), Agent::Connected(client)));
        self
    }

    /// Serves at `/agents/{name}/` the agent at `url` that `builder` could not reach yet (`why`):
    /// the gateway serves its other agents meanwhile, answers this one's callers with an error
    /// that names it and says why, and tries `builder` again in the background (after 1 s, then
    /// twice as long each time, up to 30 s) until it answers. Needs a Tokio runtime for
    /// [`build`](Self::build).
    ///
    /// ```no_run
    /// # async fn run() {
    /// use agentwire_client::Client;
    /// use agentwire_gateway::Gateway;
    ///
    /// let builder = Client::builder("http://127.0.0.1:9001").extended_card(false);
    /// let gateway = match builder.clone().connect().await {
    ///     Ok(client) => Gateway::builder("http://127.0.0.1:8080").mount("weather", client),
    ///     Err(error) => Gateway::builder("http://127.0.0.1:8080").mount_unreached(
    ///         "weather",
    ///         "http://127.0.0.1:9001",
    ///         builder,
    ///         &error.to_string(),
    ///     ),
    /// };
    /// # drop(gateway);
    /// # }
    /// ```
    pub fn mount_unreached(mut self, name: &str, url: &str, builder: ClientBuilder, why: &str) -> Self {
        let agent = Agent::Unreached { url: url.to_owned(), builder: Box::new(builder), why: why.to_owned() };
        self.mounts.push((name.to_owned(), agent));
        self
    }

    /// Serves at the root the agent at `url` that `builder` could not reach yet, as
    /// [`mount_unreached`](Self::mount_unreached) does.
    pub fn agent_unreached(mut self, url: &str, builder: ClientBuilder, why: &str) -> Self {
        self.root = Some(Agent::Unreached { url: url.to_owned(), builder: Box::new(builder), why: why.to_owned() });
        self
    }

    /// Where gRPC clients connect (`host:port`), when that is not the host and port of the
    /// public URL.
    pub fn grpc_target(mut self, target: &str) -> Self {
        self.grpc_target = Some(target.to_owned());
        self
    }

    /// What stands in front of every agent's operations (spans, metrics, authentication,
    /// quotas, layers of your own), in [`App`]'s order; the cards declare its authentication's
    /// schemes. One `App` serves every agent: a caller's quota is one across them.
    pub fn app(mut self, app: App) -> Self {
        self.app = app;
        self
    }

    /// Signs the cards the gateway serves with `key`, whose public half is served at
    /// `/.well-known/jwks.json`.
    pub fn signing_key(mut self, key: SigningKey) -> Self {
        self.signing_key = Some(Arc::new(key));
        self
    }

    /// How every agent is served over HTTP: CORS, the card form, body limits.
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// Keeps every task the gateway relays in `mirror`'s store, and serves the tasks from there:
    /// GetTask, ListTasks and subscriptions that resume from `Last-Event-ID` work for every
    /// agent, push notifications are the gateway's to deliver (signed with its
    /// [`signing_key`](Self::signing_key)), and `mirror`'s limits apply to each caller. Each agent
    /// is sent every message over its own stream when it streams, else read back until its task
    /// settles. Needs a Tokio runtime for [`build`](Self::build).
    pub fn mirror(mut self, mirror: Mirror) -> Self {
        self.mirror = Some(mirror);
        self
    }

    /// The gateway as an axum `Router`: serve it with [`agentwire_server::serve`].
    pub fn build(self) -> Router {
        self.into_parts().0
    }

    /// The gateway as an axum `Router`, and with a [`mirror`](Self::mirror) the handler that
    /// keeps its tasks, for an orderly [shutdown](RequestHandler::shutdown). The router's
    /// readiness (`/readyz`) is the handler's then.
    pub fn into_parts(self) -> (Router, Option<RequestHandler>) {
        let signer = self.signing_key.as_ref().map(|key| {
            let jku = format!("{}/.well-known/jwks.json", self.public_url);
            (Arc::clone(key), jku)
        });
        let mut http = self.http;
        if let Some(key) = &self.signing_key {
            http.signing_keys = Some(JwkSet { keys: vec![key.public_key().to_jwk()] });
        }
        let authentication = self.app.authentication().map(|auth| Authentication::clone(auth)).unwrap_or_default();
        let mirrored = self.mirror.is_some();
        let rewrite = |interfaces| Rewrite {
            interfaces,
            authentication: authentication.clone(),
            signer: signer.clone(),
            mirrored,
        };
        let root = self.root.map(|agent| {
            let interfaces = agentwire_server::advertised_interfaces(&self.public_url, self.grpc_target.as_deref());
            agent.upstream("", rewrite(interfaces))
        });
        let mounts: Vec<(String, Upstream)> = self
            .mounts
            .into_iter()
            .map(|(name, agent)| {
                let url = format!("{}/agents/{name}", self.public_url);
                let interfaces = card::mounted_interfaces(&url, &name, self.grpc_target.as_deref());
                (url, agent.upstream(&name, rewrite(interfaces)))
            })
            .collect();
        let mirror = self.mirror.map(|mirror| {
            let tasks = Arc::clone(mirror.backend.tasks());
            let mut agents: BTreeMap<String, Upstream> =
                mounts.iter().map(|(_, agent)| (agent.name().to_owned(), agent.clone())).collect();
            agents.extend(root.clone().map(|root| (String::new(), root)));
            let mut handler = mirror::Relay::handler(agents, mirror, &self.public_url);
            if let Some(key) = &self.signing_key {
                handler = handler.signing_key(Arc::clone(key));
            }
            (handler.build(), tasks)
        });
        // Every operation but the cards: the agent's own, or the mirror's.
        let operations = |agent: &Upstream| -> Operations {
            let operations = match &mirror {
                Some((handler, tasks)) => mirror::mirrored(agent.clone(), handler.clone(), Arc::clone(tasks)),
                None => upstream::service(agent.clone()),
            };
            mount::mounted(agent.clone(), operations)
        };
        let handler = mirror.as_ref().map(|(handler, _)| handler.clone());
        if let Some(handler) = &handler {
            // Ready while the mirror's store is.
            http.readiness = handler.readiness();
        }
        // Each mounted agent has a console of its own, under its path; the root lists them.
        #[cfg(feature = "console")]
        let console = http.console.take().map(|console| match &handler {
            Some(handler) => console.following(handler),
            None => console,
        });
        let serve = |service: Operations| -> Operations { self.app.service(service) };
        let root_service = root.as_ref().map(|agent| serve(operations(agent)));
        let agents: BTreeMap<String, Operations> =
            mounts.iter().map(|(_, agent)| (agent.name().to_owned(), serve(operations(agent)))).collect();
        let mut app = match (root_service, agents.is_empty()) {
            (Some(root), true) => {
                #[cfg(feature = "console")]
                {
                    http.console = console;
                }
                return (router_with(root, http), handler);
            }
            (root, _) => router_with(mount::directory(agents.clone(), root), http.clone()),
        };
        for (name, agent) in agents {
            #[allow(unused_mut)]
            let mut options = http.clone();
            #[cfg(feature = "console")]
            {
                options.console = console
                    .clone()
                    .map(|console| console.at(&format!("/agents/{name}/console")).of_agent(&name, "/console"));
            }
            let nested = router_with(agent, options);
            // `/agents/NAME/` names the agent as `/agents/NAME` does (its JSON-RPC endpoint).
            app = app.route_service(&format!("/agents/{name}/"), at_root(nested.clone()));
            app = app.nest(&format!("/agents/{name}"), nested);
        }
        #[cfg(feature = "console")]
        if let Some(console) = &console {
            // Read when the page is asked for: an agent reached since is listed by its card.
            let agents: Vec<Upstream> = mounts.iter().map(|(_, agent)| agent.clone()).collect();
            app = app.merge(console.directory_of(move || {
                let listed = agents.iter().map(|agent| {
                    let card = agent.card().map_or_else(
                        |why| unreached_card(agent, &why),
                        |card| agentwire_types::AgentCard::clone(&card),
                    );
                    (agent.name().to_owned(), format!("/agents/{}/console", agent.name()), card)
                });
                listed.collect()
            }));
        }
        (app.route("/agents", listing::route(mounts)), handler)
    }
}

/// The card the console lists for an agent not reached yet: its name, and why.
#[cfg(feature = "console")]
fn unreached_card(agent: &Upstream, why: &agentwire_types::A2AError) -> agentwire_types::AgentCard {
    let card = agentwire_types::AgentCard::default();
    agentwire_types::AgentCard { name: agent.name().to_owned(), description: why.message().to_owned(), ..card }
}

/// `router`, called at its root whatever the path of the request: for a mount's URL with a
/// trailing slash, which `Router::nest` does not match.
fn at_root(router: Router) -> axum::routing::MethodRouter {
    axum::routing::any_service(tower::service_fn(move |mut request: axum::extract::Request| {
        let router = router.clone();
        let query = request.uri().query().map(|query| format!("/?{query}")).unwrap_or_else(|| "/".to_owned());
        if let Ok(uri) = query.parse() {
            *request.uri_mut() = uri;
        }
        tower::ServiceExt::oneshot(router, request)
    }))
}
