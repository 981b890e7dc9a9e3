//! The agent card the server publishes, and the extended card it hands to authenticated clients.

use agentwire_types::dialect::CardForm;
use agentwire_types::{A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, Result};

use crate::RequestContext;

/// What the card says, and which optional features the server offers.
///
/// The server fills what it knows: the interfaces it serves at `public_url`, and capabilities that
/// match what it really does. Everything else comes from `card` (name, description, skills, ...),
/// with sensible defaults for what is left empty.
///
/// ```
/// use agentwire_server::CardConfig;
///
/// let config = CardConfig { public_url: "https://agent.example".into(), streaming: false, ..CardConfig::default() };
/// # drop(config);
/// ```
#[derive(Debug, Clone)]
pub struct CardConfig {
    /// The user's card; empty fields get defaults.
    pub card: AgentCard,
    /// The base URL clients reach the server at, as advertised in `supportedInterfaces`.
    pub public_url: String,
    /// Offer SendStreamingMessage and SubscribeToTask.
    pub streaming: bool,
    /// Offer push notifications.
    pub push_notifications: bool,
    /// Offer GetExtendedAgentCard. The extended card is for authenticated callers: the card
    /// advertises it only when the handler has an authenticator, and without one the call answers
    /// UnsupportedOperation, as for a card that does not offer it.
    pub extended_card_enabled: bool,
    /// The extended card (`None` with the feature enabled: "declared but not configured").
    pub extended_card: Option<AgentCard>,
    /// Extensions clients must declare to send messages.
    pub required_extensions: Vec<String>,
    /// Where gRPC clients connect (`host:port`), when gRPC has a port of its own; by default the
    /// host and port of `public_url`, where the HTTP port serves gRPC too.
    pub grpc_target: Option<String>,
}

impl Default for CardConfig {
    fn default() -> Self {
        Self {
            card: AgentCard::default(),
            public_url: "http://127.0.0.1:8080".into(),
            streaming: true,
            push_notifications: true,
            extended_card_enabled: false,
            extended_card: None,
            required_extensions: Vec::new(),
            grpc_target: None,
        }
    }
}

/// The public card and the extended one. The public card says whether the extended one is
/// offered: only when it is enabled and callers are authenticated, the only callers it is for.
pub(crate) struct Cards {
    public: AgentCard,
    extended: Option<AgentCard>,
    required_extensions: Vec<String>,
}

impl Cards {
    /// The cards of `config`, for a server that authenticates its callers or not.
    pub(crate) fn new(config: CardConfig, authenticated: bool) -> Self {
        let capabilities = |base: &AgentCapabilities| AgentCapabilities {
            streaming: Some(config.streaming),
            push_notifications: Some(config.push_notifications),
            extended_agent_card: Some(config.extended_card_enabled && authenticated),
            extensions: with_required(&base.extensions, &config.required_extensions),
        };
        let grpc_target = config.grpc_target.as_deref();
        let mut public = with_defaults(config.card, &config.public_url, grpc_target);
        public.capabilities = capabilities(&public.capabilities);
        let extended = config.extended_card.map(|card| {
            let mut card = with_defaults(card, &config.public_url, grpc_target);
            card.supported_interfaces.clone_from(&public.supported_interfaces);
            card.security_schemes.clone_from(&public.security_schemes);
            card.security_requirements.clone_from(&public.security_requirements);
            card.capabilities = capabilities(&card.capabilities);
            card
        });
        Self { public, extended, required_extensions: config.required_extensions }
    }

    /// Signs the public and the extended card with `key`, in place of any signature they
    /// carried (the card's interfaces and capabilities were just filled in: an older signature
    /// could not cover them). `jku` is where the key set holding the key is published.
    pub(crate) fn sign(&mut self, key: &agentwire_jose::SigningKey, jku: Option<&str>) {
        for card in std::iter::once(&mut self.public).chain(self.extended.as_mut()) {
            // What a signature covers leaves signatures out, so the old ones do not matter here.
            card.signatures = vec![agentwire_jose::sign_card(card, key, jku)];
        }
    }

    pub(crate) fn public(&self) -> &AgentCard {
        &self.public
    }

    pub(crate) fn required_extensions(&self) -> &[String] {
        &self.required_extensions
    }

