//! `agentwire serve`.

use std::time::Duration;

use tokio::time::Instant;

use agentwire_client::{Client, ClientBuilder};
use agentwire_gateway::{ClientFor, Gateway, Mirror, RegistrySettings};
use agentwire_mcp::{McpHttpOptions, McpServer, OneAgent, SessionLimits};
use agentwire_server::agent::{ConformanceAgent, EchoAgent};
use agentwire_server::auth::AnyAuth;
use agentwire_server::jose::{JwkSet, SigningKey};
use agentwire_server::quota::{Quotas, SharedQuotas};
use agentwire_server::{
    App, CardConfig, Console, CorsOrigins, HttpOptions, Limits, Metrics, PushSettings, RequestHandler, Retention,
    ServeOptions, ServedHosts, TlsConfig, WebhookGuard,
};
use agentwire_store::{Backend, MemoryStore, PostgresStore, RetentionPolicy, SqliteStore};
use agentwire_types::AgentCard;
use anyhow::Context as _;

use agentwire_openai::OpenAiAgent;

use crate::opt::{AgentKind, GrpcCardForm, LimitOpt, ServeOpt, UpstreamOpt};
use crate::{call, identity};

/// How long open requests and streams may take to finish after a shutdown signal.
const DRAIN: Duration = Duration::from_secs(10);

