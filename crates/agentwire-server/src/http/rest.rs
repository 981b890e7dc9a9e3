//! HTTP+JSON: the v1.0 routes, unprefixed and under `/{tenant}/`, and v0.3's under `/v1/`.
//!
//! The same handlers serve both generations; the route names the dialect. v0.3's bodies are
//! ProtoJSON of the `a2a.v1` package (see [`proto`]), and its errors are
//! `{"code": <JSON-RPC code>, "message", "data"}` with the same HTTP statuses as v1.0's.
//!
//! The routes are a table of axum routes. A path parameter cannot be followed by a suffix in the
//! same segment, so `/tasks/{id}:cancel` and `/tasks/{id}:subscribe` are the route
//! `/tasks/{id}`, whose last `:` names the action when what follows it is one.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Path, Request, State};
use axum::response::Response;
use axum::routing::{get, post, MethodRouter};
use http::request::Parts;
use http::{header, HeaderValue, Method, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use agentwire_types::dialect::v03::proto::{self, Proto};
use agentwire_types::jsonrpc::ErrorObject;
use agentwire_types::{
    A2AError, A2aRequest, A2aResponse, Binding, CancelTaskRequest, Dialect, ErrorKind, GetExtendedAgentCardRequest,
    GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTasksRequest, Result, RpcCode, SendMessageRequest,
    StreamItem, SubscribeToTaskRequest, TaskEventStream, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use super::errors::{with_error_headers, RestError};
use super::request::{context, decode_json, decode_value, is_json, read_body};
use super::{json_response, sse, AppState};
use crate::RequestContext;

/// The v1.0 routes; each is served as written and under `/{tenant}`.
pub(crate) fn routes() -> [(&'static str, MethodRouter<AppState>); 7] {
    [
        ("/message:send", post(send_message)),
        ("/message:stream", post(send_streaming_message)),
        ("/tasks", get(list_tasks)),
        ("/tasks/{id}", get(get_task_or_subscribe).post(cancel_or_subscribe)),
        ("/tasks/{id}/pushNotificationConfigs", post(create_push_config).get(list_push_configs)),
        ("/tasks/{id}/pushNotificationConfigs/{config_id}", get(get_push_config).delete(delete_push_config)),
        ("/extendedAgentCard", get(get_extended_agent_card)),
    ]
}

/// v0.3's routes (seed 001 §3.5.3), all under `/v1`: a tenant can never be named `v1`.
pub(crate) fn v03_routes() -> [(&'static str, MethodRouter<AppState>); 7] {
    [
        ("/v1/message:send", post(send_message)),
        ("/v1/message:stream", post(send_streaming_message)),
        ("/v1/tasks", get(list_tasks)),
        ("/v1/tasks/{id}", get(get_task_or_subscribe).post(cancel_or_subscribe)),
        ("/v1/tasks/{id}/pushNotificationConfigs", post(create_push_config).get(list_push_configs)),
        ("/v1/tasks/{id}/pushNotificationConfigs/{config_id}", get(get_push_config).delete(delete_push_config)),
        ("/v1/card", get(get_extended_agent_card)),
    ]
}

/// The generation a path belongs to.
fn dialect_of(path: &str) -> Dialect {
    if path == "/v1" || path.starts_with("/v1/") {
        Dialect::V03
    } else {
        Dialect::V1
    }
}

/// A result in the route's generation: v1.0 ProtoJSON, or v0.3's (`a2a.v1`).
struct Out<'a, T: ?Sized>(Dialect, &'a T);

impl<T: Serialize + ?Sized> Serialize for Out<'_, T>
where
    for<'b> Proto<'b, T>: Serialize,
{
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0 {
            Dialect::V03 => Proto(self.1).serialize(serializer),
            Dialect::V1 | Dialect::Legacy => self.1.serialize(serializer),
        }
    }
}

/// The path parameters of every route.
#[derive(Debug, Default, Deserialize)]
struct PathParams {
    #[serde(default)]
    tenant: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    config_id: String,
}

/// What a route's handler gets: the request's context, path, query and JSON body, or, if any of
/// them is unusable, the error response.
struct Call {
    dialect: Dialect,
    ctx: RequestContext,
    path: PathParams,
    query: Option<String>,
    body: Bytes,
    /// The media type of the answer: the request's, if it was `application/a2a+json`.
    media_type: HeaderValue,
}

impl FromRequest<AppState> for Call {
    type Rejection = Response;

    async fn from_request(request: Request, state: &AppState) -> std::result::Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let dialect = dialect_of(parts.uri.path());
        Self::read(&mut parts, body, state, dialect).await.map_err(|error| error_response_in(dialect, &error))
    }
}

impl Call {
    async fn read(parts: &mut Parts, body: Body, state: &AppState, dialect: Dialect) -> Result<Self> {
        let Path(path) = Path::<PathParams>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| A2AError::invalid_params(rejection.body_text()))?;
        let body = read_body(parts, body, &state.body_limits).await?;
        if !body.is_empty() && !is_json(&parts.headers) {
            let message = "request bodies must be application/json or application/a2a+json";
            return Err(A2AError::content_type_not_supported(message));
        }
        let media_type = response_media_type(&parts.headers);
        let query = parts.uri.query().map(str::to_owned);
        let ctx = context(parts, &path.tenant, dialect, Binding::HttpJson)?;
        Ok(Self { dialect, ctx, path, query, body, media_type })
    }

    /// The JSON body (an empty one reads as `{}`), decoded into the operation's request.
    fn body<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        let text = std::str::from_utf8(&self.body).map_err(A2AError::parse)?;
        decode_json(if text.is_empty() { "{}" } else { text })
    }

    /// [`body`](Self::body), with a member from the path.
    fn body_with<T: serde::de::DeserializeOwned>(&self, (key, value): (&str, &str)) -> Result<T> {
        let mut body = match self.body::<Value>()? {
            Value::Object(body) => body,
            _ => return Err(A2AError::invalid_params("the request body must be a JSON object")),
        };
        body.insert(key.to_owned(), Value::String(value.to_owned()));
        decode_value(Value::Object(body))
    }

    /// The query parameters, with `fields` from the path, decoded into the operation's request.
    /// Numbers stay strings (the request types accept decimal strings); `includeArtifacts` is a
    /// boolean.
    fn query<T: serde::de::DeserializeOwned>(&self, fields: &[(&str, &str)]) -> Result<T> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(self.query.as_deref().unwrap_or(""))
            .map_err(|error| A2AError::invalid_params(format!("invalid query string: {error}")))?;
        let mut params = Map::new();
        for (key, value) in pairs {
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
        for (key, value) in fields {
            params.insert((*key).to_owned(), Value::String((*value).to_owned()));
        }
        decode_value(Value::Object(params))
    }

    /// Sets the tenant a request names in its body or query to the path's: it may repeat it, not
    /// contradict it.
    fn bind_tenant(&self, named: &mut String) -> Result<()> {
        match (self.path.tenant.as_str(), named.as_str()) {
            ("", _) => Ok(()),
            (path, "") => {
                path.clone_into(named);
                Ok(())
            }
            (path, other) if path == other => Ok(()),
            (path, other) => Err(A2AError::invalid_params(format!(
                "the request names tenant {other:?}, but its path is under tenant {path:?}"
            ))),
        }
    }

    /// The push config the path names.
    fn config_ref(&self) -> TaskPushNotificationConfigRef {
        let PathParams { tenant, id, config_id } = &self.path;
        TaskPushNotificationConfigRef { tenant: tenant.clone(), task_id: id.clone(), id: config_id.clone() }
    }

    /// A send's body: v1.0's `SendMessageRequest`, or v0.3's.
    fn send_request(&self) -> Result<SendMessageRequest> {
        let mut request = match self.dialect {
            Dialect::V03 => {
                let text = std::str::from_utf8(&self.body).map_err(A2AError::parse)?;
                proto::send_message_request(text)
                    .map_err(|e| A2AError::invalid_params(format!("invalid params: {e}")))?
            }
            Dialect::V1 | Dialect::Legacy => self.body::<SendMessageRequest>()?,
        };
        self.bind_tenant(&mut request.tenant)?;
        Ok(request)
    }

    /// Runs the operation `request` names, if it was read, and writes its answer in the route's
    /// generation.
    async fn run(mut self, state: &AppState, request: Result<A2aRequest>) -> Response {
        let ctx = std::mem::take(&mut self.ctx);
        let answer = match request {
            Ok(request) => crate::service::start(&state.operations, ctx, request).await,
            Err(error) => Err(error),
        };
        match answer {
            Ok(response) => self.respond(state, response),
            Err(error) => self.error(&error),
        }
    }

    fn respond(&self, state: &AppState, response: A2aResponse) -> Response {
        let dialect = self.dialect;
        let media_type = || self.media_type.clone();
        match response {
            A2aResponse::Send(result) => json_response(StatusCode::OK, media_type(), &Out(dialect, &result)),
            A2aResponse::Task(task) => json_response(StatusCode::OK, media_type(), &Out(dialect, &task)),
            A2aResponse::Tasks(page) => json_response(StatusCode::OK, media_type(), &Out(dialect, &page)),
            A2aResponse::PushConfig(config) => json_response(StatusCode::OK, media_type(), &Out(dialect, &config)),
            A2aResponse::PushConfigs(configs) => json_response(StatusCode::OK, media_type(), &Out(dialect, &configs)),
            A2aResponse::Deleted => json_response(StatusCode::OK, media_type(), &Map::new()),
            A2aResponse::Card(card) => json_response(
                StatusCode::OK,
                media_type(),
                &crate::core::card_json(&card, dialect.profile().card_form()),
            ),
            A2aResponse::Stream(events) => self.stream(state, events),
        }
    }

    fn error(&self, error: &A2AError) -> Response {
        error_response_in(self.dialect, error)
    }

    /// The events of a stream; errors found before it starts are HTTP errors (see
    /// [`Call::run`]), later ones are events.
    fn stream(&self, state: &AppState, events: TaskEventStream) -> Response {
        let dialect = self.dialect;
        sse::respond(events, state.sse_keep_alive, move |item: std::result::Result<&StreamItem, &A2AError>| {
            match (item, dialect) {
                (Ok(item), _) => serde_json::to_string(&Out(dialect, &*item.response)),
                (Err(error), Dialect::V03) => serde_json::to_string(&ErrorObject::new(dialect, error)),
                (Err(error), _) => serde_json::to_string(&RestError::from(error)),
            }
        })
    }
}

