//! JSON-RPC error codes per protocol generation, both ways: what a server writes for an error
//! kind, and what a client reads back from a code.
//!
//! The A2A-specific codes collide between generations: -32007 is ExtendedAgentCardNotConfigured in
//! v1.0 and v0.3 but EXTENSION_REQUIRED in the legacy `tasks/send` family, whose -32008 is
//! VERSION_NOT_SUPPORTED (v1.0: ExtensionSupportRequired; -32009 is v1.0's VersionNotSupported).
//!
//! ```
//! use agentwire_types::jsonrpc::{error_code, error_kind};
//! use agentwire_types::{Dialect, ErrorKind};
//!
//! assert_eq!(error_code(Dialect::V1, ErrorKind::VersionNotSupported), -32009);
//! assert_eq!(error_code(Dialect::Legacy, ErrorKind::VersionNotSupported), -32008);
//! assert_eq!(error_kind(Dialect::V1, -32008), Some(ErrorKind::ExtensionSupportRequired));
//! assert_eq!(error_kind(Dialect::Legacy, -32008), Some(ErrorKind::VersionNotSupported));
//! ```

use crate::ErrorKind;

/// A generation of the protocol, as a request's method name or route tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// v1.0: `SendMessage`, ProtoJSON shapes.
    #[default]
    V1,
    /// v0.3: `message/send`, `kind`-tagged shapes.
    V03,
    /// The `tasks/send` family (with v0.1 shapes).
    Legacy,
}

/// The codes every generation shares: JSON-RPC's own, and the A2A codes that never moved.
const SHARED: &[(i64, ErrorKind)] = &[
    (-32700, ErrorKind::Parse),
    (-32600, ErrorKind::InvalidRequest),
    (-32601, ErrorKind::MethodNotFound),
    (-32602, ErrorKind::InvalidParams),
    (-32603, ErrorKind::Internal),
    (-32001, ErrorKind::TaskNotFound),
    (-32002, ErrorKind::TaskNotCancelable),
    (-32003, ErrorKind::PushNotificationNotSupported),
    (-32004, ErrorKind::UnsupportedOperation),
    (-32005, ErrorKind::ContentTypeNotSupported),
    (-32006, ErrorKind::InvalidAgentResponse),
    (-32010, ErrorKind::Unauthenticated),
    (-32011, ErrorKind::PermissionDenied),
];

/// v1.0 (seed 000 §5.4); v0.3 (seed 001 §8.2) defines -32001 to -32007 alike and nothing beyond,
/// so it borrows v1.0's codes for the errors it has no code of its own for.
const V1: &[(i64, ErrorKind)] = &[
    (-32007, ErrorKind::ExtendedAgentCardNotConfigured),
    (-32008, ErrorKind::ExtensionSupportRequired),
    (-32009, ErrorKind::VersionNotSupported),
];

/// The legacy family (seed 004).
const LEGACY: &[(i64, ErrorKind)] =
    &[(-32007, ErrorKind::ExtensionSupportRequired), (-32008, ErrorKind::VersionNotSupported)];

fn table(dialect: Dialect) -> impl Iterator<Item = &'static (i64, ErrorKind)> {
    let own = match dialect {
        Dialect::V1 | Dialect::V03 => V1,
        Dialect::Legacy => LEGACY,
    };
    own.iter().chain(SHARED)
}

/// The code a server writes for `kind` in `dialect`. Kinds a generation has no code for take the
/// nearest JSON-RPC one: a refusal by a server limit is an invalid request (-32600), and the
/// legacy family, which has no extended card, reports that as an unsupported operation.
pub fn error_code(dialect: Dialect, kind: ErrorKind) -> i64 {
    if let Some((code, _)) = table(dialect).find(|(_, k)| *k == kind) {
        return *code;
    }
    match kind {
        ErrorKind::PayloadTooLarge | ErrorKind::ResourceExhausted => -32600,
        ErrorKind::ExtendedAgentCardNotConfigured => -32004,
        _ => -32603,
    }
}

/// The error kind a client reads from `code` in `dialect`; `None` for a code the generation does
/// not define.
pub fn error_kind(dialect: Dialect, code: i64) -> Option<ErrorKind> {
    table(dialect).find(|(c, _)| *c == code).map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ErrorKind; 18] = [
        ErrorKind::Parse,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::TaskNotFound,
        ErrorKind::TaskNotCancelable,
        ErrorKind::PushNotificationNotSupported,
        ErrorKind::UnsupportedOperation,
        ErrorKind::ContentTypeNotSupported,
        ErrorKind::InvalidAgentResponse,
        ErrorKind::ExtendedAgentCardNotConfigured,
        ErrorKind::ExtensionSupportRequired,
        ErrorKind::VersionNotSupported,
        ErrorKind::Unauthenticated,
        ErrorKind::PermissionDenied,
        ErrorKind::PayloadTooLarge,
        ErrorKind::ResourceExhausted,
    ];

    #[test]
    fn every_code_reads_back_as_its_kind_in_every_dialect() {
        for dialect in [Dialect::V1, Dialect::V03, Dialect::Legacy] {
            for kind in ALL {
                let code = error_code(dialect, kind);
                let back = error_kind(dialect, code).unwrap_or_else(|| panic!("{dialect:?} {kind:?} -> {code}"));
                // A kind without a code of its own reads back as the kind whose code it borrowed.
                if table(dialect).any(|(_, k)| *k == kind) {
                    assert_eq!(back, kind, "{dialect:?} {code}");
                }
            }
        }
    }

    #[test]
    fn the_colliding_codes_follow_each_generation() {
        assert_eq!(error_code(Dialect::V1, ErrorKind::ExtensionSupportRequired), -32008);
        assert_eq!(error_code(Dialect::V03, ErrorKind::ExtendedAgentCardNotConfigured), -32007);
        assert_eq!(error_code(Dialect::Legacy, ErrorKind::ExtensionSupportRequired), -32007);
        assert_eq!(error_code(Dialect::Legacy, ErrorKind::ExtendedAgentCardNotConfigured), -32004);
        assert_eq!(error_kind(Dialect::Legacy, -32009), None);
        assert_eq!(error_code(Dialect::V1, ErrorKind::ResourceExhausted), -32600);
    }
}
