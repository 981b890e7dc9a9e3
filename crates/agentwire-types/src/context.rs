//! What an operation knows about its request besides its parameters: who asks, for which tenant,
//! in which protocol generation and over which binding, with which extensions and metadata.

use std::net::SocketAddr;
use std::sync::Arc;

use http::HeaderMap;
use serde_json::{Map, Value};

use crate::{Dialect, SecurityScheme};

/// The header (on JSON-RPC and HTTP+JSON) and gRPC metadata key a client names a send with, so
/// that a retry of it is answered by the task it made rather than making another.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Which of a server's fronts a request came in by: an A2A binding, MCP, the web console, or
/// the routes a gateway serves beside its agents. Metrics and spans label a request by it, so
/// that MCP's and the console's load is told apart from A2A's.
///
/// ```
/// use agentwire_types::{Front, RequestContext};
///
/// let ctx = RequestContext::from_http(Front::Mcp, &http::HeaderMap::new(), &http::Extensions::new());
/// assert_eq!(ctx.front.name(), "MCP");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Front {
    /// An A2A binding: the context's `binding` says which.
    #[default]
    A2a,
    /// MCP: `/mcp`, or a tool of `agentwire mcp`.
    Mcp,
    /// The web console.
    Console,
    /// A gateway's own routes: its directory of agents and its registry.
    Gateway,
    /// The budgets' routes (`/budgets`), where callers read and operators reset them.
    Budgets,
}

impl Front {
    /// The front's name, as metrics and spans label it: `A2A`, `MCP`, `console`, `gateway` or
    /// `budgets`.
    pub fn name(self) -> &'static str {
        match self {
            Front::A2a => "A2A",
            Front::Mcp => "MCP",
            Front::Console => "console",
            Front::Gateway => "gateway",
            Front::Budgets => "budgets",
        }
    }
}

/// An A2A protocol binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP.
    JsonRpc,
    /// HTTP+JSON (REST).
    HttpJson,
    /// gRPC.
    Grpc,
}

impl Binding {
    /// The name an agent card gives the binding (`JSONRPC`, `HTTP+JSON`, `GRPC`).
    ///
    /// ```
    /// use agentwire_types::Binding;
    ///
    /// assert_eq!(Binding::from_name("http+json"), Some(Binding::HttpJson));
    /// assert_eq!(Binding::HttpJson.name(), "HTTP+JSON");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::JsonRpc => "JSONRPC",
            Self::HttpJson => "HTTP+JSON",
            Self::Grpc => "GRPC",
        }
    }

    /// The binding a card's name denotes, compared without case.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::JsonRpc, Self::HttpJson, Self::Grpc].into_iter().find(|b| b.name().eq_ignore_ascii_case(name))
    }
}

/// An authenticated caller.
///
/// ```
/// use agentwire_types::Principal;
///
/// let alice = Principal::new("alice").with_claim("scope", "a2a:read");
/// assert_eq!(alice.claims["scope"], "a2a:read");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// A stable name; tasks are owned by it.
    pub name: String,
    /// What the authenticator learned about the caller (a token's claims, a certificate's
    /// subject), for layers that decide what the caller may do.
    pub claims: Map<String, Value>,
}

impl Principal {
    /// A principal with this name and no claims.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), claims: Map::new() }
    }

    /// The same principal with one more claim.
    pub fn with_claim(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.claims.insert(name.into(), value.into());
        self
    }

    /// Who acts for the principal, as its token's `act` claim says (RFC 8693): the current actor
    /// (the party that called with the token), then each actor before it (each nested `act`'s
    /// `sub`).
    ///
    /// ```
    /// use agentwire_types::Principal;
    /// use serde_json::json;
    ///
    /// let alice = Principal::new("alice").with_claim("act", json!({"sub": "gateway", "act": {"sub": "model"}}));
    /// assert_eq!(alice.actors(), ["gateway", "model"]);
    /// assert!(Principal::new("bob").actors().is_empty());
    /// ```
    pub fn actors(&self) -> Vec<&str> {
        // Bounded: a token's nesting is the issuer's, and the chain is for showing.
        const MOST: usize = 16;
        let mut actors = Vec::new();
        let mut act = self.claims.get("act");
        while let Some(Value::Object(actor)) = act {
            match actor.get("sub").and_then(Value::as_str) {
                Some(sub) if actors.len() < MOST => actors.push(sub),
                _ => break,
            }
            act = actor.get("act");
        }
        actors
    }

    /// Who asked, as a task keeps it in its metadata under [`CALLER_KEY`]: the principal, and
    /// the parties acting for it ([`actors`](Self::actors)) when its token names any.
    ///
    /// ```
    /// use agentwire_types::{Principal, CALLER_KEY};
    /// use serde_json::json;
    ///
    /// let alice = Principal::new("alice").with_claim("act", json!({"sub": "gateway"}));
    /// assert_eq!(alice.record(), json!({"principal": "alice", "actors": ["gateway"]}));
    /// assert_eq!(Principal::new("bob").record(), json!({"principal": "bob"}));
    /// ```
    pub fn record(&self) -> Value {
        let mut record = Map::new();
        record.insert("principal".into(), Value::String(self.name.clone()));
        let actors = self.actors();
        if !actors.is_empty() {
            record.insert("actors".into(), actors.into_iter().map(|actor| Value::String(actor.to_owned())).collect());
        }
        Value::Object(record)
    }
}

