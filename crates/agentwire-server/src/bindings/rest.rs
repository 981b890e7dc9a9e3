//! HTTP+JSON: the v1.0 routes, unprefixed and under `/{tenant}/`.

use std::future::Future;

use axum::extract::State;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, Method, StatusCode};
use serde_json::{json, Map, Value};

use agentwire_types::{
    A2AError, CancelTaskRequest, GetExtendedAgentCardRequest, Result, SubscribeToTaskRequest,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use super::errors::rest_error_body;
use super::jsonrpc::is_json_media_type;
use super::meta::{url_pairs, RequestMeta};
use super::{decode, decode_json, json_response, read_body, sse, AppState, RequestBody};
use crate::core::StreamItem;

/// A REST operation, decoded from the method and path.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    SendMessage,
    SendStreamingMessage,
    ListTasks,
    GetTask(String),
    CancelTask(String),
    SubscribeToTask(String),
    CreatePushConfig(String),
    ListPushConfigs(String),
    GetPushConfig(String, String),
    DeletePushConfig(String, String),
    GetExtendedAgentCard,
}

const ROOTS: [&str; 4] = ["message:send", "message:stream", "tasks", "extendedAgentCard"];

/// Splits an optional tenant prefix off the path and finds the operation.
fn route(method: &Method, path: &str) -> Option<(String, Route)> {
    let segments: Vec<String> = path.trim_matches('/').split('/').map(percent_decode).collect();
    let (tenant, rest) = match segments.first() {
        Some(first) if !ROOTS.contains(&first.as_str()) && segments.len() > 1 => (first.clone(), &segments[1..]),
        _ => (String::new(), &segments[..]),
    };
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let route = match (method.as_str(), rest.as_slice()) {
        ("POST", ["message:send"]) => Route::SendMessage,
        ("POST", ["message:stream"]) => Route::SendStreamingMessage,
        ("GET", ["tasks"]) => Route::ListTasks,
        ("GET", ["extendedAgentCard"]) => Route::GetExtendedAgentCard,
        ("POST", ["tasks", id_action]) => match id_action.rsplit_once(':') {
            Some((id, "cancel")) => Route::CancelTask(id.to_owned()),
            Some((id, "subscribe")) => Route::SubscribeToTask(id.to_owned()),
            _ => return None,
        },
        ("GET", ["tasks", id_action]) => match id_action.rsplit_once(':') {
            Some((id, "subscribe")) => Route::SubscribeToTask(id.to_owned()),
            Some(_) => return None,
            None => Route::GetTask((*id_action).to_owned()),
        },
        ("POST", ["tasks", id, "pushNotificationConfigs"]) => Route::CreatePushConfig((*id).to_owned()),
        ("GET", ["tasks", id, "pushNotificationConfigs"]) => Route::ListPushConfigs((*id).to_owned()),
        ("GET", ["tasks", id, "pushNotificationConfigs", config]) => {
            Route::GetPushConfig((*id).to_owned(), (*config).to_owned())
        }
        ("DELETE", ["tasks", id, "pushNotificationConfigs", config]) => {
            Route::DeletePushConfig((*id).to_owned(), (*config).to_owned())
        }
        _ => return None,
    };
    Some((tenant, route))
}

fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The response media type: the request's own JSON type, else `application/json`.
fn response_media_type(request_headers: &http::HeaderMap) -> HeaderValue {
    let a2a = request_headers
        .get(header::CONTENT_TYPE)
        .or_else(|| request_headers.get(header::ACCEPT))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/a2a+json"));
    HeaderValue::from_static(if a2a { "application/a2a+json" } else { "application/json" })
}

pub(super) fn error_response(error: &A2AError) -> Response {
    let (status, body) = rest_error_body(error);
    (status, axum::Json(body)).into_response()
}

