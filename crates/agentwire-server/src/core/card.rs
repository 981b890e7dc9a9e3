//! The agent card the server publishes, and the extended card it hands to authenticated clients.

use agentwire_types::dialect::CardForm;
use agentwire_types::{
    A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, Authentication, Result,
};

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
    /// advertises it only to calls that came through an authentication layer
    /// ([`AuthLayer`](crate::auth::AuthLayer), or an [`App`](crate::App) with an authenticator),
    /// and without one the call answers UnsupportedOperation, as for a card that does not offer
    /// it.
    pub extended_card_enabled: bool,
    /// The extended card (`None` with the feature enabled: "declared but not configured").
    pub extended_card: Option<AgentCard>,
    /// Extensions clients must declare to send messages.
    pub required_extensions: Vec<String>,
    /// What the card names as its gRPC interfaces' `url`, as given: a URL (`http://host:9000`
    /// where gRPC has a port of its own) or a bare channel target (`host:port`, for clients that
    /// hand the URL to a gRPC channel unchanged). By default `public_url`'s scheme, host and
    /// port, where the HTTP port serves gRPC too.
    pub grpc_target: Option<String>,
    /// Serve the dev-1.1 draft of the protocol (a2aproject/A2A `dev-1.1`, docs/COMPATIBILITY.md)
    /// to callers that ask for it with `A2A-Version: 1.1`: the task's generation on tasks and
    /// their updates, GetTask's long poll and a send's precondition on the generation. The card
    /// then lists 1.1 interfaces beside 1.0's. Off by default: a draft may still change.
    pub protocol_draft_1_1: bool,
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
            protocol_draft_1_1: false,
        }
    }
}

/// The public card and the extended one, as served to callers authenticated in front of the
/// service or not: the card declares the schemes of the authentication the call came through
/// ([`RequestContext::authentication`]), and offers the extended card only behind it, the only
/// callers it is for.
pub(crate) struct Cards {
    /// The card to callers no authentication stands in front of: it offers no extended card.
    public: AgentCard,
    /// The public card as configured, offering the extended card if enabled, before any
    /// security is declared or signature made.
    offered: AgentCard,
    extended: Option<AgentCard>,
    required_extensions: Vec<String>,
    /// The dev-1.1 draft is served ([`CardConfig::protocol_draft_1_1`]).
    pub(crate) protocol_draft_1_1: bool,
    /// The key cards are signed with, and the URL of the key set that holds it.
    signer: Option<(std::sync::Arc<agentwire_jose::SigningKey>, Option<String>)>,
    /// The cards for the last authentication seen: one in practice (the layer in front).
    authenticated: std::sync::Mutex<Option<std::sync::Arc<AuthenticatedCards>>>,
}

/// The cards as declared behind one authentication.
struct AuthenticatedCards {
    by: std::sync::Arc<Authentication>,
    public: AgentCard,
    extended: Option<AgentCard>,
}

impl Cards {
    /// The cards of `config`, signed with `signer`'s key (naming the key set at its URL), in place
    /// of any signature they carried: the card's interfaces and capabilities are filled in here,
    /// and an older signature could not cover them.
    pub(crate) fn new(
        config: CardConfig,
        signer: Option<(std::sync::Arc<agentwire_jose::SigningKey>, Option<String>)>,
    ) -> Self {
        let capabilities = |base: &AgentCapabilities| AgentCapabilities {
            streaming: Some(config.streaming),
            push_notifications: Some(config.push_notifications),
            extended_agent_card: Some(config.extended_card_enabled),
            extensions: with_required(&base.extensions, &config.required_extensions),
        };
        let grpc_target = config.grpc_target.as_deref();
        let mut offered = with_defaults(config.card, &config.public_url, grpc_target);
        if config.protocol_draft_1_1 {
            offered.supported_interfaces.extend(draft_interfaces(&offered.supported_interfaces));
        }
        offered.capabilities = capabilities(&offered.capabilities);
        let extended = config.extended_card.map(|card| {
            let mut card = with_defaults(card, &config.public_url, grpc_target);
            card.supported_interfaces.clone_from(&offered.supported_interfaces);
            card.security_schemes.clone_from(&offered.security_schemes);
            card.security_requirements.clone_from(&offered.security_requirements);
            card.capabilities = capabilities(&card.capabilities);
            card
        });
        let mut public = offered.clone();
        public.capabilities.extended_agent_card = Some(false);
        let mut cards = Self {
            public,
            offered,
            extended,
            required_extensions: config.required_extensions,
            protocol_draft_1_1: config.protocol_draft_1_1,
            signer,
            authenticated: std::sync::Mutex::default(),
        };
        cards.public = cards.signed(cards.public.clone());
        cards
    }

    /// `card` signed with the key, if there is one.
    fn signed(&self, mut card: AgentCard) -> AgentCard {
        if let Some((key, jku)) = &self.signer {
            // What a signature covers leaves signatures out, so the old ones do not matter here.
            card.signatures = vec![agentwire_jose::sign_card(&card, key, jku.as_deref())];
        }
        card
    }

