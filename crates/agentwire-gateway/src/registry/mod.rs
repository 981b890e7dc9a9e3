//! A gateway's registry: agents registered and removed while it runs, kept in its store (so
//! that they survive a restart and every instance on a shared store serves the same set), their
//! cards checked on a schedule, and a search over them that shows each caller only the agents it
//! may see.
//!
//! - `GET /agents?q=…&tag=…`: the search (no parameters: every agent the caller may see).
//! - `POST /agents` `{"url", "name"?, "token"?, "visibility"?}`: registers an agent (admins;
//!   JSON only, and from no other web origin than the gateway's own).
//! - `DELETE /agents/NAME`: removes one (admins).
//! - `POST /agents` with a JSON-RPC request for `ListAgents`: the search, as JSON-RPC.

mod changes;
mod guard;
mod listing;
mod request;
mod routes;
mod search;
mod settings;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, Weak};

use agentwire_client::{CallerAuth, CardCache};
use agentwire_server::App;
use agentwire_store::registry::{
    CallerAuthMode, CardState, RegisteredAgent, Registration, RegistryStore, SignatureState, Visibility,
};
use agentwire_types::{A2AError, AgentCard, Timestamp};
use futures_util::StreamExt as _;

use crate::card::Rewrite;
use crate::directory::{Directory, Mounted};
use crate::upstream::Upstream;

pub(crate) use routes::{agents_route, delete_route};
pub use settings::{ClientFor, RegistrySettings};

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
    /// The one HTTP client (connection pool, TLS configuration) of every registered agent.
    http: reqwest::Client,
    /// Set once the agents given at build are recorded and the store was read: a listing waits
    /// for it, so a gateway that just started never lists its own agents as none.
    listed: tokio::sync::watch::Sender<bool>,
}

/// The longest a listing waits for the registry's first reading of the store.
const FIRST_LISTING_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

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
            http: settings::shared_http_client(),
            listed: tokio::sync::watch::Sender::new(false),
        })
    }

    /// Waits until the registry read the store once (the agents given at build recorded), for
    /// [`FIRST_LISTING_WAIT`] at most: a store that does not answer is the listing's to report.
    pub(super) async fn first_listing(&self) {
        let mut listed = self.listed.subscribe();
        let _ = tokio::time::timeout(FIRST_LISTING_WAIT, listed.wait_for(|listed| *listed)).await;
    }

    /// How the agent `registration` describes is called as its callers, with tokens meant for
    /// its registered URL; `None` when it is called with its registration's token, or none; why
    /// this gateway cannot call it, when it was registered for a mode the gateway lacks.
    pub(super) fn caller_auth(&self, registration: &Registration) -> Result<Option<CallerAuth>, String> {
        let audience = registration.card_url.clone();
        match registration.caller_auth {
            None => Ok(None),
            Some(CallerAuthMode::Passthrough) if self.settings.caller_passthrough => {
                Ok(Some(CallerAuth::Passthrough { audience }))
            }
            Some(CallerAuthMode::Exchange) => match &self.settings.caller_exchange {
                Some(exchange) => Ok(Some(CallerAuth::Exchange { audience, exchange: exchange.clone() })),
                None => Err("it is registered to be called with tokens exchanged for its callers', and this \
                             gateway exchanges no tokens"
                    .to_owned()),
            },
            Some(CallerAuthMode::Passthrough) => Err("it is registered to be called with its callers' own tokens, \
                                                      and this gateway verifies no JWTs"
                .to_owned()),
        }
    }

    /// How the agent at `url` is reached, with the token registered for it (or none): over the
    /// registry's shared HTTP client, whatever the settings' builder says.
    fn client_for(&self, url: &str, token: Option<&str>) -> agentwire_client::ClientBuilder {
        (self.settings.client)(url, token).http_client(self.http.clone())
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
            let (caller_auth, unable) = match self.caller_auth(registration) {
                Ok(caller_auth) => (caller_auth, None),
                Err(why) => (None, Some(why)),
            };
            let why = unable.or_else(|| agent.state.error.clone()).unwrap_or_else(|| "not reached yet".to_owned());
            let rewrite = (self.mounter.rewrite)(&name);
            let upstream = Upstream::pending(&name, &registration.card_url, why, rewrite, caller_auth);
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
        // Registered (by another instance) to be called in a way this one cannot: never called,
        // rather than called another way.
        if let (Err(why), false) = (self.caller_auth(registration), self.statics.contains(name)) {
            mounted.upstream.unreached(&why);
            return;
        }
        // An agent given at build is called where the operator said, with the operator's
        // credentials, whatever URL the store holds for its name (another instance may have
        // written one).
        let builder = match &self.settings.configured {
            Some(configured) if self.statics.contains(name) => configured(mounted.upstream.url(), None),
            _ => self.client_for(&registration.card_url, registration.credential.as_deref()),
        };
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
        live.listed.send_replace(true);
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