/// Answers one HTTP+JSON request.
///
/// Everything needed from the headers is read before the future is built, so that it holds the
/// body and a few fields, not the whole request: a request's future is copied whole into its box.
pub(crate) fn handle<B: RequestBody>(
    State(state): State<AppState>,
    request: http::Request<B>,
) -> impl Future<Output = Response> + Send {
    let (parts, body) = request.into_parts();
    let head = Head::read(&parts);
    drop(parts);
    async move {
        let Head { ctx, route, media_type, json_body, query } = match head {
            Ok(head) => head,
            Err(error) => return error_response(&error),
        };
        let bytes = match read_body(body, state.handler.limits().max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(error) => return error_response(&error),
        };
        if !bytes.is_empty() && !json_body {
            let error =
                A2AError::content_type_not_supported("request bodies must be application/json or application/a2a+json");
            return error_response(&error);
        }
        let request = RestRequest { ctx, route, body: bytes, query };
        match request.route {
            Route::SendStreamingMessage | Route::SubscribeToTask(_) => stream(&state, request).await,
            _ => unary(&state, request, media_type).await.unwrap_or_else(|error| error_response(&error)),
        }
    }
}

/// What a request's head decides.
struct Head {
    ctx: crate::RequestContext,
    route: Route,
    /// The media type of the answer.
    media_type: HeaderValue,
    /// Whether the body, if any, is declared JSON.
    json_body: bool,
    query: String,
}

impl Head {
    fn read(parts: &Parts) -> Result<Self> {
        let Some((tenant, route)) = route(&parts.method, parts.uri.path()) else {
            return Err(A2AError::new(
                agentwire_types::ErrorKind::MethodNotFound,
                format!("no operation at {} {}", parts.method, parts.uri.path()),
            ));
        };
        Ok(Head {
            ctx: RequestMeta::from_parts(parts).context(&tenant)?,
            route,
            media_type: response_media_type(&parts.headers),
            json_body: is_json_media_type(&parts.headers),
            query: parts.uri.query().unwrap_or("").to_owned(),
        })
    }
}

struct RestRequest {
    ctx: crate::RequestContext,
    route: Route,
    body: axum::body::Bytes,
    query: String,
}

impl RestRequest {
    /// Decodes the JSON body (an empty body reads as `{}`) straight into the operation's type.
    fn decode_body<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        let text = std::str::from_utf8(&self.body).map_err(A2AError::parse)?;
        decode_json(if text.is_empty() { "{}" } else { text })
    }

    /// The query parameters and `key` (from the path), decoded into the operation's type.
    fn query_with<T: serde::de::DeserializeOwned>(&self, key: &str, value: &str) -> Result<T> {
        let mut params = query_params(&self.query)?;
        params.insert(key.into(), Value::String(value.to_owned()));
        decode(Value::Object(params))
    }

    /// The JSON body; an empty body reads as `{}`.
    fn body(&self) -> Result<Value> {
        if self.body.is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        serde_json::from_slice(&self.body).map_err(A2AError::parse)
    }
}

/// Answers a unary operation.
///
/// A plain function returning an `async move` block, here and in [`stream`]: an `async fn` moves
/// its arguments into locals of its own, which doubles the room the request takes in the future.
#[allow(clippy::manual_async_fn)] // see above
fn unary(state: &AppState, req: RestRequest, media_type: HeaderValue) -> impl Future<Output = Result<Response>> + '_ {
    async move {
        let h = &state.handler;
        let ctx = &req.ctx;
        let ok = |body: &dyn Reply| body.reply(media_type.clone());
        Ok(match &req.route {
            Route::SendMessage => {
                let send = Box::new(req.decode_body()?);
                ok(&h.core.send_message(ctx, send).await?)
            }
            Route::GetTask(id) => {
                let get = req.query_with("id", id)?;
                ok(&h.get_task(ctx, get).await?)
            }
            Route::ListTasks => {
                let list = decode(Value::Object(query_params(&req.query)?))?;
                ok(&h.list_tasks(ctx, list).await?)
            }
            Route::CancelTask(id) => {
                let metadata = req.body()?.get("metadata").and_then(Value::as_object).cloned();
                let cancel = CancelTaskRequest { tenant: String::new(), id: id.clone(), metadata };
                ok(&h.cancel_task(ctx, cancel).await?)
            }
            Route::CreatePushConfig(task_id) => {
                let config = TaskPushNotificationConfig { task_id: task_id.clone(), ..req.decode_body()? };
                ok(&h.create_task_push_notification_config(ctx, config).await?)
            }
            Route::ListPushConfigs(task_id) => {
                let list = req.query_with("taskId", task_id)?;
                ok(&h.list_task_push_notification_configs(ctx, list).await?)
            }
            Route::GetPushConfig(task_id, id) => {
                let get =
                    TaskPushNotificationConfigRef { tenant: String::new(), task_id: task_id.clone(), id: id.clone() };
                ok(&h.get_task_push_notification_config(ctx, get).await?)
            }
            Route::DeletePushConfig(task_id, id) => {
                let delete =
                    TaskPushNotificationConfigRef { tenant: String::new(), task_id: task_id.clone(), id: id.clone() };
                h.delete_task_push_notification_config(ctx, delete).await?;
                ok(&json!({}))
            }
            Route::GetExtendedAgentCard => {
                ok(&h.get_extended_agent_card(ctx, GetExtendedAgentCardRequest::default()).await?)
            }
            Route::SendStreamingMessage | Route::SubscribeToTask(_) => {
                return Err(A2AError::internal("streaming routes are not unary"))
            }
        })
    }
}

