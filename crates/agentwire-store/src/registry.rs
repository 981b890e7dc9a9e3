//! A gateway's registry of agents: who registered which card URL under which name and for whom,
//! the card each agent last served with its health, and a search over those cards by free text
//! and by facets. Every instance of a gateway serving one store sees the same registry.
//!
//! ```
//! use agentwire_store::registry::{AgentQuery, Facet, MemoryRegistry, Registration, RegistryStore, CardState};
//! use agentwire_types::{AgentCard, AgentSkill};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = MemoryRegistry::default();
//! registry.register(&Registration::new("fx", "http://127.0.0.1:9001", "admin")).await.unwrap();
//! let skill = AgentSkill { id: "convert".into(), name: "Currency conversion".into(), tags: vec!["finance".into()], ..Default::default() };
//! let card = AgentCard { name: "FX".into(), description: "Exchange rates".into(), skills: vec![skill], ..Default::default() };
//! registry.record("fx", &CardState::answered(card)).await.unwrap();
//! let found = registry.search(&AgentQuery::text("currency")).await.unwrap();
//! assert_eq!((found.names.as_slice(), found.total), (&["fx".to_owned()][..], 1));
//! let query = AgentQuery::default().filter(Facet::Tag, "finance");
//! assert_eq!(registry.search(&query).await.unwrap().names, ["fx"]);
//! # });
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agentwire_types::{AgentCard, Timestamp};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::Result;

/// Who may see and call an agent: everyone when all three lists are empty; otherwise a caller
/// named in `principals`, or whose tenant is in `tenants`, or who holds one of `scopes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Visibility {
    /// Principal names, as the gateway's authenticator names callers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub principals: Vec<String>,
    /// Tenants, as a caller's `tenant` claim names its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tenants: Vec<String>,
    /// Scopes, as a caller's `scope` (or `scp`) claim lists them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

impl Visibility {
    /// Whether every caller, signed in or not, may see the agent.
    pub fn is_public(&self) -> bool {
        self.principals.is_empty() && self.tenants.is_empty() && self.scopes.is_empty()
    }

    /// Whether a caller named `principal` (none when anonymous), of `tenant`, holding `scopes`
    /// may see the agent.
    ///
    /// ```
    /// use agentwire_store::registry::Visibility;
    ///
    /// let ops = Visibility { scopes: vec!["ops".into()], ..Default::default() };
    /// assert!(ops.admits(Some("alice"), None, &["read", "ops"]));
    /// assert!(!ops.admits(Some("bob"), None, &["read"]));
    /// assert!(!ops.admits(None, None, &[]));
    /// assert!(Visibility::default().admits(None, None, &[]));
    /// ```
    pub fn admits(&self, principal: Option<&str>, tenant: Option<&str>, scopes: &[&str]) -> bool {
        if self.is_public() {
            return true;
        }
        let Some(principal) = principal else { return false };
        self.principals.iter().any(|p| p == principal)
            || tenant.is_some_and(|tenant| self.tenants.iter().any(|t| t == tenant))
            || scopes.iter().any(|scope| self.scopes.iter().any(|s| s == scope))
    }
}

/// An agent registered with a gateway: where its card is, the name it is served under, and for
/// whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    /// The name it is served under (`/agents/NAME`, and the gRPC tenant).
    pub name: String,
    /// Its base URL or its card's URL.
    pub card_url: String,
    /// The bearer token the gateway calls it with, if not the gateway's own upstream token.
    pub credential: Option<String>,
    /// Whether it is called as each caller instead, and how; `None`: with `credential`, or none.
    pub caller_auth: Option<CallerAuthMode>,
    /// Who may see and call it.
    pub visibility: Visibility,
    /// The principal that registered it.
    pub registered_by: String,
    /// When.
    pub registered_at: Timestamp,
}

impl Registration {
    /// `name` at `card_url`, seen by everyone, registered now by `by`.
    pub fn new(name: &str, card_url: &str, by: &str) -> Self {
        Self {
            name: name.to_owned(),
            card_url: card_url.to_owned(),
            credential: None,
            caller_auth: None,
            visibility: Visibility::default(),
            registered_by: by.to_owned(),
            registered_at: Timestamp::now(),
        }
    }
}

