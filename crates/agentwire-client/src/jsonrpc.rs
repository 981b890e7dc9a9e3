//! The JSON-RPC binding: a call is a request envelope whose method names the operation in the
//! endpoint's generation; the answer is a response envelope, and each event of a stream one more.

use agentwire_types::dialect::v03::V03;
use agentwire_types::dialect::FromWire;
use agentwire_types::jsonrpc::{self, method_name};
use agentwire_types::{A2AError, ErrorKind, StreamResponse};
use serde::Serialize;
use serde_json::{json, Value};

use crate::call::{Call, Reply};
use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};

/// The request envelope of `call` at `endpoint`, with request id `id`.
pub(crate) fn envelope(endpoint: &Endpoint, call: &Call, id: u64) -> Result<Value> {
    let dialect = endpoint.version.dialect();
    let method = method_name(dialect, call.operation())
        .ok_or_else(|| Error::Unsupported { operation: call.operation(), endpoint: endpoint.to_string() })?;
    let params = params(call, endpoint.version).map_err(|e| Error::Encode(e.to_string()))?;
    Ok(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// The call's parameters in the version's shapes.
fn params(call: &Call, version: Version) -> serde_json::Result<Value> {
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
        Call::SendMessage(r) | Call::SendStreamingMessage(r) => encode(r, version),
        Call::GetTask(r) => encode(r, version),
        Call::ListTasks(r) => encode(r, version),
        Call::CancelTask(r) => encode(r, version),
        Call::SubscribeToTask(r) => encode(r, version),
        Call::CreatePushConfig(r) => encode(r, version),
        Call::GetPushConfig(r) | Call::DeletePushConfig(r) => encode(r, version),
        Call::ListPushConfigs(r) => encode(r, version),
        Call::GetExtendedAgentCard(r) => encode(r, version),
    }
}

/// The answer in a response envelope: the result, or the A2A error it reports.
pub(crate) fn read_reply(endpoint: &Endpoint, call: &Call, url: &str, body: &[u8]) -> Result<Reply> {
    let result = read_result(endpoint, url, body)?;
    Reply::read(call.operation(), endpoint.form(), result).map_err(|e| Error::decode(url, e))
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
