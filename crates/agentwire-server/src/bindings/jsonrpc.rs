//! JSON-RPC 2.0 at `/`: the v1.0 PascalCase methods.

use std::borrow::Cow;
use std::future::Future;

use axum::extract::State;
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use agentwire_types::{A2AError, Result, SendMessageRequest};

use super::errors::{jsonrpc_error_object, jsonrpc_http_status};
use super::meta::RequestMeta;
use super::{decode_json, json_bytes_response, read_body, sse, AppState, RequestBody};
use crate::core::StreamItem;
use crate::RequestContext;

/// A JSON-RPC request id exactly as the client sent it (a string, a number or null).
type Id<'a> = Cow<'a, RawValue>;

pub(super) fn null_id() -> Id<'static> {
    Cow::Borrowed(RawValue::NULL)
}

/// What a reply carries besides its id.
enum Outcome<'a, T> {
    Result(&'a T),
    Error(&'a A2AError),
}

/// A reply, `{"jsonrpc":"2.0","id":…,"result":…}` or `…"error":…}`, with the id exactly as the
/// client wrote it.
fn reply_json<T: Serialize>(id: &RawValue, outcome: Outcome<'_, T>) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    match outcome {
        Outcome::Result(result) => {
            out.extend_from_slice(br#","result":"#);
            crate::json::append(&mut out, result)?;
        }
        Outcome::Error(error) => {
            out.extend_from_slice(br#","error":"#);
            crate::json::append(&mut out, &jsonrpc_error_object(error))?;
        }
    }
    out.push(b'}');
    Ok(out)
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");

pub(super) fn error_response(id: &RawValue, error: &A2AError) -> Response {
    json_bytes_response(jsonrpc_http_status(error.kind()), JSON, reply_json::<()>(id, Outcome::Error(error)))
}

fn result_response(id: &RawValue, result: impl Serialize) -> Response {
    json_bytes_response(StatusCode::OK, JSON, reply_json(id, Outcome::Result(&result)))
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

/// Answers one JSON-RPC request.
///
/// The headers are read before the future is built, so that it holds only the body and the
/// context, not the whole request: a request's future is copied whole into its box.
pub(crate) fn handle<B: RequestBody>(
    State(state): State<AppState>,
    request: http::Request<B>,
) -> impl Future<Output = Response> + Send {
    let (parts, body) = request.into_parts();
    // The media type is checked before anything is parsed; a version error needs the id, so it is
    // reported once the envelope is read.
    let checked = if is_json_media_type(&parts.headers) {
        Ok(RequestMeta::from_parts(&parts).context(""))
    } else {
        Err(A2AError::content_type_not_supported("JSON-RPC requests must have Content-Type application/json"))
    };
    drop(parts);
    async move {
        let ctx = match checked {
            Ok(ctx) => ctx,
            Err(error) => return error_response(RawValue::NULL, &error),
        };
        let bytes = match read_body(body, state.handler.limits().max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(error) => return error_response(RawValue::NULL, &error),
        };
        let envelope = match Envelope::parse(&bytes) {
            Ok(envelope) => envelope,
            Err((id, error)) => return error_response(&id, &error),
        };
        match ctx {
            Ok(ctx) => dispatch(&state, &ctx, envelope).await,
            Err(error) => error_response(&envelope.id, &error),
        }
    }
}

/// A well-formed request: its id, its method, and its params.
struct Envelope<'a> {
    id: Id<'a>,
    method: Cow<'a, str>,
    params: Params<'a>,
}

/// A request's params: JSON text (an object) for the operation to decode, or, for the sends (the
/// hot path), already decoded in the same pass as the envelope.
enum Params<'a> {
    Text(Cow<'a, str>),
    Send(Box<SendMessageRequest>),
}

impl Params<'_> {
    fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        match self {
            Params::Text(text) => decode_json(text),
            // Never: params are decoded early only for the sends, which take them with `send_request`.
            Params::Send(_) => Err(A2AError::internal("params decoded for another operation")),
        }
    }

    fn send_request(self) -> Result<Box<SendMessageRequest>> {
        match self {
            Params::Send(request) => Ok(request),
            Params::Text(text) => decode_json(&text).map(Box::new),
        }
    }
}

/// The shape of a valid request, borrowed from the body so that params are decoded only once: by
/// the envelope itself for the sends, otherwise by the operation's own type.
struct WireEnvelope<'a> {
    jsonrpc: &'a str,
    id: Option<&'a RawValue>,
    method: &'a str,
    params: Option<Params<'a>>,
}