/// `agentwire serve`: the built-in agent on the store `--store` names; with `upstreams`,
/// `agentwire gateway`: those agents.
pub(crate) async fn run(opt: ServeOpt, upstreams: Option<UpstreamOpt>, traced: bool) -> anyhow::Result<()> {
    raise_open_file_limit(opt.max_connections);
    // Bound first, so that the card names the ports really listened on (`:0` picks one).
    let listener = bind(opt.http).await?;
    let grpc_listener = match opt.grpc {
        Some(address) => Some(bind(address).await?),
        None => None,
    };
    let grpc_address = grpc_listener.as_ref().map(|l| l.local_addr()).transpose()?;
    let metrics_listener = match opt.metrics {
        Some(Some(at)) => Some(bind(at.beside(opt.http)).await?),
        _ => None,
    };
    let metrics = opt.metrics.is_some().then(Metrics::new);
    if let Some(metrics) = &metrics {
        metrics.limit_tenant_series(opt.metrics_tenants);
    }
    let signing_key = opt.signing_key.as_deref().map(identity::signing_key).transpose()?;
    let signing_keys = signing_key.as_ref().map(|key| JwkSet { keys: vec![key.public_key().to_jwk()] });
    let mut http = HttpOptions {
        cors: cors_origins(&opt)?,
        strict_card: opt.strict_card,
        max_body_bytes: opt.limits.max_body_size,
        body_read_timeout: Duration::from_secs(opt.limits.body_read_timeout),
        max_tenant_bytes: opt.limits.max_tenant_size,
        signing_keys,
        ..HttpOptions::default()
    };
    let tls = match (&opt.tls_cert, &opt.tls_key, &opt.tls_client_ca) {
        (Some(cert), Some(key), None) => Some(TlsConfig::from_pem_files(cert, key)?),
        (Some(cert), Some(key), Some(ca)) => {
            Some(TlsConfig::verifying_clients(cert, key, ca, !opt.tls_client_optional)?)
        }
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let options = ServeOptions {
        tls,
        max_connections: opt.max_connections,
        header_read_timeout: Duration::from_secs(opt.header_read_timeout),
        write_timeout: Duration::from_secs(opt.write_timeout),
        drain: DRAIN,
        metrics: metrics.clone(),
        served_hosts: served_hosts(&opt),
        ..ServeOptions::default()
    };
    let address = listener.local_addr()?;
    let public_url = public_url(&opt, scheme, address);
    let card = format!("{public_url}/.well-known/agent-card.json");
    // What the options name is read and checked before the store is opened, so that a mistake
    // leaves no store behind: the authenticators, and the agent with its card.
    let auth = identity::authenticator(&opt).await?;
    let stopping = stop_signal();
    let (mut app, handler) = match upstreams {
        Some(upstreams) => {
            if opt.console {
                let console = console(&opt);
                tracing::info!(url = %format!("{public_url}/console"), access = ?console.access(), "serving the console");
                http.console = Some(console);
            }
            let mut gateway = Gateway::builder(&public_url).http_options(http);
            let client_for = upstream_client(&upstreams);
            for upstream in &upstreams.upstreams {
                let builder = client_for(&upstream.url);
                let name = upstream.name.as_deref();
                // An agent down at start is served once it answers; the others are served now.
                gateway = match builder.clone().connect().await {
                    Ok(client) => {
                        tracing::info!(name = name.unwrap_or("(root)"), url = %upstream.url, agent = %client.card().name, interface = %client.endpoint(), "upstream agent");
                        match name {
                            Some(name) => gateway.mount(name, client),
                            None => gateway.agent(client),
                        }
                    }
                    Err(error) => {
                        let why = agentwire_client::error_chain(&error);
                        tracing::warn!(name = name.unwrap_or("(root)"), url = %upstream.url, error = %why, "upstream agent out of reach; serving the others, and trying it again");
                        match name {
                            Some(name) => gateway.mount_unreached(name, &upstream.url, builder, &why),
                            None => gateway.agent_unreached(&upstream.url, builder, &why),
                        }
                    }
                };
            }
            gateway = gateway.registry(registry_settings(&upstreams, address)?).max_hops(upstreams.max_gateway_hops);
            if opt.mcp {
                gateway = gateway.mcp_options(mcp_options(&opt, &public_url));
                tracing::info!(url = %format!("{public_url}{}", agentwire_mcp::MCP_PATH), "serving MCP");
            }
            if let Some(grpc) = grpc_card_address(&opt, &public_url, grpc_address) {
                gateway = gateway.grpc_target(&grpc);
            }
            let backend = match opt.store {
                Some(_) => Some(open_backend(&opt).await?),
                None => None,
            };
            gateway = gateway.app(app(&opt, auth, metrics.as_ref(), traced, backend.as_ref()));
            if let Some(key) = signing_key {
                gateway = gateway.signing_key(key);
            }
            if let Some(backend) = backend {
                let mirror = Mirror {
                    backend,
                    limits: request_limits(&opt.limits),
                    push: push_settings(&opt),
                    retention: retention(&opt.limits),
                };
                gateway = gateway.mirror(mirror);
            }
            let (app, handler) = gateway.into_parts();
            if let Some(handler) = &handler {
                start_handler(&opt, handler, &stopping).await?;
            }
            tracing::info!(%address, %card, "serving a gateway");
            (app, handler)
        }
        None => {
            let agent = agent(&opt).await?;
            let user_card = user_card(&opt)?;
            let backend = open_backend(&opt).await?;
            let app = app(&opt, auth, metrics.as_ref(), traced, Some(&backend));
            let built = Built { agent, user_card, signing_key, backend };
            let handler = build_handler(&opt, built, &public_url, grpc_address, metrics.as_ref());
            start_handler(&opt, &handler, &stopping).await?;
            http.readiness = handler.readiness();
            if opt.console {
                let console = console(&opt).following(&handler).counting_streams(&app);
                tracing::info!(url = %format!("{public_url}/console"), access = ?console.access(), "serving the console");
                http.console = Some(console);
            }
            tracing::info!(%address, agent = ?opt.agent, %card, "serving");
            let mut routes = app.routes(handler.clone(), http);
            if opt.mcp {
                let server = McpServer::new(OneAgent::new(app.service(handler.clone())));
                routes = routes.merge(agentwire_mcp::router(server, app, mcp_options(&opt, &public_url)));
                tracing::info!(url = %format!("{public_url}{}", agentwire_mcp::MCP_PATH), "serving MCP");
            }
            (routes.into_router(), Some(handler))
        }
    };
    let metrics_server = match (metrics, metrics_listener) {
        (Some(metrics), Some(listener)) => {
            tracing::info!(address = %listener.local_addr()?, "serving metrics");
            let options = ServeOptions { tls: None, ..options.clone() };
            Some(tokio::spawn(agentwire_server::serve(listener, metrics.router(), stopping.clone().stopped(), options)))
        }
        (Some(metrics), None) => {
            app = app.merge(metrics.router());
            None
        }
        _ => None,
    };
    let grpc = match grpc_listener {
        Some(listener) => {
            tracing::info!(address = %listener.local_addr()?, "serving gRPC");
            let stopped = stopping.clone();
            let serving = agentwire_server::serve(listener, app.clone(), stopped.stopped(), options.clone());
            Some(tokio::spawn(serving))
        }
        None => None,
    };
    agentwire_server::serve(listener, app, stopping.clone().stopped(), options).await?;
    if let Some(grpc) = grpc {
        grpc.await??;
    }
    if let Some(metrics_server) = metrics_server {
        metrics_server.await??;
    }
    // One drain from the signal for connections and executions alike: what the connections
    // took is not given to the executions again.
    let left = DRAIN.saturating_sub(stopping.elapsed());
    let Some(handler) = handler else {
        tracing::info!("stopped");
        return Ok(());
    };
    if tokio::time::timeout(left, handler.shutdown()).await.is_err() {
        tracing::warn!(
            "executions still running after {DRAIN:?} are stopped; their tasks are marked FAILED when a server next opens the store"
        );
    }
    tracing::info!("stopped");
    Ok(())
}

/// The host names a server without authentication answers under (`None`, any, when callers are
/// authenticated): its addresses, localhost, `--public-url`'s host and `--allow-host`.
fn served_hosts(opt: &ServeOpt) -> Option<ServedHosts> {
    if authenticates(opt) {
        return None;
    }
    let hosts = opt.allow_hosts.iter().fold(ServedHosts::default(), |hosts, host| hosts.with_host(host));
    Some(match public_host(opt) {
        Some(host) => hosts.with_host(&host),
        None => hosts,
    })
}

/// The host name of `--public-url`, if it has one.
fn public_host(opt: &ServeOpt) -> Option<String> {
    let public_url = opt.public_url.as_deref().and_then(|url| url.parse::<http::Uri>().ok());
    public_url.as_ref().and_then(http::Uri::host).map(str::to_owned)
}

/// The console `--console` asks for: open to every address when callers are authenticated (or
/// `--console-open` says so), else to loopback addresses only.
fn console(opt: &ServeOpt) -> Console {
    let console = if authenticates(opt) || opt.console_open { Console::open() } else { Console::loopback_only() };
    // Besides addresses and localhost, the console answers under the name it is published at.
    let console = opt.allow_hosts.iter().fold(console, |console, host| console.allow_host(host));
    match public_host(opt) {
        Some(host) => console.allow_host(&host),
        None => console,
    }
}

/// Ends the tasks a previous run of a store of its own left running, and marks `handler` as
/// draining once `stopping` fires: a load balancer then sends new work elsewhere while this
/// process drains.
async fn start_handler(opt: &ServeOpt, handler: &RequestHandler, stopping: &Stopping) -> anyhow::Result<()> {
    if !opt.shares_store() {
        let orphans = handler.recover().await.context("cannot end the tasks a previous run left running")?;
        if orphans > 0 {
            tracing::warn!(tasks = orphans, "tasks left running by a previous run were marked FAILED");
        }
    }
    let (stopping, handler) = (stopping.clone(), handler.clone());
    tokio::spawn(async move {
        stopping.stopped().await;
        handler.drain();
    });
    Ok(())
}

/// How long a gateway waits for an agent's card, at start and when it tries an agent again.
const UPSTREAM_CARD_TIMEOUT: Duration = Duration::from_secs(10);

/// How the gateway calls the --upstream agent at a URL, with the gateway's upstream token.
fn upstream_client(upstreams: &UpstreamOpt) -> impl Fn(&str) -> ClientBuilder + Send + Sync + 'static {
    let reach = agent_client(upstreams);
    let token = upstreams.upstream_token.clone();
    move |url: &str| match &token {
        Some(token) => reach(url).bearer_token(token),
        None => reach(url),
    }
}

