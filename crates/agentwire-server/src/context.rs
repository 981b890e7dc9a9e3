//! What the core knows about a request besides its parameters: who, for which tenant, in which
//! protocol version, with which extensions.

use agentwire_store::Scope;
use agentwire_types::Dialect;

/// The protocol versions this server speaks.
pub const SUPPORTED_VERSIONS: [&str; 2] = ["1.0", "0.3"];

/// A protocol version, compared on Major.Minor only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolVersion {
    /// v1.0.
    V1_0,
    /// v0.3.
    V0_3,
}

impl ProtocolVersion {
    /// Parses a version header value; `None` when it is absent or empty, which means "the version
    /// of the method or route itself". Patch numbers are ignored.
    ///
    /// ```
    /// use agentwire_server::ProtocolVersion;
    ///
    /// assert_eq!(ProtocolVersion::negotiate(Some("1.0.2")).unwrap(), Some(ProtocolVersion::V1_0));
    /// assert_eq!(ProtocolVersion::negotiate(Some(" ")).unwrap(), None);
    /// assert!(ProtocolVersion::negotiate(Some("2.0")).is_err());
    /// ```
    pub fn negotiate(header: Option<&str>) -> agentwire_types::Result<Option<Self>> {
        let value = header.map(str::trim).unwrap_or("");
        if value.is_empty() {
            return Ok(None);
        }
        let mut parts = value.split('.');
        let major_minor = (parts.next(), parts.next());
        match major_minor {
            (Some("1"), Some("0")) => Ok(Some(Self::V1_0)),
            (Some("0"), Some("3")) => Ok(Some(Self::V0_3)),
            _ => Err(agentwire_types::A2AError::version_not_supported(value, &SUPPORTED_VERSIONS)),
        }
    }

    /// `1.0` or `0.3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1_0 => "1.0",
            Self::V0_3 => "0.3",
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    /// A stable name; tasks are owned by it.
    pub name: String,
}

impl Principal {
    /// A principal with this name.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

/// The per-request facts every operation receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    /// Routing tenant ("" when none).
    pub tenant: String,
    /// The authenticated caller, if any.
    pub principal: Option<Principal>,
    /// The protocol generation the request was made in, as its method name or route tells it.
    /// The core applies the rules that differ between generations by it (whether a send waits,
    /// what subscribing to an ended task gives, whether a client may name a new task).
    pub dialect: Dialect,
    /// Extension URIs the client declared.
    pub extensions: Vec<String>,
    /// For a subscription that resumes a dropped stream: the sequence number of the last event
    /// the client received (SSE's `Last-Event-ID`). The stream then carries every event after it.
    pub last_event_id: Option<u64>,
}

impl Default for RequestContext {
    fn default() -> Self {
        Self {
            tenant: String::new(),
            principal: None,
            dialect: Dialect::V1,
            extensions: Vec::new(),
            last_event_id: None,
        }
    }
}

impl RequestContext {
    /// The storage scope: records are visible only to the tenant and principal that created them.
    pub fn scope(&self) -> Scope {
        Scope::new(self.tenant.clone(), self.principal.as_ref().map(|p| p.name.clone()).unwrap_or_default())
    }

    /// The same request, made in `dialect`.
    pub fn in_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Uses `tenant` unless the request body named one already.
    pub(crate) fn with_tenant(mut self, tenant: &str) -> Self {
        if !tenant.is_empty() {
            self.tenant = tenant.to_owned();
        }
        self
    }
}
