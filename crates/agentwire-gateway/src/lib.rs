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
mod directory;
mod fronts;
mod hops;
mod listing;
#[cfg(feature = "mcp")]
mod mcp;
mod mirror;
mod mount;
mod registry;
mod upstream;
mod usage;

use std::collections::HashMap;
use std::sync::Arc;

pub use agentwire_client::CallerAuth;
use agentwire_client::{Client, ClientBuilder};
use agentwire_jose::{JwkSet, SigningKey};
use agentwire_server::{App, HttpOptions, Operations, RequestHandler, Routes};
use agentwire_store::registry::{MemoryRegistry, RegistryStore, Visibility};
use agentwire_types::Authentication;
use axum::Router;

use card::Rewrite;
use directory::{Directory, Mounted};
use fronts::{ConsoleFront, McpAgents, McpFront};
pub use hops::{DEFAULT_MAX_HOPS, HOPS_HEADER};
pub use mirror::{Mirror, UPSTREAM_KEY};
use registry::Registry;
pub use registry::{ClientFor, RegistrySettings};
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
            registry: None,
            max_hops: DEFAULT_MAX_HOPS,
            mcp: McpFront::default(),
            caller_auth: HashMap::new(),
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
    registry: Option<RegistrySettings>,
    max_hops: u32,
    mcp: McpFront,
    /// The agents called as their callers, by name ("" at the root), and how.
    caller_auth: HashMap<String, CallerAuth>,
}

/// An agent given to the gateway: connected, or to be reached later.
enum Agent {
    Connected(Client),
    Unreached { url: String, builder: Box<ClientBuilder>, why: String },
}