    /// The public card to callers no authentication stands in front of.
    pub(crate) fn public(&self) -> &AgentCard {
        &self.public
    }

    /// The public card, as `ctx`'s caller gets it.
    pub(crate) fn public_for(&self, ctx: &RequestContext) -> AgentCard {
        match self.behind(ctx) {
            Some(cards) => cards.public.clone(),
            None => self.public.clone(),
        }
    }

    pub(crate) fn required_extensions(&self) -> &[String] {
        &self.required_extensions
    }

    /// The extended card, for a caller let in by the authentication in front (which runs
    /// before any operation but the public card). As the public card says (v1.0, "Extended
    /// Agent Card"): a card that does not offer one (`capabilities.extendedAgentCard` false:
    /// none enabled, or no authentication to serve it behind) makes the call
    /// UnsupportedOperation; a card that offers one without one configured,
    /// ExtendedAgentCardNotConfigured.
    pub(crate) fn extended(&self, ctx: &RequestContext) -> Result<AgentCard> {
        let cards = self.behind(ctx).filter(|cards| cards.public.capabilities.extended_agent_card == Some(true));
        let Some(cards) = cards else {
            return Err(A2AError::unsupported_operation("this agent's card offers no extended agent card"));
        };
        cards.extended.clone().ok_or_else(A2AError::extended_agent_card_not_configured)
    }

    /// The cards declared behind `ctx`'s authentication, if any: made once for it, and again
    /// only for another.
    fn behind(&self, ctx: &RequestContext) -> Option<std::sync::Arc<AuthenticatedCards>> {
        let by = ctx.authentication.as_ref()?;
        let mut last = self.authenticated.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(cards) = last.as_ref().filter(|cards| std::sync::Arc::ptr_eq(&cards.by, by) || cards.by == *by) {
            return Some(std::sync::Arc::clone(cards));
        }
        let declared = |card: &AgentCard| {
            let mut card = card.clone();
            by.declare(&mut card);
            self.signed(card)
        };
        let cards = std::sync::Arc::new(AuthenticatedCards {
            by: std::sync::Arc::clone(by),
            public: declared(&self.offered),
            extended: self.extended.as_ref().map(declared),
        });
        *last = Some(std::sync::Arc::clone(&cards));
        Some(cards)
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
/// (v0.3 clients add the `/v1` themselves), then gRPC where built in, at `grpc_target` as given
/// (by default the URL's scheme, host and port, which serve gRPC too). By default every interface
/// is a URL of the public URL's origin, gRPC's too (`http://host:port`): the specification's
/// card example writes gRPC's as a URL, and clients that check a card's URLs before they call
/// refuse any other form (Google ADK); a gRPC client takes its channel target from the host and
/// port.
///
/// ```
/// let interfaces = agentwire_server::advertised_interfaces("http://127.0.0.1:8080", None);
/// assert_eq!(interfaces[0].protocol_binding, "JSONRPC");
/// assert_eq!(interfaces[0].protocol_version, "1.0");
/// assert!(interfaces.iter().any(|i| i.protocol_version == "0.3" && i.protocol_binding == "HTTP+JSON"));
/// assert!(interfaces.iter().all(|i| i.url.starts_with("http://127.0.0.1:8080")));
/// ```
pub fn advertised_interfaces(public_url: &str, grpc_target: Option<&str>) -> Vec<AgentInterface> {
    let url = public_url.trim_end_matches('/');
    let interface = |url: &str, binding: &str, version: &str| AgentInterface {
        url: url.to_owned(),
        protocol_binding: binding.into(),
        tenant: String::new(),
        protocol_version: version.into(),
    };
    let grpc = grpc_url(url, grpc_target);
    ["1.0", "0.3"]
        .into_iter()
        .flat_map(|version| {
            let json = [interface(url, "JSONRPC", version), interface(url, "HTTP+JSON", version)];
            json.into_iter().chain(cfg!(feature = "grpc").then(|| interface(&grpc, "GRPC", version)))
        })
        .collect()
}

/// The card's gRPC address: `grpc_target` as given, or the public URL's scheme, host and port (a
/// gRPC method's path is fixed, so a path in the public URL has no part in it).
fn grpc_url(url: &str, grpc_target: Option<&str>) -> String {
    if let Some(target) = grpc_target {
        return target.to_owned();
    }
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    format!("{scheme}://{}", rest.split('/').next().unwrap_or(rest))
}

/// The dev-1.1 draft's interfaces: v1.0's, at the same addresses, under version 1.1 (the draft
/// changes no route, method or address).
fn draft_interfaces(interfaces: &[AgentInterface]) -> Vec<AgentInterface> {
    let v1 = interfaces.iter().filter(|interface| interface.protocol_version == "1.0");
    v1.map(|interface| AgentInterface { protocol_version: "1.1".into(), ..interface.clone() }).collect()
}

/// The card in `form`: v1.0 members only, or the combined card every generation reads.
pub(crate) fn card_json(card: &AgentCard, form: CardForm) -> serde_json::Value {
    match form {
        CardForm::V1 => serde_json::to_value(card).unwrap_or_default(),
        CardForm::Combined => agentwire_types::dialect::card::combined(card),
    }
}
