//! The HTTP+JSON binding: a call is a verb and a path (v0.3's under `/v1`, v1.0's after the
//! tenant), with the rest of the request in the body or the query; an error is an AIP-193 body
//! (v1.0) or a JSON-RPC-style error object (v0.3 agents that write one).

use agentwire_types::dialect::v03::proto::{CreatePushConfig, Proto};
use agentwire_types::dialect::FromWire;
use agentwire_types::jsonrpc::{ErrorInfo, ErrorObject};
use agentwire_types::{rest, A2AError, RpcCode, StreamResponse};
use http::Method;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};
use agentwire_types::{A2aRequest, A2aResponse};

/// An HTTP request: the verb, the path under the interface's URL, and what it carries.
#[derive(Debug)]
pub(crate) struct Route {
    pub(crate) verb: Method,
    pub(crate) path: String,
    pub(crate) body: Option<Value>,
    pub(crate) query: Vec<(String, String)>,
}

/// How `call` is written at an endpoint of `version`: the method and path the shared route table
/// gives its operation (v1.0's after the request's tenant), with the request's ids in the path
/// and the rest of it in the body or the query.
pub(crate) fn route(call: &A2aRequest, version: Version) -> Result<Route> {
    let v03 = version == Version::V03;
    if let A2aRequest::GetAgentCard = call {
        let path = "/.well-known/agent-card.json".to_owned();
        return Ok(Route { verb: Method::GET, path, body: None, query: Vec::new() });
    }
    let Some(shared) = rest::route_of(version.dialect(), call.operation()) else {
        return Err(Error::Encode(format!("{:?} has no HTTP+JSON route", call.operation())));
    };
    let (id, config_id) = match call {
        A2aRequest::GetTask(r) => (r.id.as_str(), ""),
        A2aRequest::CancelTask(r) => (r.id.as_str(), ""),
        A2aRequest::SubscribeToTask(r) => (r.id.as_str(), ""),
        A2aRequest::CreatePushConfig(c) => (c.task_id.as_str(), ""),
        A2aRequest::GetPushConfig(r) | A2aRequest::DeletePushConfig(r) => (r.task_id.as_str(), r.id.as_str()),
        A2aRequest::ListPushConfigs(r) => (r.task_id.as_str(), ""),
        _ => ("", ""),
    };
    let mut path = shared.path.replace("{id}", &segment(id)).replace("{config_id}", &segment(config_id));
    // v0.3 has no tenant in its paths.
    if !v03 && !call.tenant().is_empty() {
        path = format!("/{}{path}", segment(call.tenant()));
    }
    let to_value = |value: serde_json::Result<Value>| value.map_err(|e| Error::Encode(e.to_string()));
    let (body, query) = match call {
        A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => {
            let body = if v03 { to_value(serde_json::to_value(Proto(r)))? } else { Value::Object(members(r, &[])?) };
            (Some(body), Vec::new())
        }
        A2aRequest::GetTask(r) => (None, query(r, &["id"])?),
        A2aRequest::ListTasks(r) => (None, query(r, &[])?),
        A2aRequest::CancelTask(r) => (Some(Value::Object(members(r, &["id"])?)), Vec::new()),
        A2aRequest::SubscribeToTask(r) => (Some(Value::Object(members(r, &["id"])?)), Vec::new()),
        A2aRequest::CreatePushConfig(c) if v03 => {
            (Some(to_value(serde_json::to_value(CreatePushConfig(c)))?), Vec::new())
        }
        A2aRequest::CreatePushConfig(c) => (Some(Value::Object(members(c, &["taskId"])?)), Vec::new()),
        A2aRequest::ListPushConfigs(r) => (None, query(r, &["taskId"])?),
        A2aRequest::GetPushConfig(_)
        | A2aRequest::DeletePushConfig(_)
        | A2aRequest::GetExtendedAgentCard(_)
        | A2aRequest::GetAgentCard => (None, Vec::new()),
    };
    Ok(Route { verb: shared.method.clone(), path, body, query })
}

/// The request's v1.0 ProtoJSON members, but for the tenant and those the path carries.
fn members(request: &impl serde::Serialize, in_path: &[&str]) -> Result<Map<String, Value>> {
    let mut members = match serde_json::to_value(request) {
        Ok(Value::Object(members)) => members,
        Ok(_) => Map::new(),
        Err(e) => return Err(Error::Encode(e.to_string())),
    };
    members.retain(|key, _| key != "tenant" && !in_path.contains(&key.as_str()));
    Ok(members)
}

