//! How an [`A2AError`] is written on each binding (seed 000 §5.4): the `google.rpc.Code` (gRPC
//! status, and the REST body's `status`), the HTTP status, and the AIP-193 REST body. The JSON-RPC
//! error object and its codes per generation are `agentwire_types::jsonrpc`'s.

use agentwire_types::jsonrpc::ErrorInfo;
use agentwire_types::{A2AError, ErrorKind};
use http::StatusCode;
use serde::Serialize;

/// A `google.rpc.Code`: a gRPC status, named in REST error bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RpcCode {
    InvalidArgument = 3,
    NotFound = 5,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Unimplemented = 12,
    Internal = 13,
    Unauthenticated = 16,
}

impl RpcCode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::NotFound => "NOT_FOUND",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Internal => "INTERNAL",
            Self::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

/// The HTTP status and `google.rpc.Code` of an error.
pub(crate) fn status(kind: ErrorKind) -> (StatusCode, RpcCode) {
    match kind {
        ErrorKind::Parse | ErrorKind::InvalidRequest | ErrorKind::InvalidParams => {
            (StatusCode::BAD_REQUEST, RpcCode::InvalidArgument)
        }
        ErrorKind::MethodNotFound | ErrorKind::TaskNotFound => (StatusCode::NOT_FOUND, RpcCode::NotFound),
        ErrorKind::TaskNotCancelable => (StatusCode::CONFLICT, RpcCode::FailedPrecondition),
        ErrorKind::PushNotificationNotSupported | ErrorKind::UnsupportedOperation | ErrorKind::VersionNotSupported => {
            (StatusCode::BAD_REQUEST, RpcCode::Unimplemented)
        }
        ErrorKind::ContentTypeNotSupported => (StatusCode::UNSUPPORTED_MEDIA_TYPE, RpcCode::InvalidArgument),
        ErrorKind::InvalidAgentResponse => (StatusCode::BAD_GATEWAY, RpcCode::Internal),
        ErrorKind::ExtendedAgentCardNotConfigured | ErrorKind::ExtensionSupportRequired => {
            (StatusCode::BAD_REQUEST, RpcCode::FailedPrecondition)
        }
        ErrorKind::Unauthenticated => (StatusCode::UNAUTHORIZED, RpcCode::Unauthenticated),
        ErrorKind::PermissionDenied => (StatusCode::FORBIDDEN, RpcCode::PermissionDenied),
        ErrorKind::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, RpcCode::ResourceExhausted),
        ErrorKind::ResourceExhausted => (StatusCode::TOO_MANY_REQUESTS, RpcCode::ResourceExhausted),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, RpcCode::Internal),
    }
}

/// The HTTP status a JSON-RPC error response is sent with: 200, except where HTTP itself must
/// speak (authentication, authorization, body size).
pub(crate) fn jsonrpc_http_status(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Unauthenticated | ErrorKind::PermissionDenied | ErrorKind::PayloadTooLarge => status(kind).0,
        _ => StatusCode::OK,
    }
}

/// The AIP-193 REST error body, `{"error":{code,status,message,details}}`.
#[derive(Debug, Serialize)]
pub(crate) struct RestError<'a> {
    error: RestErrorBody<'a>,
}

#[derive(Debug, Serialize)]
struct RestErrorBody<'a> {
    code: u16,
    status: &'static str,
    message: &'a str,
    details: Vec<ErrorInfo>,
}

impl<'a> From<&'a A2AError> for RestError<'a> {
    fn from(error: &'a A2AError) -> Self {
        let (http, rpc) = status(error.kind());
        let error = RestErrorBody {
            code: http.as_u16(),
            status: rpc.name(),
            message: error.message(),
            details: ErrorInfo::of(error).into_iter().collect(),
        };
        Self { error }
    }
}
