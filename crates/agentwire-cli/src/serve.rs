//! `agentwire serve`.

mod gateway;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;

use agentwire_mcp::{McpHttpOptions, McpServer, OneAgent, SessionLimits};
use agentwire_server::agent::{ConformanceAgent, EchoAgent};
use agentwire_server::auth::AnyAuth;
use agentwire_server::budget::BudgetBook;
use agentwire_server::jose::{JwkSet, SigningKey};
use agentwire_server::quota::{Quotas, SharedQuotas};
use agentwire_server::{
    App, CardConfig, Console, CorsOrigins, HttpOptions, Limits, Metrics, PushSettings, RequestHandler, Retention,
    ServeOptions, ServedHosts, Server, TlsConfig, WebhookGuard,
};
use agentwire_store::{Backend, MemoryStore, PostgresStore, RetentionPolicy, SqliteStore};
use agentwire_types::AgentCard;
use anyhow::Context as _;

use agentwire_openai::OpenAiAgent;

use crate::identity;
use crate::opt::{AgentKind, GrpcCardForm, LimitOpt, ServeOpt, UpstreamOpt};

/// How long open requests and streams may take to finish after a shutdown signal.
const DRAIN: Duration = Duration::from_secs(10);

/// `agentwire serve`: the built-in agent on the store `--store` names; with `upstreams`,
/// `agentwire gateway`: those agents.
pub(crate) async fn run(opt: ServeOpt, upstreams: Option<UpstreamOpt>, traced: bool) -> anyhow::Result<()> {
    raise_open_file_limit(opt.max_connections);
    // Bound first, so that the card names the ports really listened on (`:0` picks one).
    let listeners = Listeners::bind(&opt).await?;
    let tls = tls_config(&opt)?;
    let site = Site::new(&opt, &listeners, tls.is_some(), traced)?;
    let metrics = site.metrics.clone();
    // What the options name is read and checked before the store is opened, so that a mistake
    // leaves no store behind: the authenticators, and the agent with its card.
    let auth = identity::authenticator(&opt).await?;
    let stop = stop_signal();
    let (mut router, handler) = match upstreams {
        Some(upstreams) => gateway::assemble(&opt, &upstreams, site, auth).await?,
        None => assemble_agent(&opt, site, auth).await?,
    };
    let mut server = Server::builder(listeners.http).options(serve_options(&opt, tls, metrics.clone()));
    if let Some(listener) = listeners.grpc {
        tracing::info!(address = %listener.local_addr()?, "serving gRPC");
        server = server.grpc_listener(listener);
    }
    match (metrics, listeners.metrics) {
        (Some(metrics), Some(listener)) => {
            tracing::info!(address = %listener.local_addr()?, "serving metrics");
            server = server.metrics_listener(listener, &metrics);
        }
        (Some(metrics), None) => router = router.merge(metrics.router()),
        (None, _) => {}
    }
    if let Some(handler) = handler {
        server = server.handler(handler);
    }
    server.serve(router, stop).await?;
    tracing::info!("stopped");
    Ok(())
}

/// The listeners the options name, bound.
struct Listeners {
    http: TcpListener,
    grpc: Option<TcpListener>,
    metrics: Option<TcpListener>,
}

impl Listeners {
    async fn bind(opt: &ServeOpt) -> anyhow::Result<Self> {
        let http = bind(opt.http).await?;
        let grpc = match opt.grpc {
            Some(address) => Some(bind(address).await?),
            None => None,
        };
        let metrics = match opt.metrics {
            Some(Some(at)) => Some(bind(at.beside(opt.http)).await?),
            _ => None,
        };
        Ok(Self { http, grpc, metrics })
    }
}

/// What a server is assembled with, once its listeners are bound: where clients reach it, how it
/// serves HTTP, and what it reports.
struct Site {
    /// The URL its card advertises.
    public_url: String,
    /// Its card's URL, as the line that says the server is up names it.
    card_url: String,
    /// The address the HTTP listener is bound to.
    address: SocketAddr,
    /// The gRPC listener's, when gRPC has a port of its own.
    grpc_address: Option<SocketAddr>,
    http: HttpOptions,
    metrics: Option<Metrics>,
    signing_key: Option<SigningKey>,
    /// Whether spans are exported.
    traced: bool,
}

impl Site {
    fn new(opt: &ServeOpt, listeners: &Listeners, tls: bool, traced: bool) -> anyhow::Result<Self> {
        let metrics = opt.metrics.is_some().then(Metrics::new);
        if let Some(metrics) = &metrics {
            metrics.limit_tenant_series(opt.metrics_tenants);
            metrics.limit_usage_series(opt.metrics_usage_series);
        }
        let signing_key = opt.signing_key.as_deref().map(identity::signing_key).transpose()?;
        let signing_keys = signing_key.as_ref().map(|key| JwkSet { keys: vec![key.public_key().to_jwk()] });
        let http = HttpOptions {
            cors: cors_origins(opt)?,
            strict_card: opt.strict_card,
            max_body_bytes: opt.limits.max_body_size,
            body_read_timeout: Duration::from_secs(opt.limits.body_read_timeout),
            max_tenant_bytes: opt.limits.max_tenant_size,
            signing_keys,
            ..HttpOptions::default()
        };
        let address = listeners.http.local_addr()?;
        let grpc_address = listeners.grpc.as_ref().map(TcpListener::local_addr).transpose()?;
        let public_url = public_url(opt, if tls { "https" } else { "http" }, address);
        let card_url = format!("{public_url}/.well-known/agent-card.json");
        Ok(Self { public_url, card_url, address, grpc_address, http, metrics, signing_key, traced })
    }
}

