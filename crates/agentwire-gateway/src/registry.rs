//! A gateway's registry: agents registered and removed while it runs, kept in its store (so
//! that they survive a restart and every instance on a shared store serves the same set), their
//! cards checked on a schedule, and a search over them that shows each caller only the agents it
//! may see.
//!
//! - `GET /agents?q=…&tag=…`: the search (no parameters: every agent the caller may see).
//! - `POST /agents` `{"url", "name"?, "token"?, "visibility"?}`: registers an agent (admins).
//! - `DELETE /agents/NAME`: removes one (admins).
//! - `POST /agents` with a JSON-RPC request for `ListAgents`: the search, as JSON-RPC.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agentwire_client::{CardCache, ClientBuilder};
use agentwire_jose::PublicKeys;
use agentwire_server::{App, Principal};
use agentwire_store::registry::{
    AgentQuery, CardState, Facet, RegisteredAgent, Registration, RegistryStore, SignatureState, Visibility,
};
use agentwire_types::{A2AError, AgentCard, RequestContext, Timestamp};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures_util::StreamExt as _;
use http::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::card::Rewrite;
use crate::directory::{context_of, json_response, Caller, Directory, Mounted};
use crate::upstream::Upstream;

/// How the gateway reaches the agent at a URL, with the bearer token registered for it.
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
    /// The most agents the registry holds.
    pub max_agents: usize,
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
            max_agents: 100_000,
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

/// Makes the served form of an agent: its rewrite for a name, and its operations and routes.
pub(crate) struct Mounter {
    pub(crate) rewrite: Box<dyn Fn(&str) -> Rewrite + Send + Sync>,
    pub(crate) mount: Box<dyn Fn(Upstream, Visibility) -> Mounted + Send + Sync>,
}

/// A registry at work.
pub(crate) struct Registry {
    store: Arc<dyn RegistryStore>,
    settings: RegistrySettings,
    directory: Directory,
    mounter: Mounter,
    app: App,
    public_url: String,
    /// The agents given when the gateway was built: served whatever the store says.
    statics: BTreeSet<String>,
    /// The registrations as last read from the store.
    known: Mutex<Known>,
    /// The cards fetched, with their validators: a check asks whether a card changed.
    cards: CardCache,
    /// Lets [`CHECKS_AT_ONCE`] checks run at a time.
    checking: tokio::sync::Semaphore,
}

/// Who registered an agent from the gateway's own host, when it authenticates no one.
const LOOPBACK: &str = "loopback";

/// How many agents are checked at once.
const CHECKS_AT_ONCE: usize = 16;

#[derive(Default)]
struct Known {
    revision: Option<u64>,
    agents: BTreeMap<String, RegisteredAgent>,
    /// Failed checks in a row, by agent, on this instance.
    failures: HashMap<String, u32>,
}

/// The refusal of a registration that is not well formed.
fn invalid(message: impl Into<String>) -> A2AError {
    A2AError::invalid_params(message)
}

fn store_failed(error: agentwire_store::StoreError) -> A2AError {
    A2AError::internal(format!("the registry's store failed: {error}"))
}