    /// The extended card, for an authenticated caller (authentication, where configured, is
    /// enforced before any operation runs). As the public card says (v1.0, "Extended Agent
    /// Card"): a card that does not offer one (`capabilities.extendedAgentCard` false: none
    /// enabled, or no authentication to serve it behind) makes the call UnsupportedOperation; a
    /// card that offers one without one configured, ExtendedAgentCardNotConfigured.
    pub(crate) fn extended(&self, _ctx: &RequestContext) -> Result<AgentCard> {
        if self.public.capabilities.extended_agent_card != Some(true) {
            return Err(A2AError::unsupported_operation("this agent's card offers no extended agent card"));
        }
        self.extended.clone().ok_or_else(A2AError::extended_agent_card_not_configured)
    }
}

fn with_required(declared: &[AgentExtension], required: &[String]) -> Vec<AgentExtension> {
    let mut extensions: Vec<AgentExtension> = declared.to_vec();
    for uri in required {
        match extensions.iter_mut().find(|e| e.uri == *uri) {
            Some(existing) => existing.required = true,
            None => extensions.push(AgentExtension {
                uri: uri.clone(),
                description: "Required by this agent".into(),
                required: true,
                params: None,
            }),
        }
    }
    extensions
}

fn with_defaults(mut card: AgentCard, public_url: &str, grpc_target: Option<&str>) -> AgentCard {
    let url = public_url.trim_end_matches('/').to_owned();
    if card.name.is_empty() {
        "agentwire agent".clone_into(&mut card.name);
    }
    if card.description.is_empty() {
        "An A2A agent served by agentwire".clone_into(&mut card.description);
    }
    if card.version.is_empty() {
        env!("CARGO_PKG_VERSION").clone_into(&mut card.version);
    }
    if card.default_input_modes.is_empty() {
        card.default_input_modes = vec!["text/plain".into()];
    }
    if card.default_output_modes.is_empty() {
        card.default_output_modes = vec!["text/plain".into()];
    }
    if card.skills.is_empty() {
        card.skills = vec![AgentSkill {
            id: "default".into(),
            name: card.name.clone(),
            description: card.description.clone(),
            tags: vec!["general".into()],
            ..AgentSkill::default()
        }];
    }
    card.supported_interfaces = advertised_interfaces(&url, grpc_target);
    card
}

/// The interfaces a server at `public_url` serves, as its card lists them: v1.0's first, then
/// v0.3's; for each, JSON-RPC at the URL (told apart by method name), HTTP+JSON at the URL
/// (v0.3 clients add the `/v1` themselves), then gRPC where built in, at `grpc_target` (by
/// default the URL's host and port, which serve gRPC too). A v1.0 gRPC address is the channel
/// target `host:port`, which is what v1.0 clients dial; v0.3 clients read a URL and take its
/// host and port themselves.
///
/// ```
/// let interfaces = agentwire_server::advertised_interfaces("http://127.0.0.1:8080", None);
/// assert_eq!(interfaces[0].protocol_binding, "JSONRPC");
/// assert_eq!(interfaces[0].protocol_version, "1.0");
/// assert!(interfaces.iter().any(|i| i.protocol_version == "0.3" && i.protocol_binding == "HTTP+JSON"));
/// ```
pub fn advertised_interfaces(public_url: &str, grpc_target: Option<&str>) -> Vec<AgentInterface> {
    let url = public_url.trim_end_matches('/');
    let interface = |url: &str, binding: &str, version: &str| AgentInterface {
        url: url.to_owned(),
        protocol_binding: binding.into(),
        tenant: String::new(),
        protocol_version: version.into(),
    };
    let grpc = grpc_target.unwrap_or_else(|| authority(url));
    let grpc_url = match url.split_once("://") {
        Some((scheme, _)) => format!("{scheme}://{grpc}"),
        None => grpc.to_owned(),
    };
    [("1.0", grpc), ("0.3", grpc_url.as_str())]
        .into_iter()
        .flat_map(|(version, grpc)| {
            let json = [interface(url, "JSONRPC", version), interface(url, "HTTP+JSON", version)];
            json.into_iter().chain(cfg!(feature = "grpc").then(|| interface(grpc, "GRPC", version)))
        })
        .collect()
}

/// Where a gRPC client connects: the URL's `host:port`, the target form gRPC channels take (a
/// gRPC method's path is fixed, so a path in the URL has no part in it).
fn authority(url: &str) -> &str {
    let authority = url.split_once("://").map_or(url, |(_, rest)| rest);
    authority.split('/').next().unwrap_or(authority)
}

/// The card as a client of `dialect` reads it: v1.0 members only, or the combined card.
pub(crate) fn card_json(card: &AgentCard, dialect: agentwire_types::Dialect) -> serde_json::Value {
    match dialect.profile().card_form() {
        CardForm::V1 => serde_json::to_value(card).unwrap_or_default(),
        CardForm::Combined => agentwire_types::dialect::card::combined(card),
    }
}