/// How the gateway calls the registered agent at a URL: with the token of its registration, or
/// none. The upstream token is the operator's for its own agents; a registration names any host.
fn registered_client(upstreams: &UpstreamOpt) -> ClientFor {
    let reach = agent_client(upstreams);
    std::sync::Arc::new(move |url: &str, own_token: Option<&str>| match own_token {
        Some(token) => reach(url).bearer_token(token),
        None => reach(url),
    })
}

/// How the gateway calls the agent at a URL, without credentials: only the agent's own host
/// (and those allowed) is called, whatever its card says.
fn agent_client(upstreams: &UpstreamOpt) -> impl Fn(&str) -> ClientBuilder + Send + Sync + 'static {
    let (timeout, hosts) = (Duration::from_secs(upstreams.upstream_timeout), upstreams.upstream_allow_hosts.clone());
    let (transport, protocol) = (upstreams.upstream_transport, upstreams.upstream_protocol);
    move |url: &str| {
        let builder = Client::builder(url)
            .extended_card(false)
            .agent_host_only()
            .timeout(timeout)
            .card_timeout(UPSTREAM_CARD_TIMEOUT);
        let builder = hosts.iter().fold(builder, |builder, host| builder.allow_host(host));
        call::restrict(builder, transport, protocol)
    }
}