/// A unary operation's result, written as the response body.
trait Reply {
    fn reply(&self, media_type: HeaderValue) -> Response;
}

impl<T: serde::Serialize> Reply for T {
    fn reply(&self, media_type: HeaderValue) -> Response {
        json_response(StatusCode::OK, media_type, self)
    }
}

/// Errors found before the stream starts are HTTP errors; later ones are SSE events.
#[allow(clippy::manual_async_fn)] // see `unary`
fn stream(state: &AppState, req: RestRequest) -> impl Future<Output = Response> + '_ {
    async move {
        let h = &state.handler;
        let events = match &req.route {
            Route::SubscribeToTask(id) => {
                let subscribe = SubscribeToTaskRequest { tenant: String::new(), id: id.clone() };
                h.subscribe_to_task(&req.ctx, subscribe).await
            }
            _ => {
                // Bound before the await: a temporary in the awaiting statement would be kept across it.
                let send = match req.decode_body() {
                    Ok(send) => Box::new(send),
                    Err(error) => return error_response(&error),
                };
                h.core.send_streaming_message(&req.ctx, send).await
            }
        };
        match events {
            Err(error) => error_response(&error),
            Ok(events) => sse::respond(events, |item: std::result::Result<&StreamItem, &A2AError>| match item {
                Ok(item) => crate::json::to_string(&*item.response),
                Err(error) => crate::json::to_string(&rest_error_body(error).1),
            }),
        }
    }
}

/// Query parameters as a JSON object the request types decode: numbers stay strings (the
/// decoders accept decimal strings), booleans become booleans, repeated keys keep the last value.
fn query_params(query: &str) -> Result<Map<String, Value>> {
    let mut params = Map::new();
    for (key, value) in url_pairs(query) {
        let value = match key.as_str() {
            "includeArtifacts" | "include_artifacts" => match value.to_ascii_lowercase().as_str() {
                "true" | "1" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => return Err(A2AError::invalid_params(format!("{key} must be true or false (got {value:?})"))),
            },
            _ => Value::String(value),
        };
        params.insert(key, value);
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_with_and_without_tenant() {
        let post = Method::POST;
        assert_eq!(route(&post, "/message:send"), Some((String::new(), Route::SendMessage)));
        assert_eq!(route(&post, "/acme/tasks/t1:cancel"), Some(("acme".into(), Route::CancelTask("t1".into()))));
        assert_eq!(
            route(&Method::DELETE, "/tasks/t%201/pushNotificationConfigs/c"),
            Some((String::new(), Route::DeletePushConfig("t 1".into(), "c".into())))
        );
        assert_eq!(route(&Method::GET, "/tasks/t1:bogus"), None);
        assert_eq!(route(&Method::PUT, "/tasks"), None);
    }
}