/// How a registered agent is called as each caller, rather than with a token of its own: the
/// audience is always the registered URL, so that no registration collects tokens meant for
/// another agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallerAuthMode {
    /// The caller's own bearer token, when its audience names the registered URL.
    Passthrough,
    /// A token exchanged for the caller's (RFC 8693), meant for the registered URL.
    Exchange,
}

impl CallerAuthMode {
    /// The mode's name, as stored and shown: `passthrough`, `exchange`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passthrough => "passthrough",
            Self::Exchange => "exchange",
        }
    }

    /// The mode `name` names (as [`as_str`](Self::as_str) writes it), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "passthrough" => Some(Self::Passthrough),
            "exchange" => Some(Self::Exchange),
            _ => None,
        }
    }
}

/// Whether an agent's card is signed, and whether the signature verifies with the keys the
/// gateway trusts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignatureState {
    /// The card carries no signature.
    #[default]
    Unsigned,
    /// A signature verifies with a trusted key.
    Verified,
    /// Signed, but the gateway trusts no key to check it with.
    Unchecked,
    /// Signed, and no signature verifies.
    Invalid,
}

impl SignatureState {
    /// Its name, as stored and shown: `unsigned`, `verified`, `unchecked`, `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unsigned => "unsigned",
            Self::Verified => "verified",
            Self::Unchecked => "unchecked",
            Self::Invalid => "invalid",
        }
    }

    /// The state named `name`; unknown names are [`Unsigned`](Self::Unsigned).
    pub fn from_name(name: &str) -> Self {
        match name {
            "verified" => Self::Verified,
            "unchecked" => Self::Unchecked,
            "invalid" => Self::Invalid,
            _ => Self::Unsigned,
        }
    }
}

/// What the gateway last learned of an agent's card.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardState {
    /// The last card it served (as the agent serves it, in v1.0 form), kept while it does not
    /// answer.
    pub card: Option<Arc<AgentCard>>,
    /// Whether it answered the last checks.
    pub healthy: bool,
    /// How many checks in a row it failed.
    pub failures: u32,
    /// When it was last checked.
    pub checked_at: Option<Timestamp>,
    /// When it last answered.
    pub answered_at: Option<Timestamp>,
    /// Its card's signature.
    pub signature: SignatureState,
    /// Why the last check failed.
    pub error: Option<String>,
}

impl CardState {
    /// `card`, just served by a healthy agent.
    pub fn answered(card: AgentCard) -> Self {
        let now = Timestamp::now();
        Self {
            card: Some(Arc::new(card)),
            healthy: true,
            checked_at: Some(now),
            answered_at: Some(now),
            ..Self::default()
        }
    }
}

/// A registered agent and what is known of its card.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredAgent {
    /// Who registered it, where, for whom.
    pub registration: Registration,
    /// Its card and health.
    pub state: CardState,
}

/// What a search may filter on; values are compared without regard to ASCII case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Facet {
    /// A skill's id.
    Skill,
    /// A skill's tag.
    Tag,
    /// An input media type, the card's default or a skill's.
    InputMode,
    /// An output media type.
    OutputMode,
    /// A binding the agent is reached over (`JSONRPC`, `HTTP+JSON`, `GRPC`).
    Binding,
    /// A protocol version the agent speaks (`1.0`, `0.3`).
    Version,
    /// `true` when its card's signature verifies.
    Signed,
    /// `true` when it answered the last checks.
    Healthy,
}

impl Facet {
    /// Its name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skill => "skill",
            Self::Tag => "tag",
            Self::InputMode => "input",
            Self::OutputMode => "output",
            Self::Binding => "binding",
            Self::Version => "version",
            Self::Signed => "signed",
            Self::Healthy => "healthy",
        }
    }
}

/// A search of the registry: free text over the cards' names, descriptions and skills (their
/// names, descriptions, tags and examples), and facets every result must have.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentQuery {
    /// Words, any of which an agent's card must hold (as a word or a word's start), best match
    /// first; every agent, by name, without them.
    pub text: Option<String>,
    /// Facets every result has.
    pub filters: Vec<(Facet, String)>,
    /// Agents left out whatever they match (those the caller may not see).
    pub excluded: Vec<String>,
    /// How many results to skip, and at most how many to return after them (all without a
    /// limit): a page of the results, which a store finds without reading the others.
    pub offset: usize,
    /// See [`offset`](Self::offset).
    pub limit: Option<usize>,
}

