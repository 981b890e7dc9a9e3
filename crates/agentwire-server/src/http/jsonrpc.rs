//! JSON-RPC 2.0 at `/`: the v1.0 PascalCase methods.

use std::borrow::Cow;
use std::future::Future;

use axum::extract::{Request, State};
use axum::response::Response;
use http::{HeaderValue, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use agentwire_types::{A2AError, ErrorKind, Result};

use super::errors::{jsonrpc_http_status, JsonRpcError};
use super::request::{context, decode_json, is_json, read_body};
use super::{json_response, sse, AppState};
use crate::core::StreamItem;
use crate::{RequestContext, TaskEventStream};

/// A request, borrowed from the body: `params` stay raw JSON until the method says what they are.
/// A duplicate member makes the request invalid, as it does in any derived decoder.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// A reply: `{"jsonrpc":"2.0","id":…,"result":…}` or `…"error":…}`, with the id exactly as the
/// client wrote it.
#[derive(Serialize)]
struct Reply<'a, T> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<JsonRpcError<'a>>,
}

impl<'a, T: Serialize> Reply<'a, T> {
    fn result(id: &'a RawValue, result: T) -> Self {
        Self { jsonrpc: "2.0", id, result: Some(result), error: None }
    }
}

impl<'a> Reply<'a, ()> {
    fn error(id: &'a RawValue, error: &'a A2AError) -> Self {
        Self { jsonrpc: "2.0", id, result: None, error: Some(error.into()) }
    }
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");

fn error_response(id: &RawValue, error: &A2AError) -> Response {
    json_response(jsonrpc_http_status(error.kind()), JSON, &Reply::error(id, error))
}

fn result_response(id: &RawValue, result: impl Serialize) -> Response {
    json_response(StatusCode::OK, JSON, &Reply::result(id, result))
}

/// Answers one JSON-RPC request. The media type is checked before the body is read; a refused
/// caller or an unsupported version is reported once the envelope, and so the id, is known.
pub(crate) async fn handle(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if !is_json(&parts.headers) {
        let error = A2AError::content_type_not_supported("JSON-RPC requests must have Content-Type application/json");
        return error_response(RawValue::NULL, &error);
    }
    let bytes = match read_body(&parts, body, state.handler.limits()).await {
        Ok(bytes) => bytes,
        Err(error) => return error_response(RawValue::NULL, &error),
    };
    let call = Call::parse(&bytes);
    let ctx = context(&parts, "");
    match (call, ctx) {
        (Ok(call), Ok(ctx)) => call.dispatch(&state, &ctx).await,
        (Ok(call), Err(error)) => error_response(call.id, &error),
        // A refused caller learns nothing else about its request.
        (Err((id, _)), Err(refusal)) if is_refusal(&refusal) => error_response(&id, &refusal),
        (Err((id, error)), _) => error_response(&id, &error),
    }
}

fn is_refusal(error: &A2AError) -> bool {
    matches!(error.kind(), ErrorKind::Unauthenticated | ErrorKind::PermissionDenied)
}

/// A well-formed request.
struct Call<'a> {
    id: &'a RawValue,
    method: Cow<'a, str>,
    /// An object's JSON text.
    params: &'a str,
}

impl<'a> Call<'a> {
    fn parse(bytes: &'a [u8]) -> std::result::Result<Self, (Box<RawValue>, A2AError)> {
        let null = || RawValue::NULL.to_owned();
        let envelope = match serde_json::from_slice::<Envelope<'a>>(bytes) {
            Ok(envelope) => envelope,
            Err(error) => return Err(diagnose(bytes, &error)),
        };
        let id = envelope.id.unwrap_or(RawValue::NULL);
        if !is_valid_id(id) {
            return Err((null(), A2AError::invalid_request("id must be a string, a number or null")));
        }
        if envelope.jsonrpc != "2.0" {
            return Err((id.to_owned(), A2AError::invalid_request("jsonrpc must be \"2.0\"")));
        }
        let params = match envelope.params.map(RawValue::get) {
            None => "{}",
            Some(object) if object.starts_with('{') => object,
            Some(_) => return Err((id.to_owned(), A2AError::invalid_params("params must be an object"))),
        };
        Ok(Call { id, method: envelope.method, params })
    }

    /// Runs the method: decodes the params into its request type, calls the handler, and writes
    /// the result.
    async fn dispatch(&self, state: &AppState, ctx: &RequestContext) -> Response {
        let h = &state.handler;
        match self.method.as_ref() {
            "SendMessage" => self.unary(|r| h.send_message(ctx, r)).await,
            "GetTask" => self.unary(|r| h.get_task(ctx, r)).await,
            "ListTasks" => self.unary(|r| h.list_tasks(ctx, r)).await,
            "CancelTask" => self.unary(|r| h.cancel_task(ctx, r)).await,
            "CreateTaskPushNotificationConfig" => self.unary(|r| h.create_task_push_notification_config(ctx, r)).await,
            "GetTaskPushNotificationConfig" => self.unary(|r| h.get_task_push_notification_config(ctx, r)).await,
            "ListTaskPushNotificationConfigs" => self.unary(|r| h.list_task_push_notification_configs(ctx, r)).await,
            "DeleteTaskPushNotificationConfig" => {
                let delete =
                    |r| async move { h.delete_task_push_notification_config(ctx, r).await.map(|()| Map::new()) };
                self.unary(delete).await
            }
            "GetExtendedAgentCard" => self.unary(|r| h.get_extended_agent_card(ctx, r)).await,
            "SendStreamingMessage" => self.streaming(state, |r| h.send_streaming_message(ctx, r)).await,
            "SubscribeToTask" => self.streaming(state, |r| h.subscribe_to_task(ctx, r)).await,
            other => error_response(self.id, &A2AError::method_not_found(other)),
        }
    }

    async fn unary<Req, Res, Op>(&self, operation: impl FnOnce(Req) -> Op) -> Response
    where
        Req: serde::de::DeserializeOwned,
        Res: Serialize,
        Op: Future<Output = Result<Res>>,
    {
        let request = match decode_json(self.params) {
            Ok(request) => request,
            Err(error) => return error_response(self.id, &error),
        };
        match operation(request).await {
            Ok(result) => result_response(self.id, result),
            Err(error) => error_response(self.id, &error),
        }
    }

    async fn streaming<Req, Op>(&self, state: &AppState, operation: impl FnOnce(Req) -> Op) -> Response
    where
        Req: serde::de::DeserializeOwned,
        Op: Future<Output = Result<TaskEventStream>>,
    {
        match decode_json(self.params) {
            Ok(request) => self.stream(state, operation(request).await),
            Err(error) => error_response(self.id, &error),
        }
    }

    /// Errors found before the stream starts are plain JSON-RPC responses; later ones are events.
    fn stream(&self, state: &AppState, events: Result<TaskEventStream>) -> Response {
        let events = match events {
            Ok(events) => events,
            Err(error) => return error_response(self.id, &error),
        };
        let id = self.id.to_owned();
        sse::respond(
            events,
            state.sse_keep_alive,
            move |item: std::result::Result<&StreamItem, &A2AError>| match item {
                Ok(item) => serde_json::to_string(&Reply::result(&id, &*item.response)),
                Err(error) => serde_json::to_string(&Reply::error(&id, error)),
            },
        )
    }
}