/// The request's scalar members as query parameters (their ProtoJSON text).
fn query(request: &impl serde::Serialize, in_path: &[&str]) -> Result<Vec<(String, String)>> {
    let text = |value: Value| match value {
        Value::String(s) => Some(s),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    Ok(members(request, in_path)?.into_iter().filter_map(|(key, value)| Some((key, text(value)?))).collect())
}

/// What a path segment keeps as it is: RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A path segment, percent-encoded.
fn segment(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// The URL of `path` under the interface at `base`, refused if it is not under it: what the
/// request names (a tenant, an id) never moves it elsewhere on the agent's host. A segment of
/// dots alone is a step up or nowhere in any URL, `%2E` or not (WHATWG URL), so a tenant or an
/// id of `..` cannot be written in a path at all.
pub(crate) fn url_under(base: &str, path: &str) -> Result<reqwest::Url> {
    let outside = || Error::Encode(format!("the request's path {path:?} leads outside the interface {base}"));
    if path.split(['/', '?']).any(|segment| segment == "." || segment == "..") {
        return Err(outside());
    }
    let root = reqwest::Url::parse(base).map_err(|e| Error::Encode(format!("the interface URL {base}: {e}")))?;
    let url = reqwest::Url::parse(&format!("{base}{path}")).map_err(|_| outside())?;
    if !crate::endpoint::is_within(&url, &root) {
        return Err(outside());
    }
    Ok(url)
}

/// The answer: the body, read in the endpoint's form; an error body as the A2A error it carries.
pub(crate) fn read_reply(
    endpoint: &Endpoint,
    call: &A2aRequest,
    url: &str,
    status: http::StatusCode,
    body: &[u8],
) -> Result<A2aResponse> {
    if !status.is_success() {
        return Err(refusal(url, status, body));
    }
    let value =
        if body.is_empty() { Value::Null } else { serde_json::from_slice(body).map_err(|e| Error::decode(url, e))? };
    crate::call::read_response(call.operation(), endpoint.form(), value).map_err(|e| Error::decode(url, e))
}

/// One event of a stream: a stream item, or an error body ending it.
pub(crate) fn read_event(endpoint: &Endpoint, url: &str, data: &str) -> Result<StreamResponse> {
    if let Some(error) = a2a_error(data.as_bytes()) {
        return Err(error.into());
    }
    let value = serde_json::from_str(data).map_err(|e| Error::decode(url, e))?;
    StreamResponse::from_wire(endpoint.form(), value).map_err(|e| Error::decode(url, e))
}

/// The error an unsuccessful answer reports: its A2A error, or the HTTP status.
pub(crate) fn refusal(url: &str, status: http::StatusCode, body: &[u8]) -> Error {
    match a2a_error(body) {
        Some(error) => error.into(),
        None => Error::http(url, status, body),
    }
}

/// An AIP-193 body: `{"error": {"code", "status", "message", "details"}}`.
#[derive(Deserialize)]
struct Aip193 {
    error: Aip193Error,
}

#[derive(Deserialize)]
struct Aip193Error {
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    details: Vec<Value>,
}

/// The A2A error in an error body: AIP-193's, its kind from its `ErrorInfo` or else its status
/// name; or a JSON-RPC-style `{code, message, data}` (v0.3's HTTP+JSON).
fn a2a_error(body: &[u8]) -> Option<A2AError> {
    if let Ok(Aip193 { error }) = serde_json::from_slice(body) {
        let info = error.details.into_iter().find_map(|d| serde_json::from_value::<ErrorInfo>(d).ok());
        let by_status = RpcCode::from_name(&error.status).map(RpcCode::error_kind);
        let (reason, metadata) = info.map(|i| (Some(i.reason), i.metadata)).unwrap_or_default();
        return A2AError::reported(reason.as_deref(), by_status, error.message, metadata);
    }
    let object: ErrorObject = serde_json::from_slice(body).ok()?;
    Some(object.into_error(agentwire_types::Dialect::V03))
}

#[cfg(test)]
mod tests {
    use agentwire_types::{ErrorKind, GetTaskRequest, TaskPushNotificationConfigRef};

    use super::*;

    #[test]
    fn an_aip193_body_reads_as_its_a2a_error() {
        let body = br#"{"error":{"code":404,"status":"NOT_FOUND","message":"task not found: t1","details":[
            {"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND",
             "domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]}}"#;
        let error = a2a_error(body).expect("an A2A error");
        assert_eq!(error.kind(), ErrorKind::TaskNotFound);
        assert_eq!(error.metadata()["taskId"], "t1");
        let bare = br#"{"error":{"code":409,"status":"FAILED_PRECONDITION","message":"done"}}"#;
        assert_eq!(a2a_error(bare).map(|e| e.kind()), Some(ErrorKind::TaskNotCancelable));
        let v03 = br#"{"code":-32001,"message":"Task not found"}"#;
        assert_eq!(a2a_error(v03).map(|e| e.kind()), Some(ErrorKind::TaskNotFound));
        assert!(a2a_error(b"<html>bad gateway</html>").is_none());
    }

    #[test]
    fn ids_in_paths_are_percent_encoded_and_v03_routes_sit_under_v1() {
        let get =
            A2aRequest::GetTask(GetTaskRequest { id: "a b/c".into(), history_length: Some(2), ..Default::default() });
        let v1 = route(&get, Version::V1).unwrap();
        assert_eq!(
            (v1.path.as_str(), v1.query.as_slice()),
            ("/tasks/a%20b%2Fc", &[("historyLength".into(), "2".into())][..])
        );
        assert_eq!(route(&get.clone().with_tenant("t 1"), Version::V1).unwrap().path, "/t%201/tasks/a%20b%2Fc");
        assert_eq!(route(&get, Version::V03).unwrap().path, "/v1/tasks/a%20b%2Fc");
        let reference = TaskPushNotificationConfigRef { task_id: "t".into(), id: "c".into(), ..Default::default() };
        let delete = route(&A2aRequest::DeletePushConfig(reference), Version::V03).unwrap();
        assert_eq!((delete.verb, delete.path.as_str()), (Method::DELETE, "/v1/tasks/t/pushNotificationConfigs/c"));
    }
}
