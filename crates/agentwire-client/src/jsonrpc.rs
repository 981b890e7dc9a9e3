//! The JSON-RPC binding: a call is a request envelope whose method names the operation in the
//! endpoint's generation; the answer is a response envelope, and each event of a stream one more.

use agentwire_types::dialect::v03::V03;
use agentwire_types::dialect::FromWire;
use agentwire_types::jsonrpc::{self, method_name};
use agentwire_types::{A2AError, ErrorKind, StreamResponse};
use serde::Serialize;
use serde_json::{json, Value};

use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};
use agentwire_types::{A2aRequest, A2aResponse};

/// The request envelope of `call` at `endpoint`, with request id `id`.
pub(crate) fn envelope(endpoint: &Endpoint, call: &A2aRequest, id: u64) -> Result<Value> {
    let dialect = endpoint.version.dialect();
    let method = method_name(dialect, call.operation())
        .ok_or_else(|| Error::Unsupported { operation: call.operation(), endpoint: endpoint.to_string() })?;
    let params = params(call, endpoint.version).map_err(|e| Error::Encode(e.to_string()))?;
    Ok(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// The call's parameters in the version's shapes.
fn params(call: &A2aRequest, version: Version) -> serde_json::Result<Value> {
    fn encode<T>(request: &T, version: Version) -> serde_json::Result<Value>
    where
        T: Serialize,
        for<'a> V03<'a, T>: Serialize,
    {
        match version {
            Version::V1 => serde_json::to_value(request),
            Version::V03 => serde_json::to_value(V03(request)),
        }
    }
    match call {
        A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => encode(r, version),
        A2aRequest::GetTask(r) => encode(r, version),
        A2aRequest::ListTasks(r) => encode(r, version),
        A2aRequest::CancelTask(r) => encode(r, version),
        A2aRequest::SubscribeToTask(r) => encode(r, version),
        A2aRequest::CreatePushConfig(r) => encode(r, version),
        A2aRequest::GetPushConfig(r) | A2aRequest::DeletePushConfig(r) => encode(r, version),
        A2aRequest::ListPushConfigs(r) => encode(r, version),
        A2aRequest::GetExtendedAgentCard(r) => encode(r, version),
        A2aRequest::GetAgentCard => Ok(Value::Object(serde_json::Map::new())),
    }
}

/// The answer in a response envelope: the result, or the A2A error it reports.
pub(crate) fn read_reply(endpoint: &Endpoint, call: &A2aRequest, url: &str, body: &[u8]) -> Result<A2aResponse> {
    let result = read_result(endpoint, url, body)?;
    crate::call::read_response(call.operation(), endpoint.form(), result).map_err(|e| Error::decode(url, e))
}

/// One event of a stream: a response envelope holding a stream item, or the error ending it.
pub(crate) fn read_event(endpoint: &Endpoint, url: &str, data: &str) -> Result<StreamResponse> {
    let result = read_result(endpoint, url, data.as_bytes())?;
    StreamResponse::from_wire(endpoint.form(), result).map_err(|e| Error::decode(url, e))
}

/// Whether `body` is a response envelope (so the agent speaks JSON-RPC, whatever it answered).
pub(crate) fn is_envelope(body: &[u8]) -> bool {
    serde_json::from_slice::<jsonrpc::Response<'_, Value>>(body).is_ok()
}

/// A refusal of the caller's credentials (HTTP 401 or 403): Unauthenticated or PermissionDenied,
/// with the message of the error object the body may hold.
pub(crate) fn refused_credentials(endpoint: &Endpoint, url: &str, status: http::StatusCode, body: &[u8]) -> Error {
    let kind =
        if status == http::StatusCode::FORBIDDEN { ErrorKind::PermissionDenied } else { ErrorKind::Unauthenticated };
    match read_result(endpoint, url, body) {
        Err(Error::Protocol(error)) if error.kind() == kind => error.into(),
        Err(Error::Protocol(error)) => A2AError::new(kind, error.message()).into(),
        _ => A2AError::new(kind, format!("{url} answered HTTP {status}")).into(),
    }
}

fn read_result(endpoint: &Endpoint, url: &str, body: &[u8]) -> Result<Value> {
    let response: jsonrpc::Response<'_, Value> = serde_json::from_slice(body).map_err(|e| Error::decode(url, e))?;
    match response {
        jsonrpc::Response { error: Some(error), .. } => Err(error.into_error(endpoint.version.dialect()).into()),
        // A missing or null result: what an operation that answers nothing answers.
        jsonrpc::Response { result, .. } => Ok(result.unwrap_or(Value::Null)),
    }
}
