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
    /// The dev-1.1 draft (a2aproject/A2A `dev-1.1`), served where a handler enables it
    /// ([`CardConfig::protocol_draft_1_1`](crate::CardConfig::protocol_draft_1_1)).
    V1_1,
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
            (Some("1"), Some("1")) => Ok(Some(Self::V1_1)),
            (Some("0"), Some("3")) => Ok(Some(Self::V0_3)),
            _ => Err(agentwire_types::A2AError::version_not_supported(value, &SUPPORTED_VERSIONS)),
        }
    }

    /// `1.0`, `0.3` or `1.1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1_0 => "1.0",
            Self::V0_3 => "0.3",
            Self::V1_1 => "1.1",
        }
    }
}

/// The storage scope of an operation for `tenant` (the one its parameters name, else the
/// request's): records are visible only to the tenant and principal that created them.
pub(crate) fn scope(ctx: &RequestContext, tenant: &str) -> Scope {
    Scope::new(ctx.tenant_for(tenant).to_owned(), ctx.owner().to_owned())
}

/// Copies the values of `metadata` into one buffer of its own. hyper parses a request's header
/// values as slices of the connection's read buffer, so a context kept beyond its request (an
/// execution keeps its request's for as long as the task runs) would otherwise keep that whole
/// buffer, 8 KiB or more, alive with it.
pub(crate) fn detach_metadata(metadata: &mut http::HeaderMap) {
    let mut bytes = Vec::with_capacity(metadata.values().map(|value| value.len()).sum());
    for value in metadata.values() {
        bytes.extend_from_slice(value.as_bytes());
    }
    let bytes = bytes::Bytes::from(bytes);
    let mut start = 0;
    for value in metadata.values_mut() {
        let end = start + value.len();
        let sensitive = value.is_sensitive();
        // The bytes were a valid value a moment ago.
        if let Ok(mut own) = http::HeaderValue::from_maybe_shared(bytes.slice(start..end)) {
            own.set_sensitive(sensitive);
            *value = own;
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderValue};

    /// Every value stays as it was, repeated names and sensitivity included, in its own buffer.
    #[test]
    fn detached_metadata_keeps_every_value() {
        let read_buffer = bytes::Bytes::from_static(b"Bearer secret-token;v1;v2;x");
        let shared = |range: std::ops::Range<usize>| HeaderValue::from_maybe_shared(read_buffer.slice(range)).unwrap();
        let mut metadata = HeaderMap::new();
        let mut token = shared(0..19);
        token.set_sensitive(true);
        metadata.insert("authorization", token);
        metadata.append("x-a2a-extensions", shared(20..22));
        metadata.append("x-a2a-extensions", shared(23..25));
        metadata.insert("x-empty", HeaderValue::from_static(""));
        let before = metadata.clone();

        super::detach_metadata(&mut metadata);

        assert_eq!(metadata, before);
        assert!(metadata["authorization"].is_sensitive());
        let extensions: Vec<_> = metadata.get_all("x-a2a-extensions").iter().collect();
        assert_eq!(extensions, ["v1", "v2"]);
    }
}