impl Agent {
    /// The agent behind the gateway, with `rewrite` for its cards, under `name`, called as its
    /// callers as `caller_auth` says, if given.
    fn upstream(self, name: &str, rewrite: Rewrite, caller_auth: Option<CallerAuth>) -> Upstream {
        match self {
            Agent::Connected(client) => {
                let url = client.endpoint().url.clone();
                Upstream::ready(name, &url, client, rewrite, caller_auth)
            }
            Agent::Unreached { url, builder, why } => {
                Upstream::waiting(name, &url, why, rewrite, caller_auth, Upstream::connector(*builder))
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

    /// What the cards name as the gRPC interfaces' `url`, as given (a URL such as
    /// `http://host:9000`, or a bare `host:port`), when that is not the public URL's scheme,
    /// host and port.
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

    /// Lets agents be registered and removed while the gateway runs, and searched: kept in the
    /// [`mirror`](Self::mirror)'s store when there is one (so that they survive a restart, and
    /// every instance on a shared store serves the same set), in memory otherwise. `GET /agents`
    /// searches them (`?q=` text, filters `skill`, `tag`, `inputMode`, `outputMode`, `binding`,
    /// `version`, `signed`, `healthy`), `POST /agents` registers one and `DELETE /agents/NAME`
    /// removes it; see `docs/REGISTRY.md`. Needs a Tokio runtime for [`build`](Self::build).
    pub fn registry(mut self, settings: RegistrySettings) -> Self {
        self.registry = Some(settings);
        self
    }

    /// Calls the agent served as `name` (`""` for the one at the root) as each of its callers,
    /// instead of with its client's credentials, so that the agent verifies the caller's token
    /// itself and sees each caller as the principal it is: its own tasks, its own quotas.
    ///
    /// With [`CallerAuth::Passthrough`] the caller's own bearer token goes on, and only when its
    /// audience (`aud`, as the gateway's [authentication](Self::app) verified it) names the agent:
    /// a caller whose token is not meant for it is refused (`PERMISSION_DENIED`) before anything
    /// is sent. With [`CallerAuth::Exchange`] the caller's token is exchanged at an identity
    /// provider for one meant for the agent (RFC 8693), kept until shortly before it expires; an
    /// exchange the provider refuses is the caller's error, with the provider's reason. Connect
    /// that agent's client without credentials.
    ///
    /// ```
    /// use agentwire_client::TokenExchange;
    /// use agentwire_gateway::{CallerAuth, Gateway};
    ///
    /// let exchange = TokenExchange::new("https://idp.example/oauth2/token", "my-gateway", "s3cret");
    /// let gateway = Gateway::builder("http://127.0.0.1:8080")
    ///     .caller_auth("weather", CallerAuth::Passthrough { audience: "https://weather.example".into() })
    ///     .caller_auth("billing", CallerAuth::Exchange { audience: "urn:agent:billing".into(), exchange });
    /// # drop(gateway);
    /// ```
    pub fn caller_auth(mut self, name: &str, auth: CallerAuth) -> Self {
        self.caller_auth.insert(name.to_owned(), auth);
        self
    }

    /// Refuses to relay a request that went through more than `max` gateways already
    /// ([`DEFAULT_MAX_HOPS`] by default): each call the gateway relays carries
    /// [`HOPS_HEADER`], one more than the request it relays, so that an agent calling back into
    /// a gateway ends in an error instead of a loop.
    ///
    /// ```
    /// let gateway = agentwire_gateway::Gateway::builder("http://127.0.0.1:8080").max_hops(4);
    /// # drop(gateway);
    /// ```
    pub fn max_hops(mut self, max: u32) -> Self {
        self.max_hops = max;
        self
    }

    /// Serves the agents as MCP tools at `/mcp` too ([`agentwire_mcp`]): each caller is offered
    /// the agents it may see, as the gateway's authentication finds it, and its calls go through
    /// the gateway's layers as any other.
    #[cfg(feature = "mcp")]
    pub fn mcp(mut self) -> Self {
        self.mcp.serve(None);
        self
    }

    /// Serves MCP as [`mcp`](Self::mcp) does, with `options` (origins allowed, session limits,
    /// elicitation timeout) in place of the defaults for the gateway's public URL and body size.
    #[cfg(feature = "mcp")]
    pub fn mcp_options(mut self, options: agentwire_mcp::McpHttpOptions) -> Self {
        self.mcp.serve(Some(options));
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
        let rewrite = move |interfaces| Rewrite {
            interfaces,
            authentication: authentication.clone(),
            signer: signer.clone(),
            mirrored,
        };
        let (public_url, grpc_target) = (self.public_url.clone(), self.grpc_target.clone());
        let rewrite_for = move |name: &str| {
            let url = format!("{public_url}/agents/{name}");
            rewrite(card::mounted_interfaces(&url, name, grpc_target.as_deref()))
        };
        let root = self.root.map(|agent| {
            let interfaces = agentwire_server::advertised_interfaces(&self.public_url, self.grpc_target.as_deref());
            let rewrite = Rewrite { interfaces, ..rewrite_for("") };
            agent.upstream("", rewrite, self.caller_auth.get("").cloned())
        });
        let directory = Directory::default();
        let mut registry_store: Arc<dyn RegistryStore> = Arc::new(MemoryRegistry::default());
        let mirror = self.mirror.map(|mirror| {
            let tasks = Arc::clone(mirror.backend.tasks());
            registry_store = Arc::clone(mirror.backend.registry());
            let mut handler = mirror::Relay::handler(directory.clone(), root.clone(), mirror, &self.public_url);
            if let Some(key) = &self.signing_key {
                handler = handler.signing_key(Arc::clone(key));
            }
            (handler.build(), tasks)
        });
        let handler = mirror.as_ref().map(|(handler, _)| handler.clone());
        let max_hops = self.max_hops;
        let usage = usage::UsageMeter::new(self.app.metrics_in_use().cloned(), self.app.budget_book().cloned());
        // Every operation but the cards: the agent's own, or the mirror's; what the agent
        // reports spending counted as its answers pass.
        let operations = move |agent: &Upstream, visibility: Visibility| -> Operations {
            let mut operations = match &mirror {
                Some((handler, tasks)) => mirror::mirrored(agent.clone(), handler.clone(), Arc::clone(tasks)),
                None => upstream::service(agent.clone()),
            };
            if let Some(usage) = &usage {
                operations = usage.metered(agent.name(), operations);
            }
            mount::mounted(agent.clone(), visibility, operations, max_hops)
        };
        if let Some(handler) = &handler {
            // Ready while the mirror's store is.
            http.readiness = handler.readiness();
        }
        let app = self.app;
        // Each mounted agent has a console of its own, under its path; the root lists them.
        let console = ConsoleFront::take(&mut http, handler.as_ref(), &app);
        let root_service = root.as_ref().map(|agent| app.service(operations(agent, Visibility::default())));
        let mcp_site = (self.public_url.as_str(), http.max_body_bytes);
        let mcp_agents =
            |registry| McpAgents { directory: &directory, root: root.clone().zip(root_service.clone()), registry };
        let no_mounts = self.mounts.is_empty() && self.registry.is_none();
        if let (Some(root), true) = (root_service.clone(), no_mounts) {
            console.at_root(&mut http);
            let routes = app.beside_routes(Routes::new(root, http));
            let routes = self.mcp.routes(routes, &app, mcp_agents(None), mcp_site);
            return (routes.into_router(), handler);
        }
        let mount = {
            let (app, http, console) = (app.clone(), http.clone(), console.clone());
            move |agent: Upstream, visibility: Visibility| -> Mounted {
                let operations = app.service(operations(&agent, visibility.clone()));
                let mut options = http.clone();
                console.mounted(&mut options, agent.name());
                let served = operations.clone();
                // Behind the gateway's HTTP layers, which the dispatch to it is under.
                let router = directory::LazyRouter::new(move || {
                    Routes::new(served.clone(), options.clone()).without_http_layers()
                });
                Mounted { upstream: agent, visibility, operations, router }
            }
        };
        // An agent at the root alone keeps the console at `/console` (registered agents have
        // theirs under their paths); otherwise `/console` lists the agents.
        let root_alone = root.is_some() && self.mounts.is_empty();
        for (name, agent) in self.mounts {
            let upstream = agent.upstream(&name, rewrite_for(&name), self.caller_auth.get(&name).cloned());
            directory.insert(&name, mount(upstream, Visibility::default()));
        }
        let mut root_http = http.clone();
        if root_alone {
            console.at_root(&mut root_http);
        }
        let mut routes = Routes::new(mount::directory(directory.clone(), root_service.clone()), root_http);
        let registry = self.registry.map(|settings| {
            let mounter = registry::Mounter { rewrite: Box::new(rewrite_for), mount: Box::new(mount) };
            let registry =
                Registry::new(registry_store, settings, directory.clone(), mounter, app.clone(), &self.public_url);
            registry.start();
            registry
        });
        let dispatch = {
            let (directory, app, registry) = (directory.clone(), app.clone(), registry.clone());
            move |request: axum::extract::Request| {
                let (directory, app, registry) = (directory.clone(), app.clone(), registry.clone());
                async move {
                    let path = request.uri().path().strip_prefix("/agents/").unwrap_or_default();
                    let name = path.split('/').next().unwrap_or_default().to_owned();
                    match &registry {
                        Some(registry)
                            if request.method() == http::Method::DELETE && path.trim_end_matches('/') == name =>
                        {
                            registry::delete_route(Arc::clone(registry), &name, request).await
                        }
                        _ => directory::dispatch(&directory, &app, &name, request).await,
                    }
                }
            }
        };
        for path in ["/agents/{name}", "/agents/{name}/", "/agents/{name}/{*rest}"] {
            routes = routes.route(path, axum::routing::any(dispatch.clone()));
        }
        if !root_alone {
            routes = console.agent_list(routes, registry.as_ref(), &directory);
        }
        let agents = match &registry {
            Some(registry) => {
                let registry = Arc::clone(registry);
                axum::routing::any(move |request: axum::extract::Request| {
                    registry::agents_route(Arc::clone(&registry), request)
                })
            }
            None => listing::route(directory.clone(), self.public_url.clone()),
        };
        let routes = app.beside_routes(routes.route("/agents", agents));
        (self.mcp.routes(routes, &app, mcp_agents(registry), mcp_site).into_router(), handler)
    }
}
