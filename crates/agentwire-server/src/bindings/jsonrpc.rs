//! JSON-RPC 2.0 at `/`: the v1.0 PascalCase methods.

use std::borrow::Cow;

use axum::extract::{Request, State};
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use agentwire_types::{A2AError, Result};

use super::errors::{jsonrpc_error_object, jsonrpc_http_status};
use super::meta::RequestMeta;
use super::{decode_json, json_response, read_body, sse, AppState};
use crate::core::StreamItem;
use crate::RequestContext;

/// A JSON-RPC request id exactly as the client sent it (a string, a number or null).
type Id<'a> = Cow<'a, RawValue>;

pub(super) fn null_id() -> Id<'static> {
    Cow::Borrowed(RawValue::NULL)
}

#[derive(Serialize)]
struct ResultReply<'a, T> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: T,
}

#[derive(Serialize)]
struct ErrorReply<'a> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    error: Value,
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");

pub(super) fn error_response(id: &RawValue, error: &A2AError) -> Response {
    let reply = ErrorReply { jsonrpc: "2.0", id, error: jsonrpc_error_object(error) };
    json_response(jsonrpc_http_status(error.kind()), JSON, &reply)
}

fn result_response(id: &RawValue, result: impl Serialize) -> Response {
    json_response(StatusCode::OK, JSON, &ResultReply { jsonrpc: "2.0", id, result })
}

/// Whether a Content-Type names JSON (`application/json`, `application/a2a+json`, any `+json`).
pub(crate) fn is_json_media_type(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or("").trim().as_bytes();
    let (type_, suffix) = ("application/".as_bytes(), "+json".as_bytes());
    essence.eq_ignore_ascii_case(b"application/json")
        || (essence.len() > type_.len() + suffix.len()
            && essence[..type_.len()].eq_ignore_ascii_case(type_)
            && essence[essence.len() - suffix.len()..].eq_ignore_ascii_case(suffix))
}

pub(crate) async fn handle(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    // The media type is checked before anything is parsed.
    if !is_json_media_type(&parts.headers) {
        let error = A2AError::content_type_not_supported("JSON-RPC requests must have Content-Type application/json");
        return error_response(RawValue::NULL, &error);
    }
    let bytes = match read_body(body, state.handler.limits().max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(error) => return error_response(RawValue::NULL, &error),
    };
    let envelope = match Envelope::parse(&bytes) {
        Ok(envelope) => envelope,
        Err((id, error)) => return error_response(&id, &error),
    };
    let meta = RequestMeta::from_parts(&parts);
    let ctx = match meta.context("") {
        Ok(ctx) => ctx,
        Err(error) => return error_response(&envelope.id, &error),
    };
    dispatch(&state, &ctx, envelope).await
}

/// A well-formed request: its id, its method, and its params as JSON text (an object).
struct Envelope<'a> {
    id: Id<'a>,
    method: Cow<'a, str>,
    params: Cow<'a, str>,
}

/// The shape of a valid request, borrowed from the body so that params are decoded only once, by
/// the operation's own type.
#[derive(Deserialize)]
struct WireEnvelope<'a> {
    jsonrpc: &'a str,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    /// The fast path reads valid requests without building a `Value`; anything it does not accept
    /// goes through [`Envelope::parse_slowly`], which names the problem.
    fn parse(bytes: &'a [u8]) -> std::result::Result<Self, (Id<'static>, A2AError)> {
        let Ok(wire) = serde_json::from_slice::<WireEnvelope<'a>>(bytes) else { return Self::parse_slowly(bytes) };
        let id_ok = wire.id.is_none_or(|id| matches!(id.get().as_bytes()[0], b'"' | b'-' | b'0'..=b'9' | b'n'));
        let params_ok = wire.params.is_none_or(|p| p.get().starts_with('{'));
        if wire.jsonrpc != "2.0" || !id_ok || !params_ok {
            return Self::parse_slowly(bytes);
        }
        Ok(Envelope {
            id: Cow::Borrowed(wire.id.unwrap_or(RawValue::NULL)),
            method: wire.method,
            params: Cow::Borrowed(wire.params.map_or("{}", RawValue::get)),
        })
    }

    fn parse_slowly(bytes: &[u8]) -> std::result::Result<Self, (Id<'static>, A2AError)> {
        let raw = |value: &Value| serde_json::value::to_raw_value(value).map_or_else(|_| null_id(), Cow::Owned);
        let value: Value = serde_json::from_slice(bytes).map_err(|e| (null_id(), A2AError::parse(e)))?;
        let Value::Object(mut object) = value else {
            let message = if value.is_array() {
                "batch requests are not supported; send one request per call"
            } else {
                "a JSON-RPC request must be an object"
            };
            return Err((null_id(), A2AError::invalid_request(message)));
        };
        let id = match object.remove("id") {
            Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => raw(&id),
            None => null_id(),
            Some(_) => return Err((null_id(), A2AError::invalid_request("id must be a string, a number or null"))),
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err((id, A2AError::invalid_request("jsonrpc must be \"2.0\"")));
        }
        let method = match object.remove("method") {
            Some(Value::String(method)) => method,
            _ => return Err((id, A2AError::invalid_request("method must be a string"))),
        };
        let params = match object.remove("params") {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(params @ Value::Object(_)) => params.to_string(),
            Some(_) => return Err((id, A2AError::invalid_params("params must be an object"))),
        };
        Ok(Envelope { id, method: Cow::Owned(method), params: Cow::Owned(params) })
    }
}