/// The gateway's registry, as `--registry-*` set it up, for a gateway listening on `address`.
fn registry_settings(upstreams: &UpstreamOpt, address: std::net::SocketAddr) -> anyhow::Result<RegistrySettings> {
    let options = &upstreams.registry;
    let trusted_keys = match &options.registry_keys {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            let set: JwkSet =
                serde_json::from_str(&text).with_context(|| format!("{} is not a JWK Set", path.display()))?;
            Some(std::sync::Arc::new(agentwire_server::jose::PublicKeys::from_set(&set)))
        }
        None => None,
    };
    Ok(RegistrySettings {
        admins: options.registry_admins.clone(),
        admin_scope: options.registry_admin_scope.clone(),
        refresh: Duration::from_secs(options.registry_refresh),
        unhealthy_after: options.registry_unhealthy_after,
        trusted_keys,
        client: registered_client(upstreams),
        configured: Some(std::sync::Arc::new({
            let reach = upstream_client(upstreams);
            move |url: &str, _: Option<&str>| reach(url)
        })),
        listen_address: Some(address),
        ..RegistrySettings::default()
    })
}

/// What the card names as the gRPC interfaces' `url` (`--card-grpc-form`), when it is not the
/// public URL's own scheme, host and port: `--grpc`'s address, and the bare `HOST:PORT` form.
fn grpc_card_address(opt: &ServeOpt, public_url: &str, grpc: Option<std::net::SocketAddr>) -> Option<String> {
    let (scheme, rest) = public_url.split_once("://").unwrap_or(("http", public_url));
    let authority = grpc.map_or_else(|| rest.split('/').next().unwrap_or(rest).to_owned(), |a| a.to_string());
    match opt.card_grpc_form {
        GrpcCardForm::Target => Some(authority),
        GrpcCardForm::Url => grpc.map(|_| format!("{scheme}://{authority}")),
    }
}

