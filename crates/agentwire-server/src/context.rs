//! The protocol versions a request may ask for, and the storage scope of a request.

use agentwire_store::Scope;
pub use agentwire_types::{Principal, RequestContext};

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

/// The storage scope of an operation for `tenant` (the one its parameters name, else the
/// request's): records are visible only to the tenant and principal that created them.
pub(crate) fn scope(ctx: &RequestContext, tenant: &str) -> Scope {
    Scope::new(ctx.tenant_for(tenant).to_owned(), ctx.owner().to_owned())
}