async fn dispatch(state: &AppState, ctx: &RequestContext, envelope: Envelope<'_>) -> Response {
    let Envelope { id, method, params } = envelope;
    let p = params.as_ref();
    let h = &state.handler;
    macro_rules! unary {
        ($call:expr) => {
            match $call {
                Ok(result) => result_response(&id, result),
                Err(error) => error_response(&id, &error),
            }
        };
    }
    match method.as_ref() {
        // The core's own result type: the task is written straight from the shared snapshot.
        "SendMessage" => unary!(async { h.core.send_message(ctx, decode_json(p)?).await }.await),
        "GetTask" => unary!(async { h.get_task(ctx, decode_json(p)?).await }.await),
        "ListTasks" => unary!(async { h.list_tasks(ctx, decode_json(p)?).await }.await),
        "CancelTask" => unary!(async { h.cancel_task(ctx, decode_json(p)?).await }.await),
        "CreateTaskPushNotificationConfig" => {
            unary!(async { h.create_task_push_notification_config(ctx, decode_json(p)?).await }.await)
        }
        "GetTaskPushNotificationConfig" => {
            unary!(async { h.get_task_push_notification_config(ctx, decode_json(p)?).await }.await)
        }
        "ListTaskPushNotificationConfigs" => {
            unary!(async { h.list_task_push_notification_configs(ctx, decode_json(p)?).await }.await)
        }
        "DeleteTaskPushNotificationConfig" => {
            unary!(
                async { h.delete_task_push_notification_config(ctx, decode_json(p)?).await.map(|()| json!({})) }.await
            )
        }
        "GetExtendedAgentCard" => unary!(async { h.get_extended_agent_card(ctx, decode_json(p)?).await }.await),
        "SendStreamingMessage" => {
            let events = async { h.send_streaming_message(ctx, decode_json(p)?).await }.await;
            stream_response(id, events)
        }
        "SubscribeToTask" => {
            let events = async { h.subscribe_to_task(ctx, decode_json(p)?).await }.await;
            stream_response(id, events)
        }
        other => error_response(&id, &A2AError::method_not_found(other)),
    }
}

/// Errors found before the stream starts are plain JSON-RPC responses; later ones are SSE events.
fn stream_response(id: Id<'_>, events: Result<crate::TaskEventStream>) -> Response {
    match events {
        Err(error) => error_response(&id, &error),
        Ok(events) => {
            let id = id.into_owned();
            sse::respond(events, move |item: std::result::Result<&StreamItem, &A2AError>| match item {
                Ok(item) => serde_json::to_string(&ResultReply { jsonrpc: "2.0", id: &id, result: &*item.response }),
                Err(error) => {
                    serde_json::to_string(&ErrorReply { jsonrpc: "2.0", id: &id, error: jsonrpc_error_object(error) })
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_content_type(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn json_media_types_are_recognised_in_any_case() {
        for json in
            ["application/json", "Application/JSON; charset=utf-8", "application/a2a+json", " application/vnd.x+JSON "]
        {
            assert!(is_json_media_type(&with_content_type(json)), "{json}");
        }
        for other in ["text/plain", "application/+json", "application/jsonx", "json", "application/xml"] {
            assert!(!is_json_media_type(&with_content_type(other)), "{other}");
        }
        assert!(!is_json_media_type(&HeaderMap::new()));
    }
}