/// The URL clients reach the server at, which its card advertises: `--public-url`, else the
/// listen address. An address that names every interface (`0.0.0.0`, `::`) is no address a
/// client can call: said, with what to do.
fn public_url(opt: &ServeOpt, scheme: &str, address: std::net::SocketAddr) -> String {
    if let Some(url) = &opt.public_url {
        return url.trim_end_matches('/').to_owned();
    }
    if address.ip().is_unspecified() {
        tracing::warn!(
            %address,
            "the card advertises {scheme}://{address}, which no client can call: give --public-url the address \
             clients use (such as {scheme}://HOST:{}, or the address of a proxy or load balancer in front)",
            address.port()
        );
    }
    format!("{scheme}://{address}")
}

/// How `/mcp` is served (`--mcp`): the browser origins `--cors-origin` names besides loopback
/// ones and the public URL's, and the `--mcp-*` limits.
fn mcp_options(opt: &ServeOpt, public_url: &str) -> McpHttpOptions {
    let sessions = SessionLimits {
        max_sessions: opt.mcp_max_sessions as usize,
        max_sessions_per_caller: opt.mcp_max_sessions_per_caller as usize,
        idle: opt.mcp_session_idle,
    };
    McpHttpOptions::new(public_url)
        .with_max_body_bytes(opt.limits.max_body_size)
        .with_allowed_origins(opt.cors_origins.iter().cloned())
        .with_allowed_hosts(opt.allow_hosts.iter().cloned())
        .with_sessions(sessions)
        .with_elicitation_timeout(opt.mcp_elicitation_timeout)
}

/// Whether callers are authenticated (`--auth`, `--tls-client-ca`).
fn authenticates(opt: &ServeOpt) -> bool {
    !opt.auth.is_empty() || opt.tls_client_ca.is_some()
}

/// The browser origins `--cors-origin` allows: by default, any when callers are authenticated
/// (a page cannot read their credentials) and none when they are not (every page the local user
/// opens would be a caller as good as any).
fn cors_origins(opt: &ServeOpt) -> anyhow::Result<CorsOrigins> {
    let origins = &opt.cors_origins;
    if origins.iter().any(|origin| origin == "*") {
        return Ok(CorsOrigins::Any);
    }
    if origins.is_empty() {
        return Ok(if authenticates(opt) { CorsOrigins::Any } else { CorsOrigins::List(Vec::new()) });
    }
    let parsed = origins.iter().map(|o| o.parse().with_context(|| format!("invalid --cors-origin {o:?}")));
    Ok(CorsOrigins::List(parsed.collect::<anyhow::Result<_>>()?))
}

/// The agent `--agent` names, with what it needs opened first (the model agent's tools).
enum Agent {
    Echo,
    Conformance,
    Model(Box<OpenAiAgent>),
}

async fn agent(opt: &ServeOpt) -> anyhow::Result<Agent> {
    Ok(match opt.agent {
        AgentKind::Echo => Agent::Echo,
        AgentKind::Conformance => Agent::Conformance,
        AgentKind::OpenAi => Agent::Model(Box::new(crate::model::agent(&opt.model).await?)),
    })
}

/// The card `--card` names, if it does.
fn user_card(opt: &ServeOpt) -> anyhow::Result<Option<AgentCard>> {
    let Some(path) = &opt.card else { return Ok(None) };
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let card = serde_json::from_str(&text).with_context(|| format!("{} is not an agent card", path.display()))?;
    Ok(Some(card))
}

/// What the handler of `serve` is made of.
struct Built {
    agent: Agent,
    user_card: Option<AgentCard>,
    signing_key: Option<SigningKey>,
    backend: Backend,
}

