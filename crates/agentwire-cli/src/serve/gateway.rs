//! `agentwire gateway`: the agents `--upstream` names, and those registered, behind one server.

use std::time::Duration;

use agentwire_client::{Client, ClientBuilder};
use agentwire_gateway::{CallerAuth, ClientFor, Gateway, GatewayBuilder, Mirror, RegistrySettings};
use agentwire_server::auth::AnyAuth;
use agentwire_server::jose::JwkSet;
use agentwire_server::RequestHandler;
use anyhow::Context as _;
use axum::Router;

use super::{
    app, console, grpc_card_address, mcp_options, open_backend, push_settings, recover, request_limits, retention, Site,
};
use crate::call;
use crate::opt::{ServeOpt, Upstream, UpstreamAuth, UpstreamOpt};

/// The gateway the options describe: its routes and, with a store, the handler of its mirror.
pub(super) async fn assemble(
    opt: &ServeOpt,
    upstreams: &UpstreamOpt,
    site: Site,
    auth: Option<AnyAuth>,
) -> anyhow::Result<(Router, Option<RequestHandler>)> {
    super::check_budgets(opt)?;
    let mut http = site.http;
    if opt.console {
        let console = console(opt);
        tracing::info!(url = %format!("{}/console", site.public_url), access = ?console.access(), "serving the console");
        http.console = Some(console);
    }
    let mut gateway = Gateway::builder(&site.public_url).http_options(http);
    let calls = Calls::of(upstreams, opt).await?;
    let client_for = upstream_client(upstreams, &calls);
    for upstream in &upstreams.upstreams {
        gateway = add_upstream(gateway, &client_for, upstream).await;
        if let Some(auth) = calls.caller_auth(upstreams, upstream) {
            gateway = gateway.caller_auth(upstream.name.as_deref().unwrap_or_default(), auth);
        }
    }
    let mut registry = registry_settings(upstreams, &calls, site.address)?;
    registry.caller_passthrough = crate::identity::verifies_jwts(opt);
    registry.caller_exchange = calls.for_registrations(opt).await?;
    gateway = gateway.registry(registry).max_hops(upstreams.max_gateway_hops);
    if opt.mcp {
        gateway = gateway.mcp_options(mcp_options(opt, &site.public_url));
        tracing::info!(url = %format!("{}{}", site.public_url, agentwire_mcp::MCP_PATH), "serving MCP");
    }
    if let Some(grpc) = grpc_card_address(opt, &site.public_url, site.grpc_address) {
        gateway = gateway.grpc_target(&grpc);
    }
    let backend = match opt.store {
        Some(_) => Some(open_backend(opt).await?),
        None => None,
    };
    gateway = gateway.app(app(opt, auth, site.metrics.as_ref(), site.traced, backend.as_ref()));
    if let Some(key) = site.signing_key {
        gateway = gateway.signing_key(key);
    }
    if let Some(backend) = backend {
        let push = push_settings(opt);
        let mirror = Mirror { backend, limits: request_limits(&opt.limits), push, retention: retention(&opt.limits) };
        gateway = gateway.mirror(mirror);
    }
    let (router, handler) = gateway.into_parts();
    if let Some(handler) = &handler {
        recover(opt, handler).await?;
    }
    tracing::info!(address = %site.address, card = %site.card_url, "serving a gateway");
    Ok((router, handler))
}

/// `gateway` with the agent `upstream` names: served now if it answers, else once it does.
async fn add_upstream(
    gateway: GatewayBuilder,
    client_for: &impl Fn(&str) -> ClientBuilder,
    upstream: &Upstream,
) -> GatewayBuilder {
    let builder = client_for(&upstream.url);
    let name = upstream.name.as_deref();
    match builder.clone().connect().await {
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
    }
}

/// How long a gateway waits for an agent's card, at start and when it tries an agent again.
const UPSTREAM_CARD_TIMEOUT: Duration = Duration::from_secs(10);

/// How the --upstream agents are told who is calling, as the options say, checked once.
enum Calls {
    /// With the gateway's own credentials: `--upstream-token`, or none.
    AsGateway(Option<String>),
    /// With each caller's own token.
    Passthrough,
    /// With a token exchanged for the caller's, one exchange (and its tokens kept) for all.
    Exchange(agentwire_client::TokenExchange),
}

