//! How a registry runs ([`RegistrySettings`]), and the HTTP client its agents share.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agentwire_client::ClientBuilder;
use agentwire_jose::PublicKeys;

/// How the gateway reaches the agent at a URL, with the bearer token registered for it (none
/// when the registration carries none: a registered agent is never sent a credential of the
/// gateway's own). The registry calls every registered agent over one HTTP client of its own,
/// which follows no redirect, whatever client the builder names.
pub type ClientFor = Arc<dyn Fn(&str, Option<&str>) -> ClientBuilder + Send + Sync>;

/// How a gateway's registry runs: who may change it, how often it checks the agents' cards,
/// which keys their signatures are checked with, and how it calls a registered agent.
///
/// ```
/// use std::time::Duration;
/// use agentwire_gateway::RegistrySettings;
///
/// let settings = RegistrySettings {
///     admins: vec!["alice".into()],
///     refresh: Duration::from_secs(30),
///     ..RegistrySettings::default()
/// };
/// # drop(settings);
/// ```
#[derive(Clone)]
pub struct RegistrySettings {
    /// Principals that may register and remove agents, besides holders of `admin_scope`. A
    /// gateway that authenticates no one takes changes from loopback addresses only.
    pub admins: Vec<String>,
    /// The scope that lets its holder register and remove agents (`registry:admin`).
    pub admin_scope: String,
    /// How often each agent's card is fetched again (revalidated with its `ETag`).
    pub refresh: Duration,
    /// How often the store is asked whether another instance changed the registry.
    pub sync: Duration,
    /// Failed checks in a row after which an agent is marked unhealthy.
    pub unhealthy_after: u32,
    /// The keys the agents' card signatures are checked with; without them a signed card is
    /// `unchecked`.
    pub trusted_keys: Option<Arc<PublicKeys>>,
    /// How the gateway reaches the agent at a URL, with the bearer token registered for it.
    pub client: ClientFor,
    /// How the gateway reaches the agents it was built with (`--upstream`), whose clients the
    /// checks renew: with the credentials the operator gave them (it is called without a
    /// token). Without it, [`client`](Self::client) reaches them, over the registry's shared
    /// HTTP client.
    pub configured: Option<ClientFor>,
    /// The most agents the registry holds.
    pub max_agents: usize,
    /// The address the gateway listens on: a registration whose URL names it (or the host and
    /// port of the gateway's public URL) is refused, as a loop back into the gateway.
    pub listen_address: Option<SocketAddr>,
    /// Whether an agent may be registered to be called with its callers' own tokens
    /// (`"callerAuth": "passthrough"`): where the gateway verifies callers' JWTs.
    pub caller_passthrough: bool,
    /// The token exchange that serves agents registered to be called with tokens exchanged for
    /// their callers' (`"callerAuth": "exchange"`); without it, such a registration is refused.
    pub caller_exchange: Option<agentwire_client::TokenExchange>,
}

impl Default for RegistrySettings {
    fn default() -> Self {
        Self {
            admins: Vec::new(),
            admin_scope: "registry:admin".to_owned(),
            refresh: Duration::from_secs(60),
            sync: Duration::from_secs(1),
            unhealthy_after: 2,
            trusted_keys: None,
            client: Arc::new(|url, token| {
                let builder = agentwire_client::Client::builder(url).extended_card(false).agent_host_only();
                let builder = builder.card_timeout(Duration::from_secs(10));
                match token {
                    Some(token) => builder.bearer_token(token),
                    None => builder,
                }
            }),
            configured: None,
            max_agents: 100_000,
            listen_address: None,
            caller_passthrough: false,
            caller_exchange: None,
        }
    }
}

impl std::fmt::Debug for RegistrySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrySettings")
            .field("admins", &self.admins)
            .field("admin_scope", &self.admin_scope)
            .field("refresh", &self.refresh)
            .finish_non_exhaustive()
    }
}

/// How long a connection to a registered agent is kept idle: less than the default check
/// interval, so that an agent nobody calls holds no descriptor between its checks.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The most idle connections kept to one host.
const IDLE_PER_HOST: usize = 4;

/// The HTTP client every registered agent is called over: one connection pool and one TLS
/// configuration for them all, idle connections bounded, and no redirect followed (a card or
/// an agent that redirects is an error naming where it pointed, not a call to another host).
pub(super) fn shared_http_client() -> reqwest::Client {
    let refuse = reqwest::redirect::Policy::custom(|attempt| {
        let to = attempt.url().to_string();
        attempt.error(format!("redirected to {to}; the gateway does not follow a registered agent's redirects"))
    });
    let builder = reqwest::Client::builder()
        .redirect(refuse)
        .pool_idle_timeout(IDLE_TIMEOUT)
        .pool_max_idle_per_host(IDLE_PER_HOST);
    builder.build().unwrap_or_else(|error| {
        // Only a TLS backend that cannot start fails here; the default client would fail alike.
        tracing::error!(%error, "the registry's HTTP client could not be built");
        reqwest::Client::default()
    })
}