/// A task id and the action after its last `:` (`cancel`, `subscribe`), if it names one: a task
/// id may itself contain `:`.
fn split_action(id: &str) -> (&str, Option<&str>) {
    match id.rsplit_once(':') {
        Some((id, action @ ("cancel" | "subscribe"))) => (id, Some(action)),
        _ => (id, None),
    }
}

async fn send_message(State(state): State<AppState>, call: Call) -> Response {
    let request = call.send_request().map(A2aRequest::SendMessage);
    call.run(&state, request).await
}

async fn send_streaming_message(State(state): State<AppState>, call: Call) -> Response {
    let request = call.send_request().map(A2aRequest::SendStreamingMessage);
    call.run(&state, request).await
}

async fn list_tasks(State(state): State<AppState>, call: Call) -> Response {
    let request = call.query::<ListTasksRequest>(&[]).and_then(|mut r| call.bind_tenant(&mut r.tenant).map(|()| r));
    call.run(&state, request.map(A2aRequest::ListTasks)).await
}

/// `GET /tasks/{id}` is GetTask; `GET /tasks/{id}:subscribe` is SubscribeToTask.
async fn get_task_or_subscribe(State(state): State<AppState>, call: Call) -> Response {
    let request = match split_action(&call.path.id) {
        (id, Some("subscribe")) => Ok(subscribe(&call, id)),
        (_, Some(_)) => Err(no_operation_error(&Method::GET, &format!("/tasks/{}", call.path.id))),
        (id, None) => {
            let request = call.query::<GetTaskRequest>(&[("id", id)]);
            request.and_then(|mut r| call.bind_tenant(&mut r.tenant).map(|()| A2aRequest::GetTask(r)))
        }
    };
    call.run(&state, request).await
}

