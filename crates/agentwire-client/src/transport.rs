//! The bindings: how an operation is written as an HTTP request, and how the answer is read.
//!
//! Requests are v1.0 ProtoJSON, the form the canonical types serialize to. JSON-RPC wraps them in
//! the envelope of `agentwire_types::jsonrpc`; HTTP+JSON puts the ids in the path, the rest in the
//! body (POST) or the query (GET), and the interface's tenant first in the path.

use agentwire_types::jsonrpc::{self, ErrorInfo, ErrorObject};
use agentwire_types::{A2AError, AgentInterface, Dialect, ErrorKind};
use http::Method;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The protocol version this client speaks, sent as `A2A-Version`.
pub(crate) const VERSION: &str = "1.0";

/// A binding this client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP.
    JsonRpc,
    /// HTTP+JSON (REST).
    HttpJson,
}

impl Binding {
    /// The name a card gives the binding (`JSONRPC`, `HTTP+JSON`).
    pub fn name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
        }
    }

    /// The binding a card's name denotes, if this client speaks it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "JSONRPC" => Some(Binding::JsonRpc),
            "HTTP+JSON" => Some(Binding::HttpJson),
            _ => None,
        }
    }
}

/// An interface this client can call: the binding, its URL, and the tenant it puts in requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The binding spoken there.
    pub binding: Binding,
    /// The interface's URL.
    pub url: String,
    /// The tenant the card names for the interface; empty for none.
    pub tenant: String,
}

impl Endpoint {
    /// The endpoint of a card's interface, if this client speaks its binding and version.
    pub(crate) fn of(interface: &AgentInterface) -> Option<Self> {
        if interface.protocol_version.split('.').next() != Some("1") {
            return None;
        }
        Some(Endpoint {
            binding: Binding::from_name(&interface.protocol_binding)?,
            url: interface.url.trim_end_matches('/').to_owned(),
            tenant: interface.tenant.clone(),
        })
    }
}

/// Where HTTP+JSON puts the members of the request that the path does not carry.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rest {
    Body,
    Query,
}

/// One operation, as both bindings spell it.
#[derive(Debug)]
pub(crate) struct Operation {
    /// The JSON-RPC method.
    pub(crate) method: &'static str,
    /// The HTTP+JSON verb and path (after the tenant).
    pub(crate) verb: Method,
    pub(crate) path: String,
    pub(crate) rest: Rest,
    /// The request members the HTTP+JSON path carries, left out of its body and query.
    pub(crate) in_path: &'static [&'static str],
    /// The request, in v1.0 ProtoJSON.
    pub(crate) params: Map<String, Value>,
}

impl Operation {
    pub(crate) fn new(
        method: &'static str,
        verb: Method,
        path: String,
        rest: Rest,
        params: impl serde::Serialize,
    ) -> Self {
        let params = match serde_json::to_value(params) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        Operation { method, verb, path, rest, in_path: &[], params }
    }

    pub(crate) fn in_path(mut self, members: &'static [&'static str]) -> Self {
        self.in_path = members;
        self
    }

    /// The HTTP request for this operation at `endpoint`; `id` is the JSON-RPC request id.
    pub(crate) fn request(&self, http: &reqwest::Client, endpoint: &Endpoint, id: u64) -> reqwest::RequestBuilder {
        let mut params = self.params.clone();
        let request = match endpoint.binding {
            Binding::JsonRpc => {
                if !endpoint.tenant.is_empty() {
                    params.entry("tenant").or_insert_with(|| endpoint.tenant.clone().into());
                }
                let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": self.method, "params": params});
                http.post(&endpoint.url).json(&body)
            }
            Binding::HttpJson => {
                let tenant = params.remove("tenant").and_then(|t| t.as_str().map(str::to_owned));
                let tenant = tenant.filter(|t| !t.is_empty()).unwrap_or_else(|| endpoint.tenant.clone());
                let prefix = if tenant.is_empty() { String::new() } else { format!("/{}", encode(&tenant)) };
                params.retain(|key, _| !self.in_path.contains(&key.as_str()));
                let url = format!("{}{prefix}{}", endpoint.url, self.path);
                match self.rest {
                    Rest::Body => http.request(self.verb.clone(), url).json(&params),
                    Rest::Query => http.request(self.verb.clone(), url).query(&query_pairs(&params)),
                }
            }
        };
        request.header("A2A-Version", VERSION)
    }
}