/// What a search found: one page of names, best first, and how many agents match in all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// The names of the page.
    pub names: Vec<String>,
    /// How many agents match, on every page.
    pub total: usize,
}

impl AgentQuery {
    /// The agents whose cards hold any word of `text`.
    pub fn text(text: &str) -> Self {
        Self { text: Some(text.to_owned()), ..Self::default() }
    }

    /// The same search, of agents that also have `facet` `value`.
    pub fn filter(mut self, facet: Facet, value: &str) -> Self {
        self.filters.push((facet, value.to_owned()));
        self
    }

    /// The same search, `limit` results after the first `offset`.
    pub fn page(mut self, offset: usize, limit: usize) -> Self {
        (self.offset, self.limit) = (offset, Some(limit));
        self
    }

    /// The filters' values lower-cased, as the facets are stored.
    pub fn lowercase_filters(&self) -> Vec<(Facet, String)> {
        self.filters.iter().map(|(facet, value)| (*facet, value.to_ascii_lowercase())).collect()
    }

    /// The words of its text, lower-cased, letters and digits only (so that no word says
    /// anything to a full-text engine's query syntax), at most [`MAX_QUERY_WORDS`].
    pub fn words(&self) -> Vec<String> {
        let text = self.text.as_deref().unwrap_or_default();
        let words = text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty());
        words.take(MAX_QUERY_WORDS).map(str::to_lowercase).collect()
    }
}

/// The most words of a query's text searched for.
pub const MAX_QUERY_WORDS: usize = 16;

/// The text and facets an agent is found by, as every backend indexes them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// The card's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its skills' names, descriptions, tags and examples, one per line.
    pub skills: String,
    /// Its facets: (facet, lower-cased value).
    pub facets: Vec<(Facet, String)>,
}

impl Document {
    /// What `state`'s card is found by, with its health and signature.
    pub fn of(state: &CardState) -> Self {
        let mut facets = vec![
            (Facet::Healthy, state.healthy.to_string()),
            (Facet::Signed, (state.signature == SignatureState::Verified).to_string()),
        ];
        let Some(card) = &state.card else { return Self { facets, ..Self::default() } };
        let mut skills = Vec::new();
        for skill in &card.skills {
            skills.extend([&skill.name, &skill.description].into_iter().cloned());
            skills.extend(skill.tags.iter().chain(&skill.examples).cloned());
            facets.push((Facet::Skill, skill.id.clone()));
            facets.extend(skill.tags.iter().map(|tag| (Facet::Tag, tag.clone())));
            facets.extend(skill.input_modes.iter().map(|mode| (Facet::InputMode, mode.clone())));
            facets.extend(skill.output_modes.iter().map(|mode| (Facet::OutputMode, mode.clone())));
        }
        facets.extend(card.default_input_modes.iter().map(|mode| (Facet::InputMode, mode.clone())));
        facets.extend(card.default_output_modes.iter().map(|mode| (Facet::OutputMode, mode.clone())));
        for interface in &card.supported_interfaces {
            facets.push((Facet::Binding, interface.protocol_binding.clone()));
            facets.push((Facet::Version, interface.protocol_version.clone()));
        }
        for (_, value) in &mut facets {
            value.make_ascii_lowercase();
        }
        facets.sort();
        facets.dedup();
        Self { name: card.name.clone(), description: card.description.clone(), skills: skills.join("\n"), facets }
    }
}

