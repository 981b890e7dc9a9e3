//! JSON-RPC 2.0 at `/`: the methods of every protocol generation, by name. The method names the
//! generation (its [`Dialect`]): PascalCase is v1.0, `message/*`, `tasks/*` and
//! `agent/getAuthenticatedExtendedCard` are v0.3, and `tasks/send`, `tasks/sendSubscribe` and
//! `tasks/pushNotification/*` are the legacy family. Parameters are decoded, and results and
//! errors written, in that generation's shapes and codes.

use std::borrow::Cow;

use axum::extract::{Request, State};
use axum::response::Response;
use http::{HeaderValue, StatusCode};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use agentwire_types::dialect::{legacy, v03, Encoded, StreamErrors};
use agentwire_types::jsonrpc::{self, method, ErrorObject};
use agentwire_types::Operation;
use agentwire_types::{A2AError, A2aRequest, A2aResponse, Binding, Dialect, Result, SendMessageRequest, StreamItem};

use super::errors::{jsonrpc_http_status, with_error_headers};
use super::request::{context, decode_json, is_json, read_body};
use super::{json_response, sse, AppState};
use crate::TaskEventStream;

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// An error with the code v1.0 gives it: the request's generation is not known yet.
fn error_response(id: &RawValue, error: &A2AError) -> Response {
    error_response_in(Dialect::V1, id, error)
}

fn error_response_in(dialect: Dialect, id: &RawValue, error: &A2AError) -> Response {
    let response = json_response(jsonrpc_http_status(error), JSON, &reply_error(id, error, dialect));
    with_error_headers(response, error)
}

fn reply_error<'a>(id: &'a RawValue, error: &A2AError, dialect: Dialect) -> jsonrpc::Response<'a, ()> {
    jsonrpc::Response::error(id, ErrorObject::new(dialect, error))
}

fn result_response(id: &RawValue, result: impl Serialize) -> Response {
    json_response(StatusCode::OK, JSON, &jsonrpc::Response::result(id, result))
}

/// Answers one JSON-RPC request: checks the media type before reading the body, decodes the
/// envelope, then the params in the method's generation, runs the operation, and writes its
/// answer in that generation. An unsupported version is reported once the envelope, and so the
/// id, is known.
pub(crate) async fn handle(State(state): State<AppState>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    if !is_json(&parts.headers) {
        let error = A2AError::content_type_not_supported("JSON-RPC requests must have Content-Type application/json");
        return error_response(RawValue::NULL, &error);
    }
    let bytes = match read_body(&parts, body, &state.body_limits).await {
        Ok(bytes) => bytes,
        Err(error) => return error_response(RawValue::NULL, &error),
    };
    let call = match Call::parse(&bytes) {
        Ok(call) => call,
        Err((id, error)) => return error_response(&id, &error),
    };
    let found = method(&call.method);
    let dialect = found.map_or(Dialect::V1, |(dialect, _)| dialect);
    let ctx = match context(&mut parts, "", dialect, Binding::JsonRpc) {
        Ok(ctx) => ctx,
        Err(error) => {
            return match found {
                Some((dialect, operation)) => call.failed(&state, dialect, operation, error),
                None => error_response_in(dialect, call.id, &error),
            }
        }
    };
    let Some((dialect, operation)) = found else {
        return error_response(call.id, &A2AError::method_not_found(&call.method));
    };
    let request = match call.request(dialect, operation) {
        Ok(request) => request,
        Err(error) => return call.failed(&state, dialect, operation, error),
    };
    match crate::service::start(&state.operations, ctx, request).await {
        Ok(response) => call.respond(&state, dialect, response),
        Err(error) => call.failed(&state, dialect, operation, error),
    }
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

    /// The params, decoded into the operation's canonical request from the method's generation.
    fn request(&self, dialect: Dialect, operation: Operation) -> Result<A2aRequest> {
        Ok(match operation {
            Operation::SendMessage => A2aRequest::SendMessage(self.send_request(dialect)?),
            Operation::SendStreamingMessage => A2aRequest::SendStreamingMessage(self.send_request(dialect)?),
            Operation::GetTask => A2aRequest::GetTask(self.params()?),
            Operation::ListTasks => A2aRequest::ListTasks(self.params()?),
            Operation::CancelTask => A2aRequest::CancelTask(self.params()?),
            Operation::SubscribeToTask => A2aRequest::SubscribeToTask(self.params()?),
            Operation::CreatePushConfig => A2aRequest::CreatePushConfig(match dialect {
                Dialect::V1 => self.params()?,
                Dialect::V03 | Dialect::Legacy => self.params::<v03::PushConfigParams>()?.into(),
            }),
            Operation::GetPushConfig => A2aRequest::GetPushConfig(self.config_ref(dialect)?),
            Operation::ListPushConfigs => A2aRequest::ListPushConfigs(match dialect {
                Dialect::V1 => self.params()?,
                Dialect::V03 | Dialect::Legacy => self.params::<v03::TaskIdParams>()?.into(),
            }),
            Operation::DeletePushConfig => A2aRequest::DeletePushConfig(self.config_ref(dialect)?),
            Operation::GetExtendedAgentCard => A2aRequest::GetExtendedAgentCard(self.params()?),
            Operation::GetAgentCard => return Err(A2AError::method_not_found(&self.method)),
        })
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

    fn config_ref(&self, dialect: Dialect) -> Result<agentwire_types::TaskPushNotificationConfigRef> {
        match dialect {
            Dialect::V1 => self.params(),
            Dialect::V03 | Dialect::Legacy => self.params::<v03::PushConfigRef>().map(Into::into),
        }
    }

    /// The operation's answer, written in `dialect`.
    fn respond(&self, state: &AppState, dialect: Dialect, response: A2aResponse) -> Response {
        match response {
            A2aResponse::Send(result) => result_response(self.id, Encoded(dialect, &result)),
            A2aResponse::Task(task) => result_response(self.id, Encoded(dialect, &task)),
            A2aResponse::Tasks(page) => result_response(self.id, Encoded(dialect, &page)),
            A2aResponse::PushConfig(config) => result_response(self.id, Encoded(dialect, &config)),
            A2aResponse::PushConfigs(configs) => result_response(self.id, Encoded(dialect, &configs)),
            A2aResponse::Deleted => {
                result_response(self.id, dialect.profile().deletion_is_empty_object().then(Map::new))
            }
            A2aResponse::Card(card) => {
                result_response(self.id, crate::core::card_json(&card, dialect.profile().card_form()))
            }
            A2aResponse::Stream(events) => self.stream(state, dialect, events),
        }
    }

    /// An error of the request or its operation: a JSON-RPC error response, or, for a streaming
    /// method of a generation whose clients read every answer to it as events, the stream's one
    /// event.
    fn failed(&self, state: &AppState, dialect: Dialect, operation: Operation, error: A2AError) -> Response {
        let streaming = operation.opens_stream();
        if streaming && dialect.profile().stream_errors_before_start() == StreamErrors::AsEvent {
            return self.stream(state, dialect, Box::pin(futures_util::stream::iter([Err(error)])));
        }
        error_response_in(dialect, self.id, &error)
    }

    fn stream(&self, state: &AppState, dialect: Dialect, events: TaskEventStream) -> Response {
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
    use agentwire_types::{ErrorKind, SendMessageRequest};

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
