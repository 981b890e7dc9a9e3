//! The `google.rpc.Code` of each error (seed 000 §5.4): a gRPC call's status, and the `status`
//! named in an HTTP+JSON error body. A server writes the code of an error's kind; a client that
//! finds no `ErrorInfo` beside a code reads the kind the code most likely means.
//!
//! ```
//! use agentwire_types::{ErrorKind, RpcCode};
//!
//! assert_eq!(ErrorKind::TaskNotCancelable.rpc_code(), RpcCode::FailedPrecondition);
//! assert_eq!(RpcCode::from_name("NOT_FOUND"), Some(RpcCode::NotFound));
//! assert_eq!(RpcCode::NotFound.error_kind(), ErrorKind::TaskNotFound);
//! ```

use crate::ErrorKind;

/// A `google.rpc.Code`, among those A2A's errors use; the discriminant is the code's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RpcCode {
    /// 3.
    InvalidArgument = 3,
    /// 5.
    NotFound = 5,
    /// 7.
    PermissionDenied = 7,
    /// 8.
    ResourceExhausted = 8,
    /// 9.
    FailedPrecondition = 9,
    /// 10.
    Aborted = 10,
    /// 12.
    Unimplemented = 12,
    /// 13.
    Internal = 13,
    /// 16.
    Unauthenticated = 16,
}

const ALL: [RpcCode; 9] = [
    RpcCode::InvalidArgument,
    RpcCode::NotFound,
    RpcCode::PermissionDenied,
    RpcCode::ResourceExhausted,
    RpcCode::FailedPrecondition,
    RpcCode::Aborted,
    RpcCode::Unimplemented,
    RpcCode::Internal,
    RpcCode::Unauthenticated,
];

impl RpcCode {
    /// The code's name, as an HTTP+JSON error body's `status` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::NotFound => "NOT_FOUND",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::Aborted => "ABORTED",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Internal => "INTERNAL",
            Self::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// The code named `name`, if A2A uses it.
    pub fn from_name(name: &str) -> Option<Self> {
        ALL.into_iter().find(|code| code.name() == name)
    }

    /// The code numbered `number`, if A2A uses it.
    pub fn from_number(number: i32) -> Option<Self> {
        ALL.into_iter().find(|code| *code as i32 == number)
    }

    /// The error kind a client reads from this code alone, when no `ErrorInfo` names the error:
    /// the kind that is the commonest cause of the code.
    pub fn error_kind(self) -> ErrorKind {
        match self {
            Self::InvalidArgument => ErrorKind::InvalidParams,
            Self::NotFound => ErrorKind::TaskNotFound,
            Self::PermissionDenied => ErrorKind::PermissionDenied,
            Self::ResourceExhausted => ErrorKind::ResourceExhausted,
            Self::FailedPrecondition => ErrorKind::TaskNotCancelable,
            Self::Aborted => ErrorKind::TaskGenerationMismatch,
            Self::Unimplemented => ErrorKind::UnsupportedOperation,
            Self::Internal => ErrorKind::Internal,
            Self::Unauthenticated => ErrorKind::Unauthenticated,
        }
    }
}

impl ErrorKind {
    /// The `google.rpc.Code` a server answers this kind of error with.
    pub fn rpc_code(self) -> RpcCode {
        match self {
            ErrorKind::Parse | ErrorKind::InvalidRequest | ErrorKind::InvalidParams => RpcCode::InvalidArgument,
            ErrorKind::ContentTypeNotSupported => RpcCode::InvalidArgument,
            ErrorKind::MethodNotFound | ErrorKind::TaskNotFound => RpcCode::NotFound,
            ErrorKind::TaskNotCancelable
            | ErrorKind::ExtendedAgentCardNotConfigured
            | ErrorKind::ExtensionSupportRequired => RpcCode::FailedPrecondition,
            ErrorKind::PushNotificationNotSupported
            | ErrorKind::UnsupportedOperation
            | ErrorKind::VersionNotSupported => RpcCode::Unimplemented,
            ErrorKind::Unauthenticated => RpcCode::Unauthenticated,
            ErrorKind::PermissionDenied => RpcCode::PermissionDenied,
            ErrorKind::PayloadTooLarge | ErrorKind::ResourceExhausted => RpcCode::ResourceExhausted,
            ErrorKind::Internal | ErrorKind::InvalidAgentResponse => RpcCode::Internal,
            ErrorKind::TaskGenerationMismatch => RpcCode::Aborted,
        }
    }
}