/// The key of a task's metadata under which the server keeps who asked for it, and through whom
/// ([`Principal::record`]): written when the task is made by a caller whose token names parties
/// acting for it (`act`).
pub const CALLER_KEY: &str = "agentwire.caller";

/// The connection a request came over, as the listener saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// The client's address.
    pub addr: SocketAddr,
    /// The client's TLS certificate (DER), when it presented one.
    pub certificate: Option<Arc<[u8]>>,
    /// Whether the connection is TLS.
    pub tls: bool,
}

/// The per-request facts every operation receives.
///
/// ```
/// use agentwire_types::{Binding, Dialect, RequestContext};
///
/// let ctx = RequestContext::new(Dialect::V03, Binding::Grpc);
/// assert!(ctx.principal.is_none());
/// assert_eq!(ctx.tenant, "");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    /// Routing tenant ("" when none).
    pub tenant: String,
    /// The authenticated caller, if any.
    pub principal: Option<Principal>,
    /// The protocol generation the request was made in, as its method name or route tells it.
    pub dialect: Dialect,
    /// The binding the request arrived over (for a request of another front, the one its
    /// operations are made as).
    pub binding: Binding,
    /// The front the request came in by.
    pub front: Front,
    /// Extension URIs the client declared.
    pub extensions: Vec<String>,
    /// For a subscription that resumes a dropped stream: the sequence number of the last event
    /// the client received (SSE's `Last-Event-ID`). The stream then carries every event after it.
    pub last_event_id: Option<u64>,
    /// The request's headers, or its gRPC metadata (ASCII entries), as the client sent them.
    pub metadata: HeaderMap,
    /// The connection, where the server was given one (see `agentwire_server::serve`).
    pub peer: Option<Peer>,
    /// How the layers in front of the service authenticate callers, set by the authentication
    /// layer on every call (the public card's too): the cards a service serves declare it, and
    /// an extended card is served only behind it.
    pub authentication: Option<Arc<Authentication>>,
    /// The caller asked for the dev-1.1 draft (`A2A-Version: 1.1` on a v1.0 method or route):
    /// its answers carry the task's generation, and it may long-poll a task and send with a
    /// precondition on it.
    pub task_generations: bool,
}

/// How callers are authenticated in front of a service: the security schemes its cards declare,
/// by name, any one of which lets a caller in.
///
/// ```
/// use agentwire_types::{Authentication, HttpAuthSecurityScheme, SecurityScheme};
///
/// let bearer = SecurityScheme::HttpAuth(HttpAuthSecurityScheme { scheme: "Bearer".into(), ..Default::default() });
/// let authentication = Authentication::new([("bearer".to_owned(), bearer)].into());
/// assert_eq!(authentication.requirements().len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Authentication {
    /// The schemes, by the names the card's requirements use.
    pub schemes: std::collections::BTreeMap<String, SecurityScheme>,
}

// Scheme objects hold no floating-point values: equality is an equivalence.
impl Eq for Authentication {}

impl Authentication {
    /// Callers authenticated by any of `schemes`.
    pub fn new(schemes: std::collections::BTreeMap<String, SecurityScheme>) -> Self {
        Self { schemes }
    }

    /// The card's `securityRequirements`: one per scheme, any of which will do.
    pub fn requirements(&self) -> Vec<crate::SecurityRequirement> {
        let requirement = |name: &String| crate::SecurityRequirement {
            schemes: std::collections::BTreeMap::from([(name.clone(), crate::StringList::default())]),
        };
        self.schemes.keys().map(requirement).collect()
    }

    /// `card` declaring these schemes and requirements, beside any it declared.
    pub fn declare(&self, card: &mut crate::AgentCard) {
        card.security_schemes.extend(self.schemes.iter().map(|(name, scheme)| (name.clone(), scheme.clone())));
        card.security_requirements = self.requirements();
    }
}

impl Default for RequestContext {
    fn default() -> Self {
        Self::new(Dialect::V1, Binding::JsonRpc)
    }
}

impl RequestContext {
    /// A request made in `dialect` over `binding`, by nobody in particular.
    pub fn new(dialect: Dialect, binding: Binding) -> Self {
        Self {
            tenant: String::new(),
            principal: None,
            dialect,
            binding,
            front: Front::A2a,
            extensions: Vec::new(),
            last_event_id: None,
            metadata: HeaderMap::new(),
            peer: None,
            authentication: None,
            task_generations: false,
        }
    }

    /// A request that came in by `front` over HTTP, as the server saw it: its headers (the
    /// context's metadata, where the authenticators look for credentials) and the connection
    /// the listener put in its extensions. Its operations are v1.0's, over HTTP+JSON.
    pub fn from_http(front: Front, headers: &HeaderMap, extensions: &http::Extensions) -> Self {
        let mut ctx = Self::new(Dialect::V1, Binding::HttpJson).with_front(front);
        ctx.metadata = headers.clone();
        ctx.peer = extensions.get::<Peer>().cloned();
        ctx
    }

    /// The same request, made by `principal`.
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// The same request, come in by `front`.
    pub fn with_front(mut self, front: Front) -> Self {
        self.front = front;
        self
    }

    /// The same request, for `tenant`.
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = tenant.into();
        self
    }

    /// The tenant an operation acts for: the one its parameters name, else the request's.
    pub fn tenant_for<'a>(&'a self, named: &'a str) -> &'a str {
        if named.is_empty() {
            &self.tenant
        } else {
            named
        }
    }

    /// The principal's name; empty for an anonymous caller.
    pub fn owner(&self) -> &str {
        self.principal.as_ref().map_or("", |p| p.name.as_str())
    }
}