impl Registry {
    pub(crate) fn new(
        store: Arc<dyn RegistryStore>,
        settings: RegistrySettings,
        directory: Directory,
        mounter: Mounter,
        app: App,
        public_url: &str,
    ) -> Arc<Self> {
        let statics = directory.agents().into_iter().map(|(name, _)| name).collect();
        Arc::new(Self {
            store,
            settings,
            directory,
            mounter,
            app,
            public_url: public_url.to_owned(),
            statics,
            known: Mutex::default(),
            cards: CardCache::revalidating(),
            checking: tokio::sync::Semaphore::new(CHECKS_AT_ONCE),
        })
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the agents given at build in the store, so that they are searched with the
    /// others, then keeps the directory in step with the store and checks every agent's card on
    /// schedule, until the registry is dropped.
    pub(crate) fn start(self: &Arc<Self>) {
        let registry = Arc::downgrade(self);
        let statics: Vec<(String, String)> = self
            .directory
            .agents()
            .into_iter()
            .map(|(name, mounted)| (name, mounted.upstream.url().to_owned()))
            .collect();
        tokio::spawn(async move {
            if let Some(registry) = registry.upgrade() {
                let known = registry.store.agents().await.unwrap_or_default();
                for (name, url) in statics {
                    if known.iter().any(|agent| agent.registration.name == name && agent.registration.card_url == url) {
                        continue;
                    }
                    if let Err(error) = registry.store.register(&Registration::new(&name, &url, "")).await {
                        tracing::warn!(%name, %error, "could not record an agent in the registry");
                    }
                }
            }
            run(registry).await;
        });
    }

    /// Brings the directory in step with the store, if it changed since last asked.
    async fn sync(self: &Arc<Self>) -> Result<(), A2AError> {
        let revision = self.store.revision().await.map_err(store_failed)?;
        if self.known().revision == Some(revision) {
            return Ok(());
        }
        let agents = self.store.agents().await.map_err(store_failed)?;
        let mut to_check = Vec::new();
        {
            let mut known = self.known();
            let listed: BTreeSet<&str> = agents.iter().map(|agent| agent.registration.name.as_str()).collect();
            let gone: Vec<String> =
                known.agents.keys().filter(|name| !listed.contains(name.as_str())).cloned().collect();
            for name in gone {
                self.forget(&mut known, &name);
            }
            for agent in agents {
                let name = agent.registration.name.clone();
                if self.adopt(&mut known, agent) {
                    to_check.push(name);
                }
            }
            known.revision = Some(revision);
        }
        for name in to_check {
            self.check_soon(name);
        }
        Ok(())
    }

    /// Takes `agent` in as the store holds it, mounting it anew when its registration changed
    /// (an agent given at build stays as it was mounted); whether it is to be checked now.
    fn adopt(&self, known: &mut Known, agent: RegisteredAgent) -> bool {
        let name = agent.registration.name.clone();
        let changed = known.agents.get(&name).is_none_or(|was| was.registration != agent.registration);
        if changed && !self.statics.contains(&name) {
            let registration = &agent.registration;
            let why = agent.state.error.clone().unwrap_or_else(|| "not reached yet".to_owned());
            let upstream = Upstream::pending(&name, &registration.card_url, why, (self.mounter.rewrite)(&name));
            self.directory.insert(&name, (self.mounter.mount)(upstream, registration.visibility.clone()));
        }
        known.agents.insert(name, agent);
        changed
    }

    /// Lets go of `name`, removed from the store.
    fn forget(&self, known: &mut Known, name: &str) {
        known.agents.remove(name);
        known.failures.remove(name);
        if !self.statics.contains(name) {
            self.directory.remove(name);
        }
    }

    /// Checks `name` in the background, a few agents at a time: a gateway that starts with many
    /// agents does not call them all at once.
    fn check_soon(self: &Arc<Self>, name: String) {
        let registry = Arc::clone(self);
        tokio::spawn(async move { registry.check(&name).await });
    }

    /// Fetches `name`'s card again (revalidating it), and records what changed: a new card
    /// (re-indexed, and served from now on), its health, its signature.
    async fn check(&self, name: &str) {
        let Ok(_turn) = self.checking.acquire().await else { return };
        let Some(agent) = self.known().agents.get(name).cloned() else { return };
        let Some(mounted) = self.directory.get(name) else { return };
        let registration = &agent.registration;
        let builder = (self.settings.client)(&registration.card_url, registration.credential.as_deref());
        let now = Timestamp::now();
        let outcome = builder.card_cache(&self.cards).connect().await;
        let was = &agent.state;
        let written = match outcome {
            Ok(client) => {
                self.known().failures.remove(name);
                let card = client.card().clone();
                let signature = self.signature_of(&card);
                let changed = was.card.as_deref() != Some(&card) || !was.healthy || was.signature != signature;
                if changed || !mounted.upstream.is_ready() {
                    mounted.upstream.reached(client);
                }
                if changed {
                    let state = CardState { signature, ..CardState::answered(card) };
                    tracing::info!(%name, url = %registration.card_url, "registered agent's card recorded");
                    self.recorded(name, &state);
                    self.store.record(name, &state).await
                } else {
                    self.touched(name, &now, true);
                    // Written now and then: the store need not learn of every check that found
                    // nothing new.
                    let since = was.checked_at.as_ref().map_or(i64::MAX, |at| now.as_millis() - at.as_millis());
                    let due = u128::try_from(since).unwrap_or(0) >= self.settings.refresh.as_millis() / 2;
                    if due {
                        self.store.touch(name, &now, true).await
                    } else {
                        Ok(())
                    }
                }
            }
            Err(error) => {
                let why = agentwire_client::error_chain(&error);
                mounted.upstream.unreached(&why);
                let failures = {
                    let mut known = self.known();
                    let failures = known.failures.entry(name.to_owned()).or_default();
                    *failures += 1;
                    *failures
                };
                let healthy = was.healthy && failures < self.settings.unhealthy_after;
                if healthy != was.healthy || (!healthy && was.error.as_deref() != Some(&why)) {
                    if was.healthy && !healthy {
                        tracing::warn!(%name, url = %registration.card_url, error = %why, "registered agent marked unhealthy");
                    }
                    let state = CardState { healthy, failures, checked_at: Some(now), error: Some(why), ..was.clone() };
                    self.recorded(name, &state);
                    self.store.record(name, &state).await
                } else {
                    self.touched(name, &now, false);
                    self.store.touch(name, &now, false).await
                }
            }
        };
        if let Err(error) = written {
            tracing::warn!(%name, %error, "could not record a check of a registered agent");
        }
    }

    /// Shows `state` of `name` here at once, before the store's revision brings it back.
    fn recorded(&self, name: &str, state: &CardState) {
        if let Some(agent) = self.known().agents.get_mut(name) {
            agent.state = state.clone();
        }
    }

    /// Notes a check that changed nothing in what this instance shows (the store's revision
    /// stays, so it is not read back).
    fn touched(&self, name: &str, at: &Timestamp, answered: bool) {
        if let Some(agent) = self.known().agents.get_mut(name) {
            agent.state.checked_at = Some(*at);
            if answered {
                agent.state.answered_at = Some(*at);
            }
        }
    }

    fn signature_of(&self, card: &AgentCard) -> SignatureState {
        if card.signatures.is_empty() {
            return SignatureState::Unsigned;
        }
        let Some(keys) = &self.settings.trusted_keys else { return SignatureState::Unchecked };
        match agentwire_jose::verify_card(card, keys, &agentwire_jose::Algorithm::ALL) {
            Ok(_) => SignatureState::Verified,
            Err(_) => SignatureState::Invalid,
        }
    }

    /// `principal`, calling from `peer`, with whether it may change the registry: named by
    /// `--registry-admin`, holding the admin scope, or, where the gateway authenticates no one,
    /// on its own host.
    pub(crate) fn caller(&self, principal: Option<&Principal>, peer: Option<&agentwire_types::Peer>) -> Caller {
        let mut caller = Caller::of(principal);
        caller.admin = match principal {
            Some(principal) => {
                self.settings.admins.contains(&principal.name) || caller.scopes.contains(&self.settings.admin_scope)
            }
            None => self.app.authentication().is_none() && peer.is_some_and(|peer| peer.addr.ip().is_loopback()),
        };
        caller
    }

    /// [`caller`](Self::caller), if it may change the registry.
    fn admin(&self, principal: Option<&Principal>, peer: Option<&agentwire_types::Peer>) -> Result<Caller, A2AError> {
        let caller = self.caller(principal, peer);
        match (caller.admin, principal) {
            (true, _) => Ok(caller),
            (false, Some(_)) => Err(A2AError::permission_denied(format!(
                "changing the registry needs the scope {} or a principal named by --registry-admin",
                self.settings.admin_scope
            ))),
            (false, None) => Err(A2AError::permission_denied(
                "this gateway authenticates no one: its registry is changed from its own host only",
            )),
        }
    }

    /// Whether changing the registry needs credentials: where the gateway authenticates anyone,
    /// a caller without them is refused with the challenge.
    fn credentials_required(&self) -> bool {
        self.app.authentication().is_some()
    }

    /// `POST /agents`: registers an agent.
    async fn register(self: &Arc<Self>, caller: &Caller, body: &Value) -> Result<Value, A2AError> {
        let request: RegisterRequest = serde_json::from_value(body.clone()).map_err(|error| {
            invalid(format!("a registration is {{\"url\", \"name\"?, \"token\"?, \"visibility\"?}}: {error}"))
        })?;
        request.validate()?;
        let name = match &request.name {
            Some(name) => name.clone(),
            None => self.name_for(&request.url).await,
        };
        validate_name(&name)?;
        if self.statics.contains(&name) {
            return Err(invalid(format!("{name:?} is configured with --upstream, not registered")).with_conflict());
        }
        let (exists, count) = {
            let known = self.known();
            (known.agents.contains_key(&name), known.agents.len())
        };
        if !exists && count >= self.settings.max_agents {
            return Err(A2AError::resource_exhausted(format!(
                "the registry holds {} agents, its most",
                self.settings.max_agents
            )));
        }
        let by = caller.principal.as_deref().unwrap_or(LOOPBACK);
        let mut registration = Registration::new(&name, &request.url, by);
        registration.credential = request.token;
        registration.visibility = request.visibility.unwrap_or_default();
        self.store.register(&registration).await.map_err(store_failed)?;
        tracing::info!(%name, url = %registration.card_url, by = %registration.registered_by, "agent registered");
        // Served here at once; the other instances take it in at their next look at the store.
        let kept = self
            .known()
            .agents
            .get(&name)
            .filter(|agent| agent.registration.card_url == registration.card_url)
            .map(|agent| agent.state.clone());
        let state = kept.unwrap_or_default();
        let check = self.adopt(&mut self.known(), RegisteredAgent { registration, state });
        if check {
            self.check_soon(name.clone());
        }
        // The first check answers quickly on a healthy agent: wait a little for its card.
        for _ in 0..20 {
            if self.directory.get(&name).is_some_and(|mounted| mounted.upstream.is_ready()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let agent = self.known().agents.get(&name).cloned();
        Ok(match agent {
            Some(agent) => self.entry(&agent, caller),
            None => json!({ "name": name }),
        })
    }

    /// A name for the agent at `url`: its card's name, made a path segment, else its host's.
    async fn name_for(&self, url: &str) -> String {
        let builder = (self.settings.client)(url, None).card_cache(&self.cards);
        let from_card = match tokio::time::timeout(Duration::from_secs(10), builder.connect()).await {
            Ok(Ok(client)) => slug(&client.card().name),
            _ => String::new(),
        };
        if !from_card.is_empty() {
            return from_card;
        }
        let host = url.split("://").nth(1).unwrap_or(url).split('/').next().unwrap_or_default();
        slug(host)
    }

    /// `DELETE /agents/NAME`.
    async fn unregister(self: &Arc<Self>, name: &str) -> Result<(), A2AError> {
        if self.statics.contains(name) {
            return Err(invalid(format!("{name:?} is configured with --upstream, not registered")).with_conflict());
        }
        if !self.store.unregister(name).await.map_err(store_failed)? {
            return Err(crate::directory::no_such_agent(name));
        }
        tracing::info!(%name, "agent removed from the registry");
        self.forget(&mut self.known(), name);
        Ok(())
    }

    /// The agents `query` finds that `caller` may see, best first, one page of them.
    async fn search(&self, caller: &Caller, query: &SearchQuery) -> Result<Value, A2AError> {
        let (mut agent_query, page_size, offset) = query.parse()?;
        // The store finds the page itself, leaving out the agents the caller may not see.
        agent_query.excluded = self.directory.hidden_from(caller);
        agent_query = agent_query.page(offset, page_size);
        let found = self.store.search(&agent_query).await.map_err(store_failed)?;
        let known = self.known();
        let page: Vec<Value> = found
            .names
            .iter()
            .filter(|name| self.directory.get(name).is_some_and(|mounted| caller.sees(&mounted.visibility)))
            .filter_map(|name| known.agents.get(name))
            .map(|agent| self.entry(agent, caller))
            .collect();
        drop(known);
        let total = found.total;
        let mut answer = json!({ "agents": page, "totalSize": total });
        if offset + page_size < total {
            answer["nextPageToken"] = json!(page_token(offset + page_size));
        }
        Ok(answer)
    }

    /// The names of the agents `text` finds that `caller` may see, best first: one page of them.
    #[cfg(any(feature = "console", feature = "mcp"))]
    pub(crate) async fn found(&self, caller: &Caller, text: &str) -> Result<Vec<String>, A2AError> {
        if text.len() > MAX_TEXT {
            return Err(invalid(format!("the query text is at most {MAX_TEXT} bytes")));
        }
        let query = AgentQuery { excluded: self.directory.hidden_from(caller), ..AgentQuery::text(text) };
        Ok(self.store.search(&query.page(0, MAX_PAGE)).await.map_err(store_failed)?.names)
    }

    /// An agent as a listing shows it: its name, the gateway's URL for it, the card the gateway
    /// serves for it (v1.0 form), its health and signature; an admin also sees who registered it
    /// and why its last check failed.
    fn entry(&self, agent: &RegisteredAgent, caller: &Caller) -> Value {
        let name = &agent.registration.name;
        let state = &agent.state;
        let served = self.directory.get(name).and_then(|mounted| {
            let card = mounted.upstream.card().ok().map(|card| AgentCard::clone(&card));
            card.or_else(|| state.card.as_deref().map(|card| mounted.upstream.rewrite().apply(card.clone())))
        });
        let time = |t: &Option<Timestamp>| t.as_ref().map(|t| json!(t));
        let mut entry = json!({
            "name": name,
            "url": format!("{}/agents/{name}", self.public_url),
            "healthy": state.healthy,
            "signature": state.signature.as_str(),
            "lastChecked": time(&state.checked_at),
            "lastAnswered": time(&state.answered_at),
        });
        match served {
            Some(card) => entry["card"] = json!(card),
            None => entry["unreachable"] = json!(state.error.as_deref().unwrap_or("not reached yet")),
        }
        if caller.admin {
            entry["cardUrl"] = json!(agent.registration.card_url);
            entry["registeredBy"] = json!(agent.registration.registered_by);
            entry["visibility"] = json!(agent.registration.visibility);
            if let Some(error) = &state.error {
                entry["error"] = json!(error);
            }
        }
        entry
    }

    /// What the console lists for the caller of `ctx`: the agents `text` finds (every agent
    /// without it) that it may see, with their health, last check and signature.
    #[cfg(feature = "console")]
    pub(crate) async fn console_listing(
        &self,
        ctx: RequestContext,
        text: Option<String>,
    ) -> Vec<agentwire_server::ListedAgent> {
        let caller = crate::directory::caller_of(&self.app, ctx).await;
        let names: Vec<String> = match text {
            Some(text) => self.found(&caller, &text).await.unwrap_or_default(),
            None => self.directory.agents().into_iter().map(|(name, _)| name).collect(),
        };
        let time = |t: &Option<Timestamp>| t.as_ref().map(Timestamp::to_string);
        // Under the lock, without a copy of every agent.
        let known = self.known();
        let mut listed = Vec::new();
        for name in names {
            let Some(mounted) = self.directory.get(&name) else { continue };
            if !caller.sees(&mounted.visibility) {
                continue;
            }
            // One page: the search box finds the others.
            if listed.len() == MAX_PAGE {
                break;
            }
            let state = known.agents.get(&name).map(|agent| agent.state.clone()).unwrap_or_default();
            // An agent not reached yet is listed by name, saying why; one reached before shows
            // its last card, and why its last check failed beside it.
            let (card, error) = match mounted.upstream.card() {
                Ok(card) => (AgentCard::clone(&card), state.error.clone()),
                Err(why) => {
                    let description = why.message().to_owned();
                    (AgentCard { name: name.clone(), description, ..AgentCard::default() }, None)
                }
            };
            let facts = agentwire_server::RegistryFacts {
                healthy: state.healthy,
                last_checked: time(&state.checked_at),
                last_answered: time(&state.answered_at),
                signature: state.signature.as_str().to_owned(),
                error,
            };
            let console = format!("/agents/{name}/console");
            listed.push(agentwire_server::ListedAgent { name, console, card, registry: Some(facts) });
        }
        listed
    }
}

/// Keeps the registry in step with its store and checks the cards, while it lives.
async fn run(registry: Weak<Registry>) {
    let Some((sync, refresh)) = registry.upgrade().map(|r| (r.settings.sync, r.settings.refresh)) else { return };
    let mut next_refresh = tokio::time::Instant::now() + refresh;
    loop {
        let Some(live) = registry.upgrade() else { return };
        if let Err(error) = live.sync().await {
            tracing::warn!(error = %error.message(), "could not read the registry");
        }
        if tokio::time::Instant::now() >= next_refresh {
            next_refresh = tokio::time::Instant::now() + refresh;
            let names: Vec<String> = live.known().agents.keys().cloned().collect();
            let checks = futures_util::stream::iter(names).for_each_concurrent(16, |name| {
                let live = Arc::clone(&live);
                async move { live.check(&name).await }
            });
            checks.await;
        }
        drop(live);
        tokio::time::sleep(sync).await;
    }
}

/// A registration's body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegisterRequest {
    url: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    visibility: Option<Visibility>,
}

/// The longest URL, token and visibility entry registered, and the most entries in each of the
/// visibility's lists.
const MAX_URL: usize = 2048;
const MAX_TOKEN: usize = 4096;
const MAX_ENTRY: usize = 256;
const MAX_ENTRIES: usize = 64;

impl RegisterRequest {
    fn validate(&self) -> Result<(), A2AError> {
        let url = &self.url;
        if url.len() > MAX_URL || !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(format!("url must be an http:// or https:// URL of at most {MAX_URL} bytes")));
        }
        if url.parse::<http::Uri>().ok().and_then(|uri| uri.host().map(str::to_owned)).is_none() {
            return Err(invalid("url is not a URL with a host"));
        }
        if let Some(token) = &self.token
            && (token.is_empty() || token.len() > MAX_TOKEN || !token.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(invalid(format!("token must be 1 to {MAX_TOKEN} visible ASCII characters")));
        }
        if let Some(visibility) = &self.visibility {
            for list in [&visibility.principals, &visibility.tenants, &visibility.scopes] {
                let too_long = list.iter().any(|entry| entry.is_empty() || entry.len() > MAX_ENTRY);
                if list.len() > MAX_ENTRIES || too_long {
                    return Err(invalid(format!(
                        "visibility lists hold at most {MAX_ENTRIES} names of 1 to {MAX_ENTRY} bytes"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The longest agent name.
const MAX_NAME: usize = 64;

fn validate_name(name: &str) -> Result<(), A2AError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(invalid(format!("{name:?} cannot name an agent: use 1 to {MAX_NAME} letters, digits, - and _")))
    }
}

/// `text` as a name: lower-case letters and digits, other runs made one `-`.
fn slug(text: &str) -> String {
    let mut slug = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').chars().take(MAX_NAME).collect()
}

/// A search's parameters, from a query string or a JSON-RPC request's params.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SearchQuery {
    q: Option<String>,
    query: Option<String>,
    skill: Option<String>,
    tag: Option<String>,
    input_mode: Option<String>,
    output_mode: Option<String>,
    binding: Option<String>,
    version: Option<String>,
    signed: Option<String>,
    healthy: Option<String>,
    page_size: Option<usize>,
    page_token: Option<String>,
}

/// The page size when none is asked for, and the largest.
const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: usize = 100;
/// The longest query text.
const MAX_TEXT: usize = 1024;

impl SearchQuery {
    /// The store's query, the page size and where the page starts.
    fn parse(&self) -> Result<(AgentQuery, usize, usize), A2AError> {
        let text = self.q.as_ref().or(self.query.as_ref());
        if text.is_some_and(|text| text.len() > MAX_TEXT) {
            return Err(invalid(format!("the query text is at most {MAX_TEXT} bytes")));
        }
        let mut query = AgentQuery { text: text.cloned(), ..AgentQuery::default() };
        let filters = [
            (Facet::Skill, &self.skill),
            (Facet::Tag, &self.tag),
            (Facet::InputMode, &self.input_mode),
            (Facet::OutputMode, &self.output_mode),
            (Facet::Binding, &self.binding),
            (Facet::Version, &self.version),
            (Facet::Signed, &self.signed),
            (Facet::Healthy, &self.healthy),
        ];
        for (facet, value) in filters {
            if let Some(value) = value {
                if value.len() > MAX_ENTRY {
                    return Err(invalid(format!("a filter is at most {MAX_ENTRY} bytes")));
                }
                if matches!(facet, Facet::Signed | Facet::Healthy) && value != "true" && value != "false" {
                    return Err(invalid(format!("{} is true or false", facet.as_str())));
                }
                query = query.filter(facet, value);
            }
        }
        let page_size = self.page_size.unwrap_or(DEFAULT_PAGE);
        if page_size == 0 || page_size > MAX_PAGE {
            return Err(invalid(format!("pageSize is 1 to {MAX_PAGE}")));
        }
        let offset = match &self.page_token {
            None => 0,
            Some(token) if token.is_empty() => 0,
            Some(token) => base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(token)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .and_then(|text| text.strip_prefix("agents:").and_then(|n| n.parse().ok()))
                .ok_or_else(|| invalid("pageToken is not one this gateway gave"))?,
        };
        Ok((query, page_size, offset))
    }
}

fn page_token(offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("agents:{offset}"))
}

/// The largest body `POST /agents` reads.
const MAX_BODY: usize = 64 * 1024;

/// `GET /agents`, `POST /agents`.
pub(crate) async fn agents_route(registry: Arc<Registry>, request: Request) -> Response {
    match *request.method() {
        http::Method::GET => {
            let ctx = context_of(&request);
            let peer = ctx.peer.clone();
            let query: Result<SearchQuery, _> = serde_urlencoded::from_str(request.uri().query().unwrap_or_default())
                .map_err(|error| invalid(format!("the search's parameters do not read: {error}")));
            let answer = registry.app.beside(ctx, "ListAgents", false, |principal| {
                let caller = registry.caller(principal.as_ref(), peer.as_ref());
                let registry = &registry;
                async move { registry.search(&caller, &query?).await }
            });
            respond(answer.await.map(|answer| (StatusCode::OK, answer)))
        }
        http::Method::POST => post(registry, request).await,
        _ => StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
}

/// `POST /agents`: a JSON-RPC request for `ListAgents`, or a registration.
async fn post(registry: Arc<Registry>, request: Request) -> Response {
    let ctx = context_of(&request);
    let peer = ctx.peer.clone();
    let body = match axum::body::to_bytes(request.into_body(), MAX_BODY).await {
        Ok(body) => body,
        Err(_) => return respond(Err(A2AError::payload_too_large(MAX_BODY))),
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(error) => return respond(Err(invalid(format!("the body is not JSON: {error}")))),
    };
    if body.get("jsonrpc").is_some() {
        return jsonrpc(&registry, ctx, &body).await;
    }
    let required = registry.credentials_required();
    let answer = registry.app.beside(ctx, "RegisterAgent", required, |principal| {
        let admitted = registry.admin(principal.as_ref(), peer.as_ref());
        let (registry, body) = (&registry, &body);
        async move { registry.register(&admitted?, body).await }
    });
    respond(answer.await.map(|entry| (StatusCode::CREATED, entry)))
}

/// `DELETE /agents/NAME`.
pub(crate) async fn delete_route(registry: Arc<Registry>, name: &str, request: Request) -> Response {
    let ctx = context_of(&request);
    let peer = ctx.peer.clone();
    let required = registry.credentials_required();
    let answer = registry.app.beside(ctx, "UnregisterAgent", required, |principal| {
        let admitted = registry.admin(principal.as_ref(), peer.as_ref());
        let registry = &registry;
        async move {
            admitted?;
            registry.unregister(name).await
        }
    });
    match answer.await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) if error.message().starts_with("no agent named") => crate::directory::not_found(name),
        Err(error) => agentwire_server::error_response(&error),
    }
}

/// The registry's JSON-RPC method, `ListAgents`, whose params are the search's.
async fn jsonrpc(registry: &Registry, ctx: RequestContext, body: &Value) -> Response {
    let id = body.get("id").cloned().unwrap_or(Value::Null);
    let peer = ctx.peer.clone();
    let answer = match body.get("method").and_then(Value::as_str) {
        Some("ListAgents") => {
            let params = body.get("params").cloned().unwrap_or_else(|| json!({}));
            let query = serde_json::from_value::<SearchQuery>(params)
                .map_err(|error| invalid(format!("ListAgents' params do not read: {error}")));
            let search = registry.app.beside(ctx, "ListAgents", false, |principal| {
                let caller = registry.caller(principal.as_ref(), peer.as_ref());
                async move { registry.search(&caller, &query?).await }
            });
            search.await
        }
        Some(method) => Err(A2AError::method_not_found(method)),
        None => Err(A2AError::invalid_request("a JSON-RPC request names its method")),
    };
    let reply = match answer {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => {
            let object = agentwire_types::jsonrpc::ErrorObject::new(agentwire_types::Dialect::V1, &error);
            json!({ "jsonrpc": "2.0", "id": id, "error": object })
        }
    };
    json_response(StatusCode::OK, &reply)
}

fn respond(answer: Result<(StatusCode, Value), A2AError>) -> Response {
    match answer {
        Ok((status, body)) => json_response(status, &body),
        Err(error) => agentwire_server::error_response(&error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_path_segments() {
        assert_eq!(slug("Currency Desk (EU)"), "currency-desk-eu");
        assert_eq!(slug("127.0.0.1:9001"), "127-0-0-1-9001");
        assert!(validate_name("fx_2-b").is_ok());
        for bad in ["", "a/b", "a b", "é", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_search_reads_its_filters_and_pages() {
        let query: SearchQuery = serde_urlencoded::from_str("q=fx&tag=Finance&healthy=true&pageSize=2").unwrap();
        let (parsed, size, offset) = query.parse().unwrap();
        assert_eq!(parsed.text.as_deref(), Some("fx"));
        assert_eq!(parsed.filters, [(Facet::Tag, "Finance".to_owned()), (Facet::Healthy, "true".to_owned())]);
        assert_eq!((size, offset), (2, 0));
        let next = SearchQuery { page_token: Some(page_token(4)), ..SearchQuery::default() };
        assert_eq!(next.parse().unwrap().2, 4);
        for bad in ["pageSize=0", "pageSize=101", "pageToken=zz", "signed=maybe"] {
            let query: SearchQuery = serde_urlencoded::from_str(bad).unwrap();
            assert!(query.parse().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_registration_is_bounded() {
        let ok = RegisterRequest { url: "http://127.0.0.1:9001".into(), name: None, token: None, visibility: None };
        assert!(ok.validate().is_ok());
        let long = RegisterRequest { url: format!("http://{}", "a".repeat(MAX_URL)), ..ok };
        assert!(long.validate().is_err());
        let file = RegisterRequest { url: "file:///etc/passwd".into(), name: None, token: None, visibility: None };
        assert!(file.validate().is_err());
        let many = Visibility { principals: vec!["p".into(); MAX_ENTRIES + 1], ..Visibility::default() };
        let crowded = RegisterRequest { visibility: Some(many), ..file };
        assert!(RegisterRequest { url: "http://a".into(), ..crowded }.validate().is_err());
    }
}