const SENDS: [&str; 2] = ["SendMessage", "SendStreamingMessage"];

/// Reads the envelope members in whatever order they come. When `method` names a send and comes
/// before `params` (as clients write it), the params are decoded straight into their type instead
/// of being skipped over now and parsed again later. Duplicate members are errors, as with a
/// derived decoder. Keys and the method are borrowed from the body, so one with escapes is an
/// error too; any error sends the request down the slow path, which handles and names everything.
impl<'de> Deserialize<'de> for WireEnvelope<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = WireEnvelope<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON-RPC request object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
                use serde::de::Error;
                fn once<T, E: Error>(slot: &mut Option<T>, value: T, name: &'static str) -> std::result::Result<(), E> {
                    match slot.replace(value) {
                        Some(_) => Err(E::duplicate_field(name)),
                        None => Ok(()),
                    }
                }
                let (mut jsonrpc, mut id, mut method, mut params) = (None, None, None::<&'de str>, None);
                while let Some(key) = map.next_key::<&'de str>()? {
                    match key {
                        "jsonrpc" => once(&mut jsonrpc, map.next_value()?, "jsonrpc")?,
                        "id" => once(&mut id, map.next_value::<Option<&'de RawValue>>()?, "id")?,
                        "method" => once(&mut method, map.next_value()?, "method")?,
                        "params" if method.is_some_and(|m| SENDS.contains(&m)) => {
                            let request = map.next_value::<ObjectOnly<SendMessageRequest>>()?.0;
                            once(&mut params, Params::Send(Box::new(request)), "params")?
                        }
                        "params" => {
                            let raw: &'de RawValue = map.next_value()?;
                            if !raw.get().starts_with('{') {
                                return Err(A::Error::custom("params must be an object"));
                            }
                            once(&mut params, Params::Text(Cow::Borrowed(raw.get())), "params")?
                        }
                        _ => drop(map.next_value::<serde::de::IgnoredAny>()?),
                    }
                }
                Ok(WireEnvelope {
                    jsonrpc: jsonrpc.ok_or_else(|| A::Error::missing_field("jsonrpc"))?,
                    id: id.flatten(),
                    method: method.ok_or_else(|| A::Error::missing_field("method"))?,
                    params,
                })
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// A struct decoded only from a JSON object (derived decoders also take arrays, by position).
struct ObjectOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = T;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(Visitor(std::marker::PhantomData)).map(ObjectOnly)
    }
}

