//! How an [`A2AError`] is written on each binding (seed 000 §5.4): the HTTP status, and the
//! AIP-193 REST body with the error's `google.rpc.Code` (`ErrorKind::rpc_code`). The JSON-RPC
//! error object and its codes per generation are `agentwire_types::jsonrpc`'s.

use agentwire_types::jsonrpc::ErrorInfo;
use agentwire_types::{A2AError, ErrorKind, RpcCode};
use axum::response::Response;
use http::{header, HeaderValue, StatusCode};
use serde::Serialize;

/// The HTTP status of an error: its `google.rpc.Code`'s, told apart further where HTTP has a
/// status of its own for the kind.
pub(crate) fn http_status(kind: ErrorKind) -> StatusCode {
    match kind.rpc_code() {
        RpcCode::InvalidArgument if kind == ErrorKind::ContentTypeNotSupported => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        RpcCode::InvalidArgument | RpcCode::Unimplemented => StatusCode::BAD_REQUEST,
        RpcCode::NotFound => StatusCode::NOT_FOUND,
        RpcCode::FailedPrecondition if kind == ErrorKind::TaskNotCancelable => StatusCode::CONFLICT,
        RpcCode::FailedPrecondition => StatusCode::BAD_REQUEST,
        RpcCode::Aborted => StatusCode::CONFLICT,
        RpcCode::Unauthenticated => StatusCode::UNAUTHORIZED,
        RpcCode::PermissionDenied => StatusCode::FORBIDDEN,
        RpcCode::ResourceExhausted if kind == ErrorKind::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        RpcCode::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        RpcCode::Internal if kind == ErrorKind::InvalidAgentResponse => StatusCode::BAD_GATEWAY,
        RpcCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The HTTP status an HTTP+JSON error response is sent with: its kind's, or 409 for a conflict
/// with what the server holds.
pub(crate) fn error_status(error: &A2AError) -> StatusCode {
    if error.is_conflict() {
        return StatusCode::CONFLICT;
    }
    http_status(error.kind())
}

/// The HTTP status a JSON-RPC error response is sent with: 200, except where HTTP itself must
/// speak (authentication, authorization, body size, a rate limit).
pub(crate) fn jsonrpc_http_status(error: &A2AError) -> StatusCode {
    match error.kind() {
        ErrorKind::Unauthenticated | ErrorKind::PermissionDenied | ErrorKind::PayloadTooLarge => {
            http_status(error.kind())
        }
        // A rate limit, which says when to retry, is HTTP's to report, as for a proxy in front.
        ErrorKind::ResourceExhausted if error.retry_after().is_some() => StatusCode::TOO_MANY_REQUESTS,
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

impl<'a> RestError<'a> {
    /// The body of `error` sent with an HTTP status and a `google.rpc.Code` of the caller's
    /// choosing, for answers the error's kind does not decide (such as 405).
    pub(crate) fn with_status(error: &'a A2AError, http: StatusCode, rpc: RpcCode) -> Self {
        let error = RestErrorBody {
            code: http.as_u16(),
            status: rpc.name(),
            message: error.message(),
            details: ErrorInfo::of(error).into_iter().collect(),
        };
        Self { error }
    }
}

impl<'a> From<&'a A2AError> for RestError<'a> {
    fn from(error: &'a A2AError) -> Self {
        Self::with_status(error, error_status(error), error.kind().rpc_code())
    }
}

/// `response` with the headers an error asks for: a refusal's `WWW-Authenticate` challenge
/// (RFC 9110 §11.6.1), and `Retry-After` in whole seconds (rounded up) for one that passes.
pub(crate) fn with_error_headers(mut response: Response, error: &A2AError) -> Response {
    if let Some(challenge) = error.challenge().and_then(|c| HeaderValue::from_str(c).ok()) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    if let Some(wait) = error.retry_after() {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}
