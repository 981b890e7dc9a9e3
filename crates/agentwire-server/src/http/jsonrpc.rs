//! JSON-RPC 2.0 at `/`: the methods of every protocol generation, by name. The method names the
//! generation (its [`Dialect`]): PascalCase is v1.0, `message/*`, `tasks/*` and
//! `agent/getAuthenticatedExtendedCard` are v0.3, and `tasks/send`, `tasks/sendSubscribe` and
//! `tasks/pushNotification/*` are the legacy family. Parameters are decoded, and results and
//! errors written, in that generation's shapes and codes.

use std::borrow::Cow;
use std::future::Future;

use axum::extract::{Request, State};
use axum::response::Response;
use http::{HeaderValue, StatusCode};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use agentwire_types::dialect::{legacy, v03, Encoded};
use agentwire_types::jsonrpc::{self, method, ErrorObject, Operation};
use agentwire_types::{
    A2AError, CancelTaskRequest, Dialect, ErrorKind, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, Result, SendMessageRequest, SubscribeToTaskRequest,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use super::errors::jsonrpc_http_status;
use super::request::{context, decode_json, is_json, read_body};
use super::{json_response, sse, AppState};
use crate::core::StreamItem;
use crate::{RequestContext, TaskEventStream};

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// An error with the code v1.0 gives it: the request's generation is not known yet.
fn error_response(id: &RawValue, error: &A2AError) -> Response {
    error_response_in(Dialect::V1, id, error)
}

fn error_response_in(dialect: Dialect, id: &RawValue, error: &A2AError) -> Response {
    json_response(jsonrpc_http_status(error.kind()), JSON, &reply_error(id, error, dialect))
}

fn reply_error<'a>(id: &'a RawValue, error: &A2AError, dialect: Dialect) -> jsonrpc::Response<'a, ()> {
    jsonrpc::Response::error(id, ErrorObject::new(dialect, error))
}