fn build_handler(
    opt: &ServeOpt,
    built: Built,
    public_url: &str,
    grpc: Option<std::net::SocketAddr>,
    metrics: Option<&Metrics>,
) -> RequestHandler {
    let Built { agent, user_card, signing_key, backend } = built;
    let (card, extended_card) = match &agent {
        Agent::Echo => (user_card.unwrap_or_else(EchoAgent::card), None),
        Agent::Conformance => {
            let card = user_card.unwrap_or_else(ConformanceAgent::card);
            let extended = ConformanceAgent::extended_card(&card);
            (card, Some(extended))
        }
        Agent::Model(model) => (user_card.unwrap_or_else(|| crate::model::card(model, &opt.model)), None),
    };
    let card_config = CardConfig {
        card,
        public_url: public_url.to_owned(),
        streaming: !opt.reduced,
        push_notifications: !opt.reduced,
        extended_card_enabled: !opt.reduced && extended_card.is_some(),
        extended_card,
        required_extensions: opt.required_extensions.clone(),
        grpc_target: grpc_card_address(opt, public_url, grpc),
        protocol_draft_1_1: opt.protocol_draft == Some(crate::opt::ProtocolDraft::V1_1),
    };
    let builder = match agent {
        Agent::Echo => RequestHandler::builder(EchoAgent),
        Agent::Conformance => RequestHandler::builder(ConformanceAgent::new()),
        Agent::Model(model) => RequestHandler::builder(*model),
    };
    let mut builder = builder
        .card(card_config)
        .push_settings(push_settings(opt))
        .limits(request_limits(&opt.limits))
        .retention(retention(&opt.limits));
    if let Some(key) = signing_key {
        builder = builder.signing_key(key);
    }
    if let Some(metrics) = metrics {
        builder = builder.metrics(metrics);
    }
    builder.backend(backend).build()
}

/// Opens the store `--store` names, with the bus and cancel signal that serve it.
async fn open_backend(opt: &ServeOpt) -> anyhow::Result<Backend> {
    let (url, limits) = (opt.store_url(), &opt.limits);
    if opt.shares_store() {
        let store = PostgresStore::connect(url).await.context("cannot open the PostgreSQL store")?;
        let lease = Duration::try_from_secs_f64(opt.lease).context("--lease must be a positive number of seconds")?;
        let backend = store.backend(lease).await.context("cannot join the instances on the PostgreSQL store")?;
        tracing::info!("tasks are kept in PostgreSQL, shared with every instance on the same database");
        return Ok(backend);
    }
    if url == "memory" {
        tracing::info!("tasks are kept in memory and lost when the server stops");
        let retention = RetentionPolicy {
            max_terminal_tasks: Some(limits.retain_tasks),
            max_terminal_bytes: Some(limits.retain_size),
        };
        return Ok(MemoryStore::with_retention(retention).backend());
    }
    if url.starts_with("sqlite:") {
        let store = SqliteStore::open_url(url).await.with_context(|| format!("cannot open the store {url}"))?;
        let path = std::path::absolute(store.path()).unwrap_or_else(|_| store.path().to_owned());
        tracing::info!(path = %path.display(), "tasks are kept in SQLite");
        return Ok(store.backend());
    }
    anyhow::bail!("unknown --store {url:?}: use sqlite:PATH, postgres://… or memory")
}

/// How webhooks are called, as the options say.
fn push_settings(opt: &ServeOpt) -> PushSettings {
    PushSettings {
        guard: WebhookGuard { allow_private: opt.allow_private_webhooks },
        max_concurrent_deliveries: opt.limits.webhook_concurrency,
        lane_capacity: opt.limits.webhook_queue,
        deliver: !opt.no_webhook_delivery,
        ..PushSettings::default()
    }
}

/// How long ended tasks are kept, as the options say.
fn retention(limits: &LimitOpt) -> Retention {
    Retention {
        keep_ended: Some(limits.retain_tasks),
        keep_ended_bytes: Some(limits.retain_size as u64),
        ended_ttl: limits.retain_for.map(Duration::from_secs),
        ..Retention::default()
    }
}

fn request_limits(opt: &LimitOpt) -> Limits {
    Limits {
        max_message_bytes: opt.max_message_size,
        max_history_length: opt.max_history,
        max_unfinished_tasks: opt.max_tasks_in_progress,
        max_unfinished_bytes: opt.max_size_in_progress,
        max_task_bytes: opt.max_task_size,
        max_list_bytes: opt.max_list_size,
        max_push_configs_per_task: opt.max_push_configs,
        max_push_config_bytes: opt.max_push_config_size,
        idempotency_key_ttl: opt.idempotency_ttl,
        expire_waiting: opt.expire_waiting.0,
        max_execution: opt.max_execution.0,
        long_poll_timeout: opt.long_poll_timeout,
        ..Limits::default()
    }
}