/// `POST /tasks/{id}:cancel` is CancelTask; `POST /tasks/{id}:subscribe` is SubscribeToTask.
async fn cancel_or_subscribe(State(state): State<AppState>, call: Call) -> Response {
    let request = match split_action(&call.path.id) {
        (id, Some("subscribe")) => Ok(subscribe(&call, id)),
        (id, Some(_)) => {
            let request = call.body_with::<CancelTaskRequest>(("id", id));
            request.and_then(|mut r| call.bind_tenant(&mut r.tenant).map(|()| A2aRequest::CancelTask(r)))
        }
        (_, None) => Err(no_operation_error(&Method::POST, &format!("/tasks/{}", call.path.id))),
    };
    call.run(&state, request).await
}

fn subscribe(call: &Call, id: &str) -> A2aRequest {
    A2aRequest::SubscribeToTask(SubscribeToTaskRequest { tenant: call.path.tenant.clone(), id: id.to_owned() })
}

async fn create_push_config(State(state): State<AppState>, call: Call) -> Response {
    let body = match call.dialect {
        Dialect::V03 => call
            .body::<proto::PushConfigBody>()
            .and_then(|body| body.into_config(&call.path.id).map_err(A2AError::invalid_params)),
        Dialect::V1 | Dialect::Legacy => call.body::<TaskPushNotificationConfig>(),
    };
    let request = body.and_then(|mut r| {
        r.task_id.clone_from(&call.path.id);
        call.bind_tenant(&mut r.tenant).map(|()| A2aRequest::CreatePushConfig(r))
    });
    call.run(&state, request).await
}