fn result_response(id: &RawValue, result: impl Serialize) -> Response {
    json_response(StatusCode::OK, JSON, &jsonrpc::Response::result(id, result))
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
    let found = call.as_ref().ok().and_then(|call| method(&call.method));
    let dialect = found.map_or(Dialect::V1, |(dialect, _)| dialect);
    let ctx = context(&parts, "", dialect);
    match (call, ctx) {
        (Ok(call), Ok(ctx)) => match found {
            Some((dialect, operation)) => call.dispatch(&state, &ctx, dialect, operation).await,
            None => error_response(call.id, &A2AError::method_not_found(&call.method)),
        },
        (Ok(call), Err(error)) => error_response_in(dialect, call.id, &error),
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
        let envelope = match serde_json::from_slice::<jsonrpc::Request<'a>>(bytes) {
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

    /// Runs the method: decodes the params into its request type in the method's dialect, calls
    /// the handler, and writes the result in that dialect.
    async fn dispatch(
        &self,
        state: &AppState,
        ctx: &RequestContext,
        dialect: Dialect,
        operation: Operation,
    ) -> Response {
        let h = &state.handler;
        let v1 = dialect == Dialect::V1;
        match operation {
            Operation::SendMessage => {
                let request = self.send_request(dialect);
                self.unary(dialect, request, |r| h.send_message(ctx, r)).await
            }
            Operation::SendStreamingMessage => {
                let request = self.send_request(dialect);
                self.streaming(state, dialect, request, |r| h.send_streaming_message(ctx, r)).await
            }
            Operation::GetTask => {
                let request = self.params::<GetTaskRequest>();
                self.unary(dialect, request, |r| h.get_task(ctx, r)).await
            }
            Operation::ListTasks => {
                let request = self.params::<ListTasksRequest>();
                self.unary(dialect, request, |r| h.list_tasks(ctx, r)).await
            }
            Operation::CancelTask => {
                let request = self.params::<CancelTaskRequest>();
                self.unary(dialect, request, |r| h.cancel_task(ctx, r)).await
            }
            Operation::SubscribeToTask => {
                let request = self.params::<SubscribeToTaskRequest>();
                self.streaming(state, dialect, request, |r| h.subscribe_to_task(ctx, r)).await
            }
            Operation::CreatePushConfig => {
                let request = if v1 {
                    self.params::<TaskPushNotificationConfig>()
                } else {
                    self.params::<v03::PushConfigParams>().map(Into::into)
                };
                self.unary(dialect, request, |r| h.create_task_push_notification_config(ctx, r)).await
            }
            Operation::GetPushConfig => {
                let request = self.config_ref(dialect);
                self.unary(dialect, request, |r| h.get_task_push_notification_config(ctx, r)).await
            }
            Operation::ListPushConfigs => {
                let request = if v1 {
                    self.params::<ListTaskPushNotificationConfigsRequest>()
                } else {
                    self.params::<v03::TaskIdParams>().map(Into::into)
                };
                self.unary(dialect, request, |r| h.list_task_push_notification_configs(ctx, r)).await
            }
            Operation::DeletePushConfig => {
                let request = self.config_ref(dialect);
                // v1.0 answers with an empty object, the older generations with `null`.
                let deleted =
                    |r| async move { h.delete_task_push_notification_config(ctx, r).await.map(|()| v1.then(Map::new)) };
                self.unary_as_is(dialect, request, deleted).await
            }
            Operation::GetExtendedAgentCard => {
                let request = self.params::<GetExtendedAgentCardRequest>();
                let card = |r| async move {
                    let card = h.get_extended_agent_card(ctx, r).await?;
                    Ok(crate::core::card_json(&card, dialect))
                };
                self.unary_as_is(dialect, request, card).await
            }
        }
    }

    fn params<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        decode_json(self.params)
    }

    fn send_request(&self, dialect: Dialect) -> Result<SendMessageRequest> {
        match dialect {
            Dialect::V1 => self.params(),
            Dialect::V03 => self.params::<v03::MessageSendParams>().map(Into::into),
            Dialect::Legacy => self.params::<legacy::TaskSendParams>().map(Into::into),
        }
    }

    fn config_ref(&self, dialect: Dialect) -> Result<TaskPushNotificationConfigRef> {
        match dialect {
            Dialect::V1 => self.params(),
            Dialect::V03 | Dialect::Legacy => self.params::<v03::PushConfigRef>().map(Into::into),
        }
    }

    /// Runs `operation` and writes its result in `dialect`.
    async fn unary<Req, Res, Op>(
        &self,
        dialect: Dialect,
        request: Result<Req>,
        operation: impl FnOnce(Req) -> Op,
    ) -> Response
    where
        Res: Serialize,
        for<'b> v03::V03<'b, Res>: Serialize,
        for<'b> legacy::Legacy<'b, Res>: Serialize,
        Op: Future<Output = Result<Res>>,
    {
        match run(request, operation).await {
            Ok(result) => result_response(self.id, Encoded(dialect, &result)),
            Err(error) => error_response_in(dialect, self.id, &error),
        }
    }

    /// Runs `operation`, whose result is already in `dialect`'s shape.
    async fn unary_as_is<Req, Res, Op>(
        &self,
        dialect: Dialect,
        request: Result<Req>,
        operation: impl FnOnce(Req) -> Op,
    ) -> Response
    where
        Res: Serialize,
        Op: Future<Output = Result<Res>>,
    {
        match run(request, operation).await {
            Ok(result) => result_response(self.id, result),
            Err(error) => error_response_in(dialect, self.id, &error),
        }
    }

    async fn streaming<Req, Op>(
        &self,
        state: &AppState,
        dialect: Dialect,
        request: Result<Req>,
        operation: impl FnOnce(Req) -> Op,
    ) -> Response
    where
        Op: Future<Output = Result<TaskEventStream>>,
    {
        let events = run(request, operation).await;
        self.stream(state, dialect, events)
    }

    /// Errors found before the stream starts are plain JSON-RPC responses in v1.0; v0.3 and the
    /// legacy family, whose clients read every answer to a streaming method as events, get them
    /// as the stream's one event. Later errors are events in every generation.
    fn stream(&self, state: &AppState, dialect: Dialect, events: Result<TaskEventStream>) -> Response {
        let events = match events {
            Ok(events) => events,
            Err(error) if dialect == Dialect::V1 => return error_response_in(dialect, self.id, &error),
            Err(error) => Box::pin(futures_util::stream::iter([Err(error)])),
        };
        let id = self.id.to_owned();
        sse::respond(
            events,
            state.sse_keep_alive,
            move |item: std::result::Result<&StreamItem, &A2AError>| match item {
                Ok(item) => serde_json::to_string(&jsonrpc::Response::result(&id, Encoded(dialect, &*item.response))),
                Err(error) => serde_json::to_string(&reply_error(&id, error, dialect)),
            },
        )
    }
}

/// `operation` on `request`, if the request could be read.
async fn run<Req, Res, Op>(request: Result<Req>, operation: impl FnOnce(Req) -> Op) -> Result<Res>
where
    Op: Future<Output = Result<Res>>,
{
    operation(request?).await
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