/// What stands in front of the operations of `serve` and `gateway` alike: spans when `traced`,
/// `metrics`, the authentication `auth` and the quotas the options ask for, counted in `backend`
/// when its instances share one.
fn app(
    opt: &ServeOpt,
    auth: Option<AnyAuth>,
    metrics: Option<&Metrics>,
    traced: bool,
    backend: Option<&Backend>,
) -> App {
    let mut app = App::new();
    if traced {
        app = app.spans();
    }
    if let Some(metrics) = metrics {
        app = app.metrics(metrics);
    }
    if let Some(auth) = auth {
        app = app.authenticator(auth);
    }
    let quotas = Quotas {
        requests_per_second: opt.limits.rate_limit,
        request_burst: opt.limits.rate_burst,
        max_streams_per_principal: opt.limits.max_streams,
        ..Quotas::default()
    };
    match backend {
        Some(backend) => app.quotas_counted_by(quotas, SharedQuotas::of(backend)),
        None => app.quotas(quotas),
    }
}

/// Raises the soft limit on open files to the hard one, as a server that holds one descriptor per
/// connection needs: with the common soft limit of 1,024, accept fails long before
/// `--max-connections` can make clients wait their turn.
#[cfg(unix)]
fn raise_open_file_limit(max_connections: usize) {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let mut current = limit.current;
    if limit.current < limit.maximum || (limit.current.is_some() && limit.maximum.is_none()) {
        match setrlimit(Resource::Nofile, Rlimit { current: limit.maximum, maximum: limit.maximum }) {
            Ok(()) => current = limit.maximum,
            Err(error) => tracing::debug!(%error, "could not raise the limit on open files"),
        }
    }
    // Descriptors beyond the connections: the store, listeners, webhooks, logs.
    if current.is_some_and(|n| n < max_connections as u64 + 256) {
        tracing::warn!(
            open_files = current,
            max_connections,
            "the limit on open files is below --max-connections; clients beyond it are refused, not queued"
        );
    }
}

#[cfg(not(unix))]
fn raise_open_file_limit(_max_connections: usize) {}

async fn bind(address: std::net::SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(address).await.with_context(|| format!("cannot listen on {address}"))
}

/// Ctrl-C or SIGTERM, told to every listener, and when it came.
#[derive(Clone)]
struct Stopping(tokio::sync::watch::Receiver<Option<Instant>>);

impl Stopping {
    async fn stopped(mut self) {
        // An error means the sender is gone, which only a stop does.
        let _ = self.0.wait_for(Option::is_some).await;
    }

    /// How long ago the signal came (zero if it has not).
    fn elapsed(&self) -> Duration {
        self.0.borrow().map_or(Duration::ZERO, |at| at.elapsed())
    }
}

/// The first Ctrl-C or SIGTERM stops the server in order, within [`DRAIN`]; a second one stops it
/// at once.
fn stop_signal() -> Stopping {
    let (stop, stopping) = tokio::sync::watch::channel(None);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!(
            "stopping: finishing the requests and executions under way, for {} s at most (a second Ctrl-C stops at once)",
            DRAIN.as_secs()
        );
        let _ = stop.send(Some(Instant::now()));
        shutdown_signal().await;
        tracing::warn!(
            "stopped at once; executions that were running are marked FAILED when a server next opens the store"
        );
        // What a second Ctrl-C asks for: no more waiting on anything. The store stays
        // consistent (every answered write is durable); only the drain is skipped.
        #[allow(clippy::disallowed_methods)]
        std::process::exit(130);
    });
    Stopping(stopping)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
