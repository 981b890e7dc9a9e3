//! Changing the registry: who may, registering an agent and removing one.

use std::sync::Arc;
use std::time::Duration;

use agentwire_server::Principal;
use agentwire_store::registry::{CallerAuthMode, RegisteredAgent, Registration};
use agentwire_types::text::slug;
use agentwire_types::A2AError;
use serde_json::{json, Value};

use super::request::{calls_gateway, validate_name, RegisterRequest};
use super::{invalid, store_failed, Registry, LOOPBACK};
use crate::directory::Caller;

impl Registry {
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
    pub(super) fn admin(
        &self,
        principal: Option<&Principal>,
        peer: Option<&agentwire_types::Peer>,
    ) -> Result<Caller, A2AError> {
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
    pub(super) fn credentials_required(&self) -> bool {
        self.app.authentication().is_some()
    }

    /// `POST /agents`: registers an agent.
    pub(super) async fn register(self: &Arc<Self>, caller: &Caller, body: &Value) -> Result<Value, A2AError> {
        let request: RegisterRequest = serde_json::from_value(body.clone()).map_err(|error| {
            invalid(format!("a registration is {{\"url\", \"name\"?, \"token\"?, \"visibility\"?}}: {error}"))
        })?;
        request.validate()?;
        match request.caller_auth {
            Some(CallerAuthMode::Passthrough) if !self.settings.caller_passthrough => {
                return Err(invalid(
                    "callerAuth passthrough: this gateway verifies no JWTs (--auth jwt:), so it has no caller's token \
                     to pass on",
                ));
            }
            Some(CallerAuthMode::Exchange) if self.settings.caller_exchange.is_none() => {
                return Err(invalid(
                    "callerAuth exchange: this gateway exchanges no tokens (--token-exchange-client and its secret)",
                ));
            }
            _ => {}
        }
        if calls_gateway(&request.url, &self.public_url, self.settings.listen_address) {
            return Err(invalid(format!(
                "{} is this gateway's own address: an agent registered there would call the gateway in a loop; \
                 register the agent's own URL",
                request.url
            )));
        }
        let name = match &request.name {
            Some(name) => name.clone(),
            None => self.name_for(&request.url).await?,
        };
        validate_name(&name)?;
        if self.statics.contains(&name) {
            return Err(invalid(format!("{name:?} is configured with --upstream, not registered")).with_conflict());
        }
        let (exists, count) = {
            let known = self.known();
            (known.agents.contains_key(&name), known.agents.len())
        };
        // The card's writer chooses a name taken from it: it never replaces an agent.
        if exists && request.name.is_none() {
            return Err(invalid(format!(
                "an agent named {name:?} (the name its card gives) is registered already: give \"name\" to \
                 replace that agent or to register this one under another name"
            ))
            .with_conflict());
        }
        if !exists && count >= self.settings.max_agents {
            return Err(A2AError::resource_exhausted(format!(
                "the registry holds {} agents, its most",
                self.settings.max_agents
            )));
        }
        let by = caller.principal.as_deref().unwrap_or(LOOPBACK);
        let mut registration = Registration::new(&name, &request.url, by);
        registration.credential = request.token;
        registration.caller_auth = request.caller_auth;
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

    /// A name for the agent at `url`: its card's name, made a path segment. An agent that does
    /// not answer has no card to name it, and a name made of its address (`127-0-0-1-9001`)
    /// would stay once it answers: the registrant is asked for one.
    async fn name_for(&self, url: &str) -> Result<String, A2AError> {
        let builder = self.client_for(url, None).card_cache(&self.cards);
        let why = match tokio::time::timeout(Duration::from_secs(10), builder.connect()).await {
            Ok(Ok(client)) => match slug(&client.card().name) {
                name if name.is_empty() => "its card's name has no letter or digit to make one of".to_owned(),
                name => return Ok(name),
            },
            Ok(Err(error)) => format!("its card could not be read ({})", agentwire_client::error_chain(&error)),
            Err(_) => "its card did not come within 10 s".to_owned(),
        };
        Err(invalid(format!(
            "the agent at {url} needs a name: {why}; give one (`name` in the registration, \
             `agentwire registry add … --name NAME`)"
        )))
    }

    /// `DELETE /agents/NAME`: whether an agent of that name was registered (and is removed).
    pub(super) async fn unregister(self: &Arc<Self>, name: &str) -> Result<bool, A2AError> {
        if self.statics.contains(name) {
            return Err(invalid(format!("{name:?} is configured with --upstream, not registered")).with_conflict());
        }
        if !self.store.unregister(name).await.map_err(store_failed)? {
            return Ok(false);
        }
        tracing::info!(%name, "agent removed from the registry");
        self.forget(&mut self.known(), name);
        Ok(true)
    }
}