async fn list_push_configs(State(state): State<AppState>, call: Call) -> Response {
    let request = call.query::<ListTaskPushNotificationConfigsRequest>(&[("taskId", &call.path.id)]);
    let request = request.and_then(|mut r| call.bind_tenant(&mut r.tenant).map(|()| A2aRequest::ListPushConfigs(r)));
    call.run(&state, request).await
}

async fn get_push_config(State(state): State<AppState>, call: Call) -> Response {
    let request = A2aRequest::GetPushConfig(call.config_ref());
    call.run(&state, Ok(request)).await
}

async fn delete_push_config(State(state): State<AppState>, call: Call) -> Response {
    let request = A2aRequest::DeletePushConfig(call.config_ref());
    call.run(&state, Ok(request)).await
}

/// `GET /extendedAgentCard`, and v0.3's `GET /v1/card` (in the combined form, and the public card
/// where the agent has no extended one).
async fn get_extended_agent_card(State(state): State<AppState>, mut call: Call) -> Response {
    let ctx = std::mem::take(&mut call.ctx);
    let request = GetExtendedAgentCardRequest { tenant: call.path.tenant.clone() };
    match crate::service::card_call(&state.operations, ctx, request).await {
        Ok(card) => call.respond(&state, A2aResponse::Card(Box::new(card))),
        Err(error) => call.error(&error),
    }
}

/// Any path no route serves.
pub(crate) async fn no_route(method: Method, uri: http::Uri) -> Response {
    error_response_in(dialect_of(uri.path()), &no_operation_error(&method, uri.path()))
}

fn no_operation_error(method: &Method, path: &str) -> A2AError {
    A2AError::new(ErrorKind::MethodNotFound, format!("no operation at {method} {path}"))
}

/// A route that exists, asked with a method it does not take: 405, and in AIP-193 bodies
/// `UNIMPLEMENTED`, the closest `google.rpc.Code` (there is no method-not-allowed code).
pub(crate) async fn method_not_allowed(method: Method, uri: http::Uri) -> Response {
    let error = A2AError::new(ErrorKind::MethodNotFound, format!("{} does not take {method}", uri.path()));
    error_response_at(dialect_of(uri.path()), &error, StatusCode::METHOD_NOT_ALLOWED, RpcCode::Unimplemented)
}

/// The response media type: the request's own JSON type, else `application/json`.
fn response_media_type(headers: &http::HeaderMap) -> HeaderValue {
    let a2a = headers
        .get(header::CONTENT_TYPE)
        .or_else(|| headers.get(header::ACCEPT))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/a2a+json"));
    HeaderValue::from_static(if a2a { "application/a2a+json" } else { "application/json" })
}

/// The error response: AIP-193 for v1.0, the JSON-RPC error object for v0.3.
fn error_response_in(dialect: Dialect, error: &A2AError) -> Response {
    error_response_at(dialect, error, super::errors::error_status(error), error.kind().rpc_code())
}

/// [`error_response_in`] with the HTTP status and the AIP-193 `google.rpc.Code` given.
fn error_response_at(dialect: Dialect, error: &A2AError, status: StatusCode, rpc: RpcCode) -> Response {
    let json = HeaderValue::from_static("application/json");
    let response = match dialect {
        Dialect::V03 => json_response(status, json, &ErrorObject::new(dialect, error)),
        Dialect::V1 | Dialect::Legacy => json_response(status, json, &RestError::with_status(error, status, rpc)),
    };
    with_error_headers(response, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_colon_names_an_action_only_when_it_is_one() {
        assert_eq!(split_action("t1:cancel"), ("t1", Some("cancel")));
        assert_eq!(split_action("a:b:subscribe"), ("a:b", Some("subscribe")));
        assert_eq!(split_action("urn:task:7"), ("urn:task:7", None));
        assert_eq!(split_action("t1"), ("t1", None));
    }
}