/// Where a gateway keeps its registry. Every backend implements it: the memory store (one
/// process, not durable), SQLite (FTS5) and PostgreSQL (full-text search), the last shared by
/// every gateway instance on the database.
#[async_trait]
pub trait RegistryStore: Send + Sync + 'static {
    /// Registers `registration`, or replaces the registration of its name (keeping what is known
    /// of the card when the card URL is the same).
    async fn register(&self, registration: &Registration) -> Result<()>;

    /// Removes the agent `name`; whether it was registered.
    async fn unregister(&self, name: &str) -> Result<bool>;

    /// Records what was learned of `name`'s card, and indexes it; nothing if it is not
    /// registered.
    async fn record(&self, name: &str, state: &CardState) -> Result<()>;

    /// Records that `name` was checked at `checked_at` without anything else changing: the
    /// [`revision`](Self::revision) stays.
    async fn touch(&self, name: &str, checked_at: &Timestamp, answered: bool) -> Result<()>;

    /// Every registered agent, by name.
    async fn agents(&self) -> Result<Vec<RegisteredAgent>>;

    /// A number that changes whenever an agent is registered, removed or recorded, on any
    /// instance: a reader polls it to learn the registry changed.
    async fn revision(&self) -> Result<u64>;

    /// The agents `query` finds, best first: the page it asks for, and how many in all.
    async fn search(&self, query: &AgentQuery) -> Result<Found>;
}

/// A registry in this process's memory: for a gateway without a store, and tests.
#[derive(Debug, Default, Clone)]
pub struct MemoryRegistry {
    inner: Arc<Mutex<MemoryInner>>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    agents: BTreeMap<String, (RegisteredAgent, Document)>,
    revision: u64,
}

impl MemoryRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryInner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How well `document` matches `words`: each word found in the name counts 10, in the
/// description 4, in the skills 1, as a whole word or a word's start.
fn score(document: &Document, words: &[String]) -> u32 {
    let count = |text: &str, word: &str| {
        let text = text.to_lowercase();
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.starts_with(word)).count() as u32
    };
    words
        .iter()
        .map(|word| {
            10 * count(&document.name, word) + 4 * count(&document.description, word) + count(&document.skills, word)
        })
        .sum()
}

#[async_trait]
impl RegistryStore for MemoryRegistry {
    async fn register(&self, registration: &Registration) -> Result<()> {
        let mut inner = self.lock();
        let state = match inner.agents.get(&registration.name) {
            Some((known, _)) if known.registration.card_url == registration.card_url => known.state.clone(),
            _ => CardState::default(),
        };
        let document = Document::of(&state);
        let agent = RegisteredAgent { registration: registration.clone(), state };
        inner.agents.insert(registration.name.clone(), (agent, document));
        inner.revision += 1;
        Ok(())
    }

    async fn unregister(&self, name: &str) -> Result<bool> {
        let mut inner = self.lock();
        let removed = inner.agents.remove(name).is_some();
        inner.revision += u64::from(removed);
        Ok(removed)
    }

    async fn record(&self, name: &str, state: &CardState) -> Result<()> {
        let mut inner = self.lock();
        if let Some((agent, document)) = inner.agents.get_mut(name) {
            agent.state = state.clone();
            *document = Document::of(state);
            inner.revision += 1;
        }
        Ok(())
    }

    async fn touch(&self, name: &str, checked_at: &Timestamp, answered: bool) -> Result<()> {
        if let Some((agent, _)) = self.lock().agents.get_mut(name) {
            agent.state.checked_at = Some(*checked_at);
            if answered {
                agent.state.answered_at = Some(*checked_at);
            }
        }
        Ok(())
    }

    async fn agents(&self) -> Result<Vec<RegisteredAgent>> {
        Ok(self.lock().agents.values().map(|(agent, _)| agent.clone()).collect())
    }

    async fn revision(&self) -> Result<u64> {
        Ok(self.lock().revision)
    }

    async fn search(&self, query: &AgentQuery) -> Result<Found> {
        let words = query.words();
        let filters = query.lowercase_filters();
        let inner = self.lock();
        let mut found: Vec<(u32, &String)> = inner
            .agents
            .iter()
            .filter(|(name, _)| !query.excluded.contains(name))
            .filter(|(_, (_, document))| filters.iter().all(|filter| document.facets.contains(filter)))
            .map(|(name, (_, document))| (if words.is_empty() { 1 } else { score(document, &words) }, name))
            .filter(|(score, _)| *score > 0)
            .collect();
        // Best first; among equals, by name.
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        let total = found.len();
        let page = found.into_iter().skip(query.offset).take(query.limit.unwrap_or(usize::MAX));
        Ok(Found { names: page.map(|(_, name)| name.clone()).collect(), total })
    }
}