/// The agent `--agent` names, on the store `--store` names: its routes (with the console and MCP
/// the options ask for) and its handler.
async fn assemble_agent(
    opt: &ServeOpt,
    site: Site,
    auth: Option<AnyAuth>,
) -> anyhow::Result<(Router, Option<RequestHandler>)> {
    let agent = agent(opt).await?;
    check_budgets(opt)?;
    if !opt.budgets.is_empty() && !matches!(agent, Agent::Model(_)) {
        anyhow::bail!("--budget limits what a model spends: it needs --agent openai, or a gateway");
    }
    let user_card = user_card(opt)?;
    let backend = open_backend(opt).await?;
    let app = app(opt, auth, site.metrics.as_ref(), site.traced, Some(&backend));
    // The model agent charges the app's budgets and counts what its tasks spend in its metrics.
    let agent = match agent {
        Agent::Model(mut model) => {
            if let Some(book) = app.budget_book() {
                model = Box::new(model.with_budgets(book.clone()));
            }
            if let Some(metrics) = &site.metrics {
                model = Box::new(model.with_metrics(metrics));
            }
            Agent::Model(model)
        }
        agent => agent,
    };
    let built = Built { agent, user_card, signing_key: site.signing_key, backend };
    let handler = build_handler(opt, built, &site.public_url, site.grpc_address, site.metrics.as_ref());
    recover(opt, &handler).await?;
    let mut http = site.http;
    http.readiness = handler.readiness();
    if opt.console {
        let console = console(opt).following(&handler).counting_streams(&app).showing_usage(&app);
        tracing::info!(url = %format!("{}/console", site.public_url), access = ?console.access(), "serving the console");
        http.console = Some(console);
    }
    tracing::info!(address = %site.address, agent = ?opt.agent, card = %site.card_url, "serving");
    let mut routes = app.routes(handler.clone(), http);
    if opt.mcp {
        let server = McpServer::new(OneAgent::new(app.service(handler.clone())));
        routes = routes.merge(agentwire_mcp::router(server, app, mcp_options(opt, &site.public_url)));
        tracing::info!(url = %format!("{}{}", site.public_url, agentwire_mcp::MCP_PATH), "serving MCP");
    }
    Ok((routes.into_router(), Some(handler)))
}

/// Refuses `--budget-admin` without a `--budget`: the admins would have nothing to administer.
fn check_budgets(opt: &ServeOpt) -> anyhow::Result<()> {
    if opt.budgets.is_empty() && !opt.budget_admins.is_empty() {
        anyhow::bail!("--budget-admin names who may see and reset budgets: give the budgets with --budget");
    }
    Ok(())
}

/// TLS as `--tls-cert`, `--tls-key` and `--tls-client-ca` set it up, if they do.
fn tls_config(opt: &ServeOpt) -> anyhow::Result<Option<TlsConfig>> {
    Ok(match (&opt.tls_cert, &opt.tls_key, &opt.tls_client_ca) {
        (Some(cert), Some(key), None) => Some(TlsConfig::from_pem_files(cert, key)?),
        (Some(cert), Some(key), Some(ca)) => {
            Some(TlsConfig::verifying_clients(cert, key, ca, !opt.tls_client_optional)?)
        }
        _ => None,
    })
}

/// How connections are run, as the options say.
fn serve_options(opt: &ServeOpt, tls: Option<TlsConfig>, metrics: Option<Metrics>) -> ServeOptions {
    ServeOptions {
        tls,
        max_connections: opt.max_connections,
        header_read_timeout: Duration::from_secs(opt.header_read_timeout),
        write_timeout: Duration::from_secs(opt.write_timeout),
        drain: DRAIN,
        metrics,
        served_hosts: served_hosts(opt),
        ..ServeOptions::default()
    }
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

/// Ends the tasks a previous run of a store of its own left running (a store that instances
/// share is left to their leases).
async fn recover(opt: &ServeOpt, handler: &RequestHandler) -> anyhow::Result<()> {
    if !opt.shares_store() {
        let orphans = handler.recover().await.context("cannot end the tasks a previous run left running")?;
        if orphans > 0 {
            tracing::warn!(tasks = orphans, "tasks left running by a previous run were marked FAILED");
        }
    }
    Ok(())
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
        AgentKind::OpenAi => Agent::Model(Box::new(crate::model::agent(opt).await?)),
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
    let budgets = crate::opt::budgets(&opt.budgets);
    if !budgets.is_empty() {
        let book = match backend {
            Some(backend) => BudgetBook::shared(budgets, backend),
            None => BudgetBook::new(budgets),
        };
        app = app.budgets(book.admins(opt.budget_admins.iter().cloned()));
    }
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

/// The first Ctrl-C or SIGTERM stops the server in order, within [`DRAIN`]: the future this
/// returns completes then. A second one stops the process at once.
fn stop_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    let (stop, mut stopping) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!(
            "stopping: finishing the requests and executions under way, for {} s at most (a second Ctrl-C stops at once)",
            DRAIN.as_secs()
        );
        let _ = stop.send(true);
        shutdown_signal().await;
        tracing::warn!(
            "stopped at once; executions that were running are marked FAILED when a server next opens the store"
        );
        // What a second Ctrl-C asks for: no more waiting on anything. The store stays
        // consistent (every answered write is durable); only the drain is skipped.
        #[allow(clippy::disallowed_methods)]
        std::process::exit(130);
    });
    async move {
        // An error means the sender is gone, which only a stop does.
        let _ = stopping.wait_for(|stopped| *stopped).await;
    }
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