fn is_valid_id(id: &RawValue) -> bool {
    matches!(id.get().as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9' | b'n'))
}

/// Why a body is not a request: not JSON at all (−32700), or JSON that is not a request object
/// (−32600, with the request's id when it has a usable one).
fn diagnose(bytes: &[u8], error: &serde_json::Error) -> (Box<RawValue>, A2AError) {
    let null = RawValue::NULL.to_owned();
    match serde_json::from_slice::<Value>(bytes) {
        Err(parse) => (null, A2AError::parse(parse)),
        Ok(Value::Array(_)) => {
            (null, A2AError::invalid_request("batch requests are not supported; send one request per call"))
        }
        Ok(Value::Object(object)) => {
            let id = object
                .get("id")
                .and_then(|id| serde_json::value::to_raw_value(id).ok())
                .filter(|id| is_valid_id(id))
                .unwrap_or(null);
            (id, A2AError::invalid_request(format!("not a valid JSON-RPC request: {error}")))
        }
        Ok(_) => (null, A2AError::invalid_request("a JSON-RPC request must be an object")),
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::SendMessageRequest;

    use super::*;

    fn parse(body: &str) -> std::result::Result<Call<'_>, A2AError> {
        Call::parse(body.as_bytes()).map_err(|(_, error)| error)
    }

    const MESSAGE: &str = r#"{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}"#;

    #[test]
    fn members_may_come_in_any_order() {
        let params_first = format!(r#"{{"params":{MESSAGE},"method":"SendMessage","id":"x","jsonrpc":"2.0"}}"#);
        let call = parse(&params_first).unwrap();
        assert_eq!((call.id.get(), call.method.as_ref()), (r#""x""#, "SendMessage"));
        assert_eq!(decode_json::<SendMessageRequest>(call.params).unwrap().message.text(), "hi");
        let escaped = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":{MESSAGE}}}"#);
        assert_eq!(parse(&escaped).unwrap().method, "SendMessage");
    }

    #[test]
    fn duplicate_members_are_invalid_requests() {
        for twice in [
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{MESSAGE},"params":{MESSAGE}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","method":"GetTask","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask","params":{}}"#.to_owned(),
        ] {
            assert_eq!(parse(&twice).err().map(|e| e.kind()), Some(ErrorKind::InvalidRequest), "{twice}");
        }
    }

    #[test]
    fn malformed_requests_get_the_right_error_and_keep_their_id() {
        let by_position = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":["",{}]}"#;
        assert_eq!(
            Call::parse(by_position.as_bytes()).err().map(|(id, e)| (id.get().to_owned(), e.kind())),
            Some(("1".into(), ErrorKind::InvalidParams))
        );
        let old = r#"{"jsonrpc":"1.0","id":5,"method":"GetTask"}"#;
        assert_eq!(
            Call::parse(old.as_bytes()).err().map(|(id, e)| (id.get().to_owned(), e.kind())),
            Some(("5".into(), ErrorKind::InvalidRequest))
        );
        let no_method = r#"{"jsonrpc":"2.0","id":"a"}"#;
        assert_eq!(
            Call::parse(no_method.as_bytes()).err().map(|(id, e)| (id.get().to_owned(), e.kind())),
            Some((r#""a""#.into(), ErrorKind::InvalidRequest))
        );
        assert_eq!(parse("{not json").err().map(|e| e.kind()), Some(ErrorKind::Parse));
        assert_eq!(parse("[]").err().map(|e| e.kind()), Some(ErrorKind::InvalidRequest));
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":{},"method":"GetTask"}"#).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidRequest)
        );
    }

    #[test]
    fn an_out_of_range_number_in_params_is_invalid_params() {
        let huge = r#"{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"data":1e400}]}}}"#;
        let call = parse(huge).unwrap();
        assert_eq!(decode_json::<SendMessageRequest>(call.params).unwrap_err().kind(), ErrorKind::InvalidParams);
    }
}