impl<'a> Envelope<'a> {
    /// The fast path reads valid requests without building a `Value`; anything it does not accept
    /// goes through [`Envelope::parse_slowly`], which names the problem.
    fn parse(bytes: &'a [u8]) -> std::result::Result<Self, (Id<'static>, A2AError)> {
        let Ok(wire) = serde_json::from_slice::<WireEnvelope<'a>>(bytes) else { return Self::parse_slowly(bytes) };
        let id_ok = wire.id.is_none_or(|id| matches!(id.get().as_bytes()[0], b'"' | b'-' | b'0'..=b'9' | b'n'));
        if wire.jsonrpc != "2.0" || !id_ok {
            return Self::parse_slowly(bytes);
        }
        Ok(Envelope {
            id: Cow::Borrowed(wire.id.unwrap_or(RawValue::NULL)),
            method: Cow::Borrowed(wire.method),
            params: wire.params.unwrap_or(Params::Text(Cow::Borrowed("{}"))),
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
        Ok(Envelope { id, method: Cow::Owned(method), params: Params::Text(Cow::Owned(params)) })
    }
}

async fn dispatch(state: &AppState, ctx: &RequestContext, envelope: Envelope<'_>) -> Response {
    let Envelope { id, method, params } = envelope;
    let h = &state.handler;
    // Params are decoded in a statement of their own: a temporary of the statement that awaits
    // would be kept across the await, in every request's future.
    macro_rules! decoded {
        ($params:expr) => {
            match $params {
                Ok(request) => request,
                Err(error) => return error_response(&id, &error),
            }
        };
    }
    macro_rules! unary {
        ($operation:ident) => {{
            let request = decoded!(params.decode());
            match h.$operation(ctx, request).await {
                Ok(result) => result_response(&id, result),
                Err(error) => error_response(&id, &error),
            }
        }};
    }
    match method.as_ref() {
        "SendMessage" => {
            let request = decoded!(params.send_request());
            // The core's own result type: the task is written straight from the shared snapshot.
            match h.core.send_message(ctx, request).await {
                Ok(sent) => result_response(&id, sent),
                Err(error) => error_response(&id, &error),
            }
        }
        "GetTask" => unary!(get_task),
        "ListTasks" => unary!(list_tasks),
        "CancelTask" => unary!(cancel_task),
        "CreateTaskPushNotificationConfig" => unary!(create_task_push_notification_config),
        "GetTaskPushNotificationConfig" => unary!(get_task_push_notification_config),
        "ListTaskPushNotificationConfigs" => unary!(list_task_push_notification_configs),
        "DeleteTaskPushNotificationConfig" => {
            let request = decoded!(params.decode());
            match h.delete_task_push_notification_config(ctx, request).await {
                Ok(()) => result_response(&id, json!({})),
                Err(error) => error_response(&id, &error),
            }
        }
        "GetExtendedAgentCard" => unary!(get_extended_agent_card),
        "SendStreamingMessage" => {
            let request = decoded!(params.send_request());
            stream_response(id, h.core.send_streaming_message(ctx, request).await)
        }
        "SubscribeToTask" => {
            let request = decoded!(params.decode());
            stream_response(id, h.subscribe_to_task(ctx, request).await)
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
            sse::respond(events, move |item: std::result::Result<&StreamItem, &A2AError>| {
                let outcome = match item {
                    Ok(item) => Outcome::Result(&*item.response),
                    Err(error) => Outcome::Error(error),
                };
                reply_json(&id, outcome).and_then(crate::json::utf8)
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

    fn parse(body: &str) -> std::result::Result<Envelope<'_>, A2AError> {
        Envelope::parse(body.as_bytes()).map_err(|(_, error)| error)
    }

    const MESSAGE: &str = r#"{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}"#;

    #[test]
    fn sends_are_decoded_with_the_envelope_whatever_the_member_order() {
        let method_first = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{MESSAGE}}}"#);
        let envelope = parse(&method_first).unwrap();
        assert_eq!(envelope.id.get(), "7");
        let Params::Send(request) = envelope.params else { panic!("not decoded in one pass") };
        assert_eq!(request.message.text(), "hi");

        let params_first =
            format!(r#"{{"params":{MESSAGE},"method":"SendStreamingMessage","id":"x","jsonrpc":"2.0"}}"#);
        let envelope = parse(&params_first).unwrap();
        assert_eq!(envelope.method, "SendStreamingMessage");
        assert_eq!(envelope.params.send_request().unwrap().message.message_id, "m");
    }

    #[test]
    fn other_methods_keep_their_params_as_text() {
        let envelope = parse(r#"{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"t"}}"#).unwrap();
        assert_eq!(envelope.id.get(), "null");
        assert!(matches!(envelope.params, Params::Text(ref text) if text == r#"{"id":"t"}"#));
    }

    #[test]
    fn surprises_take_the_slow_path_and_get_its_answers() {
        // Params by position are refused, even where a derived decoder would take them.
        let message = r#"{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}"#;
        let by_position = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":["",{message}]}}"#);
        assert!(serde_json::from_str::<SendMessageRequest>(&format!(r#"["",{message}]"#)).is_ok());
        assert_eq!(parse(&by_position).err().unwrap().kind(), agentwire_types::ErrorKind::InvalidParams);
        // Invalid send params reach the operation as text, which names the field.
        let invalid = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":7}}}"#;
        let error = parse(invalid).unwrap().params.send_request().unwrap_err();
        assert!(error.to_string().contains("message"), "{error}");
        // Escapes, duplicates and a wrong version are handled by the slow path.
        let escaped = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":{MESSAGE}}}"#);
        assert_eq!(parse(&escaped).unwrap().params.send_request().unwrap().message.text(), "hi");
        let twice =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{MESSAGE},"params":{MESSAGE}}}"#);
        assert!(parse(&twice).is_ok());
        let old = format!(r#"{{"jsonrpc":"1.0","id":1,"method":"SendMessage","params":{MESSAGE}}}"#);
        assert_eq!(parse(&old).err().unwrap().kind(), agentwire_types::ErrorKind::InvalidRequest);
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