impl Calls {
    async fn of(upstreams: &UpstreamOpt, opt: &ServeOpt) -> anyhow::Result<Self> {
        let token = upstreams.upstream_token.clone();
        let default = if token.is_some() { UpstreamAuth::Token } else { UpstreamAuth::None };
        let mode = upstreams.upstream_auth.unwrap_or(default);
        let as_callers = matches!(mode, UpstreamAuth::Passthrough | UpstreamAuth::Exchange);
        match (mode, &token) {
            (UpstreamAuth::Token, None) => anyhow::bail!("--upstream-auth token needs --upstream-token"),
            (UpstreamAuth::None | UpstreamAuth::Passthrough | UpstreamAuth::Exchange, Some(_)) => {
                anyhow::bail!("--upstream-token is not sent with --upstream-auth {}: leave one out", mode_name(mode))
            }
            _ if as_callers && !crate::identity::verifies_jwts(opt) => anyhow::bail!(
                "--upstream-auth {} needs --auth jwt:…: the gateway calls its agents as the callers it verified",
                mode_name(mode)
            ),
            _ => {}
        }
        if !as_callers && !upstreams.upstream_audiences.is_empty() {
            anyhow::bail!("--upstream-audience is for --upstream-auth passthrough and exchange");
        }
        if opt.token_exchange.given() && !crate::identity::verifies_jwts(opt) {
            anyhow::bail!(
                "the --token-exchange-* options exchange the callers' tokens the gateway verifies: they need --auth jwt:…"
            );
        }
        Ok(match mode {
            UpstreamAuth::None | UpstreamAuth::Token => Self::AsGateway(token),
            UpstreamAuth::Passthrough => Self::Passthrough,
            UpstreamAuth::Exchange => {
                Self::Exchange(crate::identity::token_exchange(opt, "--upstream-auth exchange").await?)
            }
        })
    }

    /// The token exchange of registered agents called with tokens exchanged for their callers':
    /// the --upstream agents', or the one the --token-exchange-* options describe.
    async fn for_registrations(&self, opt: &ServeOpt) -> anyhow::Result<Option<agentwire_client::TokenExchange>> {
        Ok(match self {
            Self::Exchange(exchange) => Some(exchange.clone()),
            _ if opt.token_exchange.given() => {
                Some(crate::identity::token_exchange(opt, "--token-exchange-client").await?)
            }
            _ => None,
        })
    }

    /// How `upstream` is called as its callers, with tokens meant for its --upstream-audience,
    /// or its URL; `None` when it is called with the gateway's credentials.
    fn caller_auth(&self, upstreams: &UpstreamOpt, upstream: &Upstream) -> Option<CallerAuth> {
        let named = upstreams.upstream_audiences.iter().find(|(name, _)| *name == upstream.name);
        let audience = named.map_or_else(|| upstream.url.clone(), |(_, audience)| audience.clone());
        match self {
            Self::AsGateway(_) => None,
            Self::Passthrough => Some(CallerAuth::Passthrough { audience }),
            Self::Exchange(exchange) => Some(CallerAuth::Exchange { audience, exchange: exchange.clone() }),
        }
    }
}

/// How the gateway calls the --upstream agent at a URL: with the gateway's upstream token when
/// `calls` says so, else without credentials of its own.
fn upstream_client(upstreams: &UpstreamOpt, calls: &Calls) -> impl Fn(&str) -> ClientBuilder + Send + Sync + 'static {
    let reach = agent_client(upstreams);
    let token = match calls {
        Calls::AsGateway(token) => token.clone(),
        Calls::Passthrough | Calls::Exchange(_) => None,
    };
    move |url: &str| match &token {
        Some(token) => reach(url).bearer_token(token),
        None => reach(url),
    }
}

fn mode_name(mode: UpstreamAuth) -> &'static str {
    match mode {
        UpstreamAuth::None => "none",
        UpstreamAuth::Token => "token",
        UpstreamAuth::Passthrough => "passthrough",
        UpstreamAuth::Exchange => "exchange",
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
fn registry_settings(
    upstreams: &UpstreamOpt,
    calls: &Calls,
    address: std::net::SocketAddr,
) -> anyhow::Result<RegistrySettings> {
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
            let reach = upstream_client(upstreams, calls);
            move |url: &str, _: Option<&str>| reach(url)
        })),
        listen_address: Some(address),
        ..RegistrySettings::default()
    })
}
