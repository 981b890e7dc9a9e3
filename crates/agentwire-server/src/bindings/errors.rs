//! How each binding writes an [`A2AError`]: the one table of codes and statuses (v1.0 family).

use agentwire_types::{A2AError, ErrorKind};
use http::StatusCode;
use serde_json::{json, Value};

/// The JSON-RPC code of a v1.0 error.
pub(crate) fn jsonrpc_code(kind: ErrorKind) -> i64 {
    match kind {
        ErrorKind::Parse => -32700,
        ErrorKind::InvalidRequest | ErrorKind::PayloadTooLarge => -32600,
        ErrorKind::MethodNotFound => -32601,
        ErrorKind::InvalidParams => -32602,
        ErrorKind::TaskNotFound => -32001,
        ErrorKind::TaskNotCancelable => -32002,
        ErrorKind::PushNotificationNotSupported => -32003,
        ErrorKind::UnsupportedOperation => -32004,
        ErrorKind::ContentTypeNotSupported => -32005,
        ErrorKind::InvalidAgentResponse => -32006,
        ErrorKind::ExtendedAgentCardNotConfigured => -32007,
        ErrorKind::ExtensionSupportRequired => -32008,
        ErrorKind::VersionNotSupported => -32009,
        ErrorKind::Unauthenticated => -32010,
        ErrorKind::PermissionDenied => -32011,
        _ => -32603,
    }
}

/// The HTTP status and the `google.rpc.Code` name of an error.
pub(crate) fn http_status(kind: ErrorKind) -> (StatusCode, &'static str) {
    match kind {
        ErrorKind::Parse | ErrorKind::InvalidRequest | ErrorKind::InvalidParams => {
            (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT")
        }
        ErrorKind::MethodNotFound | ErrorKind::TaskNotFound => (StatusCode::NOT_FOUND, "NOT_FOUND"),
        ErrorKind::TaskNotCancelable => (StatusCode::CONFLICT, "FAILED_PRECONDITION"),
        ErrorKind::PushNotificationNotSupported | ErrorKind::UnsupportedOperation => {
            (StatusCode::BAD_REQUEST, "UNIMPLEMENTED")
        }
        ErrorKind::ContentTypeNotSupported => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "INVALID_ARGUMENT"),
        ErrorKind::InvalidAgentResponse => (StatusCode::BAD_GATEWAY, "INTERNAL"),
        ErrorKind::ExtendedAgentCardNotConfigured | ErrorKind::ExtensionSupportRequired => {
            (StatusCode::BAD_REQUEST, "FAILED_PRECONDITION")
        }
        ErrorKind::VersionNotSupported => (StatusCode::BAD_REQUEST, "UNIMPLEMENTED"),
        ErrorKind::Unauthenticated => (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED"),
        ErrorKind::PermissionDenied => (StatusCode::FORBIDDEN, "PERMISSION_DENIED"),
        ErrorKind::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "RESOURCE_EXHAUSTED"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
    }
}

/// The HTTP status a JSON-RPC error response is sent with: 200, except where HTTP itself must
/// speak (authentication, authorization, body size).
pub(crate) fn jsonrpc_http_status(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Unauthenticated | ErrorKind::PermissionDenied | ErrorKind::PayloadTooLarge => http_status(kind).0,
        _ => StatusCode::OK,
    }
}

/// `[ErrorInfo]` for A2A-specific errors; empty for the generic ones.
pub(crate) fn details(error: &A2AError) -> Vec<Value> {
    if !error.kind().is_a2a_specific() {
        return Vec::new();
    }
    vec![json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": error.kind().reason(),
        "domain": "a2a-protocol.org",
        "metadata": error.metadata(),
    })]
}

/// The JSON-RPC `error` member.
pub(crate) fn jsonrpc_error_object(error: &A2AError) -> Value {
    let mut object = json!({ "code": jsonrpc_code(error.kind()), "message": error.message() });
    let details = details(error);
    if !details.is_empty() {
        object["data"] = Value::Array(details);
    }
    object
}

/// The AIP-193 REST error body.
pub(crate) fn rest_error_body(error: &A2AError) -> (StatusCode, Value) {
    let (status, code_name) = http_status(error.kind());
    let body = json!({
        "error": {
            "code": status.as_u16(),
            "status": code_name,
            "message": error.message(),
            "details": details(error),
        }
    });
    (status, body)
}