/// What a path segment keeps as it is: RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A path segment, percent-encoded.
pub(crate) fn encode(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// The scalar members of a request as query parameters (their ProtoJSON text).
fn query_pairs(params: &Map<String, Value>) -> Vec<(String, String)> {
    let text = |value: &Value| match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    params.iter().filter_map(|(key, value)| Some((key.clone(), text(value)?))).collect()
}

/// Reads a unary answer: the JSON-RPC result, or the HTTP+JSON body; an error of either binding
/// as the A2A error it carries.
pub(crate) async fn read_answer<T: DeserializeOwned>(binding: Binding, response: reqwest::Response) -> Result<T> {
    let url = response.url().to_string();
    let status = response.status();
    let body = response.bytes().await.map_err(|source| Error::Connection { url: url.clone(), source })?;
    match binding {
        Binding::JsonRpc => match serde_json::from_slice::<jsonrpc::Response<'_, T>>(&body) {
            Ok(jsonrpc::Response { error: Some(error), .. }) => Err(rpc_error(error).into()),
            Ok(jsonrpc::Response { result: Some(result), .. }) => Ok(result),
            // A null result (an operation that answers nothing) reads as T's null, if T has one.
            Ok(_) => serde_json::from_value(Value::Null)
                .map_err(|_| Error::Decode { url, detail: "a JSON-RPC response with neither result nor error".into() }),
            Err(e) => Err(unexpected(url, status, &body, e)),
        },
        Binding::HttpJson => {
            if let Some(error) = rest_error(&body) {
                return Err(error.into());
            }
            match serde_json::from_slice::<T>(&body) {
                Ok(value) if status.is_success() => Ok(value),
                Ok(_) => Err(http_error(url, status, &body)),
                Err(e) => Err(unexpected(url, status, &body, e)),
            }
        }
    }
}

/// Reads one event of a stream: a StreamResponse, or the error that ends the stream.
pub(crate) fn read_event<T: DeserializeOwned>(binding: Binding, url: &str, data: &str) -> Result<T> {
    let decode = |e: serde_json::Error| Error::Decode { url: url.to_owned(), detail: format!("stream event: {e}") };
    match binding {
        Binding::JsonRpc => match serde_json::from_str::<jsonrpc::Response<'_, T>>(data).map_err(decode)? {
            jsonrpc::Response { error: Some(error), .. } => Err(rpc_error(error).into()),
            jsonrpc::Response { result: Some(result), .. } => Ok(result),
            _ => Err(Error::Decode { url: url.to_owned(), detail: "an event with neither result nor error".into() }),
        },
        Binding::HttpJson => match rest_error(data.as_bytes()) {
            Some(error) => Err(error.into()),
            None => serde_json::from_str(data).map_err(decode),
        },
    }
}

/// Reads the refusal of a request that should have opened a stream.
pub(crate) async fn read_refusal(binding: Binding, response: reqwest::Response) -> Error {
    match read_answer::<Value>(binding, response).await {
        Err(error) => error,
        Ok(_) => Error::Decode { url: String::new(), detail: "expected an event stream".into() },
    }
}

fn rpc_error(error: ErrorObject) -> A2AError {
    error.into_error(Dialect::V1)
}

/// An HTTP+JSON error body (AIP-193): `{"error": {"code", "status", "message", "details"}}`.
#[derive(Deserialize)]
struct RestErrorBody {
    error: RestError,
}

#[derive(Deserialize)]
struct RestError {
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    details: Vec<Value>,
}

/// The A2A error in an HTTP+JSON error body: the kind from its `ErrorInfo`, or from the status
/// name when it has none.
fn rest_error(body: &[u8]) -> Option<A2AError> {
    let RestErrorBody { error } = serde_json::from_slice(body).ok()?;
    let info = error.details.into_iter().find_map(|d| serde_json::from_value::<ErrorInfo>(d).ok());
    let kind = info.as_ref().and_then(|i| ErrorKind::from_reason(&i.reason)).or(match error.status.as_str() {
        "INVALID_ARGUMENT" => Some(ErrorKind::InvalidParams),
        "UNAUTHENTICATED" => Some(ErrorKind::Unauthenticated),
        "PERMISSION_DENIED" => Some(ErrorKind::PermissionDenied),
        "UNIMPLEMENTED" => Some(ErrorKind::UnsupportedOperation),
        "INTERNAL" => Some(ErrorKind::Internal),
        _ => None,
    })?;
    let metadata = info.map(|i| i.metadata).unwrap_or_default();
    Some(metadata.into_iter().fold(A2AError::new(kind, error.message), |e, (k, v)| e.with_metadata(k, v)))
}

fn unexpected(url: String, status: http::StatusCode, body: &[u8], error: serde_json::Error) -> Error {
    if status.is_success() {
        Error::Decode { url, detail: error.to_string() }
    } else {
        http_error(url, status, body)
    }
}

fn http_error(url: String, status: http::StatusCode, body: &[u8]) -> Error {
    let body = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
    Error::Http { url, status, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_json_error_body_reads_as_its_a2a_error() {
        let body = br#"{"error":{"code":404,"status":"NOT_FOUND","message":"task not found: t1","details":[
            {"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND",
             "domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]}}"#;
        let error = rest_error(body).expect("an A2A error");
        assert_eq!(error.kind(), ErrorKind::TaskNotFound);
        assert_eq!(error.metadata()["taskId"], "t1");
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(encode("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn only_v1_interfaces_of_known_bindings_are_endpoints() {
        let interface = |binding: &str, version: &str| AgentInterface {
            url: "http://a/".into(),
            protocol_binding: binding.into(),
            tenant: String::new(),
            protocol_version: version.into(),
        };
        assert_eq!(Endpoint::of(&interface("JSONRPC", "1.0")).map(|e| e.url), Some("http://a".into()));
        assert!(Endpoint::of(&interface("JSONRPC", "0.3.0")).is_none());
        assert!(Endpoint::of(&interface("KAFKA", "1.0")).is_none());
    }
}
